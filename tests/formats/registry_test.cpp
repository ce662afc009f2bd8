// The format registry (fixq/formats.h) against oracles that share nothing with it: ggml's
// own bytes and dequantized floats (tests/vectors/ggml), ml_dtypes' codes and decode
// tables (tests/vectors/float8) packed by a bit-by-bit packer written here, the OCP MX
// reference of tests/lowp/mx_reference.h, and the integer groups' payload read back by a
// reader written from the header's layout.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "fixq/encoded_file.h"
#include "fixq/error.h"
#include "fixq/formats.h"
#include "fixq/gguf.h"
#include "lowp/mx_reference.h"
#include "support/expect.h"
#include "support/golden.h"

namespace fixq {
namespace {

using test::expect_error;
using test::golden_values;
__extension__ typedef __int128 int128;  // the exact oracle of byte counts near int64's limit

std::vector<uint8_t> bytes_of(const std::vector<std::byte>& v) {
  std::vector<uint8_t> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size());
  return out;
}

std::vector<std::byte> as_payload(const std::vector<uint8_t>& v) {
  std::vector<std::byte> out(v.size());
  if (!v.empty()) std::memcpy(out.data(), v.data(), v.size());
  return out;
}

// Code i of `bits` at bits [bits * i, bits * i + bits) of a little-endian bit string.
std::vector<uint8_t> pack_bit_by_bit(const std::vector<uint32_t>& codes, int bits) {
  std::vector<uint8_t> out((codes.size() * static_cast<size_t>(bits) + 7) / 8, 0);
  for (size_t i = 0; i < codes.size(); ++i)
    for (int b = 0; b < bits; ++b)
      if ((codes[i] >> b) & 1u) out[(i * bits + b) / 8] |= static_cast<uint8_t>(1u << ((i * bits + b) % 8));
  return out;
}

uint32_t code_at(const uint8_t* packed, int bits, size_t i) {
  uint32_t c = 0;
  for (int b = 0; b < bits; ++b) c |= ((packed[(i * bits + b) / 8] >> ((i * bits + b) % 8)) & 1u) << b;
  return c;
}

TEST(FormatRegistry, EveryFamilyIsThereUnderOneNameEach) {
  std::set<std::string> names;
  std::vector<std::string> mx, ints;
  int gguf = 0, floats = 0;
  for (const Format& f : all_formats()) {
    EXPECT_TRUE(names.insert(f.name).second) << f.name;
    for (const std::string& a : f.aliases) {
      EXPECT_TRUE(names.insert(a).second) << a;
      EXPECT_EQ(&find_format(a), &f) << a;
    }
    EXPECT_EQ(&find_format(f.name), &f);
    EXPECT_FALSE(f.description.empty()) << f.name;
    gguf += f.family == FormatFamily::Gguf;
    floats += f.family == FormatFamily::LowpFloat;
    if (f.family == FormatFamily::Mx) mx.push_back(f.name);
    if (f.family == FormatFamily::IntGroups) ints.push_back(f.name);
  }
  EXPECT_EQ(gguf, static_cast<int>(gguf::all_types().size()));
  EXPECT_EQ(floats, kLowpTypeCount);
  // "mxfp4" is ggml's layout (a GGUF entry); the OCP one is "ocp_mxfp4".
  EXPECT_EQ(mx, (std::vector<std::string>{"mxfp8_e4m3", "mxfp8_e5m2", "mxfp6_e2m3", "mxfp6_e3m2", "ocp_mxfp4", "mxint8"}));
  EXPECT_EQ(find_format("mxfp4").family, FormatFamily::Gguf);
  EXPECT_EQ(ints, (std::vector<std::string>{"int2_g32", "int4_g32", "int8_g32"}));
  EXPECT_EQ(find_format("float8_e4m3fn").name, "e4m3fn");  // ml_dtypes' names are aliases
  EXPECT_EQ(find_format("bfloat16").name, "bf16");
  expect_error([] { find_format("q9_9"); }, "unknown format 'q9_9'", "q4_0", "e4m3fn", "int4_g32");
}

// ggml's quantize_row_*_ref bytes of the golden inputs, and its dequantized floats back.
TEST(FormatRegistry, GgufEntriesAreGgmlsBytesAndFloats) {
  const std::vector<float> x = golden_values<float>("ggml/inputs.f32");
  const Shape shape{64, 256};
  ASSERT_EQ(x.size(), 64u * 256u);
  int checked = 0, refused = 0;
  for (const gguf::TypeTraits& t : gguf::all_types()) {
    const std::string name(t.name);
    const std::vector<uint8_t> want = golden_values<uint8_t>("ggml/" + name + ".bin");
    EXPECT_EQ(find_format(name).payload_bytes(shape), static_cast<int64_t>(want.size())) << name;
    // Where ggml stored a scale beyond fp16 (an infinity, which ggml_validate_row_data
    // rejects: q8_1's sum field on set A's large rows), the registry refuses the values and
    // the payload instead of writing or reading such a block.
    const int64_t bad = gguf::first_invalid_block(t.type, std::as_bytes(std::span(want)));
    if (bad >= 0) {
      expect_error([&] { encode(name, x.data(), shape); }, name, "beyond the fp16 range");
      expect_error([&] { decode(EncodedTensor{name, shape, as_payload(want)}); }, "block " + std::to_string(bad),
                   "NaN or infinite scale");
      ++checked;
      ++refused;
      continue;
    }
    const EncodedTensor e = encode(name, x.data(), shape);
    EXPECT_EQ(e.format, name);
    EXPECT_EQ(bytes_of(e.payload), want) << name;
    if (t.ggml_dequantize) {
      const std::vector<uint32_t> floats = golden_values<uint32_t>("ggml/" + name + ".dequant.f32");
      const std::vector<float> back = decode(EncodedTensor{name, shape, as_payload(want)});
      ASSERT_EQ(back.size(), floats.size()) << name;
      for (size_t i = 0; i < back.size(); ++i)
        ASSERT_EQ(std::bit_cast<uint32_t>(back[i]), floats[i]) << name << " [" << i << "]";
    }
    ++checked;
  }
  EXPECT_EQ(checked, static_cast<int>(gguf::all_types().size()));
  EXPECT_GE(refused, 1) << "set A holds rows whose q8_1 sum leaves fp16 (tests/vectors/ggml/README.md)";
  for (const char* act : {"q8_0", "q8_K"}) {  // the activation types, on set B too (q8_1's overflows too)
    const std::vector<float> xb = golden_values<float>("ggml/inputs_b.f32");
    EXPECT_EQ(bytes_of(encode(act, xb.data(), shape).payload), golden_values<uint8_t>(std::string("ggml/inputs_b.") + act + ".bin"))
        << act;
  }
}

// ml_dtypes' codes of the edge inputs under both policies, packed bit by bit, are the
// payload; ml_dtypes' decode table is what decoding every code gives.
TEST(FormatRegistry, LowPrecisionFloatsAreMlDtypesCodesDenselyPacked) {
  const std::vector<float> edges = golden_values<float>("float8/edges.f32");
  for (int ti = 0; ti < kLowpTypeCount; ++ti) {
    const auto t = static_cast<LowpType>(ti);
    const LowpInfo& info = lowp_info(t);
    const std::string name(info.name), golden = find_format(name).aliases.at(0);  // ml_dtypes' name
    // The inputs on which fixq and ml_dtypes agree by definition (tests/lowp/golden_test.cpp
    // covers the three documented departures).
    std::vector<float> x;
    std::vector<size_t> at;
    for (size_t i = 0; i < edges.size(); ++i) {
      const float v = edges[i];
      const uint32_t b = std::bit_cast<uint32_t>(v);
      if (std::isnan(v) || std::isinf(v) || (t == LowpType::E8m0fnu && b > 0x00400000u && b < 0x00600000u)) continue;
      x.push_back(v);
      at.push_back(i);
    }
    for (const Overflow o : {Overflow::Default, Overflow::Saturate}) {
      const std::string file = "float8/" + golden + ".edges." + (o == Overflow::Default ? "default" : "saturate") +
                               (info.bits == 16 ? ".u16" : ".u8");
      std::vector<uint32_t> codes;
      if (info.bits == 16) {
        const std::vector<uint16_t> all = golden_values<uint16_t>(file);
        for (size_t i : at) codes.push_back(all[i]);
      } else {
        const std::vector<uint8_t> all = golden_values<uint8_t>(file);
        for (size_t i : at) codes.push_back(all[i]);
      }
      const EncodedTensor e = encode(name, x.data(), Shape{static_cast<int64_t>(x.size())}, {o});
      EXPECT_EQ(bytes_of(e.payload), pack_bit_by_bit(codes, info.bits)) << name << " " << file;
    }
    // Decoding: every code, as ml_dtypes decodes it.
    const std::vector<uint32_t> table = info.bits == 16 ? std::vector<uint32_t>{} : golden_values<uint32_t>("float8/" + golden + ".decode.u32");
    if (!table.empty()) {
      std::vector<uint32_t> all(table.size());
      for (uint32_t c = 0; c < all.size(); ++c) all[c] = c;
      const std::vector<float> back =
          decode(EncodedTensor{name, Shape{static_cast<int64_t>(all.size())}, as_payload(pack_bit_by_bit(all, info.bits))});
      for (size_t c = 0; c < table.size(); ++c) EXPECT_EQ(std::bit_cast<uint32_t>(back[c]), table[c]) << name << " code " << c;
    }
  }
  // fp16: the payload of every pattern is the patterns themselves, little-endian.
  const std::vector<uint32_t> half = golden_values<uint32_t>("float8/float16.decode.u32");
  std::vector<uint32_t> codes(half.size());
  for (uint32_t c = 0; c < codes.size(); ++c) codes[c] = c;
  const std::vector<float> back =
      decode(EncodedTensor{"fp16", Shape{static_cast<int64_t>(codes.size())}, as_payload(pack_bit_by_bit(codes, 16))});
  for (size_t c = 0; c < half.size(); ++c) ASSERT_EQ(std::bit_cast<uint32_t>(back[c]), half[c]) << "fp16 code " << c;
}

TEST(FormatRegistry, MxEntriesAreTheSpecReferenceBlocks) {
  std::mt19937 rng(5);
  std::vector<float> x(3 * 64);
  for (float& v : x) v = std::ldexp(static_cast<float>(std::normal_distribution<double>(0, 1)(rng)), static_cast<int>(rng() % 9) - 4);
  x[70] = 1e30f;  // a block with a huge value, clamped elements
  for (const mx_ref::Spec& s : mx_ref::specs()) {
    const std::string name(mx_format_name(s.type));
    std::vector<uint8_t> want;
    for (size_t b = 0; b < x.size() / 32; ++b) {
      const std::vector<uint8_t> block = mx_ref::reference_block(s, x.data() + 32 * b);
      want.insert(want.end(), block.begin(), block.end());
    }
    const EncodedTensor e = encode(name, x.data(), Shape{3, 64});
    EXPECT_EQ(bytes_of(e.payload), want) << name;
    // Decoding: each element's value times 2^s, from the reference's own reading of the block.
    const std::vector<float> back = decode(e);
    for (size_t i = 0; i < x.size(); ++i) {
      const uint8_t* block = want.data() + (i / 32) * want.size() / (x.size() / 32);
      const uint32_t code = mx_ref::get_bits(block, s.bits, static_cast<int>(i % 32));
      const double element = s.type == MxType::Int8 ? static_cast<int8_t>(code) / 64.0 : lowp_ref::Ref(s.element).decode(code);
      EXPECT_EQ(back[i], static_cast<float>(std::ldexp(element, block[0] - 127))) << name << " [" << i << "]";
    }
  }
  expect_error([&] { encode("ocp_mxfp4", x.data(), Shape{4, 48}); }, "ocp_mxfp4 packs blocks of 32 values", "[4, 48]");
  expect_error([&] { encode("mxint8", x.data(), Shape{}); }, "has no axis");
}

// The integer groups' payload, read with the header's layout: codes of b bits densely
// packed in C order, then float32 scales [R, G], then zero points [R, G].
TEST(FormatRegistry, IntegerGroupsRoundToTheirGridAndLayOutTheirParts) {
  std::mt19937 rng(9);
  const int64_t R = 3, C = 96, G = C / 32;
  std::vector<float> x(static_cast<size_t>(R * C));
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = static_cast<float>(std::normal_distribution<double>(0, 1)(rng)) * (1.0f + static_cast<float>(i / 32));
  for (size_t i = 32; i < 64; ++i) x[i] = 0.0f;  // an all-zero group
  for (int bits : {2, 4, 8}) {
    const std::string name = "int" + std::to_string(bits) + "_g32";
    const EncodedTensor e = encode(name, x.data(), Shape{R, C});
    const int64_t code_bytes = R * C * bits / 8;
    ASSERT_EQ(static_cast<int64_t>(e.payload.size()), code_bytes + 5 * R * G) << name;
    const std::vector<uint8_t> p = bytes_of(e.payload);
    const std::vector<float> back = decode(e);
    for (int64_t r = 0; r < R; ++r) {
      for (int64_t g = 0; g < G; ++g) {
        float s;
        std::memcpy(&s, p.data() + code_bytes + 4 * (r * G + g), 4);
        const int32_t z = p[static_cast<size_t>(code_bytes + 4 * R * G + r * G + g)];
        ASSERT_TRUE(std::isfinite(s) && s > 0.0f) << name;
        ASSERT_LT(z, 1 << bits) << name;
        for (int64_t c = g * 32; c < (g + 1) * 32; ++c) {
          const size_t i = static_cast<size_t>(r * C + c);
          const auto q = static_cast<int32_t>(code_at(p.data(), bits, i));
          // The value is float32(q - z) * s, and it is the grid point nearest x: ranges are
          // never clipped, so within half a step.
          ASSERT_EQ(back[i], static_cast<float>(q - z) * s) << name << " [" << i << "]";
          ASSERT_LE(std::fabs(static_cast<double>(back[i]) - x[i]), 0.5 * s * (1 + 1e-6)) << name << " [" << i << "]";
        }
      }
    }
    // The all-zero group decodes to exact zeros.
    for (size_t i = 32; i < 64; ++i) EXPECT_EQ(back[i], 0.0f) << name;
  }
  std::vector<uint8_t> bad = bytes_of(encode("int4_g32", x.data(), Shape{R, C}).payload);
  bad[static_cast<size_t>(R * C / 2 + 4 * R * G + 2)] = 16;  // a zero point beyond 4 bits
  expect_error([&] { decode(EncodedTensor{"int4_g32", Shape{R, C}, as_payload(bad)}); }, "int4_g32 payload",
               "zero point of row 0, group 2 is 16");
  std::vector<float> nan = x;
  nan[5] = NAN;
  expect_error([&] { encode("int8_g32", nan.data(), Shape{R, C}); }, "element 5", "finite");
  expect_error([&] { encode("int4_g32", x.data(), Shape{R * 2, C / 2}); }, "multiple of 32");
}

TEST(FormatRegistry, PayloadsOfTheWrongSizeOrOptionsAreClearErrors) {
  const std::vector<float> x(64, 1.5f);
  for (const char* name : {"q4_0", "e4m3fn", "e2m1fn", "bf16", "mxfp6_e3m2", "int2_g32"}) {
    EncodedTensor e = encode(name, x.data(), Shape{2, 32});
    e.payload.pop_back();
    expect_error([&] { decode(e); }, "[2, 32]");
  }
  expect_error([&] { encode("q4_0", x.data(), Shape{64}, {Overflow::Saturate}); }, "saturation", "q4_0");
  expect_error([&] { decode(EncodedTensor{"nope", Shape{1}, {}}); }, "unknown format 'nope'");
  // Saturation: e4m3fn's overflow goes to NaN (0x7F) by default, to max (0x7E) saturating.
  const std::vector<float> big = {1e6f};
  EXPECT_EQ(encode("e4m3fn", big.data(), Shape{1}).payload.at(0), std::byte{0x7F});
  EXPECT_EQ(encode("e4m3fn", big.data(), Shape{1}, {Overflow::Saturate}).payload.at(0), std::byte{0x7E});
}

// A .bin file may claim any shape whose element count fits int64; fuzzing found bf16 values
// of shape [2, 3617348584308239977], whose byte count 2 n was formed in int64 and wrapped
// (UBSan: signed overflow; the release CLI printed a negative byte count). Every format's
// byte count of such shapes is now exact or an error naming the overflow, checked against
// 128-bit arithmetic: 256 values are whole blocks (and whole bytes) of every format, so
// the payload of n = 256 m values is m times that of 256.
TEST(FormatRegistry, ByteCountsOfHugeShapesAreExactOrOverflowErrors) {
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  const int64_t n = kMax / 256 * 256;
  int exact = 0, overflowing = 0;
  for (const Format& f : all_formats()) {
    SCOPED_TRACE(f.name);
    const int128 want = static_cast<int128>(f.payload_bytes(Shape{256})) * (n / 256);
    if (want > kMax) {
      ++overflowing;
      expect_error([&] { f.payload_bytes(Shape{n}); },
                   "the byte count of " + f.name + " values of shape [" + std::to_string(n) + "] overflows int64 (");
    } else {
      ++exact;
      EXPECT_EQ(f.payload_bytes(Shape{n}), static_cast<int64_t>(want));
    }
    // Decoding the shape from a short payload is refused either way, naming the format.
    expect_error([&] { decode(EncodedTensor{f.name, Shape{n}, {}}); }, f.name);
    expect_error([&] { decode(EncodedTensor{f.name, Shape{4, n / 4}, std::vector<std::byte>(64)}); }, f.name);
  }
  // Both kinds occur: 16-bit floats, q8_0, mxfp8, int8_g32 take more than a byte per value.
  EXPECT_GT(exact, 0);
  EXPECT_GT(overflowing, 0);
  // Packed floats of any count, not only whole blocks: ceil(n * bits / 8) without forming n * bits.
  for (const Format& f : all_formats()) {
    if (f.family != FormatFamily::LowpFloat) continue;
    const int64_t bits = f.payload_bytes(Shape{8});
    for (int64_t d = 0; d < 8; ++d) {
      const int64_t m = kMax - d;
      const int128 want = (static_cast<int128>(m) * bits + 7) / 8;
      if (want > kMax)
        expect_error([&] { f.payload_bytes(Shape{m}); }, "overflows int64");
      else
        EXPECT_EQ(f.payload_bytes(Shape{m}), static_cast<int64_t>(want)) << f.name << " n = " << m;
    }
  }
  // The finding itself, in full.
  expect_error([] { decode(EncodedTensor{"bf16", Shape{2, 3617348584308239977}, std::vector<std::byte>(42)}); },
               "the byte count of bf16 values of shape [2, 3617348584308239977] overflows int64 "
               "(7234697168616479954 * 2)");
}

}  // namespace
}  // namespace fixq
