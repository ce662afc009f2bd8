# Type stubs of fixq.formats (python/fixq/formats.py, python/src/bind_formats*.cpp): the
# registry of every format and .bin files, GGUF blocks, low-precision floats, OCP MX blocks
# and packed integer weights. Float inputs accept any real numeric
# array-like and are taken as float32; byte inputs are uint8 arrays or bytes-like objects.
import os
from typing import Literal, Sequence, overload

import numpy as np
import numpy.typing as npt

_Floats = npt.ArrayLike
_Bytes = npt.NDArray[np.uint8] | bytes | bytearray | memoryview

# --------------------------------------------------------- the registry, .bin files

class Format:
    """One format of the registry: its names, family and description."""
    @property
    def name(self) -> str: ...
    @property
    def aliases(self) -> list[str]: ...
    @property
    def family(self) -> Literal["gguf", "float", "mx", "int_groups"]: ...
    @property
    def description(self) -> str: ...
    def payload_bytes(self, shape: Sequence[int]) -> int:
        """Bytes the values of this shape take."""

class EncodedTensor:
    """Values of a shape encoded in a named format."""
    def __init__(self, format: str, shape: Sequence[int], payload: _Bytes) -> None: ...
    @property
    def format(self) -> str: ...
    @property
    def shape(self) -> tuple[int, ...]: ...
    @property
    def payload(self) -> bytes: ...
    def decode(self) -> npt.NDArray[np.float32]:
        """decode(self)."""

def all_formats() -> list[Format]:
    """Every format: GGUF block formats, low-precision floats, OCP MX blocks, integer groups."""
def find_format(name: str) -> Format:
    """The Format of a name or alias."""
def encode(format: str, x: _Floats, overflow: Literal["default", "saturate"] = "default") -> EncodedTensor:
    """x encoded in the named format, as `fixq formats quantize` encodes it."""
def decode(t: EncodedTensor) -> npt.NDArray[np.float32]:
    """The float32 values of an EncodedTensor, of its shape."""
def save_encoded(path: str | os.PathLike[str], t: EncodedTensor) -> None:
    """Writes t as a .bin file (`fixq formats dequantize` reads it)."""
def load_encoded(path: str | os.PathLike[str]) -> EncodedTensor:
    """Reads a .bin file, e.g. from `fixq formats quantize`."""

# ------------------------------------------------------------------------ GGUF blocks

class GgufTypeInfo:
    """One GGUF block format: its ggml name and id, block geometry and dot-product partner."""
    @property
    def name(self) -> str: ...
    @property
    def ggml_type(self) -> int: ...
    @property
    def block_elems(self) -> int: ...
    @property
    def block_bytes(self) -> int: ...
    @property
    def dot_type(self) -> str | None: ...
    @property
    def ggml_dequantize(self) -> bool: ...

def gguf_types() -> list[GgufTypeInfo]:
    """Every GGUF block format, in ggml type-id order."""
def gguf_type_info(type: str) -> GgufTypeInfo:
    """The format named as ggml names it ('q4_0', 'q4_K', 'iq4_nl', 'mxfp4', ...)."""
@overload
def gguf_packed_size(type: str, shape: Sequence[int]) -> int:
    """Bytes a float array of this shape packs into (last extent a multiple of the block)."""
@overload
def gguf_packed_size(type: str, n: int) -> int:
    """Bytes n values pack into (n a multiple of the block)."""
def gguf_quantize(type: str, x: _Floats) -> npt.NDArray[np.uint8]:
    """x [..., n] -> bytes [..., n / block_elems * block_bytes], ggml's quantize_row_<type>_ref."""
def gguf_dequantize(type: str, data: _Bytes, shape: Sequence[int] | None = None) -> npt.NDArray[np.float32]:
    """Bytes [..., m] -> float32 [..., m / block_bytes * block_elems] (or `shape`), ggml's dequantize_row."""
@overload
def gguf_dot(type: str, x: npt.NDArray[np.uint8] | bytes, y: npt.NDArray[np.uint8] | bytes) -> float:
    """1-D packed x . y as ggml's generic vec_dot computes it, bit for bit."""
@overload
def gguf_dot(type: str, x: npt.NDArray[np.uint8], y: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """Row-wise dots of [..., bytes] arrays with the same leading shape."""
def gguf_first_invalid_block(type: str, data: _Bytes) -> int:
    """Index of the first block with a NaN/inf scale field, or -1."""

# ------------------------------------------------------------- low-precision floats

LowpTypeName = Literal[
    "e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e8m0fnu", "e4m3b11fnuz", "e2m3fn", "e3m2fn", "e2m1fn", "bf16", "fp16"
]

class LowpTypeInfo:
    """Parameters of one low-precision float type."""
    @property
    def name(self) -> str: ...
    @property
    def bits(self) -> int: ...
    @property
    def exponent_bits(self) -> int: ...
    @property
    def mantissa_bits(self) -> int: ...
    @property
    def bias(self) -> int: ...
    @property
    def is_signed(self) -> bool: ...
    @property
    def has_inf(self) -> bool: ...
    @property
    def has_nan(self) -> bool: ...
    @property
    def has_negative_zero(self) -> bool: ...
    @property
    def max(self) -> float: ...
    @property
    def min_positive(self) -> float: ...

def lowp_types() -> list[LowpTypeInfo]:
    """Every low-precision float type."""
def lowp_type_info(type: LowpTypeName | str) -> LowpTypeInfo:
    """The LowpTypeInfo of a type by name."""
def lowp_encode(
    type: LowpTypeName | str, x: _Floats, overflow: Literal["default", "saturate"] = "default"
) -> npt.NDArray[np.uint8] | npt.NDArray[np.uint16]:
    """float32 -> codes of the same shape (uint16 for bf16/fp16), round to nearest even."""
def lowp_decode(
    type: LowpTypeName | str, codes: npt.NDArray[np.uint8] | npt.NDArray[np.uint16]
) -> npt.NDArray[np.float32]:
    """codes -> float32 of the same shape, exactly."""
def packed_code_bytes(bits: int, n: int) -> int:
    """ceil(n * bits / 8) for bits in {2, 4, 6, 8}."""
def pack_codes(bits: int, codes: npt.NDArray[np.uint8]) -> npt.NDArray[np.uint8]:
    """Dense little-endian bit packing of 2/4/6/8-bit codes into a 1-D uint8 array."""
def unpack_codes(bits: int, packed: _Bytes, n: int) -> npt.NDArray[np.uint8]:
    """The inverse of pack_codes: n codes from packed_code_bytes(bits, n) bytes."""

# ------------------------------------------------------------------------- OCP MX

MxTypeName = Literal["mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "ocp_mxfp4", "mxint8"]
MX_BLOCK_SIZE: int

class MxTypeInfo:
    """Parameters of one OCP MX format."""
    @property
    def name(self) -> str: ...
    @property
    def element_bits(self) -> int: ...
    @property
    def emax(self) -> int: ...
    @property
    def block_bytes(self) -> int: ...

def mx_types() -> list[MxTypeInfo]:
    """Every OCP MX format."""
def mx_type_info(type: MxTypeName | str) -> MxTypeInfo:
    """The MxTypeInfo of a format by name."""
def mx_shared_exponent(type: MxTypeName | str, amax: float) -> int:
    """clamp(floor(log2(amax)) - emax, -127, 127); -127 for amax = 0."""
def mx_quantize(type: MxTypeName | str, x: _Floats) -> npt.NDArray[np.uint8]:
    """x [..., n] (n % 32 == 0) -> blocks [..., n / 32 * block_bytes]: scale byte + packed elements."""
def mx_dequantize(
    type: MxTypeName | str, blocks: _Bytes, shape: Sequence[int] | None = None
) -> npt.NDArray[np.float32]:
    """blocks -> float32 [..., m / block_bytes * 32] (or `shape`); NaN for a 0xFF scale."""
def mx_encode(
    type: MxTypeName | str, x: _Floats
) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8] | npt.NDArray[np.int8]]:
    """x [..., n] -> (scales uint8 [..., n / 32], elements [..., n]; int8 for mxint8)."""
def mx_decode(
    type: MxTypeName | str, scales: npt.NDArray[np.uint8], elements: npt.NDArray[np.uint8] | npt.NDArray[np.int8]
) -> npt.NDArray[np.float32]:
    """The inverse of mx_encode."""

# ----------------------------------------------------------------- packed weights

class PackedWeights:
    """W [K, N] as b-bit codes with a (scale, zero point) per group of rows and per column."""
    @staticmethod
    def quantize(w: _Floats, bits: int = 4, group_size: int = 128, symmetric: bool = False) -> PackedWeights:
        """Group-quantizes W [K, N]; ranges never clipped, round half to even."""
    @staticmethod
    def from_parts(
        bits: int,
        q: npt.NDArray[np.uint8],
        scales: _Floats,
        zeros: npt.NDArray[np.int32],
        g_idx: npt.NDArray[np.int32] | None = None,
    ) -> PackedWeights:
        """From codes [K, N], scales [G, N], zero points [G, N] and optional g_idx [K]."""
    @property
    def bits(self) -> int: ...
    @property
    def rows(self) -> int: ...
    @property
    def cols(self) -> int: ...
    @property
    def group_size(self) -> int: ...
    @property
    def groups(self) -> int: ...
    @property
    def act_order(self) -> bool: ...
    @property
    def packed_bytes(self) -> int: ...
    def codes(self) -> npt.NDArray[np.uint8]:
        """Codes [K, N] in the original row order."""
    def scales(self) -> npt.NDArray[np.float32]:
        """Scales [G, N]."""
    def zeros(self) -> npt.NDArray[np.int32]:
        """Zero points [G, N]."""
    def g_idx(self) -> npt.NDArray[np.int32]:
        """The group of each row, [K]."""
    def dequantize(self) -> npt.NDArray[np.float32]:
        """W [K, N], float32(q - z) * s."""
    def matmul(self, x: _Floats) -> npt.NDArray[np.float32]:
        """weight_only_matmul(x, self)."""

def weight_only_matmul(x: _Floats, w: PackedWeights) -> npt.NDArray[np.float32]:
    """y [..., N] = x [..., K] @ W, W dequantized inside the kernel."""
def import_gptq(
    qweight: npt.NDArray[np.int32],
    qzeros: npt.NDArray[np.int32],
    scales: _Floats,
    g_idx: npt.NDArray[np.int32] | None = None,
    bits: int = 4,
) -> PackedWeights:
    """PackedWeights from GPTQ v1 tensors."""
def export_gptq(w: PackedWeights) -> dict[str, int | npt.NDArray[np.int32] | npt.NDArray[np.float32]]:
    """{'bits', 'qweight', 'qzeros', 'scales', 'g_idx'}: the GPTQ v1 tensors of w."""
def load_gptq_npy(prefix: str, bits: int) -> PackedWeights:
    """import_gptq of prefix + 'qweight.npy', 'qzeros.npy', 'scales.npy' [, 'g_idx.npy']."""
def save_gptq_npy(prefix: str, w: PackedWeights) -> None:
    """Writes export_gptq(w) as .npy files under prefix."""
