"""Independent reader of the report module's SVG charts (tests/report/svg_plot_test.cpp).

Every chart is parsed by Python's own XML parser (xml.etree), which proves it well formed
and its text escaped; then the data are read back from the drawing alone: the axes' tick
labels and their pixel positions give the data-to-pixel map (fitted here, not taken from
fixq), and every mark -- line vertices, bar tops, histogram bins -- must sit where that map
puts the input value, within the 0.01 px the coordinates are written with.

usage: svg_check.py DIR   (DIR/cases.json lists the charts and the data they were drawn from;
                           DIR/report.json, if present, the page write_gru_report made)
"""
import json
import math
import os
import re
import sys
import xml.etree.ElementTree as ET

GRID = "#e3e3e3"
AXIS = "#444"
CLIPPED = "#e6550d"
TOL_PX = 0.03  # two coordinates written with 2 decimals, and the fitted map's own rounding


def num(v):
    """JSON's stand-in for non-finite values: the strings 'inf', '-inf', 'nan'."""
    return float(v) if isinstance(v, str) else v


def label_value(text):
    return float(text)  # also reads "inf", "-inf" and "nan"


class Map:
    """A linear data -> pixel map fitted through (value, pixel) pairs; checks they are collinear."""

    def __init__(self, pairs, what):
        assert len(pairs) >= 2, f"{what}: fewer than two ticks: {pairs}"
        (v0, p0), (v1, p1) = pairs[0], pairs[-1]
        assert v1 != v0, f"{what}: ticks {pairs}"
        self.a = (p1 - p0) / (v1 - v0)
        self.b = p0 - self.a * v0
        for v, p in pairs:
            # Tick labels carry 4 significant digits: a nice tick prints exactly.
            assert abs(self(v) - p) <= TOL_PX, f"{what}: tick {v} at {p}, the map says {self(v)}"
        steps = [pairs[i + 1][0] - pairs[i][0] for i in range(len(pairs) - 1)]
        assert all(abs(s - steps[0]) <= 1e-9 * max(1.0, abs(steps[0])) for s in steps), f"{what}: uneven ticks {steps}"
        check_nice_step(steps[0], what)

    def __call__(self, v):
        return self.a * v + self.b


def check_nice_step(step, what):
    """A tick step is 1, 2 or 5 times a power of ten."""
    e = math.floor(math.log10(abs(step)))
    m = abs(step) / 10.0 ** e
    assert any(abs(m - k) < 1e-6 for k in (1, 2, 5, 10)), f"{what}: tick step {step} is not 1, 2 or 5 x 10^k"


def f(el, attr):
    return float(el.get(attr))


def parse(path):
    root = ET.parse(path).getroot()
    assert root.tag == "svg", root.tag
    return root


def axes(root, kind):
    """The y map from the grid lines and their labels, and the x map from the tick marks
    under the frame and their labels; the frame rectangle."""
    lines = root.findall("line")
    texts = root.findall("text")
    frame = [r for r in root.findall("rect") if r.get("fill") == "none" and r.get("stroke") == AXIS]
    assert len(frame) == 1, f"{kind}: {len(frame)} frame rectangles"
    fr = frame[0]
    left, top = f(fr, "x"), f(fr, "y")
    right, bottom = left + f(fr, "width"), top + f(fr, "height")

    def label_at(x, y, anchor):
        hits = [t for t in texts if t.get("text-anchor") == anchor and abs(f(t, "x") - x) < 0.011 and abs(f(t, "y") - y) < 0.011]
        assert len(hits) == 1, f"{kind}: {len(hits)} labels at ({x}, {y})"
        return float(hits[0].text)

    ypairs = []
    for ln in lines:
        if ln.get("stroke") == GRID:
            y = f(ln, "y1")
            assert f(ln, "y2") == y and abs(f(ln, "x1") - left) < 0.011 and abs(f(ln, "x2") - right) < 0.011, \
                f"{kind}: grid line {ln.attrib}"
            ypairs.append((label_at(left - 5, y + 4, "end"), y))
    ypairs.sort()
    xpairs = []
    for ln in lines:
        if ln.get("stroke") == AXIS and f(ln, "y1") == bottom and f(ln, "y2") == bottom + 4:
            x = f(ln, "x1")
            xpairs.append((label_at(x, bottom + 16, "middle"), x))
    xpairs.sort()
    ymap = Map(ypairs, f"{kind} y axis")
    xmap = Map(xpairs, f"{kind} x axis") if len(xpairs) >= 2 else None
    return ymap, xmap, (left, top, right, bottom)


def check_title(root, case):
    title = root.find("title").text
    assert title == case["title"], (title, case["title"])
    assert root.get("aria-label") == case["title"]
    assert root.get("id") == case["id"], (root.get("id"), case["id"])


def check_line(path, case):
    root = parse(path)
    assert root.get("data-plot") == "line"
    check_title(root, case)
    ymap, xmap, (left, top, right, bottom) = axes(root, "line")
    x = [num(v) for v in case["x"]]
    finite = [v for s in case["series"] for v in map(num, s["y"]) if math.isfinite(v)]
    # The axes cover the data.
    assert ymap(min(finite)) <= bottom + TOL_PX and ymap(max(finite)) >= top - TOL_PX
    assert xmap(min(x)) >= left - TOL_PX and xmap(max(x)) <= right + TOL_PX
    paths = root.findall("path")
    assert [p.get("data-series") for p in paths] == [s["name"] for s in case["series"]]
    circles = root.findall("circle")
    expected_dots = 0
    for p, s in zip(paths, case["series"]):
        assert p.get("class") == "series"
        y = [num(v) for v in s["y"]]
        # Runs of consecutive finite points: each is one M ... L ... segment.
        runs, cur = [], []
        for i, v in enumerate(y):
            if math.isfinite(v):
                cur.append(i)
            elif cur:
                runs.append(cur)
                cur = []
        if cur:
            runs.append(cur)
        segs = re.findall(r"M([^M]*)", p.get("d"))
        assert len(segs) == len(runs), f"series {s['name']}: {len(segs)} segments, {len(runs)} finite runs"
        for seg, run in zip(segs, runs):
            pts = [tuple(map(float, pt.split())) for pt in re.split(r"\s*L", seg.strip())]
            assert len(pts) == len(run), (s["name"], pts, run)
            for (px, py), i in zip(pts, run):
                assert abs(px - xmap(x[i])) <= TOL_PX, f"{s['name']}[{i}]: x at {px}, expected {xmap(x[i])}"
                assert abs(py - ymap(y[i])) <= TOL_PX, f"{s['name']}[{i}]: y at {py}, expected {ymap(y[i])}"
            if len(run) == 1:
                expected_dots += 1
                i = run[0]
                assert any(abs(f(c, "cx") - xmap(x[i])) <= TOL_PX and abs(f(c, "cy") - ymap(y[i])) <= TOL_PX for c in circles), \
                    f"{s['name']}[{i}]: an isolated point has no dot"
        # The legend names the series.
        assert any(t.text == s["name"] for t in root.findall("text")), s["name"]
    assert len(circles) == expected_dots, (len(circles), expected_dots)


def check_bar(path, case):
    root = parse(path)
    assert root.get("data-plot") == "bar"
    check_title(root, case)
    ymap, _, (left, top, right, bottom) = axes(root, "bar")
    zero = ymap(0.0)
    rects = root.findall("rect[@class='bar']")
    bars = [b for b in case["bars"] if not math.isnan(num(b["value"]))]
    assert len(rects) == len(bars), (len(rects), len(bars))
    for r, b in zip(rects, bars):
        v = num(b["value"])
        title = r.find("title").text
        label, shown = title.rsplit(": ", 1)
        assert label == b["label"], (label, b["label"])
        shown = label_value(shown)
        assert shown == v or abs(shown - v) <= 5e-4 * abs(v), (shown, v)  # "%.4g"
        y, h = f(r, "y"), f(r, "height")
        assert h >= 0
        if math.isinf(v):  # to the frame's edge
            end = top if v > 0 else bottom
        else:
            end = ymap(v)
        if v >= 0:
            assert abs(y + h - zero) <= TOL_PX and abs(y - end) <= TOL_PX, (b, y, h, zero, end)
        else:
            assert abs(y - zero) <= TOL_PX and abs(y + h - end) <= TOL_PX, (b, y, h, zero, end)
    # A NaN bar: no rectangle, its slot says n/a.
    nans = [b for b in case["bars"] if math.isnan(num(b["value"]))]
    assert sum(t.text == "n/a" for t in root.findall("text")) == len(nans)
    # Bars side by side in input order, each in its own slot of the frame.
    xs = [f(r, "x") for r in rects]
    assert xs == sorted(xs) and all(left <= x <= right for x in xs)


def check_histogram(path, case):
    root = parse(path)
    assert root.get("data-plot") == "histogram"
    check_title(root, case)
    ymap, xmap, (left, top, right, bottom) = axes(root, "histogram")
    counts = case["counts"]
    lo, hi = num(case["lo"]), num(case["hi"])
    mark_lo, mark_hi = num(case["mark_lo"]), num(case["mark_hi"])
    width = (hi - lo) / len(counts)
    # x map from the frame, which spans exactly [lo, hi] (the bins fix the range).
    xm = lambda v: left + (v - lo) / (hi - lo) * (right - left)
    if xmap is not None:
        for v in (lo, hi, (lo + hi) / 2):
            assert abs(xmap(v) - xm(v)) <= 4 * TOL_PX, "tick labels disagree with the frame's range"
    rects = root.findall("rect[@class='bin']")
    nonzero = [(k, c) for k, c in enumerate(counts) if c > 0]
    assert len(rects) == len(nonzero), (len(rects), len(nonzero))
    for r, (k, c) in zip(rects, nonzero):
        b0, b1 = lo + k * width, lo + (k + 1) * width
        assert abs(f(r, "x") - xm(b0)) <= TOL_PX, (k, f(r, "x"), xm(b0))
        assert abs(f(r, "x") + f(r, "width") + 0.5 - xm(b1)) <= TOL_PX or f(r, "width") == 0.5, (k, r.attrib)
        assert abs(f(r, "y") - ymap(c)) <= TOL_PX and abs(f(r, "y") + f(r, "height") - bottom) <= TOL_PX, (k, c, r.attrib)
        assert int(r.find("title").text.rsplit(": ", 1)[1]) == c
        mid = (b0 + b1) / 2
        clipped = mid < mark_lo or mid > mark_hi
        assert (r.get("fill") == CLIPPED) == clipped, f"bin {k} [{b0}, {b1}) against range [{mark_lo}, {mark_hi}]: fill {r.get('fill')}"
    rng = root.findall("rect[@class='range']")
    assert len(rng) == 1
    x0 = xm(min(max(mark_lo, lo), hi))
    x1 = xm(min(max(mark_hi, lo), hi))
    assert abs(f(rng[0], "x") - x0) <= TOL_PX and abs(f(rng[0], "x") + f(rng[0], "width") - x1) <= 2 * TOL_PX
    if case.get("note"):
        assert any(t.text == case["note"] for t in root.findall("text")), case["note"]


def check_report(d):
    """The page of write_gru_report: its charts show the evaluation the test computed."""
    spec = json.load(open(f"{d}/report.json"))
    page = open(spec["page"], encoding="utf-8").read()
    assert page.startswith("<!DOCTYPE html>")
    charts = {}
    for m in re.finditer(r"<svg .*?</svg>", page, re.S):
        root = ET.fromstring(m.group(0))
        charts[root.get("id")] = m.group(0)
    # Per-step SQNR: the line's vertices are the evaluation's values.
    steps = [num(v) for v in spec["per_step_sqnr"]]
    case = {"id": "per-step-sqnr", "title": "SQNR per time step", "x": list(range(len(steps))),
            "series": [{"name": "SQNR", "y": spec["per_step_sqnr"]}]}
    with open(f"{d}/page-per-step.svg", "w") as fh:
        fh.write(charts["per-step-sqnr"])
    check_line(f"{d}/page-per-step.svg", case)
    # Per operator: one bar per operator the float run reports, its SQNR.
    with open(f"{d}/page-per-op.svg", "w") as fh:
        fh.write(charts["per-op-sqnr"])
    check_bar(f"{d}/page-per-op.svg", {"id": "per-op-sqnr", "title": ET.fromstring(charts["per-op-sqnr"]).find("title").text,
                                       "bars": spec["per_op"]})
    # Every operator's histogram: the bins OpValueStats counted, over its range.
    for h in spec["histograms"]:
        with open(f"{d}/page-hist.svg", "w") as fh:
            fh.write(charts[h["id"]])
        h = dict(h, title=ET.fromstring(charts[h["id"]]).find("title").text)
        check_histogram(f"{d}/page-hist.svg", h)
    # The output metrics table.
    assert f"<th>SQNR</th><td class=\"num\">{spec['sqnr_text']} dB</td>" in page
    assert f"<th>values</th><td class=\"num\">{spec['values']}</td>" in page
    # Self-contained: no script, no external reference.
    for bad in (r"<script", r"<link", r"https?:", r"url\("):
        assert not re.search(bad, page, re.I), bad
    return len(charts)


def main():
    d = sys.argv[1]
    cases = json.load(open(f"{d}/cases.json"))
    check = {"line": check_line, "bar": check_bar, "histogram": check_histogram}
    for case in cases:
        try:
            check[case["kind"]](f"{d}/{case['file']}", case)
        except AssertionError as e:
            raise AssertionError(f"{case['file']}: {e}") from None
    n = check_report(d) if os.path.exists(f"{d}/report.json") else 0
    print(f"svg_check: {len(cases)} charts and a page of {n} charts read back")


if __name__ == "__main__":
    main()
