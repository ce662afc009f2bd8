#!/usr/bin/python3
"""Writes the golden .safetensors files of tests/io with a writer of its own, made from the
format's definition with struct and json only (Debian's torch 1.13 has no safetensors
package). The tests expect the values below; regenerate with
`python3 tests/io/data/make_safetensors_golden.py` from the repo root or this directory.

st_all_dtypes.safetensors  every dtype, a scalar, an empty tensor and metadata, laid out as
                           fixq writes: compact JSON with sorted keys, spaces up to a
                           multiple of 8, data by item size (largest first) then name. fixq
                           must read the values and rewrite the file byte for byte.
st_foreign.safetensors     a valid file laid out differently: indented JSON, keys unsorted,
                           metadata last, extra padding, data in an unaligned order.
"""
import json
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

ITEMSIZE = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E5M2": 1, "F8_E4M3": 1, "I16": 2, "U16": 2,
            "F16": 2, "BF16": 2, "I32": 4, "U32": 4, "F32": 4, "I64": 8, "U64": 8, "F64": 8}


def packed(fmt, values):
    """Little-endian bytes of values, struct format character fmt."""
    return struct.pack("<%d%s" % (len(values), fmt), *values)


# name: (dtype, shape, data bytes)
TENSORS = {
    "bool": ("BOOL", [3], bytes([1, 0, 1])),
    "u8": ("U8", [2, 2], packed("B", [0, 1, 254, 255])),
    "i8": ("I8", [4], packed("b", [-128, -1, 0, 127])),
    "f8_e5m2": ("F8_E5M2", [2], bytes([0x3C, 0xBC])),  # 1.0, -1.0
    "f8_e4m3": ("F8_E4M3", [2], bytes([0x38, 0xB8])),  # 1.0, -1.0
    "i16": ("I16", [4], packed("h", [-32768, -1, 0, 32767])),
    "u16": ("U16", [3], packed("H", [0, 1, 65535])),
    # 1, -2.5, 65504 (largest), 2^-24 (smallest subnormal), 1023 * 2^-24 (largest
    # subnormal), 2^-14 (smallest normal), -inf, -0, NaN
    "f16": ("F16", [3, 3], packed("H", [0x3C00, 0xC100, 0x7BFF, 0x0001, 0x03FF, 0x0400,
                                        0xFC00, 0x8000, 0x7E00])),
    # 1, -3.140625, the largest finite bfloat16, 2^-133 (a subnormal)
    "bf16": ("BF16", [4], packed("H", [0x3F80, 0xC049, 0x7F7F, 0x0001])),
    "i32": ("I32", [2, 1, 2], packed("i", [-2**31, -1, 0, 2**31 - 1])),
    "u32": ("U32", [2], packed("I", [0, 2**32 - 1])),
    "f32": ("F32", [2, 3], packed("f", [-1.0, -0.5, 0.0, 0.5, 1.0, 1.5])),
    "i64": ("I64", [4], packed("q", [-2**63, -1, 0, 2**63 - 1])),
    "u64": ("U64", [1], packed("Q", [2**64 - 1])),
    "f64": ("F64", [3], packed("d", [0.1, -2.5, 1e-300])),
    "scalar": ("F32", [], packed("f", [3.25])),
    "empty": ("I32", [0, 3], b""),
}
METADATA = {"format": "pt", "note": "grüße ✓"}


def write(name, header_text, data):
    with open(os.path.join(HERE, name), "wb") as f:
        encoded = header_text.encode("utf-8")
        f.write(struct.pack("<Q", len(encoded)) + encoded + data)


def fixq_layout():
    order = sorted(TENSORS, key=lambda n: (-ITEMSIZE[TENSORS[n][0]], n))
    header, data = {"__metadata__": METADATA}, b""
    for n in order:
        dtype, shape, raw = TENSORS[n]
        header[n] = {"dtype": dtype, "shape": shape, "data_offsets": [len(data), len(data) + len(raw)]}
        data += raw
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    text += " " * ((8 - len(text.encode("utf-8")) % 8) % 8)
    write("st_all_dtypes.safetensors", text, data)


def foreign_layout():
    order = ["i8", "f32", "bool", "f64", "empty", "scalar"]
    header, data = {}, b""
    for n in order:
        dtype, shape, raw = TENSORS[n]
        header[n] = {"shape": shape, "data_offsets": [len(data), len(data) + len(raw)], "dtype": dtype}
        data += raw
    header["__metadata__"] = {"source": "foreign"}
    write("st_foreign.safetensors", json.dumps(header, indent=2) + " " * 13, data)


fixq_layout()
foreign_layout()
