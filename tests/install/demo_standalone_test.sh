#!/usr/bin/env bash
# The installed fixq stands alone: `cmake --install` into a temporary prefix and the Python
# package pip-installed into a venv there, then, with the checkout and the build folder
# out of reach (empty folders mounted over both in a private mount namespace), the
# installed `fixq demo` prints the table of the build tree's demo: the model and texts
# from <prefix>/share/fixq/charlm, the PyTorch rows from the installed package. With an
# interpreter that cannot import fixq, the PyTorch rows are left out with a one-line note
# and the rest of the table is unchanged.
#   usage: demo_standalone_test.sh BUILD_DIR REPO_ROOT
set -euo pipefail
build=$(cd "$1" && pwd)
root=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "demo standalone: $*" >&2; exit 1; }
unset PYTHONPATH FIXQ_PYTHON

cmake --install "$build" --prefix "$tmp/prefix" >"$tmp/install.log"
[[ -f $tmp/prefix/share/fixq/charlm/gru.weight_hh_l0.npy ]] ||
  fail "the demo's data is not installed: $(cd "$tmp/prefix" && find . -path '*share*' | head)"
# Nothing installed may lead back to the checkout or the build folder.
if grep -rl -e "$root" -e "$build" "$tmp/prefix" >"$tmp/leaks.txt"; then
  fail "installed files name the source or build tree: $(cat "$tmp/leaks.txt")"
fi
/usr/bin/python3 -m venv --system-site-packages "$tmp/venv"
FIXQ_CMAKE_BUILD_DIR=$build PIP_DISABLE_PIP_VERSION_CHECK=1 "$tmp/venv/bin/python" -m pip install --no-build-isolation \
  --no-index --no-cache-dir "$root" >"$tmp/pip.log" 2>&1 || { cat "$tmp/pip.log" >&2; fail "pip install failed"; }
/usr/bin/python3 -m venv "$tmp/bare"  # no fixq, no numpy, no torch

# The reference: the build tree's demo (its data under <build>/share/fixq, its package in
# <build>/python).
"$build/bin/fixq" demo >"$tmp/build.txt" 2>&1 || { cat "$tmp/build.txt" >&2; fail "the build tree's demo failed"; }

# run_hidden OUT COMMAND...: COMMAND with the checkout and the build folder hidden.
# (The build folder first: it may lie inside the checkout.)
hide='mount --make-rprivate / && mount -t tmpfs none "$2" && mount -t tmpfs none "$1" && shift 2 && exec "$@"'
namespace=()
if unshare --mount true 2>/dev/null; then
  namespace=(unshare --mount)
elif unshare --mount --map-root-user true 2>/dev/null; then
  namespace=(unshare --mount --map-root-user)
fi
run_hidden() {
  local out=$1
  shift
  if ((${#namespace[@]})); then
    "${namespace[@]}" bash -c "$hide" hide "$root" "$build" "$@" >"$out" 2>&1
  else
    "$@" >"$out" 2>&1
  fi
}
if ((${#namespace[@]} == 0)); then
  echo "demo standalone: note: no mount namespace here, so the checkout stays visible; the installed files were" \
    "checked not to name it" >&2
else
  # The hiding works: the checkout looks empty from inside.
  "${namespace[@]}" bash -c "$hide" hide "$root" "$build" bash -c "[[ ! -e '$root/CMakeLists.txt' ]]" ||
    fail "the checkout is still visible inside the mount namespace"
fi

cd "$tmp"
run_hidden "$tmp/installed.txt" env FIXQ_PYTHON="$tmp/venv/bin/python" "$tmp/prefix/bin/fixq" demo ||
  { cat "$tmp/installed.txt" >&2; fail "the installed demo failed with the checkout out of reach"; }
run_hidden "$tmp/bare.txt" env FIXQ_PYTHON="$tmp/bare/bin/python" "$tmp/prefix/bin/fixq" demo ||
  { cat "$tmp/bare.txt" >&2; fail "the installed demo failed without a usable Python"; }

/usr/bin/python3 - "$tmp" "$tmp/prefix/share/fixq" <<'PY'
import re, sys
tmp, share = sys.argv[1], sys.argv[2]
runs = {name: open(f"{tmp}/{name}.txt").read().splitlines() for name in ("build", "installed", "bare")}

def table(lines):
    """The demo's output with the timings (last column of the quality rows, the speech
    demo's time per frame) and the data folders taken out: what must not depend on where
    fixq is installed."""
    out = []
    for line in lines:
        if re.match(r"  (float32|fixq |torch )", line):
            fields = line.split()
            if re.fullmatch(r"[0-9.]+", fields[-1]):
                line = "  " + " ".join(fields[:-1])
        line = re.sub(r"[0-9.]+ us per ", "T us per ", line)
        out.append(re.sub(r"\(/[^)]*\)", "(DATA)", line))
    return out

build, installed, bare = (table(runs[n]) for n in ("build", "installed", "bare"))
for model in ("charlm", "speech"):
    assert any(f"({share}/{model})" in line for line in runs["installed"]), f"the installed demo did not read share/fixq/{model}"
assert installed == build, "installed and build-tree tables differ:\n" + "\n".join(
    f"  {a!r}\n  {b!r}" for a, b in zip(installed, build) if a != b)
torch_rows = [line for line in build if line.startswith("  torch ")]
assert len(torch_rows) == 6, f"expected 3 PyTorch rows per model, got {torch_rows}"
notes = [line for line in bare if "PyTorch rows left out" in line]
assert len(notes) == 2 and all("No module named 'fixq'" in n for n in notes), notes
assert [line for line in bare if line not in notes] == [line for line in build if line not in torch_rows], \
    "without PyTorch rows the rest of the table changed"
print(f"demo standalone: ok ({len(build)} lines equal; without a usable Python: {notes[0].strip()})")
PY
