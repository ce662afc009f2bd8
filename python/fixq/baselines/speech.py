"""PyTorch's dynamic int8 GRU on the demo's speech-enhancement model, scored as `fixq demo`
scores fixq.

The protocol is the demo's (src/cli/demo_speech.cpp, fixq.baselines._speech_task): the GRU
runs over all held-out mixtures at once, [T, B, bands] from h0 = 0; the linear head and the
sigmoid run in float64 on its float32 output; the scores are the segmental SNR improvement
(dB) and the mask MSE of _speech_task, and the cosine of the GRU output against torch's
float32 GRU. us_per_step is the median wall time of one forward over all mixtures, / T, one
thread, over up to --repeats forwards (charlm's timed_forwards; the first one's output is scored).
Rows: torch float32, then torch.ao.quantization.quantize_dynamic(model, {nn.GRU},
dtype=torch.qint8) (int8 weights, activations quantized per call, gates in float) under the
'onednn' and 'qnnpack' quantized engines (Debian's torch has no fbgemm). An engine that is
missing or fails gives a row with "error" instead of numbers.

Prints one JSON object:
  {"torch_version": ..., "segments": B, "frames": T, "threads": 1, "rows": [
     {"name": "torch f32", "engine": null, "snr_gain_db": ..., "mask_mse": ..., "cosine": 1.0,
      "us_per_step": ...},
     {"name": "torch dynamic int8", "engine": "onednn", ...}, {... "qnnpack" ...}]}

Usage: python3 -m fixq.baselines speech --data DIR [--repeats 3]
(DIR: the model's files, data/speech in the repository, share/fixq/speech once installed)
"""
import json
import statistics
import sys

from . import OneLineParser
from .charlm import ENGINES, cosine_f64, dynamic_int8, repeats_arg, timed_forwards  # also sets torch's log levels
from ._speech_task import SpeechModel

import torch  # noqa: E402  (after .charlm, which raises torch's log levels before torch loads)


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


def rows(m, repeats):
    """The JSON rows for the speech model m."""
    model = Gru(m)
    x = torch.from_numpy(m.features)
    steps = x.shape[0]
    y32, s = timed_forwards(model, x, repeats)
    snr, mse = m.scores(y32)
    out = [{"name": "torch f32", "engine": None, "snr_gain_db": snr, "mask_mse": mse, "cosine": 1.0,
            "us_per_step": statistics.median(s) / steps * 1e6}]
    for engine in ENGINES:
        row = {"name": "torch dynamic int8", "engine": engine}
        try:
            y, s = timed_forwards(dynamic_int8(model, engine), x, repeats)
            snr, mse = m.scores(y)
            row.update({"snr_gain_db": snr, "mask_mse": mse, "cosine": cosine_f64(y32, y),
                        "us_per_step": statistics.median(s) / steps * 1e6})
        except Exception as e:  # one engine failing must not hide the others' rows
            row["error"] = (str(e).strip().splitlines() or [type(e).__name__])[0]
        out.append(row)
    return out


def main(argv):
    p = OneLineParser("speech", description=__doc__.splitlines()[0])
    p.add_argument("--data", required=True, help="folder of the model's files")
    p.add_argument("--repeats", type=repeats_arg, default=3, help="timed forwards per row; median taken [3]")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    try:
        m = SpeechModel(a.data)
    except ValueError as e:
        sys.stderr.write(f"fixq.baselines speech: {e}\n")
        return 1
    r = rows(m, a.repeats)
    print(json.dumps({"torch_version": torch.__version__, "segments": int(m.features.shape[1]),
                      "frames": int(m.features.shape[0]), "threads": torch.get_num_threads(), "rows": r}))
    return 0
