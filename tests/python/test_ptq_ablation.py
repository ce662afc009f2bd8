"""tools/ptq_ablation.py --ladder: the precision rows it prints are the configs they name.

A small random GRU (the tool's --random), run as a user runs the tool; each row's figures are
checked against properties every correct ladder has: wider operators give a closer output,
auto-bits meets the target it names on the calibration data, and the rows are the ones the
docs read (docs/speech_model.md).
"""

import subprocess
import sys

from conftest import ROOT

ROWS = ["int8", "+ state 16", "+ gates 16", "+ GEMM out 16", "+ state, gates 16", "+ state, gates, GEMM out 16",
        "int16", "auto-bits 0.9995", "auto-bits 0.9999"]


def ladder_rows():
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "ptq_ablation.py"), "--random", "8,16,1", "--ladder"],
                       capture_output=True, text=True, check=True)
    rows = {}
    for line in r.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or cells[1] not in ("pow2", "multiplier"):
            continue
        name = cells[0].split(" (")[0]  # auto-bits rows name their wide operators in brackets
        rows[(name, cells[1])] = {"label": cells[0], "cosine": float(cells[2]), "calib": float(cells[4])}
    return rows


def test_ladder_rows_are_the_configs_they_name():
    rows = ladder_rows()
    for scales in ("pow2", "multiplier"):
        assert [n for n, s in rows if s == scales] == ROWS
        got = {n: rows[(n, scales)] for n in ROWS}
        int8 = got["int8"]["cosine"]
        # Every group at 16 bits adds precision somewhere; all of them together nearly int16's.
        assert got["+ state, gates, GEMM out 16"]["cosine"] > got["+ state, gates 16"]["cosine"] > int8
        assert got["int16"]["cosine"] > got["+ state, gates, GEMM out 16"]["cosine"]
        assert 1 - got["int16"]["cosine"] < (1 - int8) / 5
        # auto-bits reaches its target on the calibration data; where int8 already does, it
        # promotes nothing and is int8.
        for target in (0.9995, 0.9999):
            row = got[f"auto-bits {target}"]
            assert row["calib"] >= target, (scales, row)
            if got["int8"]["calib"] >= target:
                assert row["label"].endswith("(none)") and row["cosine"] == int8
            else:
                assert not row["label"].endswith("(none)") and row["cosine"] > int8
