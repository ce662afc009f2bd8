// Front ends of fixq/lowp.h Parts 1-3: type table and names, argument checks, dispatch to
// the active instruction set's kernels, and turning kernel reports into errors.
#include <array>
#include <bit>
#include <cstdint>
#include <string>
#include <utility>

#include "fixq/cpu.h"
#include "fixq/error.h"
#include "lowp/element.h"
#include "lowp/kernels.h"
#include "lowp/pack.h"

namespace fixq {

namespace {

using lowp_detail::Special;
using lowp_detail::traits;

constexpr std::array<std::string_view, kLowpTypeCount> kNames = {
    "e4m3fn", "e4m3fnuz", "e5m2", "e5m2fnuz", "e8m0fnu", "e4m3b11fnuz", "e2m3fn", "e3m2fn", "e2m1fn", "bf16", "fp16"};

template <LowpType T>
LowpInfo make_info() {
  constexpr lowp_detail::Traits t = traits(T);
  LowpInfo i;
  i.name = kNames[static_cast<size_t>(T)];
  i.bits = t.bits;
  i.exponent_bits = t.e;
  i.mantissa_bits = t.m;
  i.bias = t.bias;
  i.is_signed = t.special != Special::E8m0;
  i.has_inf = t.special == Special::Ieee;
  i.has_nan = t.special != Special::FiniteOnly;
  i.has_negative_zero = t.special != Special::Fnuz && t.special != Special::E8m0;
  i.max = std::bit_cast<float>(lowp_detail::decode_bits<T>(t.max_mag));
  i.min_positive = std::bit_cast<float>(lowp_detail::decode_bits<T>(t.special == Special::E8m0 ? 0 : 1));
  return i;
}

template <size_t... I>
std::array<LowpInfo, kLowpTypeCount> make_infos(std::index_sequence<I...>) {
  return {make_info<static_cast<LowpType>(I)>()...};
}

const LowpInfo& checked_info(LowpType t) {
  static const std::array<LowpInfo, kLowpTypeCount> infos = make_infos(std::make_index_sequence<kLowpTypeCount>{});
  const auto i = static_cast<size_t>(t);
  require(i < infos.size(), "unknown low-precision type ", i);
  return infos[i];
}

void check_code_width(LowpType t, bool wide) {
  const LowpInfo& info = checked_info(t);
  if ((info.bits == 16) != wide)
    fail(info.name, " codes are ", info.bits == 16 ? "uint16_t" : "uint8_t", ", not ", wide ? "uint16_t" : "uint8_t");
}

void check_array(const void* in, const void* out, int64_t n) {
  require(n >= 0, "negative element count ", n);
  require(n == 0 || (in != nullptr && out != nullptr), "null data pointer");
}

void encode_any(LowpType t, const float* x, int64_t n, void* codes, Overflow overflow, bool wide) {
  check_code_width(t, wide);
  check_array(x, codes, n);
  const size_t i = static_cast<size_t>(t), sat = overflow == Overflow::Saturate;
  const auto encode =
      lowp_detail::registry().pick([&](const lowp_detail::LowpKernels& k) { return k.convert.encode[i][sat]; }).kernel;
  const int64_t nan = encode(x, n, codes);
  if (nan >= 0) fail("element ", nan, " is NaN, which ", lowp_info(t).name, " cannot represent (it has no NaN)");
}

void decode_any(LowpType t, const void* codes, int64_t n, float* x, bool wide) {
  check_code_width(t, wide);
  check_array(codes, x, n);
  const size_t i = static_cast<size_t>(t);
  const auto decode =
      lowp_detail::registry().pick([&](const lowp_detail::LowpKernels& k) { return k.convert.decode[i]; }).kernel;
  const int64_t bad = decode(codes, n, x);
  if (bad >= 0)
    fail("element ", bad, " = ", int{static_cast<const uint8_t*>(codes)[bad]}, " is not a ", lowp_info(t).name,
         " code (", lowp_info(t).bits, " bits)");
}

void check_bits(int bits) {
  require(bits == 2 || bits == 4 || bits == 6 || bits == 8, "codes are packed at 2, 4, 6 or 8 bits, not ", bits);
}

}  // namespace

const LowpInfo& lowp_info(LowpType t) { return checked_info(t); }

LowpType parse_lowp_type(std::string_view name) {
  std::string known;
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) return static_cast<LowpType>(i);
    known += (i ? ", " : "") + std::string(kNames[i]);
  }
  fail("unknown low-precision type '", name, "'; known: ", known);
}

uint16_t lowp_encode(LowpType t, float x, Overflow overflow) {
  if (lowp_info(t).bits == 16) {
    uint16_t c;
    lowp_encode(t, &x, 1, &c, overflow);
    return c;
  }
  uint8_t c;
  lowp_encode(t, &x, 1, &c, overflow);
  return c;
}

float lowp_decode(LowpType t, uint16_t code) {
  float x;
  if (lowp_info(t).bits == 16) {
    lowp_decode(t, &code, 1, &x);
  } else {
    require(code < 256, code, " is not a ", lowp_info(t).name, " code (", lowp_info(t).bits, " bits)");
    const auto byte = static_cast<uint8_t>(code);
    lowp_decode(t, &byte, 1, &x);
  }
  return x;
}

void lowp_encode(LowpType t, const float* x, int64_t n, uint8_t* codes, Overflow overflow) {
  encode_any(t, x, n, codes, overflow, false);
}
void lowp_encode(LowpType t, const float* x, int64_t n, uint16_t* codes, Overflow overflow) {
  encode_any(t, x, n, codes, overflow, true);
}
void lowp_decode(LowpType t, const uint8_t* codes, int64_t n, float* x) { decode_any(t, codes, n, x, false); }
void lowp_decode(LowpType t, const uint16_t* codes, int64_t n, float* x) { decode_any(t, codes, n, x, true); }

std::string to_string(Overflow overflow) { return overflow == Overflow::Saturate ? "saturate" : "default"; }

Overflow parse_overflow(std::string_view name) {
  for (Overflow o : {Overflow::Default, Overflow::Saturate})
    if (name == to_string(o)) return o;
  fail("overflow must be default or saturate, got '", name, "'");
}

int64_t packed_code_bytes(int bits, int64_t n) {
  check_bits(bits);
  require(n >= 0 && n <= INT64_MAX / 8, "bad element count ", n);
  return (n * bits + 7) / 8;
}

void pack_codes(int bits, const uint8_t* codes, int64_t n, uint8_t* packed) {
  packed_code_bytes(bits, n);
  check_array(codes, packed, n);
  for (int64_t i = 0; i < n; ++i)
    if (codes[i] >> bits) fail("code ", int{codes[i]}, " at index ", i, " does not fit in ", bits, " bits");
  lowp_detail::pack_bits(bits, codes, n, packed);
}

void unpack_codes(int bits, const uint8_t* packed, int64_t n, uint8_t* codes) {
  const int64_t bytes = packed_code_bytes(bits, n);
  check_array(packed, codes, n);
  const int used = static_cast<int>((n * bits) % 8);
  if (used != 0 && (packed[bytes - 1] >> used) != 0)
    fail("the last byte of ", n, " packed ", bits, "-bit codes has nonzero unused bits (byte value ",
         int{packed[bytes - 1]}, ")");
  lowp_detail::unpack_bits(bits, packed, n, codes);
}

}  // namespace fixq
