// fixq/lowp.h — low-precision floats (float8/6/4, bfloat16, float16) and OCP MX blocks.
//
// Part 1: the eleven element types, their parameters (LowpInfo) and names.
// Part 2: encode float32 -> code (round to nearest, ties to even) under two overflow
//         policies, and decode code -> float32 (always exact).
// Part 3: dense packing of 2-, 4- and 6-bit codes into bytes.
// Part 4: OCP Microscaling (MX v1.0) blocks: 32 elements sharing one e8m0 scale.
//
// Codes are unsigned integers holding the type's bit pattern: one per uint8_t for the 8-,
// 6- and 4-bit types (float6/float4 in the low 6/4 bits, sign at bit 5/3), one per
// uint16_t for bf16/fp16. Every function has a scalar reference, an AVX2 and an AVX-512
// path chosen at run time (fixq/cpu.h); all give identical bits.
//
// Encoding, from the format definitions (IEEE 754, OCP 8-bit FP and MX v1.0); ml_dtypes' documented behaviour where a
// definition leaves a choice. x is rounded to the nearest value of the type, ties to the
// even code (e8m0, which has no mantissa, rounds ties 1.5 * 2^k up, as ml_dtypes does).
// Special inputs:
//   finite |x| beyond max (after rounding), and +-inf:
//     Overflow::Default  -> +-inf where the type has one (e5m2, bf16, fp16), else NaN
//                           (e4m3fn, every fnuz type, e8m0), else +-max (float6/float4,
//                           which have neither);
//     Overflow::Saturate -> +-max, for infinities too (CUDA's satfinite: every non-NaN
//                           input gives a finite code). ml_dtypes' kSaturate differs only
//                           for +-inf, which it maps as the default does.
//   NaN -> the type's NaN, sign kept where the type has signed NaNs (e4m3fn 0x7F/0xFF,
//          e5m2 0x7E/0xFE, bf16 0x7FC0/0xFFC0, fp16 0x7E00/0xFE00; fnuz 0x80; e8m0 0xFF):
//          payloads are dropped. float6/float4 have no NaN: encoding one is a fixq::Error.
//   -0 -> -0, except in the fnuz types (no negative zero: 0x00) and e8m0 (below).
//   e8m0 (unsigned, 2^-127 .. 2^127, no zero): zero and negative inputs give NaN (Default)
//          or 0x00 = 2^-127 (Saturate); positive inputs below 2^-127 give 0x00.
// Decoding is exact. NaN codes of the 8/6/4-bit types decode to the quiet NaN 0x7FC00000 or
// 0xFFC00000 with the code's sign bit (fnuz 0x80 -> 0xFFC00000, e8m0 0xFF -> 0x7FC00000);
// bf16/fp16 widen bit for bit, so NaN payloads survive (signalling ones stay signalling).
// Hence decode-then-encode returns every code unchanged under Overflow::Default, except that
// NaN codes come back canonical (e5m2 0x7D..0x7F -> 0x7E, bf16/fp16 payloads -> 0x7FC0 /
// 0x7E00 with the sign); under Saturate, in addition, infinity codes come back as +-max.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace fixq {

// ---------------------------------------------------------------------------------------
// Part 1: types
// ---------------------------------------------------------------------------------------

enum class LowpType : uint8_t {
  E4m3fn,       // float8, bias 7, max 448, NaN 0x7F/0xFF, no inf
  E4m3fnuz,     // float8, bias 8, max 240, NaN 0x80, no inf, no -0
  E5m2,         // float8, bias 15, max 57344, IEEE-style inf and NaNs
  E5m2fnuz,     // float8, bias 16, max 57344, NaN 0x80, no inf, no -0
  E8m0fnu,      // float8, unsigned power of two 2^(code-127), NaN 0xFF, no zero
  E4m3b11fnuz,  // float8, bias 11, max 30, NaN 0x80, no inf, no -0
  E2m3fn,       // float6, bias 1, max 7.5, no inf, no NaN
  E3m2fn,       // float6, bias 3, max 28, no inf, no NaN
  E2m1fn,       // float4, bias 1, max 6, no inf, no NaN
  Bf16,         // bfloat16: float32's upper half
  Fp16,         // IEEE binary16
};
inline constexpr int kLowpTypeCount = 11;

struct LowpInfo {
  std::string_view name;  // "e4m3fn", ..., "e2m1fn", "bf16", "fp16"
  int bits;               // 8, 6, 4 or 16
  int exponent_bits;
  int mantissa_bits;
  int bias;               // value of a normal code: 2^(e - bias) * 1.m
  bool is_signed;         // false only for e8m0fnu
  bool has_inf;
  bool has_nan;
  bool has_negative_zero;
  float max;              // largest finite value
  float min_positive;     // smallest positive value (subnormal where the type has them)
};

const LowpInfo& lowp_info(LowpType t);
// Parses a name of lowp_info (e.g. "e4m3fn", "bf16"); throws fixq::Error listing them.
LowpType parse_lowp_type(std::string_view name);

enum class Overflow { Default, Saturate };

// "default", "saturate"; the inverse throws fixq::Error naming both.
std::string to_string(Overflow overflow);
Overflow parse_overflow(std::string_view name);

// ---------------------------------------------------------------------------------------
// Part 2: encode / decode
// ---------------------------------------------------------------------------------------

// One value. Encoding throws fixq::Error for NaN into float6/float4; decoding throws for a
// code that does not fit the type's bits.
uint16_t lowp_encode(LowpType t, float x, Overflow overflow = Overflow::Default);
float lowp_decode(LowpType t, uint16_t code);

// n values. The uint8_t forms take the 8-, 6- and 4-bit types, the uint16_t forms bf16 and
// fp16; the other combination is a fixq::Error. Encoding NaN into float6/float4 throws
// naming the first NaN's index; decoding a byte with bits above the type's throws naming
// the first such index. On an error the output is unspecified.
void lowp_encode(LowpType t, const float* x, int64_t n, uint8_t* codes, Overflow overflow = Overflow::Default);
void lowp_encode(LowpType t, const float* x, int64_t n, uint16_t* codes, Overflow overflow = Overflow::Default);
void lowp_decode(LowpType t, const uint8_t* codes, int64_t n, float* x);
void lowp_decode(LowpType t, const uint16_t* codes, int64_t n, float* x);

// ---------------------------------------------------------------------------------------
// Part 3: dense packing of narrow codes
// ---------------------------------------------------------------------------------------

// Code i of bits b (2, 4, 6 or 8) occupies bits [b*i, b*i + b) of a little-endian bit string
// (b = 4: low nibble first), ceil(n * b / 8) bytes; unused bits of the last byte are zero.
// (2-bit codes are the group-quantized int2 format's, fixq/formats.h.)
int64_t packed_code_bytes(int bits, int64_t n);
// Throws fixq::Error for bits not in {2, 4, 6, 8} or a code >= 2^bits (naming its index).
void pack_codes(int bits, const uint8_t* codes, int64_t n, uint8_t* packed);
// Throws fixq::Error for bits not in {2, 4, 6, 8} or nonzero unused bits in the last byte.
void unpack_codes(int bits, const uint8_t* packed, int64_t n, uint8_t* codes);

// ---------------------------------------------------------------------------------------
// Part 4: OCP MX blocks
// ---------------------------------------------------------------------------------------
//
// A block is 32 consecutive values V_i sharing the scale X = 2^s, s in [-127, 127], stored
// as the e8m0 code s + 127. Quantization (OCP MX v1.0, section 6.3):
//   s   = clamp(floor(log2(max_i |V_i|)) - emax, -127, 127), emax = exponent of the element
//         type's largest normal (e4m3 8, e5m2 15, e2m3 2, e3m2 4, e2m1 2, int8 0); an
//         all-zero block gets s = -127 (floor(log2 0) = -inf, clamped);
//   P_i = the element encoding of V_i * 2^-s (a float32 product, exact wherever the element
//         can tell), rounded to nearest even and clamped to +-max normal (Saturate above);
//         MXINT8: P_i = clamp(round_half_even(V_i * 2^-s * 64), -127, 127), the element
//         value being P_i * 2^-6 (symmetric: +-127/64 are its +-max normal; a stored -128
//         still decodes, to -2).
// A block holding a NaN or an infinity has no finite scale: it gets the NaN scale 0xFF
// (and zero elements), the spec's NaN block. Dequantization: V_i = decode(P_i) * X in
// float32 (exact unless the product leaves float32's normal range), all NaN for scale 0xFF.
// Quantizing the dequantized values of a quantized block gives the same bytes back.
//
// Memory layout (the spec leaves it to implementations): per block, the scale byte, then
// the 32 elements densely packed as in Part 3 (8-bit: 32 bytes, 6-bit: 24, 4-bit: 16 with
// element 2j in the low nibble of byte j; MXINT8 elements are two's complement bytes).
// That is not ggml's MXFP4 layout, which pairs elements j and j + 16 in one byte.

enum class MxType : uint8_t { Fp8E4m3, Fp8E5m2, Fp6E2m3, Fp6E3m2, Fp4E2m1, Int8 };
inline constexpr int kMxTypeCount = 6;
inline constexpr int64_t kMxBlockSize = 32;

struct MxInfo {
  std::string_view name;  // "mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "mxfp4", "mxint8"
  int element_bits;
  int emax;               // exponent of the element's largest normal
  int64_t block_bytes;    // 1 + 32 * element_bits / 8
};

const MxInfo& mx_info(MxType t);
// t's name among all of fixq's formats (fixq/formats.h): mx_info(t).name, except
// "ocp_mxfp4" for Fp4E2m1, since "mxfp4" there is ggml's block layout of the same values.
std::string_view mx_format_name(MxType t);
// Parses a name of mx_info or of mx_format_name ("ocp_mxfp4"); throws fixq::Error listing them.
MxType parse_mx_type(std::string_view name);

// The shared exponent s for a block whose largest magnitude is amax (finite, >= 0).
int mx_shared_exponent(MxType t, float amax);

// n values (a multiple of 32; else fixq::Error) <-> n / 32 blocks of block_bytes each.
void mx_quantize(MxType t, const float* x, int64_t n, uint8_t* blocks);
void mx_dequantize(MxType t, const uint8_t* blocks, int64_t n, float* x);

// The same blocks split into their parts: scales[n / 32], the e8m0 codes, and elements[n],
// one code per value (an element code in its low element_bits bits; MXINT8's P as a two's
// complement byte). mx_decode throws fixq::Error naming the first element code that does
// not fit the element width (the output is then unspecified).
void mx_encode(MxType t, const float* x, int64_t n, uint8_t* scales, uint8_t* elements);
void mx_decode(MxType t, const uint8_t* scales, const uint8_t* elements, int64_t n, float* x);

}  // namespace fixq
