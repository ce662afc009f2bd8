"""The embedded speech model (data/speech) is what tools/train_speech.py makes.

The quick check (always): the script makes the data again (espeak-ng, the license texts,
generated noise; about 80 s) and trains the first 150 of its 1500 steps with the same
schedule; the files that do not depend on training must equal the committed ones bit for
bit, and the weights after step 150 must have the digest that the full run recorded in
metrics.json. The rest of training is the same code on the same thread; regenerating the
whole folder (about 8 minutes, the suite's longest test) runs when FIXQ_FULL_REGEN=1, and
compares every file."""

import filecmp
import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import ROOT

DATA = ROOT / "data" / "speech"
DATA_FILES = ["calib.features.npy", "heldout.cross.npy", "heldout.features.npy", "heldout.noise_energy.npy",
              "heldout.speech_energy.npy", "task.json"]


def train(out, *extra):
    if shutil.which("espeak-ng") is None:
        pytest.fail("espeak-ng is missing: scripts/setup.sh installs it (Debian package espeak-ng)")
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "train_speech.py"), "--out", str(out), "--log-every", "500",
                        *extra], capture_output=True, text=True, env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_data_and_first_steps_equal_committed(tmp_path):
    out = tmp_path / "speech"
    log = train(out, "--stop-after", "150")
    assert sorted(p.name for p in out.iterdir()) == sorted(DATA_FILES + ["prefix.json"])
    differ = [n for n in DATA_FILES if not filecmp.cmp(DATA / n, out / n, shallow=False)]
    assert not differ, f"regenerated data files differ from data/speech: {differ}\n{log}"
    prefix = json.loads((out / "prefix.json").read_text())
    recorded = json.loads((DATA / "metrics.json").read_text())["weights_sha256_after_step"]
    assert prefix["step"] == 150 and prefix["weights_sha256"] == recorded["150"], (prefix, recorded, log)


@pytest.mark.skipif(os.environ.get("FIXQ_FULL_REGEN") != "1", reason="the whole run takes ~8 minutes: FIXQ_FULL_REGEN=1")
def test_regenerated_data_equal_committed(tmp_path):
    out = tmp_path / "speech"
    log = train(out)
    committed = sorted(p.name for p in DATA.iterdir())
    assert sorted(p.name for p in out.iterdir()) == committed
    differ = [n for n in committed if not filecmp.cmp(DATA / n, out / n, shallow=False)]
    assert not differ, f"regenerated files differ from data/speech: {differ}\n{log}"


def test_stop_after_out_of_range_is_refused(tmp_path):
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "train_speech.py"), "--out", str(tmp_path / "x"),
                        "--steps", "10", "--stop-after", "11"], capture_output=True, text=True)
    assert r.returncode != 0 and "--stop-after must be in [1, --steps = 10]" in r.stderr, r.stderr
    assert not (tmp_path / "x").exists()
