// fixq/quant.h — quantization parameters and the quantize / dequantize of float tensors.
//
// Conventions (docs/spec.md 3.1 and 3.3):
//   quantize:   q = sat(round_half_even(x / scale) + zero_point)    (x / scale in float32)
//   dequantize: x = float(q - zero_point) * scale                    (in float32)
// A power-of-two scale is scale = 2^-e (e is the `exponent` of QuantParams), so x / scale = x * 2^e.
//
// Granularity names which elements share one (scale, zero point):
//   PerTensor  one pair for the whole tensor;
//   PerChannel one pair per index along `axis` (any axis);
//   PerGroup   one pair per run of `group_size` consecutive indices along `axis`, for every
//              index of the other axes (GPTQ-style [K/g, N] for a [K, N] weight, axis 0);
//   PerToken   one pair per row: every index of all axes but the last.
// Parameters are stored row-major in the shape of the tensor with the shared axes
// collapsed (param_shape()).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "fixq/arith.h"
#include "fixq/tensor.h"

namespace fixq {

// A b-bit integer format, 2 <= b <= 16, signed (two's complement) or unsigned.
struct IntFormat {
  int bits = 8;
  bool is_signed = true;

  // Throws fixq::Error for bits outside [2, 16].
  static IntFormat make(int bits, bool is_signed);
  int32_t qmin() const { return is_signed ? -(1 << (bits - 1)) : 0; }
  int32_t qmax() const { return is_signed ? (1 << (bits - 1)) - 1 : (1 << bits) - 1; }
  IntRange range() const { return {qmin(), qmax()}; }
  std::string name() const;  // "int8", "uint4", ...
  void validate() const;
  friend bool operator==(const IntFormat&, const IntFormat&) = default;
};

enum class Symmetry { Symmetric, Asymmetric };
enum class Granularity { PerTensor, PerChannel, PerGroup, PerToken };

// "symmetric", "asymmetric"; the inverse throws fixq::Error naming both.
std::string to_string(Symmetry);
Symmetry parse_symmetry(std::string_view name);
// "per_tensor", "per_channel", "per_group", "per_token": the one spelling of the library,
// the command line and Python. The inverse also reads, each with a deprecation note
// (fixq/error.h), the library's former "per-tensor", ... and the command line's former
// "tensor", "channel", "group", "token"; it throws fixq::Error naming the spellings otherwise
// (what: the option or field being read).
std::string to_string(Granularity);
Granularity parse_granularity(std::string_view name, std::string_view what = "granularity");

// What to quantize to: the integer format, symmetry, kind of scale and granularity.
struct QuantScheme {
  IntFormat format;
  Symmetry symmetry = Symmetry::Asymmetric;
  ScaleKind scale_kind = ScaleKind::Multiplier;  // fixq/arith.h
  Granularity granularity = Granularity::PerTensor;
  int axis = 0;            // PerChannel, PerGroup; negative counts from the end
  int64_t group_size = 0;  // PerGroup

  // A scheme from its parts, validated: the one constructor the CLI, Python and the tests
  // share. Throws fixq::Error for bits outside [2, 16] or a per-group scheme without a
  // group size >= 1.
  static QuantScheme make(int bits, bool is_signed, Symmetry symmetry = Symmetry::Asymmetric,
                          ScaleKind scale_kind = ScaleKind::Multiplier,
                          Granularity granularity = Granularity::PerTensor, int axis = 0,
                          int64_t group_size = 0);

  // The zero point a symmetric scheme uses: 0 when signed, 2^(bits-1) when unsigned
  // (PyTorch's quint8 convention), so that the integer range is centred on real zero.
  int32_t symmetric_zero_point() const;
  void validate() const;
  // Throws fixq::Error unless this scheme can be applied to a tensor of this shape.
  void validate_for(const Shape& shape) const;
  // The shape of the parameter arrays for a tensor of this shape.
  Shape param_shape(const Shape& shape) const;
};

// A closed real interval [min, max] that a quantizer must represent.
struct Range {
  float min = 0.0f;
  float max = 0.0f;
};

// Scales, exponents and zero points, one per parameter slot, row-major in param_shape.
struct QuantParams {
  QuantScheme scheme;
  Shape shape;                      // param_shape of the tensor they were made for
  std::vector<float> scale;         // > 0, normal, finite
  std::vector<int32_t> exponent;    // PowerOfTwo only: scale[i] == 2^-exponent[i]
  std::vector<int32_t> zero_point;  // inside [qmin, qmax]

  size_t size() const { return scale.size(); }
  // Throws fixq::Error unless the arrays are consistent with the scheme.
  void validate() const;
};

// ---- parameters from ranges (docs/spec.md 3.3) ------------------------------------------
//
// Every derived pair (scale, zero point) represents the whole range: after widening it to
// contain 0 (so that real zero is exactly representable as the zero point),
//   dequantize(qmin) <= min  and  dequantize(qmax) >= max   (evaluated in float32),
// so calibrated values are never clipped. Asymmetric: s0 = (max - min) / (qmax - qmin);
// the zero point is the integer neighbour of qmin - min / s0 that needs the smaller scale,
// and the scale is the least float >= s0 with which that zero point covers both ends
// (at most s0 * (qmax - qmin) / (qmax - qmin - 2)).
// Symmetric: scale = max(|min|, |max|) / (qmax - zp_sym), zero point zp_sym.
// PowerOfTwo: the largest exponent e (finest scale 2^-e) for which some zero point in
// range leaves nothing clipped; the asymmetric zero point centres [min, max] in the grid
// (the spare steps split evenly between both sides).
//
// Throws fixq::Error for min > max, NaN or infinite bounds, or min == max (a zero-width
// range has no scale; the message names the slot).
QuantParams params_from_ranges(const QuantScheme& scheme, const Shape& tensor_shape,
                               std::span<const Range> ranges);

// The per-slot [min, max] of a tensor under scheme's granularity (a min/max pass).
// Throws fixq::Error for an empty tensor or a NaN element.
std::vector<Range> minmax_ranges(const float* x, const Shape& shape, const QuantScheme& scheme);

// minmax_ranges followed by params_from_ranges.
QuantParams params_from_tensor(const float* x, const Shape& shape, const QuantScheme& scheme);

// ---- quantize / dequantize -------------------------------------------------------------

// What quantize does with a NaN element.
enum class NanPolicy {
  Error,           // throw fixq::Error naming the first NaN's flat index (default)
  ToZeroPoint,     // map NaN to the zero point, i.e. to real 0 (OpenCL convert_sat style)
};

// "error", "zero_point"; the inverse throws fixq::Error naming both (what: the option or
// argument being read).
std::string to_string(NanPolicy policy);
NanPolicy parse_nan_policy(std::string_view name, std::string_view what = "nan");

// Quantizes x (shape) into out under params. +-Inf saturate to qmax / qmin. The storage
// type Q (int8_t, uint8_t, int16_t, uint16_t, int32_t) must hold params' format.
template <class Q>
void quantize(const float* x, const Shape& shape, const QuantParams& params, Q* out,
              NanPolicy nan = NanPolicy::Error);

// Dequantizes q (shape) into out. Throws if an element lies outside the format's range.
template <class Q>
void dequantize(const Q* q, const Shape& shape, const QuantParams& params, float* out);

// The real value of one quantized integer under one (scale, zero point), as dequantize.
inline float dequantize_value(int32_t q, float scale, int32_t zero_point) {
  return static_cast<float>(q - zero_point) * scale;
}

// The quantized value of one real under one (scale, zero point), as quantize.
int32_t quantize_value(float x, float scale, int32_t zero_point, IntRange range);

}  // namespace fixq
