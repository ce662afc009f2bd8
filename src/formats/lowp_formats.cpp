// The LowpFloat and Mx families of fixq/formats.h (fixq/lowp.h).
//   float types: the codes of all values in order; 16-bit codes little-endian, 8-bit as
//                bytes, 6- and 4-bit densely packed. Overflow::Saturate picks saturation.
//                Each also answers to its ml_dtypes name ("float8_e4m3fn", "bfloat16").
//   MX types:    32-value blocks along the last axis, each the scale byte then the packed
//                elements; elements always clamp, as the OCP spec requires, so either
//                overflow option gives the same bytes.
#include <cstring>
#include <sstream>
#include <string>

#include "fixq/error.h"
#include "fixq/lowp.h"
#include "formats/families.h"

namespace fixq::formats_detail {

namespace {

// ml_dtypes' name of the type: float<bits>_<name>, bfloat16, float16.
std::string ml_dtypes_name(LowpType t) {
  if (t == LowpType::Bf16) return "bfloat16";
  if (t == LowpType::Fp16) return "float16";
  const LowpInfo& info = lowp_info(t);
  return "float" + std::to_string(info.bits) + "_" + std::string(info.name);
}

// The payload size of the values of a shape, computed from the file's shape before any
// payload is looked at: 16-bit codes take 2 n bytes, checked (a .bin file may claim any
// shape whose element count fits int64), and packed codes ceil(n * bits / 8), by a formula
// that cannot overflow for any n.
int64_t code_bytes(LowpType t, const Shape& shape) {
  const int64_t n = numel(shape);
  const int bits = lowp_info(t).bits;
  if (bits == 16) return checked_mul(n, 2, "the byte count of ", lowp_info(t).name, " values of shape ", shape_str(shape));
  return packed_bytes(bits, n);
}

Format float_format(LowpType t) {
  const LowpInfo& info = lowp_info(t);
  Format f;
  f.name = std::string(info.name);
  f.aliases = {ml_dtypes_name(t)};
  f.family = FormatFamily::LowpFloat;
  std::ostringstream d;
  d << info.bits << "-bit float: max " << info.max << (info.has_inf ? ", inf" : ", no inf")
    << (info.has_nan ? ", NaN" : ", no NaN")
    << (info.has_nan ? (info.has_inf ? "; saturating: overflow to +-max, not inf" : "; saturating: overflow to max, not NaN")
                     : "; overflow clamps to +-max");
  f.description = d.str();
  f.payload_bytes = [t](const Shape& shape) { return code_bytes(t, shape); };
  f.encode = [t](const float* x, const Shape& shape, const EncodeOptions& o) {
    const int64_t n = numel(shape);
    const int bits = lowp_info(t).bits;
    std::vector<std::byte> out(static_cast<size_t>(code_bytes(t, shape)));
    if (bits == 16) {
      std::vector<uint16_t> codes(static_cast<size_t>(n));
      lowp_encode(t, x, n, codes.data(), o.overflow);
      if (n > 0) std::memcpy(out.data(), codes.data(), out.size());  // little-endian host
    } else {
      std::vector<uint8_t> codes(static_cast<size_t>(n));
      lowp_encode(t, x, n, codes.data(), o.overflow);
      pack_codes(bits, codes.data(), n, reinterpret_cast<uint8_t*>(out.data()));
    }
    return out;
  };
  f.decode = [t](std::span<const std::byte> payload, const Shape& shape) {
    const int64_t n = numel(shape);
    const int bits = lowp_info(t).bits;
    require_payload_bytes(std::string(lowp_info(t).name), shape, code_bytes(t, shape), payload.size());
    std::vector<float> x(static_cast<size_t>(n));
    if (bits == 16) {
      std::vector<uint16_t> codes(static_cast<size_t>(n));
      if (n > 0) std::memcpy(codes.data(), payload.data(), payload.size());
      lowp_decode(t, codes.data(), n, x.data());
    } else {
      std::vector<uint8_t> codes(static_cast<size_t>(n));
      unpack_codes(bits, reinterpret_cast<const uint8_t*>(payload.data()), n, codes.data());
      lowp_decode(t, codes.data(), n, x.data());
    }
    return x;
  };
  return f;
}

Format mx_format(MxType t) {
  const MxInfo& info = mx_info(t);
  Format f;
  f.name = std::string(mx_format_name(t));
  f.family = FormatFamily::Mx;
  static constexpr const char* kElements[] = {"e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "int8"};
  f.description = std::string("OCP MX: blocks of 32 ") + kElements[static_cast<int>(t)] + " values + an e8m0 scale (" +
                  std::to_string(info.block_bytes) + " bytes)";
  f.payload_bytes = [t, name = f.name](const Shape& shape) {
    require_blocks_of(name, shape, kMxBlockSize);
    return checked_mul(numel(shape) / kMxBlockSize, mx_info(t).block_bytes, "the byte count of ",
                       name, " values of shape ", shape_str(shape));
  };
  f.encode = [t, bytes = f.payload_bytes](const float* x, const Shape& shape, const EncodeOptions&) {
    std::vector<std::byte> out(static_cast<size_t>(bytes(shape)));
    mx_quantize(t, x, numel(shape), reinterpret_cast<uint8_t*>(out.data()));
    return out;
  };
  f.decode = [t, name = f.name, bytes = f.payload_bytes](std::span<const std::byte> payload, const Shape& shape) {
    require_payload_bytes(name, shape, bytes(shape), payload.size());
    std::vector<float> x(static_cast<size_t>(numel(shape)));
    mx_dequantize(t, reinterpret_cast<const uint8_t*>(payload.data()), numel(shape), x.data());
    return x;
  };
  return f;
}

}  // namespace

std::vector<Format> lowp_float_formats() {
  std::vector<Format> v;
  for (int t = 0; t < kLowpTypeCount; ++t) v.push_back(float_format(static_cast<LowpType>(t)));
  return v;
}

std::vector<Format> mx_formats() {
  std::vector<Format> v;
  for (int t = 0; t < kMxTypeCount; ++t) v.push_back(mx_format(static_cast<MxType>(t)));
  return v;
}

}  // namespace fixq::formats_detail
