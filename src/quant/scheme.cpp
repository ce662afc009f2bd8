// Integer formats, quantization schemes and parameter-array bookkeeping (fixq/quant.h).
#include <cmath>
#include <limits>

#include "fixq/error.h"
#include "fixq/quant.h"

namespace fixq {

IntFormat IntFormat::make(int bits, bool is_signed) {
  IntFormat f{bits, is_signed};
  f.validate();
  return f;
}

void IntFormat::validate() const {
  require(bits >= 2 && bits <= 16, "integer format of ", bits,
          " bits is not supported: fixq quantizes to 2..16 bits");
}

std::string IntFormat::name() const { return (is_signed ? "int" : "uint") + std::to_string(bits); }

std::string to_string(Symmetry s) { return s == Symmetry::Symmetric ? "symmetric" : "asymmetric"; }

Symmetry parse_symmetry(std::string_view name) {
  for (Symmetry s : {Symmetry::Symmetric, Symmetry::Asymmetric})
    if (name == to_string(s)) return s;
  fail("symmetry must be symmetric or asymmetric, got '", name, "'");
}

std::string to_string(NanPolicy policy) { return policy == NanPolicy::Error ? "error" : "zero_point"; }

NanPolicy parse_nan_policy(std::string_view name, std::string_view what) {
  for (NanPolicy p : {NanPolicy::Error, NanPolicy::ToZeroPoint})
    if (name == to_string(p)) return p;
  fail(what, " must be error or zero_point, got '", name, "'");
}

std::string to_string(Granularity g) {
  switch (g) {
    case Granularity::PerTensor: return "per_tensor";
    case Granularity::PerChannel: return "per_channel";
    case Granularity::PerGroup: return "per_group";
    case Granularity::PerToken: return "per_token";
  }
  return "unknown";
}

Granularity parse_granularity(std::string_view name, std::string_view what) {
  constexpr Granularity kAll[] = {Granularity::PerTensor, Granularity::PerChannel, Granularity::PerGroup,
                                  Granularity::PerToken};
  for (Granularity g : kAll)
    if (name == to_string(g)) return g;
  for (Granularity g : kAll) {
    const std::string now = to_string(g);
    std::string hyphen = now;
    hyphen[3] = '-';                          // "per-tensor", the library's former spelling
    const std::string bare = now.substr(4);  // "tensor", the command line's
    if (name == hyphen || name == bare) {
      note_deprecated_spelling(what, name, now);
      return g;
    }
  }
  fail(what, " must be per_tensor, per_channel, per_group or per_token, got '", name, "'");
}

QuantScheme QuantScheme::make(int bits, bool is_signed, Symmetry symmetry, ScaleKind scale_kind,
                              Granularity granularity, int axis, int64_t group_size) {
  QuantScheme s;
  s.format = IntFormat::make(bits, is_signed);
  s.symmetry = symmetry;
  s.scale_kind = scale_kind;
  s.granularity = granularity;
  s.axis = axis;
  s.group_size = group_size;
  s.validate();
  return s;
}

int32_t QuantScheme::symmetric_zero_point() const { return format.is_signed ? 0 : 1 << (format.bits - 1); }

void QuantScheme::validate() const {
  format.validate();
  if (granularity == Granularity::PerGroup)
    require(group_size >= 1, "per-group quantization needs a group size >= 1, got ", group_size);
}

void QuantScheme::validate_for(const Shape& shape) const {
  validate();
  const int64_t n = numel(shape);
  if (n <= 0) fail("cannot quantize an empty tensor of shape ", shape_str(shape));
  if (granularity == Granularity::PerTensor) return;
  require(!shape.empty(), to_string(granularity), " quantization needs a tensor of rank >= 1");
  if (granularity == Granularity::PerGroup) {
    const AxisSplit a = split_at_axis(shape, axis);
    if (a.extent % group_size != 0)
      fail("group size ", group_size, " does not divide axis ", axis, " of extent ", a.extent, " in shape ",
           shape_str(shape));
  } else if (granularity == Granularity::PerChannel) {
    normalize_axis(axis, static_cast<int>(shape.size()));
  }
}

Shape QuantScheme::param_shape(const Shape& shape) const {
  validate_for(shape);
  switch (granularity) {
    case Granularity::PerTensor: return {};
    case Granularity::PerToken: return Shape(shape.begin(), shape.end() - 1);
    case Granularity::PerChannel: return {shape[normalize_axis(axis, static_cast<int>(shape.size()))]};
    case Granularity::PerGroup: {
      Shape p = shape;
      const int a = normalize_axis(axis, static_cast<int>(shape.size()));
      p[a] /= group_size;
      return p;
    }
  }
  return {};
}

void QuantParams::validate() const {
  scheme.validate();
  const size_t n = static_cast<size_t>(numel(shape));
  if (scale.size() != n || zero_point.size() != n)
    fail("quantization parameters hold ", scale.size(), " scales and ", zero_point.size(),
         " zero points; their shape ", shape_str(shape), " needs ", n);
  const bool pow2 = scheme.scale_kind == ScaleKind::PowerOfTwo;
  require(!pow2 || exponent.size() == n, "power-of-two parameters need ", n, " exponents, got ",
          exponent.size());
  const int32_t qmin = scheme.format.qmin(), qmax = scheme.format.qmax();
  for (size_t i = 0; i < n; ++i) {
    const float s = scale[i];
    // A normal scale keeps (q - zp) * scale exact to float precision for every 17-bit
    // difference, which is what makes quantize(dequantize(q)) == q hold.
    require(std::isnormal(s) && s > 0.0f && std::isfinite(s * 131072.0f), "scale[", i, "] = ", s,
            " must be a positive normal float with scale * 2^17 finite");
    require(zero_point[i] >= qmin && zero_point[i] <= qmax, "zero_point[", i, "] = ", zero_point[i],
            " is outside the ", scheme.format.name(), " range [", qmin, ", ", qmax, "]");
    if (pow2) {
      // Checked before negating: -INT32_MIN would overflow.
      require(exponent[i] >= -150 && exponent[i] <= 150, "exponent[", i, "] = ", exponent[i], " is out of range");
      require(std::ldexp(1.0f, -exponent[i]) == s, "scale[", i, "] = ", s, " is not 2^-", exponent[i]);
    }
  }
}

}  // namespace fixq
