#!/usr/bin/python3
"""Writes the seed inputs of the fuzz corpora, tests/fuzz/corpus/<target>/seed-*: small
valid files of each loader plus a few truncated or corrupted variants, which the fuzzers
start from and the regression test (tests/fuzz_regression/) runs on every build. Also
writes the reproducers of loader bugs found so far as crash-* in the corpora (fixed; they
must keep loading or failing cleanly). Reproducers that are fuzzer outputs kept byte for
byte are not written here, and stay: encoded/crash-bf16-byte-count-overflow.bin and
onnx_gru/crash-transpose-perm-renamed.onnx (issue 43; tests/fuzz_regression checks their
messages).

Valid files come from fixq's own writers where fixq has one (tools/export_gru.py for float
GRUs, `build/bin/fixq gru quantize` for quantized ones; build/ must be built) and from
the format definitions otherwise; the .npy and safetensors goldens of tests/io/data are
copied. The output is deterministic (fixed seeds); run from anywhere with Debian's
/usr/bin/python3 (numpy, torch), FIXQ_BIN naming another build's fixq than build/bin/fixq:
  /usr/bin/python3 tests/fuzz/make_seeds.py
Files named by libFuzzer (40 hex digits) are left alone; seed-* files are rewritten.
"""
import glob
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CORPUS = os.path.join(ROOT, "tests", "fuzz", "corpus")
FIXQ = os.environ.get("FIXQ_BIN", os.path.join(ROOT, "build", "bin", "fixq"))  # FIXQ_BIN: another build's


def out(target, name, data, prefix="seed-", root=CORPUS):
    d = os.path.join(root, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, prefix + name), "wb") as f:
        f.write(data)


def crash(target, name, data):
    out(target, name, data, prefix="crash-")


def nested(depth):
    """A JSON value nested depth levels deep; 100000 levels overflowed the stack of the
    ASan build in nlohmann's recursive dump() (the Release CLI segfaulted as well)."""
    return "[" * depth + "]" * depth


def variants(target, name, data):
    """The file itself, cut short in its header and in its data, and with one byte
    flipped in the middle: the commonest ways a file is damaged."""
    out(target, name, data)
    out(target, name + ".cut-head", data[: min(len(data) // 4, 40)])
    out(target, name + ".cut-tail", data[:-3])
    mid = len(data) // 2
    out(target, name + ".flip", data[:mid] + bytes([data[mid] ^ 0x5A]) + data[mid + 1:])


def safetensors_bytes(tensors, metadata=None):
    """tensors: [(name, dtype, shape, raw bytes)], laid out in the given order."""
    header, data = {}, b""
    if metadata is not None:
        header["__metadata__"] = metadata
    for name, dtype, shape, raw in tensors:
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + data


def safetensors_bytes_raw(header_text):
    """A file of the given header text and no data."""
    text = header_text.encode()
    return struct.pack("<Q", len(text)) + text


def read_safetensors(data):
    n = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + n])
    metadata = header.pop("__metadata__", None)
    body = data[8 + n:]
    tensors = [(k, v["dtype"], v["shape"], body[v["data_offsets"][0]:v["data_offsets"][1]])
               for k, v in sorted(header.items(), key=lambda kv: kv[1]["data_offsets"])]
    return tensors, metadata


def with_dtype(data, dtype, np_dtype):
    """A float model file rewritten with every tensor stored as dtype."""
    tensors, metadata = read_safetensors(data)
    conv = [(k, dtype, s, np.frombuffer(raw, "<f4").astype(np_dtype).tobytes()) for k, _, s, raw in tensors]
    return safetensors_bytes(conv, metadata)


def export_gru(tmp, name, *args):
    path = os.path.join(tmp, name)
    subprocess.run([sys.executable, os.path.join(ROOT, "tools", "export_gru.py"), "--out", path, *args],
                   check=True, stdout=subprocess.DEVNULL)
    with open(path, "rb") as f:
        return path, f.read()


def quantize(tmp, model, calib, name, *args):
    """A quantized model by `fixq gru quantize`, its parameters JSON made compact (fixq
    writes it indented), and an all-8-bit config without its "bits" map (the same config),
    which halves the file: smaller inputs fuzz faster and keep the corpus small."""
    path = os.path.join(tmp, name)
    subprocess.run([FIXQ, "gru", "quantize", "--model", model, "--calib", calib, "-o", path, *args],
                   check=True, stdout=subprocess.DEVNULL)
    with open(path, "rb") as f:
        tensors, metadata = read_safetensors(f.read())
    params = json.loads(metadata["params"])
    if all(bits == 8 for bits in params["config"]["bits"].values()):
        del params["config"]["bits"]
    metadata["params"] = json.dumps(params, separators=(",", ":"))
    return safetensors_bytes(tensors, metadata)


def qgru_variant(data, edit):
    """A quantized model whose parameters JSON (metadata "params") edit(params) changed;
    edit may also return new JSON text."""
    tensors, metadata = read_safetensors(data)
    params = json.loads(metadata["params"])
    text = edit(params)
    metadata["params"] = text if text is not None else json.dumps(params, separators=(",", ":"))
    return safetensors_bytes(tensors, metadata)


def set_all(params, op, **fields):
    for cell in params["cells"]:
        cell[op].update(fields)


def encoded_bytes(fmt, shape, payload):
    head = b"FIXQPK" + struct.pack("<H", 1) + struct.pack("<I", len(fmt)) + fmt.encode()
    head += struct.pack("<I", len(shape)) + b"".join(struct.pack("<q", d) for d in shape)
    return head + struct.pack("<Q", len(payload)) + payload


def gguf_string(s):
    b = s.encode()
    return struct.pack("<Q", len(b)) + b


def gguf_all_values():
    """A GGUF v3 file written from the spec: one metadata entry of every value type (an
    array of arrays included) and an f32 tensor."""
    kv = [("u8", 0, struct.pack("<B", 7)), ("i8", 1, struct.pack("<b", -7)), ("u16", 2, struct.pack("<H", 7)),
          ("i16", 3, struct.pack("<h", -7)), ("u32", 4, struct.pack("<I", 7)), ("i32", 5, struct.pack("<i", -7)),
          ("f32", 6, struct.pack("<f", 0.5)), ("bool", 7, b"\1"), ("str", 8, gguf_string("x")),
          ("arr", 9, struct.pack("<IQ", 5, 2) + struct.pack("<2i", 1, 2)),
          ("nested", 9, struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 8, 1) + gguf_string("y")),
          ("u64", 10, struct.pack("<Q", 7)), ("i64", 11, struct.pack("<q", -7)), ("f64", 12, struct.pack("<d", 0.25))]
    head = b"GGUF" + struct.pack("<IQQ", 3, 1, len(kv))
    for key, t, v in kv:
        head += gguf_string(key) + struct.pack("<I", t) + v
    head += gguf_string("t") + struct.pack("<IQQ", 2, 2, 1) + struct.pack("<IQ", 0, 0)
    head += b"\0" * ((32 - len(head) % 32) % 32)
    return head + struct.pack("<2f", 1.0, -1.0)


def onnx_export(tmp, name, c, h, layers, bidirectional):
    import warnings
    import torch
    torch.manual_seed(layers)
    gru = torch.nn.GRU(c, h, num_layers=layers, bidirectional=bidirectional)
    path = os.path.join(tmp, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(gru, (torch.zeros(2, 1, c),), path, opset_version=14)
    with open(path, "rb") as f:
        return f.read()


def onnx_model_seeds(tmp):
    """onnx_model: small whole models as torch.onnx.export writes them (causal convs, a GLU,
    stacked GRUs with h_n[-1], initial and final states), opsets 11 and 17."""
    import warnings
    import torch
    from torch import nn

    class Speech(nn.Module):  # Pad + Conv1d + tanh, two GRUs, Concat, Linear + sigmoid
        def __init__(self):
            super().__init__()
            self.conv, self.g1, self.g2, self.fc = nn.Conv1d(2, 2, 3), nn.GRU(2, 2), nn.GRU(2, 1), nn.Linear(5, 1)

        def forward(self, x):  # [B, T, C]
            t = torch.tanh(self.conv(nn.functional.pad(x.permute(0, 2, 1), (2, 0)))).permute(2, 0, 1)
            a, _ = self.g1(t)
            b, _ = self.g2(a)
            return torch.sigmoid(self.fc(torch.cat([t, a, b], -1)))

    class Glu(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = nn.Linear(2, 4)

        def forward(self, x):
            a, b = self.fc(x).chunk(2, -1)
            return torch.softmax(a * torch.sigmoid(b), -1)

    class Kws(nn.Module):  # symmetric pads + Slice, two layers, h_n[-1] -> Gemm
        def __init__(self):
            super().__init__()
            self.conv, self.gru, self.fc = nn.Conv1d(2, 2, 2, padding=1, groups=2), nn.GRU(2, 2, num_layers=2), nn.Linear(2, 2)

        def forward(self, x):  # [B, C, T]
            _, h = self.gru(torch.relu(self.conv(x)[:, :, :-1]).permute(2, 0, 1))
            return self.fc(h[-1])

    class State(nn.Module):
        def __init__(self):
            super().__init__()
            self.gru = nn.GRU(1, 1, bidirectional=True, batch_first=True)

        def forward(self, x, h0):
            return self.gru(x, h0)

    models = [("speech", Speech(), (torch.zeros(1, 3, 2),), ["x"], {"x": {0: "B", 1: "T"}}),
              ("glu", Glu(), (torch.zeros(1, 3, 2),), ["x"], {"x": {0: "B", 1: "T"}}),
              ("kws", Kws(), (torch.zeros(1, 2, 3),), ["x"], {"x": {0: "B", 2: "T"}}),
              ("state", State(), (torch.zeros(1, 3, 1), torch.zeros(2, 1, 1)), ["x", "h0"], {"x": {0: "B", 1: "T"}})]
    torch.manual_seed(44)
    for name, module, args, names, dyn in models:
        for opset in (11, 17):
            path = os.path.join(tmp, "%s-%d.onnx" % (name, opset))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.onnx.export(module.eval(), args, path, opset_version=opset, input_names=names, dynamic_axes=dyn)
            with open(path, "rb") as f:
                (variants if opset == 17 else out)("onnx_model", "%s-%d.onnx" % (name, opset), f.read())


def model_seeds(tmp):
    """model: a version 2 model-quantized file, the preset auto's (docs/spec.md 10.6), from
    `fixq model quantize --config auto` on a tiny Linear + tanh + GRU + sigmoid head, and
    its damaged variants. (The version 1 seeds, *_int8_* / *_int16_*, are test_model's:
    FIXQ_WRITE_MODEL_SEEDS in tests/model/file_test.cpp.)"""
    import warnings
    import torch
    from torch import nn

    class Small(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc, self.gru, self.head = nn.Linear(2, 3), nn.GRU(3, 2, batch_first=True), nn.Linear(2, 1)

        def forward(self, x):  # [B, T, C]
            return torch.sigmoid(self.head(self.gru(torch.tanh(self.fc(x)))[0]))

    torch.manual_seed(45)
    onnx_path, calib, q = (os.path.join(tmp, n) for n in ("small.onnx", "small-calib.npy", "small-auto.fixq"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(Small().eval(), (torch.zeros(1, 3, 2),), onnx_path, opset_version=13, input_names=["x"],
                          output_names=["y"], dynamic_axes={"x": {0: "B", 1: "T"}})
    np.save(calib, np.random.default_rng(45).standard_normal((4, 8, 2)).astype("<f4"))
    subprocess.run([FIXQ, "model", "quantize", "--model", onnx_path, "--calib", calib, "--config", "auto", "-o", q],
                   check=True, stdout=subprocess.DEVNULL)
    with open(q, "rb") as f:
        data = f.read()
    version = read_safetensors(data)[1].get("fixq.version")
    assert version == "2", "the preset auto's file is version %s, not 2" % version
    variants("model", "auto-v2.fixq", data)


def main():
    if not os.access(FIXQ, os.X_OK):
        sys.exit("make_seeds.py: %s is missing; build fixq first (scripts/setup.sh)" % FIXQ)
    for f in glob.glob(os.path.join(CORPUS, "*", "seed-*")):
        os.remove(f)
    data_dir = os.path.join(ROOT, "tests", "io", "data")
    with tempfile.TemporaryDirectory() as tmp:
        _, small = export_gru(tmp, "small.safetensors", "--input-size", "3", "--hidden-size", "4", "--seed", "1")
        bidi_path, bidi = export_gru(tmp, "bidi.safetensors", "--input-size", "2", "--hidden-size", "2",
                                     "--layers", "2", "--bidirectional", "--seed", "2")
        _, nobias = export_gru(tmp, "nobias.safetensors", "--input-size", "2", "--hidden-size", "3", "--no-bias",
                               "--seed", "3")
        # Quantized seeds keep to the fewest weights: the fuzzers' inputs grow from them.
        tiny_path, _ = export_gru(tmp, "tiny.safetensors", "--input-size", "2", "--hidden-size", "1", "--seed", "4")
        tiny_bidi_path, _ = export_gru(tmp, "tiny-bidi.safetensors", "--input-size", "1", "--hidden-size", "1",
                                       "--bidirectional", "--seed", "5")
        tiny_2layer_path, _ = export_gru(tmp, "tiny-2layer.safetensors", "--input-size", "1", "--hidden-size", "1",
                                         "--layers", "2", "--seed", "6")

        # safetensors: every dtype, a scalar, an empty tensor, a foreign layout, a GRU.
        for name in ("st_all_dtypes.safetensors", "st_foreign.safetensors"):
            with open(os.path.join(data_dir, name), "rb") as f:
                out("safetensors", name, f.read())
        variants("safetensors", "gru.safetensors", small)
        out("safetensors", "f64-beyond-float.safetensors",
            safetensors_bytes([("x", "F64", [2], struct.pack("<2d", 1.0, 1e300))]))
        out("safetensors", "empty-header.safetensors", safetensors_bytes([]))

        # gru_float: as exported, other float dtypes, damaged, metadata disagreeing.
        variants("gru_float", "small.safetensors", small)
        out("gru_float", "bidi.safetensors", bidi)
        out("gru_float", "nobias.safetensors", nobias)
        out("gru_float", "small-f16.safetensors", with_dtype(small, "F16", "<f2"))
        out("gru_float", "small-f64.safetensors", with_dtype(small, "F64", "<f8"))
        tensors, metadata = read_safetensors(small)
        out("gru_float", "small-wrong-meta.safetensors", safetensors_bytes(tensors, dict(metadata, hidden_size="5")))
        # Plain state_dicts (no fixq metadata): a GRU inside a model, two GRUs, an LSTM.
        prefixed = [("encoder.rnn." + n, d, s, r) for n, d, s, r in tensors] + [("fc.weight", "F32", [1], b"\0" * 4)]
        variants("gru_float", "plain-prefixed.safetensors", safetensors_bytes(prefixed, {"format": "pt"}))
        out("gru_float", "plain-two-grus.safetensors",
            safetensors_bytes(prefixed + [("dec." + n, d, s, r) for n, d, s, r in tensors]))
        out("gru_float", "plain-f16.safetensors", with_dtype(safetensors_bytes(tensors), "F16", "<f2"))
        lstm = [("weight_ih_l0", "F32", [16, 3], b"\0" * 192), ("weight_hh_l0", "F32", [16, 4], b"\0" * 256)]
        out("gru_float", "plain-lstm.safetensors", safetensors_bytes(lstm))

        # gguf: fixq's own writer (every kind of tensor type), a hand-built header with
        # metadata of every value type, damaged copies.
        x = os.path.join(tmp, "x.npy")
        np.save(x, np.random.default_rng(7).standard_normal((2, 256)).astype("<f4"))
        for t in ("q4_0", "q4_K", "iq4_nl", "f16", "bf16"):
            g = os.path.join(tmp, t + ".gguf")
            subprocess.run([FIXQ, "formats", "quantize", "--type", t, x, "--name", "w", "-o", g], check=True,
                           stdout=subprocess.DEVNULL)
            with open(g, "rb") as f:
                (variants if t == "q4_K" else out)("gguf", t + ".gguf", f.read())
        variants("gguf", "all-values.gguf", gguf_all_values())

        # onnx_gru: torch.onnx.export of a GRU (one layer; two bidirectional), damaged.
        variants("onnx_gru", "gru.onnx", onnx_export(tmp, "g1.onnx", 2, 2, 1, False))
        out("onnx_gru", "gru-2layer-bidi.onnx", onnx_export(tmp, "g2.onnx", 1, 1, 2, True))
        out("gru_float", "gru.onnx", onnx_export(tmp, "g3.onnx", 1, 2, 1, False))
        onnx_model_seeds(tmp)
        model_seeds(tmp)

        # qgru: int8 / int16, shifts / multipliers, bidirectional, two layers.
        def calib(name, c):
            path = os.path.join(tmp, name)
            np.save(path, np.random.default_rng(c).standard_normal((6, 2, c)).astype("<f4"))
            return path
        calib1, calib2 = calib("c1.npy", 1), calib("c2.npy", 2)
        int8 = quantize(tmp, tiny_path, calib2, "a.fixq", "--config", "int8")
        variants("qgru", "int8-pow2.fixq", int8)
        out("qgru", "int16-multiplier.fixq",
            quantize(tmp, tiny_path, calib2, "b.fixq", "--config", "int16", "--scales", "multiplier"))
        out("qgru", "bidi-int8.fixq", quantize(tmp, tiny_bidi_path, calib1, "c.fixq", "--config", "int8"))
        out("qgru", "2layer-int8.fixq", quantize(tmp, tiny_2layer_path, calib1, "d.fixq", "--config", "int8"))

        # Fixed bugs. safetensors: JSON nested 100000 deep in a shape overflowed the stack.
        crash("safetensors", "deep-shape.safetensors", safetensors_bytes_raw(
            '{"a":{"dtype":"F32","shape":%s,"data_offsets":[0,0]}}' % nested(100000)))
        # qgru: nlohmann's type_error escaped for fields of the wrong type; numbers out of
        # int range were cast (undefined); nesting in "config" overflowed the stack.
        def put(**kv):
            return lambda p: p.update(kv)
        def put_config(**kv):
            return lambda p: p["config"].update(kv)
        crash("qgru", "params-version-string.fixq", qgru_variant(int8, put(version="1")))
        crash("qgru", "params-version-1e300.fixq", qgru_variant(int8, put(version=1e300)))
        crash("qgru", "config-version-string.fixq", qgru_variant(int8, put_config(version="1")))
        crash("qgru", "config-scales-number.fixq", qgru_variant(int8, put_config(scales=5)))
        crash("qgru", "config-version-1e300.fixq", qgru_variant(int8, put_config(version=1e300)))
        crash("qgru", "zero-point-1e300.fixq", qgru_variant(int8, lambda p: set_all(p, "x", zero_point=[1e300])))
        crash("qgru", "config-deep.fixq", qgru_variant(int8, lambda p: json.dumps(p, separators=(",", ":")).replace(
            '"config":{', '"config":{"deep":%s,' % nested(100000), 1)))

        # Undefined behaviour UBSan reported: a z_out scale of 2^-100 made build_plan cast
        # 2^100 to int32 (src/gru/int/build.cpp); exponent INT32_MIN was negated in
        # QuantParams::validate (src/quant/scheme.cpp).
        crash("qgru", "z-out-scale-tiny.fixq",
              qgru_variant(int8, lambda p: set_all(p, "z_out", scale=[2.0 ** -100], exponent=[100])))
        crash("qgru", "exponent-int32-min.fixq", qgru_variant(int8, lambda p: set_all(p, "x", exponent=[-2 ** 31])))

        # qgru version 2 stores the activation tables: the same model as a version 1 file
        # (no tables, rebuilt at load), and tables of a length that fits no layout or with a
        # direct entry outside the output range.
        def edit_tables(data, edit):
            tensors, metadata = read_safetensors(data)
            return safetensors_bytes(edit(tensors, metadata), metadata)
        def as_version1(tensors, metadata):
            metadata.pop("fixq.version")
            return [t for t in tensors if not t[0].endswith((".sig_z", ".sig_r", ".tanh_g"))]
        def table(name, values):
            return lambda tensors, metadata: [(k, d, [len(values)], np.array(values, "<i4").tobytes()) if k == name
                                              else (k, d, s, raw) for k, d, s, raw in tensors]
        out("qgru", "int8-pow2-version1.fixq", edit_tables(int8, as_version1))
        out("qgru", "table-length.fixq", edit_tables(int8, table("cell0.sig_z", [0] * 255)))
        out("qgru", "table-entry-range.fixq", edit_tables(int8, table("cell0.tanh_g", [300] * 256)))

        # encoded: a payload with and without a shape, of a format of every family.
        variants("encoded", "q8.bin", encoded_bytes("q8_0", [2, 32], bytes(range(68))))
        out("encoded", "scalar.bin", encoded_bytes("float8_e4m3", [], b"\x38"))
        out("encoded", "empty.bin", encoded_bytes("mxfp4", [0, 4], b""))
        out("encoded", "e4m3fn.bin", encoded_bytes("e4m3fn", [3, 2], bytes([0x38, 0x7F, 0xFF, 0x00, 0x80, 0x01])))
        out("encoded", "e2m1fn.bin", encoded_bytes("e2m1fn", [3], bytes([0x21, 0x03])))
        out("encoded", "ocp_mxfp4.bin", encoded_bytes("ocp_mxfp4", [32], bytes([127]) + bytes(range(16))))
        scales = struct.pack("<2f", 0.5, 0.25)
        out("encoded", "int4_g32.bin", encoded_bytes("int4_g32", [2, 32], bytes(range(32)) + scales + bytes([3, 15])))

        # npy: numpy's own files (tests/io/data), and a damaged one.
        for path in sorted(glob.glob(os.path.join(data_dir, "*.npy"))):
            with open(path, "rb") as f:
                out("npy", os.path.basename(path), f.read())
        with open(os.path.join(data_dir, "f4_2x3.npy"), "rb") as f:
            variants("npy", "f4_2x3-damaged.npy", f.read())


if __name__ == "__main__":
    main()
