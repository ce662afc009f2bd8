"""fixq.formats: the number formats fixq encodes float tensors into.

* The registry of every format by name (the one ``fixq formats`` uses): :func:`all_formats`,
  :func:`find_format`, :func:`encode` an array into any of them and :func:`decode` it back,
  and ``.bin`` files, fixq's container of one :class:`EncodedTensor`
  (:func:`save_encoded`, :func:`load_encoded`; ``fixq formats quantize`` writes them,
  ``fixq formats dequantize`` reads them).
* Each family's own functions: ggml's GGUF block formats (``gguf_*``), the low-precision
  floats float8/6/4, bf16, fp16 (``lowp_*``, with the dense packing of narrow codes), OCP MX
  blocks (``mx_*``), and 2/4/8-bit group-quantized weights with GPTQ import
  (:class:`PackedWeights`, :func:`weight_only_matmul`, ``*_gptq*``).

Arrays are numpy; float inputs are taken as float32 (without a copy when already
C-contiguous float32); bad input raises ``ValueError``. The functions are the C++
library's (``fixq/formats.h``, ``fixq/gguf.h``, ``fixq/lowp.h``, ``fixq/weightonly.h``).
"""

from ._fixq import formats as _ext

# The registry and the .bin container.
Format = _ext.Format
EncodedTensor = _ext.EncodedTensor
all_formats = _ext.all_formats
find_format = _ext.find_format
encode = _ext.encode
decode = _ext.decode
save_encoded = _ext.save_encoded
load_encoded = _ext.load_encoded

# GGUF block formats.
GgufTypeInfo = _ext.GgufTypeInfo
gguf_types = _ext.gguf_types
gguf_type_info = _ext.gguf_type_info
gguf_packed_size = _ext.gguf_packed_size
gguf_quantize = _ext.gguf_quantize
gguf_dequantize = _ext.gguf_dequantize
gguf_dot = _ext.gguf_dot
gguf_first_invalid_block = _ext.gguf_first_invalid_block

# Low-precision floats and the dense packing of narrow codes.
LowpTypeInfo = _ext.LowpTypeInfo
lowp_types = _ext.lowp_types
lowp_type_info = _ext.lowp_type_info
lowp_encode = _ext.lowp_encode
lowp_decode = _ext.lowp_decode
packed_code_bytes = _ext.packed_code_bytes
pack_codes = _ext.pack_codes
unpack_codes = _ext.unpack_codes

# OCP MX blocks.
MX_BLOCK_SIZE = _ext.MX_BLOCK_SIZE
MxTypeInfo = _ext.MxTypeInfo
mx_types = _ext.mx_types
mx_type_info = _ext.mx_type_info
mx_shared_exponent = _ext.mx_shared_exponent
mx_quantize = _ext.mx_quantize
mx_dequantize = _ext.mx_dequantize
mx_encode = _ext.mx_encode
mx_decode = _ext.mx_decode

# Group-quantized integer weights and GPTQ checkpoints.
PackedWeights = _ext.PackedWeights
weight_only_matmul = _ext.weight_only_matmul
import_gptq = _ext.import_gptq
export_gptq = _ext.export_gptq
load_gptq_npy = _ext.load_gptq_npy
save_gptq_npy = _ext.save_gptq_npy

__all__ = [
    "Format", "EncodedTensor", "all_formats", "find_format", "encode", "decode", "save_encoded", "load_encoded",
    "GgufTypeInfo", "gguf_types", "gguf_type_info", "gguf_packed_size", "gguf_quantize", "gguf_dequantize", "gguf_dot",
    "gguf_first_invalid_block",
    "LowpTypeInfo", "lowp_types", "lowp_type_info", "lowp_encode", "lowp_decode", "packed_code_bytes", "pack_codes",
    "unpack_codes",
    "MX_BLOCK_SIZE", "MxTypeInfo", "mx_types", "mx_type_info", "mx_shared_exponent", "mx_quantize", "mx_dequantize",
    "mx_encode", "mx_decode",
    "PackedWeights", "weight_only_matmul", "import_gptq", "export_gptq", "load_gptq_npy", "save_gptq_npy",
]
