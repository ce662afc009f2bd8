#!/usr/bin/python3
"""PyTorch's dynamic int8 GRU on the embedded speech model, scored as `fixq demo` scores fixq.

The protocol is the demo's (src/cli/demo_speech.cpp, tools/speech_task.py): the GRU runs
over all held-out mixtures at once, [T, B, 22] from h0 = 0; the linear head and the
sigmoid run in float64 on its float32 output; the scores are the segmental SNR
improvement (dB) and the mask MSE of tools/speech_task.py, and the cosine of the GRU output
against torch's float32 GRU.
Rows: torch float32, then torch.ao.quantization.quantize_dynamic(model, {nn.GRU},
dtype=torch.qint8) (int8 weights, activations quantized per call, gates in float) under
the 'onednn' and 'qnnpack' quantized engines (Debian's torch has no fbgemm). An engine
that is missing or fails gives a row with "error" instead of numbers.

Prints one JSON object:
  {"torch_version": ..., "segments": B, "frames": T, "rows": [
     {"name": "torch f32", "engine": null, "snr_gain_db": ..., "mask_mse": ..., "cosine": 1.0},
     {"name": "torch dynamic int8", "engine": "onednn", ...}, {... "qnnpack" ...}]}

Usage: /usr/bin/python3 tools/speech_torch_int8.py [--data data/speech]
"""
import argparse
import json
import os
import sys

# qnnpack logs a warning per linear call unless the log levels are raised before torch loads.
os.environ.setdefault("TORCH_CPP_LOG_LEVEL", "ERROR")
os.environ.setdefault("GLOG_minloglevel", "2")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402
import torch  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speech_task as task  # noqa: E402
from charlm_torch_int8 import ENGINES, cosine_f64, dynamic_int8  # noqa: E402  the char-LM's rows do the same


class OneLineParser(argparse.ArgumentParser):
    """Bad options are one line on stderr and exit status 2, as the fixq CLI's."""

    def error(self, message):
        sys.stderr.write(f"speech_torch_int8.py: error: {message}\n")
        sys.exit(2)


class Gru(torch.nn.Module):
    """quantize_dynamic swaps children only, so the GRU must sit inside a module."""

    def __init__(self, m):
        super().__init__()
        self.gru = torch.nn.GRU(m.bands, m.hidden, num_layers=m.layers)
        with torch.no_grad():
            for n, a in m.gru_tensors.items():
                getattr(self.gru, n).copy_(torch.from_numpy(a))
        self.eval()

    def forward(self, x):
        return self.gru(x)[0]


def rows(m):
    """The float32 output and the JSON rows for the speech model m."""
    model = Gru(m)
    x = torch.from_numpy(m.features)
    with torch.inference_mode():
        y32 = model(x).numpy()
    snr, mse = m.scores(y32)
    out = [{"name": "torch f32", "engine": None, "snr_gain_db": snr, "mask_mse": mse, "cosine": 1.0}]
    for engine in ENGINES:
        row = {"name": "torch dynamic int8", "engine": engine}
        try:
            with torch.inference_mode():
                y = dynamic_int8(model, engine)(x).numpy()
            if not np.isfinite(y).all():
                raise RuntimeError("the GRU output has non-finite values")
            snr, mse = m.scores(y)
            row.update({"snr_gain_db": snr, "mask_mse": mse, "cosine": cosine_f64(y32, y)})
        except Exception as e:  # one engine failing must not hide the others' rows
            row["error"] = (str(e).strip().splitlines() or [type(e).__name__])[0]
        out.append(row)
    return y32, out


def main(argv):
    p = OneLineParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default=task.DEFAULT_DATA, help="folder of the embedded speech model [%(default)s]")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    try:
        m = task.SpeechModel(a.data)
    except (OSError, ValueError, KeyError) as e:
        sys.stderr.write(f"speech_torch_int8.py: {e}\n")
        return 1
    _, r = rows(m)
    print(json.dumps({"torch_version": torch.__version__, "segments": int(m.features.shape[1]),
                      "frames": int(m.features.shape[0]), "rows": r}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
