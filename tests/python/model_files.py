"""Model files as users have them, written independently of fixq: safetensors state_dicts
(Debian 12 has no python3-safetensors, so the format is written here from its
specification, as safetensors.torch.save_file lays it out) and ONNX models exported by
torch.onnx.export."""

import json
import struct
import warnings

import numpy as np
import torch

DTYPES = {"F32": torch.float32, "F16": torch.float16, "BF16": torch.bfloat16}


def save_state_dict(path, state_dict, dtype="F32", metadata=None):
    """safetensors.torch.save_file(state_dict, path, metadata): an 8-byte little-endian
    header length, JSON {name: {dtype, shape, data_offsets}} padded with spaces to a
    multiple of 8, then the tensors' bytes back to back. Returns the tensors as stored
    (rounded to dtype), as float32 tensors."""
    header, blobs, offset, stored = {}, [], 0, {}
    for name, t in state_dict.items():
        t = t.detach().to(DTYPES[dtype]).contiguous()
        stored[name] = t.float()
        raw = (t.view(torch.int16) if dtype != "F32" else t).numpy().tobytes()
        header[name] = {"dtype": dtype, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if metadata is not None:
        header["__metadata__"] = metadata
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    return stored


def export_onnx(module, example, path, opset=14):
    """torch.onnx.export as a user calls it (weights as initializers)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module, (example,), str(path), input_names=["x"], opset_version=opset)
    return path


def torch_forward(gru, x):
    with torch.no_grad():
        y, h = gru(torch.from_numpy(np.ascontiguousarray(x)))
    return y.numpy(), h.numpy()
