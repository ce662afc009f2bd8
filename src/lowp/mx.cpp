// Front ends of fixq/lowp.h Part 4 (OCP MX blocks): type table and names, argument
// checks, dispatch to the active instruction set's kernels.
#include <array>
#include <bit>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "lowp/kernels.h"
#include "lowp/mx_block.h"

namespace fixq {

namespace {

using lowp_detail::MxTraits;

constexpr std::array<std::string_view, kMxTypeCount> kNames = {"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3",
                                                                "mxfp6_e3m2", "mxfp4",      "mxint8"};

template <size_t... I>
std::array<MxInfo, kMxTypeCount> make_infos(std::index_sequence<I...>) {
  return {MxInfo{kNames[I], MxTraits<static_cast<MxType>(I)>::bits, MxTraits<static_cast<MxType>(I)>::emax,
                 MxTraits<static_cast<MxType>(I)>::block_bytes}...};
}

void check_blocks(MxType t, const void* in, const void* out, int64_t n) {
  mx_info(t);
  require(n >= 0, "negative element count ", n);
  require(n % kMxBlockSize == 0, mx_info(t).name, " needs a multiple of ", kMxBlockSize, " values, got ", n);
  require(n == 0 || (in != nullptr && out != nullptr), "null data pointer");
}

}  // namespace

const MxInfo& mx_info(MxType t) {
  static const std::array<MxInfo, kMxTypeCount> infos = make_infos(std::make_index_sequence<kMxTypeCount>{});
  const auto i = static_cast<size_t>(t);
  require(i < infos.size(), "unknown MX type ", i);
  return infos[i];
}

std::string_view mx_format_name(MxType t) { return t == MxType::Fp4E2m1 ? "ocp_mxfp4" : mx_info(t).name; }

MxType parse_mx_type(std::string_view name) {
  std::string known;
  for (size_t i = 0; i < kNames.size(); ++i) {
    const auto t = static_cast<MxType>(i);
    if (kNames[i] == name || mx_format_name(t) == name) return t;
    known += (i ? ", " : "") + std::string(kNames[i]);
  }
  fail("unknown MX type '", name, "'; known: ", known, " (and ocp_mxfp4 for mxfp4)");
}

int mx_shared_exponent(MxType t, float amax) {
  require(std::isfinite(amax) && amax >= 0.0f, "the largest magnitude of an MX block must be finite and >= 0, not ",
          amax);
  return lowp_detail::mx_exponent(std::bit_cast<uint32_t>(amax) & 0x7FFFFFFFu, mx_info(t).emax);
}

void mx_quantize(MxType t, const float* x, int64_t n, uint8_t* blocks) {
  check_blocks(t, x, blocks, n);
  const size_t i = static_cast<size_t>(t);
  lowp_detail::registry().pick([i](const lowp_detail::LowpKernels& k) { return k.mx.quantize[i]; }).kernel(
      x, n / kMxBlockSize, blocks);
}

void mx_dequantize(MxType t, const uint8_t* blocks, int64_t n, float* x) {
  check_blocks(t, blocks, x, n);
  const size_t i = static_cast<size_t>(t);
  lowp_detail::registry().pick([i](const lowp_detail::LowpKernels& k) { return k.mx.dequantize[i]; }).kernel(
      blocks, n / kMxBlockSize, x);
}

void mx_encode(MxType t, const float* x, int64_t n, uint8_t* scales, uint8_t* elements) {
  const MxInfo& info = mx_info(t);
  check_blocks(t, x, elements, n);
  require(n == 0 || scales != nullptr, "null data pointer");
  std::vector<uint8_t> blocks(static_cast<size_t>(n / kMxBlockSize * info.block_bytes));
  mx_quantize(t, x, n, blocks.data());
  for (int64_t b = 0; b < n / kMxBlockSize; ++b) {
    const uint8_t* block = blocks.data() + b * info.block_bytes;
    scales[b] = block[0];
    unpack_codes(info.element_bits, block + 1, kMxBlockSize, elements + b * kMxBlockSize);
  }
}

void mx_decode(MxType t, const uint8_t* scales, const uint8_t* elements, int64_t n, float* x) {
  const MxInfo& info = mx_info(t);
  check_blocks(t, elements, x, n);
  require(n == 0 || scales != nullptr, "null data pointer");
  // Checked here so that the message names the flat index, not the index in a block.
  for (int64_t i = 0; i < n; ++i)
    if (elements[i] >> info.element_bits)
      fail("elements[", i, "] = ", int{elements[i]}, " is not a ", info.element_bits, "-bit ", info.name, " element code");
  std::vector<uint8_t> blocks(static_cast<size_t>(n / kMxBlockSize * info.block_bytes));
  for (int64_t b = 0; b < n / kMxBlockSize; ++b) {
    uint8_t* block = blocks.data() + b * info.block_bytes;
    block[0] = scales[b];
    pack_codes(info.element_bits, elements + b * kMxBlockSize, kMxBlockSize, block + 1);
  }
  mx_dequantize(t, blocks.data(), n, x);
}

}  // namespace fixq
