"""The embedded speech model (data/speech) is what tools/train_speech.py makes: running the
script again (espeak-ng, the license texts, generated noise, deterministic training on one
thread; a few minutes) writes every file bit for bit as committed."""

import filecmp
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

DATA = ROOT / "data" / "speech"


def test_regenerated_data_equal_committed(tmp_path):
    if shutil.which("espeak-ng") is None:
        pytest.fail("espeak-ng is missing: scripts/setup.sh installs it (Debian package espeak-ng)")
    out = tmp_path / "speech"
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "train_speech.py"), "--out", str(out), "--log-every", "500"],
                       capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    committed = sorted(p.name for p in DATA.iterdir())
    assert sorted(p.name for p in out.iterdir()) == committed
    differ = [n for n in committed if not filecmp.cmp(DATA / n, out / n, shallow=False)]
    assert not differ, f"regenerated files differ from data/speech: {differ}\n{r.stdout}"
