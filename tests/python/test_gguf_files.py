"""GGUF files written by fixq, read back by an independent reader, @huggingface/gguf (the
npm package scripts/setup.sh installs into tests/gguf_js/node_modules): the same names,
types, shapes and offsets, with ggml's type ids and block sizes taken from the shared golden
vectors' tables rather than from fixq; the bytes at those offsets are ggml's quantization
(fixq.formats, checked against ggml's golden bytes in test_formats_gguf.py). Also the GGUF
paths of `fixq formats dequantize`, `fixq gguf info` and `fixq quantize-stats`."""

import json
import shutil
import subprocess

import numpy as np
import pytest
import torch

import fixq
from conftest import FIXQ_BIN, ROOT, run_cli
from formats_util import GGML
from model_files import save_state_dict

JS = ROOT / "tests" / "gguf_js"
PLAIN = {"f32": (0, 1, 4), "f16": (1, 1, 2), "bf16": (30, 1, 2)}


def ggml_types():
    """name -> (ggml type id, elements per block, bytes per block), from the golden tables."""
    types = dict(PLAIN)
    for table in ("types.tsv", "types_more.tsv"):
        path = GGML / table
        if not path.is_file():
            pytest.fail(f"golden table {path} is missing")
        for line in path.read_text().splitlines()[1:]:
            name, tid, elems, size = line.split("\t")[:4]
            types[name] = (int(tid), int(elems), int(size))
    return types


def parse_js(path):
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed; scripts/setup.sh installs Debian's nodejs and npm")
    if not (JS / "node_modules" / "@huggingface" / "gguf").is_dir():
        pytest.fail(f"{JS}/node_modules lacks @huggingface/gguf; run scripts/setup.sh (it runs npm ci there)")
    r = subprocess.run([node, str(JS / "parse.mjs"), str(path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def align(x, a=32):
    return (x + a - 1) // a * a


def expected_layout(tensors, types):
    """[(name, ggml id, ne, offset)] for tensors [(name, type, C-order shape)] laid back to
    back, each at a multiple of 32, as GGUF v3 writers do."""
    out, offset = [], 0
    for name, t, shape in tensors:
        tid, elems, size = types[t]
        out.append((name, tid, [str(d) for d in reversed(shape)], str(offset)))
        offset = align(offset + int(np.prod(shape)) // elems * size)
    return out


def test_js_reader_agrees_on_every_type_fixq_writes(tmp_path):
    types = ggml_types()
    rng = np.random.default_rng(1)
    names = [t.name for t in fixq.formats.gguf_types() if t.name in types] + list(PLAIN)
    assert len(names) >= 15
    tensors = []
    for i, t in enumerate(names):
        elems = types[t][1]
        x = rng.standard_normal((3, 2 * max(elems, 32))).astype(np.float32)
        np.save(tmp_path / "x.npy", x)
        run_cli("formats", "quantize", "--type", t, tmp_path / "x.npy", "--name", f"blk.{i}.{t}", "-o",
                tmp_path / f"{t}.gguf")
        parsed = parse_js(tmp_path / f"{t}.gguf")
        assert parsed["version"] == 3 and parsed["tensor_count"] == "1"
        assert parsed["metadata"]["general.quantization_version"] == 2
        [(name, tid, ne, offset)] = expected_layout([(f"blk.{i}.{t}", t, x.shape)], types)
        got = parsed["tensors"][0]
        assert (got["name"], got["dtype"], got["shape"], got["offset"]) == (name, tid, ne, offset), t
        data = (tmp_path / f"{t}.gguf").read_bytes()
        start = int(parsed["data_offset"]) + int(got["offset"])
        if t in PLAIN:
            want = x.astype({"f32": np.float32, "f16": np.float16}[t]).tobytes() if t != "bf16" else \
                torch.from_numpy(x).to(torch.bfloat16).view(torch.int16).numpy().tobytes()
        else:
            want = fixq.formats.gguf_quantize(t, x).tobytes()
        assert data[start:start + len(want)] == want, t
        tensors.append((name, t, x.shape))


def test_safetensors_packs_into_one_gguf(tmp_path):
    types = ggml_types()
    torch.manual_seed(2)
    sd = {"embed.weight": torch.randn(16, 64), "layers.0.attn.weight": torch.randn(64, 64),
          "layers.0.norm.weight": torch.randn(64), "layers.0.odd.weight": torch.randn(8, 40)}
    floats = sd
    save_state_dict(tmp_path / "m.safetensors", floats, dtype="BF16", metadata={"format": "pt"})
    out = run_cli("formats", "quantize", "--type", "q8_0", tmp_path / "m.safetensors", "--fallback", "f16", "-o",
                  tmp_path / "m.gguf")
    assert "kept as f16" in out
    parsed = parse_js(tmp_path / "m.gguf")
    # The input's data order (the spec writer lays tensors out in insertion order).
    plan = [("embed.weight", "q8_0", (16, 64)), ("layers.0.attn.weight", "q8_0", (64, 64)),
            ("layers.0.norm.weight", "f16", (64,)), ("layers.0.odd.weight", "f16", (8, 40))]
    got = [(t["name"], t["dtype"], t["shape"], t["offset"]) for t in parsed["tensors"]]
    assert got == expected_layout(plan, types)
    assert parsed["metadata"]["general.name"] == "m.safetensors"
    assert parsed["metadata"]["safetensors.format"] == "pt"
    # Every tensor back through fixq: q8_0 is ggml's round trip of the stored bf16 values.
    for name, t, shape in plan:
        run_cli("formats", "dequantize", tmp_path / "m.gguf", "--tensor", name, "-o", tmp_path / "t.npy")
        back = np.load(tmp_path / "t.npy")
        stored = floats[name].to(torch.bfloat16).float().numpy()
        assert back.shape == shape
        if t == "q8_0":
            want = fixq.formats.gguf_dequantize("q8_0", fixq.formats.gguf_quantize("q8_0", stored))
        else:
            want = stored.astype(np.float16).astype(np.float32)
        assert np.array_equal(back.view(np.uint32), want.view(np.uint32)), name


def test_gguf_info_quantize_stats_and_errors(tmp_path):
    x = np.random.default_rng(3).standard_normal((4, 256)).astype(np.float32)
    np.save(tmp_path / "w.npy", x)
    run_cli("formats", "quantize", "--type", "f16", tmp_path / "w.npy", "-o", tmp_path / "f16.gguf")
    run_cli("formats", "quantize", "--type", "q4_K", tmp_path / "w.npy", "--name", "wq", "-o", tmp_path / "q.gguf")
    info = run_cli("gguf", "info", tmp_path / "q.gguf")
    assert "GGUF v3" in info and "general.quantization_version" in info
    assert any(line.split()[:3] == ["wq", "q4_K", "[4,"] for line in info.splitlines())
    stats = run_cli("quantize-stats", "--types", "q4_0,q8_0", tmp_path / "f16.gguf")
    assert "float tensors 1, values 1024" in stats and stats.count("rmse") == 2
    stats = run_cli("quantize-stats", "--types", "q4_0", tmp_path / "q.gguf")
    assert "float tensors 0" in stats and "already quantized, not measured 1 (wq q4_K)" in stats

    cut = (tmp_path / "q.gguf").read_bytes()
    (tmp_path / "cut.gguf").write_bytes(cut[:-10])
    for args, needle in [
        (("gguf", "info", tmp_path / "cut.gguf"), "truncated: tensor 'wq'"),
        (("formats", "dequantize", tmp_path / "q.gguf", "-o", tmp_path / "o.npy"), "name one with --tensor (wq)"),
        (("formats", "dequantize", tmp_path / "q.gguf", "--tensor", "w", "-o", tmp_path / "o.npy"), "no tensor named 'w'"),
        (("formats", "quantize", "--type", "q4_K", tmp_path / "w.npy", "--name", "n" * 64, "-o", tmp_path / "l.gguf"),
         "ggml reads names of at most 63"),
        (("formats", "quantize", "--type", "e4m3fn", tmp_path / "w.npy", "-o", tmp_path / "l.gguf"),
         "unknown GGUF tensor type 'e4m3fn'"),
    ]:
        r = subprocess.run([str(FIXQ_BIN), *map(str, args)], capture_output=True, text=True)
        assert r.returncode == 1 and r.stderr.startswith("fixq: error: ") and needle in r.stderr, (args, r.stderr)
    assert not (tmp_path / "l.gguf").exists()
