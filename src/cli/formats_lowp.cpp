// The low-precision float and OCP MX entries of `fixq formats` (fixq/lowp.h).
//   float types: the codes of all values in order; 16-bit codes little-endian, 8-bit as
//                bytes, 6- and 4-bit densely packed (fixq/lowp.h, Part 3). --saturate picks
//                Overflow::Saturate.
//   MX types:    32-value blocks along the last axis, each the scale byte then the packed
//                elements. --saturate changes nothing: MX elements always clamp, as the
//                OCP spec requires. The OCP MXFP4 is "ocp_mxfp4": "mxfp4" is ggml's block
//                layout, registered by the GGUF formats.
#include <cstring>
#include <sstream>
#include <string>

#include "cli/format_registry.h"
#include "fixq/error.h"
#include "fixq/lowp.h"

namespace fixq::cli {

namespace {

CliFormat float_format(LowpType t) {
  const LowpInfo& info = lowp_info(t);
  CliFormat f;
  f.name = std::string(info.name);
  std::ostringstream d;
  d << info.bits << "-bit float: max " << info.max << (info.has_inf ? ", inf" : ", no inf")
    << (info.has_nan ? ", NaN" : ", no NaN")
    << (info.has_nan ? (info.has_inf ? "; --saturate: overflow to +-max, not inf" : "; --saturate: overflow to max, not NaN")
                     : "; overflow clamps to +-max");
  f.description = d.str();
  f.quantize = [t](const float* x, const Shape& shape, const FormatOptions& o) {
    const int64_t n = numel(shape);
    const Overflow overflow = o.saturate ? Overflow::Saturate : Overflow::Default;
    const int bits = lowp_info(t).bits;
    std::vector<std::byte> out;
    if (bits == 16) {
      std::vector<uint16_t> codes(static_cast<size_t>(n));
      lowp_encode(t, x, n, codes.data(), overflow);
      out.resize(codes.size() * 2);
      std::memcpy(out.data(), codes.data(), out.size());  // little-endian host
    } else {
      std::vector<uint8_t> codes(static_cast<size_t>(n));
      lowp_encode(t, x, n, codes.data(), overflow);
      out.resize(static_cast<size_t>(packed_code_bytes(bits, n)));
      pack_codes(bits, codes.data(), n, reinterpret_cast<uint8_t*>(out.data()));
    }
    return out;
  };
  f.dequantize = [t](const std::byte* data, size_t bytes, const Shape& shape) {
    const int64_t n = numel(shape);
    const int bits = lowp_info(t).bits;
    const auto expected = static_cast<size_t>(bits == 16 ? 2 * n : packed_code_bytes(bits, n));
    if (bytes != expected)
      fail(shape_str(shape), " ", lowp_info(t).name, " values take ", expected, " bytes, the payload has ", bytes);
    std::vector<float> x(static_cast<size_t>(n));
    if (bits == 16) {
      std::vector<uint16_t> codes(static_cast<size_t>(n));
      std::memcpy(codes.data(), data, bytes);
      lowp_decode(t, codes.data(), n, x.data());
    } else {
      std::vector<uint8_t> codes(static_cast<size_t>(n));
      unpack_codes(bits, reinterpret_cast<const uint8_t*>(data), n, codes.data());
      lowp_decode(t, codes.data(), n, x.data());
    }
    return x;
  };
  return f;
}

void check_mx_shape(const std::string& name, const Shape& shape) {
  if (shape.empty() || shape.back() % kMxBlockSize != 0)
    fail(name, " packs blocks of ", kMxBlockSize, " values along the last axis; shape ", shape_str(shape),
         shape.empty() ? " has no axis" : "'s last dimension is not a multiple of 32");
}

CliFormat mx_format(MxType t) {
  const MxInfo& info = mx_info(t);
  CliFormat f;
  f.name = t == MxType::Fp4E2m1 ? "ocp_mxfp4" : std::string(info.name);
  static constexpr const char* kElements[] = {"e4m3", "e5m2", "e2m3", "e3m2", "e2m1", "int8"};
  f.description = std::string("OCP MX: blocks of 32 ") + kElements[static_cast<int>(t)] + " values + an e8m0 scale (" +
                  std::to_string(info.block_bytes) + " bytes)";
  f.quantize = [t, name = f.name](const float* x, const Shape& shape, const FormatOptions&) {
    check_mx_shape(name, shape);
    const int64_t n = numel(shape);
    std::vector<std::byte> out(static_cast<size_t>(n / kMxBlockSize * mx_info(t).block_bytes));
    mx_quantize(t, x, n, reinterpret_cast<uint8_t*>(out.data()));
    return out;
  };
  f.dequantize = [t, name = f.name](const std::byte* data, size_t bytes, const Shape& shape) {
    check_mx_shape(name, shape);
    const int64_t n = numel(shape);
    const auto expected = static_cast<size_t>(n / kMxBlockSize * mx_info(t).block_bytes);
    if (bytes != expected) fail(shape_str(shape), " ", name, " values take ", expected, " bytes, the payload has ", bytes);
    std::vector<float> x(static_cast<size_t>(n));
    mx_dequantize(t, reinterpret_cast<const uint8_t*>(data), n, x.data());
    return x;
  };
  return f;
}

}  // namespace

std::vector<CliFormat> lowp_formats() {
  std::vector<CliFormat> v;
  for (int t = 0; t < kLowpTypeCount; ++t) v.push_back(float_format(static_cast<LowpType>(t)));
  for (int t = 0; t < kMxTypeCount; ++t) v.push_back(mx_format(static_cast<MxType>(t)));
  return v;
}

}  // namespace fixq::cli
