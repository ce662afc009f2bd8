"""The embedded speech-enhancement task (data/speech): framing, bands, and its two scores.

One home for the task's definitions, numpy only: the Python package's baseline
(fixq.baselines.speech, torch's rows of `fixq demo`, installed with fixq), and from the
source tree tools/train_speech.py (which makes the data and trains the model), the tests and
tools/ptq_ablation.py, through tools/speech_task.py, which loads this file by its path (no
build needed). The C++ side (src/cli/speech_model.cpp) implements the same two scores; the
tests hold them equal.

Signal:  22,050 Hz (espeak-ng's rate), frames of 512 samples under a periodic Hann window,
         hop 256 (11.6 ms), one-sided spectrum of 257 bins.
Bands:   22 rectangular bands, edges evenly spaced on the mel scale from 0 Hz to Nyquist
         (rounded to bins); every bin is in exactly one band, so a band gain applied to the
         mixture's bins has an error that the three band sums below give exactly.
Per frame t and band b (sums over the band's bins k; S speech, N noise, X = S + N):
         Es = sum |S_k|^2,  En = sum |N_k|^2,  D = sum Re(S_k conj N_k)
Target:  the ideal ratio mask IRM = sqrt(Es / (Es + En)) (Wang et al. 2014, beta = 1/2).
Output:  gains g = sigmoid(head(GRU(features))), one per band.
Scores:  * SNR improvement, dB: the enhanced spectrum g_b X_k has error energy per band
           sum |g X_k - S_k|^2 = (1 - g)^2 Es + g^2 En - 2 g (1 - g) D.
           Per frame, SNR_in = 10 log10(sum_b Es / sum_b En) and SNR_out = 10 log10(sum_b Es /
           sum_b error), each clamped to [-10, 35] dB (segmental SNR, Quackenbush et al. 1988);
           the score is the mean of SNR_out - SNR_in over the frames whose speech energy is
           within 40 dB of the loudest frame of their segment (speech present).
         * mask MSE: the mean of (g - IRM)^2 over every frame and band.
"""
import json
import math
import os

import numpy as np

SAMPLE_RATE = 22050
FFT = 512
HOP = 256
BANDS = 22
SEGMENT_FRAMES = 256
SEGMENT_SAMPLES = (SEGMENT_FRAMES - 1) * HOP + FFT
SNR_CLAMP_DB = (-10.0, 35.0)
ACTIVE_DB = 40.0

def band_edges():
    """23 bin indices: band b holds bins [edges[b], edges[b + 1]) of the 257."""
    bins = FFT // 2 + 1
    mel_top = 2595.0 * math.log10(1.0 + (SAMPLE_RATE / 2) / 700.0)
    edges = [0]
    for b in range(1, BANDS):
        hz = 700.0 * (10.0 ** (mel_top * b / BANDS / 2595.0) - 1.0)
        edges.append(max(int(round(hz / SAMPLE_RATE * FFT)), edges[-1] + 1))
    edges.append(bins)
    return edges


def stft(x):
    """Complex spectrum [frames, 257] of a float64 signal, frames at t * HOP."""
    frames = 1 + (len(x) - FFT) // HOP
    idx = np.arange(FFT)[None, :] + HOP * np.arange(frames)[:, None]
    window = 0.5 - 0.5 * np.cos(2.0 * np.pi * np.arange(FFT) / FFT)
    return np.fft.rfft(x[idx] * window, axis=1)


def band_sum(per_bin):
    """[frames, 257] -> [frames, 22], each band's sum over its bins."""
    e = band_edges()
    return np.stack([per_bin[:, e[b]:e[b + 1]].sum(axis=1) for b in range(BANDS)], axis=1)


def band_stats(speech, noise):
    """Es, En, D [frames, 22] (float64) of a speech and a noise signal of equal length."""
    s, n = stft(speech), stft(noise)
    return band_sum(np.abs(s) ** 2), band_sum(np.abs(n) ** 2), band_sum((s * np.conj(n)).real)


def ideal_ratio_mask(es, en):
    return np.sqrt(es / np.maximum(es + en, 1e-30))


def sigmoid(v):
    return 1.0 / (1.0 + np.exp(-v))


def snr_improvement(gains, es, en, d):
    """The score in dB; every array [T, B, 22] (B segments, time-major), float64 inside."""
    g = gains.astype(np.float64)
    es, en, d = es.astype(np.float64), en.astype(np.float64), d.astype(np.float64)
    err = ((1.0 - g) ** 2 * es + g ** 2 * en - 2.0 * g * (1.0 - g) * d).sum(axis=2)
    s, n = es.sum(axis=2), en.sum(axis=2)
    active = s > s.max(axis=0, keepdims=True) * 10.0 ** (-ACTIVE_DB / 10.0)
    lo, hi = SNR_CLAMP_DB
    snr_in = np.clip(10.0 * np.log10(np.maximum(s / np.maximum(n, 1e-30), 1e-300)), lo, hi)
    snr_out = np.clip(10.0 * np.log10(np.maximum(s / np.maximum(err, 1e-30), 1e-300)), lo, hi)
    return float((snr_out - snr_in)[active].mean())


def mask_mse(gains, es, en):
    irm = ideal_ratio_mask(es.astype(np.float64), en.astype(np.float64))
    return float(((gains.astype(np.float64) - irm) ** 2).mean())


def load_npy(data, name, ndim):
    path = os.path.join(data, name + ".npy")
    try:
        a = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        raise ValueError(f"cannot read {path}: {e}")
    if a.ndim != ndim or a.dtype != np.float32:
        raise ValueError(f"{path}: expected {ndim}-d float32, got {a.ndim}-d {a.dtype.name}")
    return a


class SpeechModel:
    """data/speech as the demo reads it (src/cli/demo_speech.cpp), with its shape checks."""

    def __init__(self, data):
        self.data = data
        path = os.path.join(data, "task.json")
        try:
            with open(path, encoding="utf-8") as f:
                self.task = json.load(f)
        except (OSError, ValueError) as e:
            raise ValueError(f"cannot read {path}: {e}")
        self.layers = self.task.get("layers") if isinstance(self.task, dict) else None
        if not isinstance(self.layers, int) or not 1 <= self.layers <= 8:
            raise ValueError(f"{path}: 'layers' must be an integer in 1..8")
        self.gru_tensors = {}
        for k in range(self.layers):
            for n in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                key = f"{n}_l{k}"
                self.gru_tensors[key] = load_npy(data, "gru." + key, 2 if n.startswith("weight") else 1)
        self.head_w = load_npy(data, "head.weight", 2).astype(np.float64)
        self.head_b = load_npy(data, "head.bias", 1).astype(np.float64)
        self.calib = load_npy(data, "calib.features", 3)
        self.features = load_npy(data, "heldout.features", 3)
        self.es = load_npy(data, "heldout.speech_energy", 3)
        self.en = load_npy(data, "heldout.noise_energy", 3)
        self.d = load_npy(data, "heldout.cross", 3)
        hidden = self.gru_tensors["weight_hh_l0"].shape[1]
        bands = self.features.shape[2]
        if not (self.head_w.shape == (bands, hidden) and self.head_b.shape == (bands,)
                and self.gru_tensors["weight_ih_l0"].shape == (3 * hidden, bands)
                and self.calib.shape[2] == bands
                and self.es.shape == self.features.shape == self.en.shape == self.d.shape):
            raise ValueError(f"{data}: GRU, head, features and held-out band sums do not fit together")
        self.hidden = hidden
        self.bands = bands

    def gains(self, y):
        """Band gains [T, B, 22] in float64 from the GRU output y [T, B, H]."""
        return sigmoid(y.astype(np.float64) @ self.head_w.T + self.head_b)

    def scores(self, y):
        """(SNR improvement dB, mask MSE) of the GRU output y over the held-out segments."""
        g = self.gains(y)
        return snr_improvement(g, self.es, self.en, self.d), mask_mse(g, self.es, self.en)
