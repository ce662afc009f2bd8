#!/usr/bin/python3
"""Make the embedded speech-enhancement model (data/speech) from Debian packages alone.

Why this exists
---------------
Small GRUs are mostly deployed for streaming speech: noise suppression, voice activity,
keyword spotting. fixq's second embedded model is of that kind, so that its quantization
defaults are checked on a regression judged in dB and not only on a language model. It is
made here, bit for bit again on the same machine, with no downloads:

Speech:  espeak-ng (Debian package espeak-ng) in 8 voices, at random speeds and pitches,
         reading sentences of the license texts that every Debian system ships
         (/usr/share/common-licenses, package base-files). Training speech reads Apache-2.0,
         Artistic, GPL-2, GPL-3, LGPL-2.1 and LGPL-3; held-out speech reads MPL-2.0.
Noise:   generated: white, pink (1/f power), and babble (5 espeak-ng talkers reading
         GFDL-1.3: its first 3/4 of sentences for training, the rest held out).
Mixing:  segments of 256 frames (2.98 s); speech at -35..-20 dBFS, noise at an SNR of
         -5..20 dB over the segment (training: uniform; held out: 3 kinds x 6 SNRs x 2).
Task:    tools/speech_task.py: 22 mel-spaced band energies of the mixture, log, normalised
         per band -> nn.GRU(22, 64, 2 layers, unidirectional) -> nn.Linear(64, 22) ->
         sigmoid band gains, trained (MSE) towards the ideal ratio mask; scored by the
         segmental SNR improvement of the masked bands and by the mask's MSE.
Train:   Adam (lr 3e-3, cosine decay to 3e-4), batch 32 whole segments from h0 = 0,
         gradient-norm clipping 1.0, fixed seeds, deterministic algorithms, one thread.

Outputs (little-endian float32 .npy, plus JSON) go to --out; see data/README.md.
Usage:   /usr/bin/python3 tools/train_speech.py --out data/speech
"""
import argparse
import atexit
import hashlib
import io
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import wave

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import speech_task as task  # noqa: E402

TEXT_DIR = "/usr/share/common-licenses"
SPEECH_TRAIN_FILES = ["Apache-2.0", "Artistic", "GPL-2", "GPL-3", "LGPL-2.1", "LGPL-3"]
SPEECH_HELDOUT_FILES = ["MPL-2.0"]
BABBLE_FILES = ["GFDL-1.3"]
VOICES = ["en-us+m1", "en-us+f2", "en-gb+m3", "en-gb+f4", "en-gb-scotland+m4", "en-029+f1",
          "en-gb-x-rp+f3", "en-us-nyc+m2"]
NOISES = ("white", "pink", "babble")
HELDOUT_SNRS = (-5.0, 0.0, 5.0, 10.0, 15.0, 20.0)
BABBLE_TALKERS = 5
HIDDEN = 64
LAYERS = 2
PAD_S = 0.3  # silence around each utterance before a segment is cut from it


def sentences(text_dir, files):
    out = []
    for name in files:
        path = os.path.join(text_dir, name)
        try:
            with open(path, "rb") as fh:
                text = fh.read().decode("utf-8")
        except OSError as e:
            sys.exit(f"error: cannot read {path} ({e}); it comes with Debian's base-files package")
        text = " ".join(text.split())
        for s in re.split(r"(?<=[.;:?!])\s+", text):
            letters = sum(c.isalpha() for c in s)
            if 25 <= len(s) <= 240 and letters >= 0.6 * len(s):
                out.append(s)
    return out


def espeak_environment():
    """The environment espeak-ng runs in: this one, with PulseAudio pointed at an empty
    runtime folder of our own and at no server.

    Why: espeak-ng opens its audio output (libpcaudio, PulseAudio) even with --stdout. Where
    PulseAudio has never run for this user (no ~/.config/pulse: a fresh machine, a CI
    container), that first open makes a random runtime folder, and the very first utterance
    came out different on every such run (measured: 71,008 of 77,561 samples differ), while
    every later one, and every one on a machine that had run espeak-ng before, matched. (Our
    reading, not verified in espeak-ng's source: the setup moves the C library's rand(), from
    which the voices draw their noise.) With a runtime folder that exists and no server to
    reach, every call takes the same path: checked in a brand-new Debian root."""
    global _ESPEAK_ENV
    if _ESPEAK_ENV is None:
        runtime = tempfile.mkdtemp(prefix="fixq-espeak-pulse-")
        atexit.register(shutil.rmtree, runtime, ignore_errors=True)
        _ESPEAK_ENV = dict(os.environ, PULSE_RUNTIME_PATH=runtime, PULSE_SERVER="unix:" + os.path.join(runtime, "none"))
    return _ESPEAK_ENV


_ESPEAK_ENV = None


def speak(text, voice, speed, pitch):
    """espeak-ng's 16-bit mono 22,050 Hz speech for the text, as float64 in [-1, 1)."""
    try:
        run = subprocess.run(["espeak-ng", "--stdin", "--stdout", "-v", voice, "-s", str(speed), "-p", str(pitch)],
                             input=text.encode("utf-8"), capture_output=True, check=True, env=espeak_environment())
    except FileNotFoundError:
        sys.exit("error: espeak-ng is missing (apt-get install espeak-ng)")
    except subprocess.CalledProcessError as e:
        sys.exit(f"error: espeak-ng failed on voice {voice}: {e.stderr.decode(errors='replace').strip()}")
    with wave.open(io.BytesIO(run.stdout)) as w:
        if (w.getframerate(), w.getnchannels(), w.getsampwidth()) != (task.SAMPLE_RATE, 1, 2):
            sys.exit(f"error: espeak-ng wrote {w.getframerate()} Hz, {w.getnchannels()} channels, "
                     f"{8 * w.getsampwidth()} bits; expected {task.SAMPLE_RATE} Hz mono 16-bit")
        pcm = np.frombuffer(w.readframes(1 << 30), dtype="<i2")
    return pcm.astype(np.float64) / 32768.0


def utterance(rng, pool):
    """A random sentence of the pool in a random voice, speed and pitch, with silence around."""
    text = pool[int(rng.integers(len(pool)))]
    voice = VOICES[int(rng.integers(len(VOICES)))]
    speed, pitch = int(rng.integers(140, 191)), int(rng.integers(30, 71))
    pad = np.zeros(int(PAD_S * task.SAMPLE_RATE))
    return np.concatenate([pad, speak(text, voice, speed, pitch), pad]), {
        "text": text, "voice": voice, "speed": speed, "pitch": pitch}


def cut(rng, signal):
    """A segment of SEGMENT_SAMPLES from the signal; a shorter one lies at a random offset in zeros."""
    n = task.SEGMENT_SAMPLES
    if len(signal) >= n:
        o = int(rng.integers(len(signal) - n + 1))
        return signal[o:o + n].copy()
    out = np.zeros(n)
    o = int(rng.integers(n - len(signal) + 1))
    out[o:o + len(signal)] = signal
    return out


def rms(x):
    return math.sqrt(float(np.mean(x * x)))


def noise(rng, kind, babble_pool):
    n = task.SEGMENT_SAMPLES
    if kind == "white":
        return rng.standard_normal(n)
    if kind == "pink":  # white noise shaped to power 1/f (DC removed)
        spec = np.fft.rfft(rng.standard_normal(n))
        f = np.arange(len(spec), dtype=np.float64)
        spec[0] = 0.0
        spec[1:] /= np.sqrt(f[1:])
        return np.fft.irfft(spec, n)
    out = np.zeros(n)  # babble: talkers of equal level
    for _ in range(BABBLE_TALKERS):
        talker = cut(rng, babble_pool[int(rng.integers(len(babble_pool)))])
        out += talker / max(rms(talker), 1e-12)
    return out


def mixture(rng, speech_pool, babble_pool, kind, snr_db):
    """One segment: speech and scaled noise, their band sums Es, En, D, and what was drawn."""
    signal, meta = utterance(rng, speech_pool)
    s = cut(rng, signal)
    while rms(s) == 0.0:  # a cut of silence only: cut again
        s = cut(rng, signal)
    level_db = float(rng.uniform(-35.0, -20.0))
    s *= 10.0 ** (level_db / 20.0) / rms(s)
    n = noise(rng, kind, babble_pool)
    n *= rms(s) / 10.0 ** (snr_db / 20.0) / rms(n)
    meta.update({"noise": kind, "snr_db": round(snr_db, 3), "speech_dbfs": round(level_db, 3)})
    return task.band_stats(s, n), meta


def log_energy(es, en, d):
    """ln of the mixture's band energy |S + N|^2 = Es + En + 2 D."""
    return np.log(np.maximum(es + en + 2.0 * d, 0.0) + 1e-10)


class SpeechGru(nn.Module):
    def __init__(self, bands=task.BANDS, hidden=HIDDEN, layers=LAYERS):
        super().__init__()
        self.gru = nn.GRU(bands, hidden, num_layers=layers)
        self.head = nn.Linear(hidden, bands)

    def forward(self, x):  # x [T, B, bands] -> band gains [T, B, bands]
        return torch.sigmoid(self.head(self.gru(x)[0]))


def stack(items):
    """[(Es, En, D), ...] per segment -> three [T, B, 22] arrays, time-major."""
    return [np.stack([it[i] for it in items], axis=1) for i in range(3)]


PREFIX_STEP = 150  # the steps whose losses (and the weights after them) metrics.json records for --stop-after


def weights_digest(model):
    """SHA-256 of the parameters' float32 bytes, in state_dict order. Bit-exact only among
    machines whose float kernels (OpenBLAS's by CPU, ATen's by ISA) round alike: a record,
    not a check (tests/python/test_speech_regen.py compares the losses and weights_rms)."""
    h = hashlib.sha256()
    for name, v in model.state_dict().items():
        h.update(name.encode())
        h.update(np.ascontiguousarray(v.detach().numpy(), dtype="<f4").tobytes())
    return h.hexdigest()


def weights_rms(model):
    """Each parameter tensor's root mean square, in float64, by state_dict name."""
    return {name: math.sqrt(float(np.mean(np.square(v.detach().numpy().astype(np.float64)))))
            for name, v in model.state_dict().items()}


def save_arrays(out, arrays):
    for name, a in arrays.items():
        a = np.ascontiguousarray(a, dtype="<f4")
        if not np.all(np.isfinite(a)):
            sys.exit(f"error: non-finite values in {name}")
        np.save(os.path.join(out, name + ".npy"), a)


def write_data_files(out, calib_items, held_items, features, calib_meta, held_meta, mean, std, args):
    """The files that do not depend on training: features, held-out band sums, task.json."""
    os.makedirs(out, exist_ok=True)
    h_es, h_en, h_d = stack(held_items)
    save_arrays(out, {"calib.features": features(calib_items), "heldout.features": features(held_items),
                      "heldout.speech_energy": h_es, "heldout.noise_energy": h_en, "heldout.cross": h_d})
    with open(os.path.join(out, "task.json"), "w") as fh:
        json.dump({
            "sample_rate": task.SAMPLE_RATE, "fft": task.FFT, "hop": task.HOP, "window": "periodic hann",
            "segment_frames": task.SEGMENT_FRAMES, "band_edges": task.band_edges(),
            "feature": "(ln(band energy + 1e-10) - mean) / std",
            "feature_mean": [round(float(v), 6) for v in mean], "feature_std": [round(float(v), 6) for v in std],
            "layers": LAYERS, "hidden": HIDDEN, "voices": VOICES, "text_dir": args.text_dir,
            "speech_train_files": SPEECH_TRAIN_FILES, "speech_heldout_files": SPEECH_HELDOUT_FILES,
            "babble_files": BABBLE_FILES, "calibration": calib_meta, "heldout": held_meta,
        }, fh, indent=1, ensure_ascii=True)
        fh.write("\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="data/speech", help="output directory")
    ap.add_argument("--steps", type=int, default=1500, help="optimizer steps (default 1500)")
    ap.add_argument("--train-segments", type=int, default=1536)
    ap.add_argument("--calib-segments", type=int, default=16)
    ap.add_argument("--heldout-repeats", type=int, default=2, help="held-out segments per noise kind and SNR")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--chunk", type=int, default=128, help="frames of each training sequence, cut from a segment")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--clip", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--text-dir", default=TEXT_DIR)
    ap.add_argument("--log-every", type=int, default=100)
    ap.add_argument("--stop-after", type=int, default=None, metavar="K",
                    help="the quick reproduction check: make the data, train the first K of --steps steps (same "
                         "schedule), write only the files that do not depend on training and prefix.json (the "
                         "weights' digest after step K)")
    args = ap.parse_args()
    if args.stop_after is not None and not 1 <= args.stop_after <= args.steps:
        sys.exit(f"error: --stop-after must be in [1, --steps = {args.steps}]")
    if not 1 <= args.chunk <= task.SEGMENT_FRAMES:
        sys.exit(f"error: --chunk must be in [1, {task.SEGMENT_FRAMES}]")
    t_start = time.time()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    torch.use_deterministic_algorithms(True)

    train_pool = sentences(args.text_dir, SPEECH_TRAIN_FILES)
    held_pool = sentences(args.text_dir, SPEECH_HELDOUT_FILES)
    babble = sentences(args.text_dir, BABBLE_FILES)
    cut_at = len(babble) * 3 // 4
    babble_train_text, babble_held_text = babble[:cut_at], babble[cut_at:]
    print(f"sentences: {len(train_pool)} training, {len(held_pool)} held out; babble {len(babble_train_text)} + "
          f"{len(babble_held_text)}", flush=True)

    def babble_pool(rng, texts, count):
        return [utterance(rng, texts)[0] for _ in range(count)]

    rng_babble = np.random.default_rng([args.seed, 1])
    babble_train = babble_pool(rng_babble, babble_train_text, 96)
    babble_held = babble_pool(rng_babble, babble_held_text, 32)

    def draw(rng, count, pool, bab):
        items, metas = [], []
        for _ in range(count):
            kind = NOISES[int(rng.integers(len(NOISES)))]
            stats, meta = mixture(rng, pool, bab, kind, float(rng.uniform(-5.0, 20.0)))
            items.append(stats)
            metas.append(meta)
        return items, metas

    train_items, _ = draw(np.random.default_rng([args.seed, 2]), args.train_segments, train_pool, babble_train)
    calib_items, calib_meta = draw(np.random.default_rng([args.seed, 3]), args.calib_segments, train_pool, babble_train)
    rng_held = np.random.default_rng([args.seed, 4])
    held_items, held_meta = [], []
    for kind in NOISES:
        for snr in HELDOUT_SNRS:
            for _ in range(args.heldout_repeats):
                stats, meta = mixture(rng_held, held_pool, babble_held, kind, snr)
                held_items.append(stats)
                held_meta.append(meta)
    print(f"mixtures: {len(train_items)} training, {len(calib_items)} calibration, {len(held_items)} held-out "
          f"segments of {task.SEGMENT_FRAMES} frames ({time.time() - t_start:.0f} s)", flush=True)

    tr_es, tr_en, tr_d = stack(train_items)
    tr_log = log_energy(tr_es, tr_en, tr_d)
    mean = tr_log.mean(axis=(0, 1))
    std = tr_log.std(axis=(0, 1))

    def features(items):
        es, en, d = stack(items)
        return ((log_energy(es, en, d) - mean) / std).astype("<f4")

    x_train = torch.from_numpy(((tr_log - mean) / std).astype(np.float32))
    y_train = torch.from_numpy(task.ideal_ratio_mask(tr_es, tr_en).astype(np.float32))
    del tr_es, tr_en, tr_d, tr_log

    model = SpeechGru()
    opt = torch.optim.Adam(model.parameters(), lr=args.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(s, args.steps) / args.steps)))
    gen = torch.Generator().manual_seed(args.seed)
    order, pos = torch.randperm(x_train.shape[1], generator=gen), 0
    t0 = time.time()
    run_loss, run_n = 0.0, 0
    digests, rms = {}, {}
    losses = []  # the training loss of each of the first PREFIX_STEP (or --stop-after) steps
    for step in range(1, args.steps + 1):
        if pos + args.batch > len(order):
            order, pos = torch.randperm(x_train.shape[1], generator=gen), 0
        idx = order[pos:pos + args.batch]
        pos += args.batch
        t0_frame = int(torch.randint(0, task.SEGMENT_FRAMES - args.chunk + 1, (1,), generator=gen))
        frames = slice(t0_frame, t0_frame + args.chunk)
        loss = nn.functional.mse_loss(model(x_train[frames, idx]), y_train[frames, idx])
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        opt.step()
        sched.step()
        run_loss += loss.item()
        if step <= max(PREFIX_STEP, args.stop_after or 0):
            losses.append(loss.item())
        run_n += 1
        if step % args.log_every == 0 or step == args.steps:
            print(f"step {step:5d}  train mask MSE {run_loss / run_n:.5f}  lr {sched.get_last_lr()[0]:.2e}  "
                  f"{time.time() - t0:.0f} s", flush=True)
            run_loss, run_n = 0.0, 0
        if step == PREFIX_STEP or step == args.stop_after:
            digests[str(step)] = weights_digest(model)
            rms[str(step)] = weights_rms(model)
        if step == args.stop_after:
            break
    train_seconds = time.time() - t0
    if args.stop_after is not None:
        write_data_files(args.out, calib_items, held_items, features, calib_meta, held_meta, mean, std, args)
        with open(os.path.join(args.out, "prefix.json"), "w") as fh:
            json.dump({"step": args.stop_after, "weights_sha256": digests[str(args.stop_after)], "losses": losses,
                       "weights_rms": rms[str(args.stop_after)]}, fh)
            fh.write("\n")
        print(f"wrote the data files and the weights' digest after step {args.stop_after} to {args.out} "
              f"({time.time() - t_start:.0f} s in all)")
        return

    model.eval()
    x_held = features(held_items)
    h_es, h_en, h_d = (a.astype("<f4") for a in stack(held_items))
    with torch.no_grad():
        y_held = model.gru(torch.from_numpy(x_held))[0].numpy()
        train_mse = float(nn.functional.mse_loss(model(x_train), y_train))
    sd = model.state_dict()
    w = {k: v.numpy() for k, v in sd.items()}
    gains = task.sigmoid(y_held.astype(np.float64) @ w["head.weight"].astype(np.float64).T + w["head.bias"])
    snr_gain = task.snr_improvement(gains, h_es, h_en, h_d)
    mse = task.mask_mse(gains, h_es, h_en)
    print(f"held out: SNR improvement {snr_gain:.4f} dB, mask MSE {mse:.6f} (train mask MSE {train_mse:.6f}); "
          f"{args.steps} steps in {train_seconds:.1f} s", flush=True)

    write_data_files(args.out, calib_items, held_items, features, calib_meta, held_meta, mean, std, args)
    arrays = {f"gru.{k[4:]}": v for k, v in w.items() if k.startswith("gru.")}
    arrays["head.weight"], arrays["head.bias"] = w["head.weight"], w["head.bias"]
    save_arrays(args.out, arrays)
    with open(os.path.join(args.out, "metrics.json"), "w") as fh:
        json.dump({
            "heldout_snr_improvement_db": round(snr_gain, 4), "heldout_mask_mse": round(mse, 6),
            "train_mask_mse": round(train_mse, 6), "steps": args.steps, "batch": args.batch, "lr": args.lr,
            "clip": args.clip, "seed": args.seed, "train_segments": args.train_segments, "chunk": args.chunk,
            "torch_version": torch.__version__, "numpy_version": np.__version__,
            "weights_sha256_after_step": digests,
            "train_loss_first_steps": losses[:PREFIX_STEP], "weights_rms_after_step": {str(PREFIX_STEP): rms[str(PREFIX_STEP)]},
            "espeak_ng": subprocess.run(["espeak-ng", "--version"], capture_output=True, text=True).stdout.split("Data")[0].strip(),
        }, fh, indent=1)
        fh.write("\n")
    print(f"wrote {args.out} ({time.time() - t_start:.0f} s in all)")


if __name__ == "__main__":
    main()
