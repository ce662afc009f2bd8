// The IntGroups family of fixq/formats.h: b-bit asymmetric codes with a float32 scale and
// a zero point per 32 values along the last axis, by the rules of fixq/weightonly.h. Values
// [R, C] are W^T of a PackedWeights W [C, R] (whose groups run along its rows), so the
// module's own quantizer and dequantizer do the arithmetic; this file only lays out bytes.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include "fixq/error.h"
#include "fixq/weightonly.h"
#include "formats/families.h"

namespace fixq::formats_detail {

namespace {

constexpr int64_t kGroup = 32;

struct Layout {
  int64_t rows = 0, cols = 0, groups = 0;  // values [rows, cols], groups per row
  int64_t code_bytes = 0, scale_bytes = 0, zero_bytes = 0;
  int64_t total = 0;  // their sum, checked
};

Layout layout(const std::string& name, int bits, const Shape& shape) {
  require_blocks_of(name, shape, kGroup);
  Layout l;
  l.cols = shape.back();
  l.rows = l.cols == 0 ? 0 : numel(shape) / l.cols;
  l.groups = l.cols / kGroup;
  // rows * cols is numel and rows * groups numel / 32, so neither product overflows; the
  // sum of the three parts can (about 1.16 numel for 8 bits).
  l.code_bytes = packed_bytes(bits, l.rows * l.cols);
  l.scale_bytes = 4 * (l.rows * l.groups);
  l.zero_bytes = l.rows * l.groups;
  const std::string what = "the byte count of " + name + " values of shape " + shape_str(shape);
  l.total = checked_add(checked_add(l.code_bytes, l.scale_bytes, what), l.zero_bytes, what);
  return l;
}

std::vector<std::byte> encode_groups(const std::string& name, int bits, const float* x, const Shape& shape) {
  const Layout l = layout(name, bits, shape);
  std::vector<std::byte> out(static_cast<size_t>(l.total));
  if (l.rows * l.cols == 0) return out;
  for (int64_t i = 0; i < l.rows * l.cols; ++i)
    if (!std::isfinite(x[i])) fail(name, ": element ", i, " is ", x[i], "; these formats hold finite values only");
  std::vector<float> w(static_cast<size_t>(l.rows * l.cols));  // W = X^T [C, R]
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t c = 0; c < l.cols; ++c) w[static_cast<size_t>(c * l.rows + r)] = x[r * l.cols + c];
  const PackedWeights p = PackedWeights::quantize(w.data(), l.cols, l.rows, {bits, kGroup, Symmetry::Asymmetric});
  std::vector<uint8_t> codes(static_cast<size_t>(l.rows * l.cols));
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t c = 0; c < l.cols; ++c) codes[static_cast<size_t>(r * l.cols + c)] = static_cast<uint8_t>(p.code(c, r));
  auto* bytes = reinterpret_cast<uint8_t*>(out.data());
  pack_codes(bits, codes.data(), l.rows * l.cols, bytes);
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t g = 0; g < l.groups; ++g) {
      const float s = p.scale(g, r);
      std::memcpy(bytes + l.code_bytes + 4 * (r * l.groups + g), &s, 4);  // little-endian host
      bytes[l.code_bytes + l.scale_bytes + r * l.groups + g] = static_cast<uint8_t>(p.zero(g, r));
    }
  return out;
}

std::vector<float> decode_groups(const std::string& name, int bits, std::span<const std::byte> payload,
                                 const Shape& shape) {
  const Layout l = layout(name, bits, shape);
  require_payload_bytes(name, shape, l.total, payload.size());
  std::vector<float> x(static_cast<size_t>(numel(shape)));
  if (x.empty()) return x;
  const auto* bytes = reinterpret_cast<const uint8_t*>(payload.data());
  std::vector<uint8_t> codes(static_cast<size_t>(l.rows * l.cols));
  unpack_codes(bits, bytes, l.rows * l.cols, codes.data());
  // The transposed parts PackedWeights::from_parts takes: q [C, R], scales and zeros [G, R].
  std::vector<uint8_t> q(codes.size());
  std::vector<float> scales(static_cast<size_t>(l.groups * l.rows));
  std::vector<int32_t> zeros(scales.size());
  for (int64_t r = 0; r < l.rows; ++r) {
    for (int64_t c = 0; c < l.cols; ++c) q[static_cast<size_t>(c * l.rows + r)] = codes[static_cast<size_t>(r * l.cols + c)];
    for (int64_t g = 0; g < l.groups; ++g) {
      float s;
      std::memcpy(&s, bytes + l.code_bytes + 4 * (r * l.groups + g), 4);
      const int32_t z = bytes[l.code_bytes + l.scale_bytes + r * l.groups + g];
      // Checked here so that the message names the group as the payload holds it.
      if (!(std::isfinite(s) && s > 0.0f))
        fail(name, " payload: the scale of row ", r, ", group ", g, " is ", s, "; scales must be finite and > 0");
      if (z >> bits) fail(name, " payload: the zero point of row ", r, ", group ", g, " is ", z, ", beyond ", bits, " bits");
      scales[static_cast<size_t>(g * l.rows + r)] = s;
      zeros[static_cast<size_t>(g * l.rows + r)] = z;
    }
  }
  const PackedWeights p = PackedWeights::from_parts(bits, l.cols, l.rows, q, scales, zeros, {});
  std::vector<float> w(x.size());
  p.dequantize(w.data());
  for (int64_t r = 0; r < l.rows; ++r)
    for (int64_t c = 0; c < l.cols; ++c) x[static_cast<size_t>(r * l.cols + c)] = w[static_cast<size_t>(c * l.rows + r)];
  return x;
}

Format entry(int bits) {
  Format f;
  f.name = "int" + std::to_string(bits) + "_g32";
  f.family = FormatFamily::IntGroups;
  char d[128];
  std::snprintf(d, sizeof d, "%d-bit integers, asymmetric, a float32 scale and a zero point per 32 values (%.2f bits per value)",
                bits, bits + 5.0 * 8 / kGroup);
  f.description = d;
  f.payload_bytes = [name = f.name, bits](const Shape& shape) { return layout(name, bits, shape).total; };
  f.encode = [name = f.name, bits](const float* x, const Shape& shape, const EncodeOptions& options) {
    require(options.overflow == Overflow::Default, "saturation applies to the low-precision float formats, not to ", name);
    return encode_groups(name, bits, x, shape);
  };
  f.decode = [name = f.name, bits](std::span<const std::byte> payload, const Shape& shape) {
    return decode_groups(name, bits, payload, shape);
  };
  return f;
}

}  // namespace

std::vector<Format> int_group_formats() { return {entry(2), entry(4), entry(8)}; }

}  // namespace fixq::formats_detail
