"""src/cpu is the foundation every module stands on: it may include its own headers, its
public header fixq/cpu.h and the library-wide fixq/error.h, and nothing of any module
(issue: "the foundation knows no module"). Reporting which kernel each module picked lives
above the modules (src/report/kernel_report.cpp). Exits 1 naming every offending include.

    foundation_check.py REPO_ROOT
"""
import pathlib
import re
import sys

ALLOWED_PUBLIC = {"fixq/cpu.h", "fixq/error.h"}


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    cpu = root / "src" / "cpu"
    files = sorted(p for p in cpu.rglob("*") if p.suffix in {".h", ".cpp", ".inc"})
    if not files:
        print(f"no sources under {cpu}")
        return 1
    bad = []
    for path in files:
        for n, line in enumerate(path.read_text().splitlines(), 1):
            m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
            if not m:
                continue
            inc = m.group(1)
            if inc.startswith("cpu/") or inc in ALLOWED_PUBLIC:
                continue
            bad.append(f"{path.relative_to(root)}:{n}: includes \"{inc}\"")
    for b in bad:
        print(b)
    print(f"{len(files)} files under src/cpu, {len(bad)} includes of another module")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
