#!/usr/bin/env bash
# `fixq gru eval --report`: the page is one self-contained file whose numbers agree with an
# independent computation, headless Chromium renders its charts, and writing it never
# leaves a half-written or stale file behind.
#   usage: gru_report_test.sh FIXQ_BINARY REPO_ROOT
set -euo pipefail
fixq=$1
root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
py=/usr/bin/python3
chromium=/usr/bin/chromium
[[ -x $chromium ]] || { echo "gru report: $chromium is missing (scripts/setup.sh installs Debian's chromium)" >&2; exit 1; }

T=20 B=4 C=6 H=12
"$py" "$root/tools/export_gru.py" --out "$tmp/gru.safetensors" --input-size $C --hidden-size $H --layers 2 \
  --bidirectional --seed 11 --reference "$tmp/ref" --seq-len $T --batch $B >/dev/null
# Calibrate on a copy of the data shrunk by 0.3, so that the evaluation data saturates x's range
# even where the scale rounds up to a power of two (at most doubling the calibrated range).
"$py" -c "import numpy as np; x=np.load('$tmp/ref/x.npy'); np.save('$tmp/calib.npy', (0.3 * x).astype(np.float32))"
"$fixq" gru quantize --model "$tmp/gru.safetensors" --calib "$tmp/calib.npy" --params-out "$tmp/params.json" \
  -o "$tmp/q.fixq" >/dev/null

mkdir "$tmp/out"
echo "old report" >"$tmp/out/eval.html"
# A file name with HTML's special characters: the page must show it as text.
qname="$tmp/q <b>&amp;'\".fixq"
cp "$tmp/q.fixq" "$qname"
eval_args=(gru eval --model "$qname" --float "$tmp/gru.safetensors" --input "$tmp/ref/x.npy")

# A failing evaluation leaves an existing report untouched.
"$py" -c "import numpy as np; np.save('$tmp/bad_x.npy', np.zeros(($T, $B, $C + 1), np.float32))"
if "$fixq" gru eval --model "$tmp/q.fixq" --float "$tmp/gru.safetensors" --input "$tmp/bad_x.npy" \
  --report "$tmp/out/eval.html" >/dev/null 2>"$tmp/err.txt"; then
  echo "gru report: evaluation of mismatched input succeeded" >&2
  exit 1
fi
[[ $(cat "$tmp/out/eval.html") == "old report" ]] || { echo "gru report: a failed run changed the report" >&2; exit 1; }

# A report into a missing directory fails at once, in one line, before any work.
if "$fixq" "${eval_args[@]}" --report "$tmp/nowhere/eval.html" >"$tmp/out.txt" 2>"$tmp/err.txt"; then
  echo "gru report: --report into a missing directory succeeded" >&2
  exit 1
fi
[[ $(wc -l <"$tmp/err.txt") -eq 1 ]] && grep -q "does not exist" "$tmp/err.txt" && [[ ! -s "$tmp/out.txt" ]] ||
  { echo "gru report: bad error for a missing directory:" >&2; cat "$tmp/err.txt" "$tmp/out.txt" >&2; exit 1; }

"$fixq" "${eval_args[@]}" --report "$tmp/out/eval.html" >"$tmp/eval.txt" 2>"$tmp/eval_err.txt"
[[ ! -s "$tmp/eval_err.txt" ]] || { echo "gru report: eval wrote to stderr when piped:" >&2; cat "$tmp/eval_err.txt" >&2; exit 1; }
grep -q "^report -> $tmp/out/eval.html$" "$tmp/eval.txt"
[[ $(ls -A "$tmp/out") == "eval.html" ]] || { echo "gru report: temporary files left behind:" >&2; ls -A "$tmp/out" >&2; exit 1; }

# Rendered by Chromium: the DOM it builds, and a screenshot.
render() {  # render FLAG OUTPUT: one headless Chromium run with its own profile
  timeout 60 "$chromium" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run \
    --user-data-dir="$tmp/profile" --window-size=1280,1800 "$1" "file://$tmp/out/eval.html" >"$2" 2>"$tmp/chromium.log" ||
    { echo "gru report: chromium failed:" >&2; tail -5 "$tmp/chromium.log" >&2; exit 1; }
}
render --dump-dom "$tmp/dom.html"
(cd "$tmp" && render --screenshot="$tmp/shot.png" /dev/null)

"$py" - "$tmp/out/eval.html" "$tmp/dom.html" "$tmp/shot.png" "$tmp/params.json" "$tmp/ref/x.npy" "$tmp/eval.txt" "$qname" <<'PY'
import json, re, struct, sys, zlib
from html.parser import HTMLParser
import numpy as np

page_path, dom_path, png_path, params_path, x_path, eval_path, model_name = sys.argv[1:]
T, B, C = np.load(x_path).shape
H, layers, dirs = 12, 2, 2

# Self-contained: nothing is fetched from anywhere.
page = open(page_path, encoding="utf-8").read()
for bad in (r"""(src|href)\s*=\s*["']?\s*(https?:|//|file:)""", r"<script", r"<link", r"@import", r"url\("):
    assert not re.search(bad, page, re.I), f"page is not self-contained: {bad}"

class Charts(HTMLParser):
    """Per <svg data-plot=...>: its kind, id, and the marks inside it with their <title>s;
    and the text of the <h1>."""
    def __init__(self):
        super().__init__()
        self.charts, self.cur, self.title_of, self.h1 = [], None, None, []
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "h1":
            self.title_of = self.h1
        elif tag == "svg" and "data-plot" in a:
            self.cur = {"kind": a["data-plot"], "id": a.get("id", ""), "series": [], "bars": 0, "bins": [], "notes": []}
            self.charts.append(self.cur)
        elif self.cur is not None:
            cls = a.get("class", "").split()
            if tag == "path" and "series" in cls:
                self.cur["series"].append(a["d"])
            elif tag == "rect" and "bar" in cls:
                self.cur["bars"] += 1
            elif tag == "rect" and "bin" in cls:
                self.title_of = self.cur["bins"]
            elif tag == "text":
                self.title_of = self.cur["notes"]
    def handle_data(self, data):
        if self.title_of is not None:
            self.title_of.append(data)
            self.title_of = None
    def handle_endtag(self, tag):
        if tag == "svg":
            self.cur = None

p = Charts()
p.feed(open(dom_path, encoding="utf-8").read())
assert p.h1 == ["fixq gru eval: " + model_name], (p.h1, model_name)
kinds = [c["kind"] for c in p.charts]
value_ops = ["x", "Wx", "Rh", "z_pre", "z_out", "r_pre", "r_out", "Rh_add_br", "rRh", "g_pre", "g_out",
             "old_contrib", "new_contrib", "h"]
assert kinds.count("line") == 2 and kinds.count("bar") == 1, kinds
assert kinds.count("histogram") == layers * dirs * len(value_ops), kinds.count("histogram")
for c in p.charts:
    if c["kind"] == "line":  # one point per time step in every series
        assert c["series"] and all(d.count("M") + d.count("L") == T for d in c["series"]), c["id"]
    if c["kind"] == "bar":
        assert c["bars"] == len(value_ops), c["bars"]

# Every histogram holds every value its operator takes: T * B rows of its width.
def width(op, layer):
    if op == "x":
        return C if layer == 0 else dirs * H
    return 3 * H if op in ("Wx", "Rh") else H
hist = {c["id"]: c for c in p.charts if c["kind"] == "histogram"}
for layer in range(layers):
    for d in range(dirs):
        for op in value_ops:
            c = hist[f"range-l{layer}-d{d}-{op}"]
            n = width(op, layer)
            total = sum(int(t.rsplit(": ", 1)[1]) for t in c["bins"])
            assert len(c["bins"]) >= 3 and total == T * B * n, (c["id"], len(c["bins"]), total, T * B * n)

# x of the first layer saturates exactly where quantize clamps it (float32 division,
# round half to even) under the parameters the quantizer wrote.
x = np.load(x_path).astype(np.float32).ravel()
params = json.load(open(params_path))
xp, b = params["cells"][0]["x"], params["config"]["bits"]["x"]
scale, zp = np.float32(xp["scale"][0]), int(xp["zero_point"][0])
qmin, qmax = -(1 << (b - 1)), (1 << (b - 1)) - 1
t = np.round((x / scale).astype(np.float32).astype(np.float64))  # numpy rounds half to even
saturated = int(np.count_nonzero((t + zp < qmin) | (t + zp > qmax)))
assert saturated > 0, "calibration on halved data should leave some x values saturating"
expect = f"saturated {100.0 * saturated / x.size:.3g}%"
note = " ".join(hist["range-l0-d0-x"]["notes"])
assert expect in note, (expect, note)

# The page's overall numbers are the text report's.
m = re.search(r"cosine ([0-9.]+), SQNR ([0-9.]+) dB", open(eval_path).read())
assert m and f">{m.group(1)}<" in page and f">{m.group(2)} dB<" in page, "page metrics differ from the text report"

# The screenshot shows the charts: a PNG of the window's size with many pixels of the
# charts' blue (#1f77b4: bars and bins), read with zlib alone.
png = open(png_path, "rb").read()
assert png[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat, w = 8, b"", 0
while pos < len(png):
    n, kind = struct.unpack(">I4s", png[pos:pos + 8])
    body = png[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
        assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
        bpp = 3 if ctype == 2 else 4
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert (w, h) == (1280, 1800), (w, h)
raw, stride = zlib.decompress(idat), w * bpp
rows, prev = [], np.zeros(stride, np.int64)
for y in range(h):
    f = raw[y * (stride + 1)]
    line = np.frombuffer(raw, np.uint8, stride, y * (stride + 1) + 1).astype(np.int64)
    if f == 1:
        line = np.cumsum(line.reshape(-1, bpp), axis=0).ravel() % 256
    elif f == 2:
        line = (line + prev) % 256
    elif f in (3, 4):  # sequential along the row: plain Python
        cur, up = line.tolist(), prev.tolist()
        for i in range(stride):
            a = cur[i - bpp] if i >= bpp else 0
            if f == 3:
                cur[i] = (cur[i] + (a + up[i]) // 2) & 255
            else:
                b, c = up[i], (up[i - bpp] if i >= bpp else 0)
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                cur[i] = (cur[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        line = np.array(cur, np.int64)
    rows.append(line.astype(np.uint8))
    prev = line
img = np.stack(rows).reshape(h, w, bpp)[:, :, :3]
blue = int(np.count_nonzero(np.all(img == (0x1f, 0x77, 0xb4), axis=2)))
assert blue > 20000, f"screenshot has only {blue} chart-blue pixels"
print(f"gru report: {len(p.charts)} charts, x saturated {saturated}/{x.size}, {blue} chart pixels")
PY
echo "gru report: ok"
