"""fixq.formats' registry from Python: every format by name, encode / decode, and .bin
files interchangeable with the command line's (`fixq formats quantize|dequantize`)."""

import numpy as np
import pytest

import fixq
from conftest import run_cli
from formats_util import GGML, golden

F = fixq.formats


def test_registry_lists_every_family_with_unique_names():
    formats = F.all_formats()
    families = {f.family for f in formats}
    assert families == {"gguf", "float", "mx", "int_groups"}
    names = [n for f in formats for n in [f.name, *f.aliases]]
    assert len(names) == len(set(names))
    assert F.find_format("float8_e4m3fn").name == "e4m3fn"
    assert F.find_format("ocp_mxfp4").family == "mx" and F.find_format("mxfp4").family == "gguf"
    assert F.find_format("int4_g32").payload_bytes([2, 64]) == 2 * 64 // 2 + 5 * 2 * 2
    with pytest.raises(ValueError, match="unknown format 'q9'"):
        F.find_format("q9")


def test_encode_is_ggmls_bytes_and_decode_its_floats():
    x = golden(GGML, "inputs.f32", np.float32).reshape(64, 256)
    t = F.encode("q4_K", x)
    assert (t.format, t.shape) == ("q4_K", (64, 256))
    assert t.payload == golden(GGML, "q4_K.bin", np.uint8).tobytes()
    back = F.decode(t)
    assert back.dtype == np.float32 and back.shape == (64, 256)
    np.testing.assert_array_equal(back.view(np.uint32), golden(GGML, "q4_K.dequant.f32", np.uint32).reshape(64, 256))


def test_bin_files_go_both_ways_between_python_and_the_cli(tmp_path):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((6, 64)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    for fmt in ["q8_0", "e5m2", "bf16", "mxfp6_e2m3", "int2_g32"]:
        # The CLI writes, Python reads.
        run_cli("formats", "quantize", "--type", fmt, tmp_path / "x.npy", "-o", tmp_path / "cli.bin")
        t = F.load_encoded(tmp_path / "cli.bin")
        assert t.format == fmt and t.shape == (6, 64)
        assert t.payload == F.encode(fmt, x).payload
        run_cli("formats", "dequantize", tmp_path / "cli.bin", "-o", tmp_path / "cli.npy")
        np.testing.assert_array_equal(F.decode(t), np.load(tmp_path / "cli.npy"))
        # Python writes, the CLI reads.
        F.save_encoded(tmp_path / "py.bin", F.encode(fmt, x))
        assert (tmp_path / "py.bin").read_bytes() == (tmp_path / "cli.bin").read_bytes()
        run_cli("formats", "dequantize", tmp_path / "py.bin", "-o", tmp_path / "py.npy")
        np.testing.assert_array_equal(np.load(tmp_path / "py.npy"), t.decode())


def test_saturation_and_bad_payloads_are_clear_errors():
    big = np.array([1e6], np.float32)
    assert F.encode("e4m3fn", big).payload == b"\x7f" and F.encode("e4m3fn", big, overflow="saturate").payload == b"\x7e"
    with pytest.raises(ValueError, match="saturation applies to the low-precision float formats, not to q4_0"):
        F.encode("q4_0", np.zeros(32), overflow="saturate")
    with pytest.raises(ValueError, match="overflow must be default or saturate"):
        F.encode("e4m3fn", big, overflow="clip")
    bad = F.EncodedTensor("e2m1fn", [3], b"\x21")
    with pytest.raises(ValueError, match=r"\[3\] e2m1fn values take 2 bytes, the payload has 1"):
        bad.decode()
