// fixq/gguf.h — the GGUF block formats of ggml, byte-identical to ggml.
//
// Part 1, the formats: Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q8_1, the K-quants Q2_K ... Q6_K and Q8_K,
// the non-linear 4-bit IQ4_NL and IQ4_XS, the ternary TQ1_0 and TQ2_0 (BitNet b1.58 /
// TriLM weights), and the FP4 formats MXFP4 (E8M0 scale per 32) and NVFP4 (UE4M3 scale per
// 16), described by one table of traits (block size, bytes per block, the type a dot
// product pairs it with), so that code treats every format alike.
// Part 2, whole arrays: quantize, dequantize, dot. Part 3, validation.
//
// Numeric contract (ggml commit d99724f2, built by gcc 12 on x86-64 with -ffp-contract=off,
// the build of the golden vectors in tests/vectors/ggml):
//   quantize    the bytes of ggml's quantize_row_<type>_ref for every finite input,
//               K-quant scale searches included, in ggml's evaluation order. One exception:
//               an IQ4_NL block whose |x| max is below 1e-15 gets d = 0, where ggml packs
//               uninitialised memory into qs; fixq packs index 8 (the grid value nearest
//               zero, what x = 0 maps to), i.e. qs bytes 0x88. (IQ4_XS requantizes every
//               sub-block with its stored scale, so it has no such case: an all-zero
//               super-block is d = -0.0, scale codes 32, qs 0x88, as ggml writes it.)
//   dequantize  the floats of ggml's dequantize_row_<type>, bit for bit. Q8_1 has no
//               dequantize in ggml; fixq's is d * q, like Q8_0.
//   dot         the float of ggml's generic (scalar) vec_dot, bit for bit: integer partial
//               sums are exact and the float operations are ggml's, in ggml's order.
// Every instruction-set path gives exactly these bits, so the documented bound between
// the AVX2 kernels and the scalar reference is 0 (tests check equality). ggml's own AVX2
// dot kernels add in a different order and differ from its generic ones by up to ~3e-5
// relative; fixq matches the generic ones.
//
// Where ggml's arithmetic leaves the representable range, fixq reproduces it: a block
// scale beyond fp16 (e.g. Q4_0 of |x| > 8 * 65504) is stored as +-inf, which
// first_invalid_block() reports as ggml_validate_row_data would; where ggml's 1/d
// overflows (blocks whose |x| max is below ~4e-37) the quants are what gcc's x86-64
// float-to-int8 conversions make of the infinite products (for TQ1_0 / TQ2_0, where glibc's
// lroundf meets them: the zero digit). NVFP4's UE4M3 scales saturate at 448 (code 0x7E),
// as ggml's encoder does; every byte is a valid UE4M3 scale.
//
// Dispatch: the active instruction set of fixq/cpu.h picks, operation by operation, the
// scalar reference, the AVX2 kernels or the AVX-512 VNNI ones (dequantize, dot, matvec;
// quantize keeps the scalar searches except for the Q8 activation types).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/tensor.h"

namespace fixq::gguf {

// ---------------------------------------------------------------- Part 1: the formats

enum class Type {
  Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, Q8_K,
  IQ4_NL, IQ4_XS, TQ1_0, TQ2_0, MXFP4, NVFP4
};

struct TypeTraits {
  Type type;
  std::string_view name;          // as ggml spells it: "q4_0", "q4_K", "iq4_nl", "mxfp4"
  int ggml_type;                  // ggml's enum ggml_type value (the GGUF tensor type id)
  int64_t block_elems;            // elements per block: 32, 64 for NVFP4, 256 for K-quants, IQ4_XS, TQ*
  std::size_t block_bytes;        // bytes per block
  std::optional<Type> dot_type;   // the right operand of dot(); none for Q8_1 and Q8_K
  bool ggml_dequantize;           // false for Q8_1 (ggml has none; fixq's is d * q)
};

// Every format, in ggml type-id order.
std::span<const TypeTraits> all_types();
const TypeTraits& traits(Type type);
// By ggml name; throws fixq::Error listing the known names for an unknown one.
const TypeTraits& traits(std::string_view name);

// ------------------------------------------------------------ Part 2: whole arrays

// Bytes that n elements take; throws unless n >= 0 is a multiple of the block.
std::size_t packed_size(Type type, int64_t n);
// The same for a tensor of this shape, which the format packs row by row: throws unless
// the last dimension is a multiple of the block (a rank-0 scalar never is).
std::size_t packed_size(Type type, const Shape& shape);
// Elements held by `bytes` packed bytes; throws unless bytes is a multiple of the block.
int64_t packed_elements(Type type, std::size_t bytes);

// Packs n floats into packed_size(type, n) bytes at out. Throws fixq::Error, before
// writing anything, if n is not a multiple of the block or if x holds a NaN or infinity
// (naming the element and its block).
void quantize(Type type, const float* x, int64_t n, std::byte* out);
std::vector<std::byte> quantize(Type type, std::span<const float> x);

// Unpacks packed_elements(type, packed.size()) floats into out.
void dequantize(Type type, std::span<const std::byte> packed, float* out);
std::vector<float> dequantize(Type type, std::span<const std::byte> packed);
// Unpacks a tensor of this shape; throws unless packed holds exactly packed_size(type,
// shape) bytes (saying whether it is truncated or oversized).
std::vector<float> dequantize(Type type, std::span<const std::byte> packed, const Shape& shape);

// The dot product of x (of `type`) and y (of traits(type).dot_type, same element count),
// as ggml's generic vec_dot computes it. Throws for a type without a dot product or for
// sizes that are not whole blocks of the same element count.
float dot(Type type, std::span<const std::byte> x, std::span<const std::byte> y);

// A matrix-vector product, ggml's mul_mat with one activation row: out[r] = dot(type, row r
// of x, y) for r < rows, where x holds `rows` rows of `type`, each as many elements as y,
// packed one after the other. The same bits as `rows` calls of dot(); the AVX-512 kernels
// interleave several rows, whose sums are otherwise chains of dependent float additions.
// Throws for a type without a dot product, rows < 0, or an x that is not `rows` rows of
// y's element count.
void matvec(Type type, std::span<const std::byte> x, int64_t rows, std::span<const std::byte> y, float* out);
std::vector<float> matvec(Type type, std::span<const std::byte> x, int64_t rows, std::span<const std::byte> y);

// The instruction-set family (fixq/cpu.h's to_string: "scalar", "avx2", "avx512" ...)
// whose kernel runs op ("quantize", "dequantize", "dot" or "matvec") for this type now;
// "none" for a type without that operation. Throws for another op.
std::string active_kernel_family(Type type, std::string_view op);

// ------------------------------------------------------------------ Part 3: validation

// The index of the first block whose floating-point fields (d, m, dmin, s; the E8M0
// exponent of MXFP4 and the UE4M3 scales of NVFP4 are always valid) are NaN or infinite,
// or -1 if there is none: the check of ggml_validate_row_data. Throws if packed is not a
// whole number of blocks.
int64_t first_invalid_block(Type type, std::span<const std::byte> packed);

}  // namespace fixq::gguf
