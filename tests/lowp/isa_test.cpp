// Every instruction set this CPU has, and the AVX-512 kernels through SIMDe, against the
// scalar reference, bit for bit: encode, decode, MX quantize and dequantize, on every
// length from 0 to 67 and large ones (every vector tail, masked or scalar) and unaligned
// pointers, with inputs that cover every kind of special value.
#include <gtest/gtest.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "fixq/cpu.h"
#include "fixq/lowp.h"
#include "lowp/kernels.h"
#include "support/kernel_paths.h"
#include "support/registry_checks.h"

namespace fixq {
namespace {

// Bitwise equality (NaN payloads included), for possibly empty arrays.
bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

// The kernel the active path runs for one operation.
template <class Get>
auto active(Get get) {
  return lowp_detail::registry().pick(get).kernel;
}
using lowp_detail::LowpKernels;

// Every length from 0 to 67 (each tail of 8-, 16- and 32-element steps, twice), and two
// large ones.
std::vector<int64_t> ragged_lengths() {
  std::vector<int64_t> v;
  for (int64_t n = 0; n <= 67; ++n) v.push_back(n);
  v.push_back(4096);
  v.push_back(4096 + 45);
  return v;
}

// A mix: uniform bit patterns (NaN, inf, subnormals included), values near the narrow
// types' ranges, exact ties of the narrow grids, zeros, and huge values.
std::vector<float> mixed_floats(size_t n, std::mt19937& rng) {
  std::vector<float> v(n);
  for (float& x : v) {
    switch (rng() % 6) {
      case 0: x = std::bit_cast<float>(static_cast<uint32_t>(rng())); break;
      case 1: x = std::ldexp(static_cast<float>(static_cast<int32_t>(rng() % 4096) - 2048), static_cast<int>(rng() % 40) - 30); break;
      case 2: x = std::ldexp(static_cast<float>(2 * (rng() % 64) + 1), static_cast<int>(rng() % 60) - 40); break;
      case 3: x = rng() % 2 ? 0.0f : -0.0f; break;
      case 4: x = std::bit_cast<float>(static_cast<uint32_t>(rng() % 0x01000000u) | (rng() % 2 ? 0x80000000u : 0u)); break;
      default: x = static_cast<float>(std::normal_distribution<double>(0.0, 1.0)(rng)) * 300.0f; break;
    }
  }
  return v;
}

TEST(LowpIsa, EncodeMatchesScalarBitForBit) {
  std::mt19937 rng(7);
  const std::vector<float> x = mixed_floats(4096 + 64, rng);
  for (const test::KernelPath& path : test::fast_paths()) {
    test::PathScope scope(path);
    const auto& ref = lowp_detail::scalar::kLowp.convert;
    for (int t = 0; t < kLowpTypeCount; ++t) {
      const size_t width = lowp_info(static_cast<LowpType>(t)).bits == 16 ? 2 : 1;
      for (int o = 0; o < 2; ++o) {
        for (const int64_t n : ragged_lengths()) {
          for (const size_t offset : {size_t{0}, size_t{1}, size_t{3}}) {
            std::vector<uint8_t> a(static_cast<size_t>(n) * width + 8, 0xAB), b(a.size(), 0xAB);
            const int64_t ia = active([&](const LowpKernels& k) { return k.convert.encode[t][o]; })(x.data() + offset, n, a.data() + offset * width % 8);
            const int64_t ib = ref.encode[t][o](x.data() + offset, n, b.data() + offset * width % 8);
            EXPECT_EQ(ia, ib) << path.name() << " " << lowp_info(static_cast<LowpType>(t)).name << " n=" << n;
            EXPECT_EQ(a, b) << path.name() << " " << lowp_info(static_cast<LowpType>(t)).name << " policy " << o
                            << " n=" << n << " offset " << offset;
          }
        }
      }
    }
  }
}

TEST(LowpIsa, DecodeMatchesScalarBitForBit) {
  std::mt19937 rng(8);
  std::vector<uint8_t> bytes(2 * 4096 + 128);
  for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng());
  for (const test::KernelPath& path : test::fast_paths()) {
    test::PathScope scope(path);
    const auto& ref = lowp_detail::scalar::kLowp.convert;
    for (int t = 0; t < kLowpTypeCount; ++t) {
      const int bits = lowp_info(static_cast<LowpType>(t)).bits;
      // For float6/float4, mostly valid codes with a few invalid ones among them.
      std::vector<uint8_t> codes = bytes;
      if (bits < 8)
        for (size_t i = 0; i < codes.size(); ++i) codes[i] = i % 97 == 50 ? codes[i] : codes[i] % (1 << bits);
      for (const int64_t n : ragged_lengths()) {
        for (const size_t offset : {size_t{0}, size_t{1}}) {
          std::vector<float> a(static_cast<size_t>(n)), b(static_cast<size_t>(n));
          const void* in = codes.data() + offset * (bits == 16 ? 2 : 1);
          EXPECT_EQ(active([&](const LowpKernels& k) { return k.convert.decode[t]; })(in, n, a.data()),
                    ref.decode[t](in, n, b.data()));
          EXPECT_TRUE(same_bits(a, b)) << path.name() << " " << lowp_info(static_cast<LowpType>(t)).name << " n=" << n;
        }
      }
    }
  }
}

TEST(LowpIsa, MxMatchesScalarBitForBit) {
  std::mt19937 rng(9);
  constexpr int64_t kBlocks = 64;
  std::vector<float> x = mixed_floats(kBlocks * kMxBlockSize, rng);
  // Blocks of ordinary data at many scales, where the mix above is all extremes.
  for (int64_t b = 0; b < kBlocks / 2; ++b) {
    const int e = static_cast<int>(rng() % 300) - 150;
    for (int64_t i = 0; i < kMxBlockSize; ++i)
      x[b * kMxBlockSize + i] = std::ldexp(static_cast<float>(std::normal_distribution<double>(0.0, 1.0)(rng)), e);
  }
  for (int64_t i = 0; i < kMxBlockSize; ++i) x[3 * kMxBlockSize + i] = 0.0f;  // an all-zero block
  // Blocks 4 .. 6 ordinary too (the first blocks run alone below); guard bytes after each
  // output catch a kernel that writes past its last block.
  for (int64_t b = 4; b < 7; ++b)
    for (int64_t i = 0; i < kMxBlockSize; ++i)
      x[b * kMxBlockSize + i] = std::ldexp(static_cast<float>(std::normal_distribution<double>(0.0, 1.0)(rng)), 3 - 2 * static_cast<int>(b));
  constexpr size_t kGuard = 64;
  for (const test::KernelPath& path : test::fast_paths()) {
    test::PathScope scope(path);
    const auto& ref = lowp_detail::scalar::kLowp.mx;
    for (int t = 0; t < kMxTypeCount; ++t) {
      for (const int64_t blocks : {int64_t{1}, int64_t{3}, kBlocks}) {
        const float* xs = x.data() + (blocks < kBlocks ? 4 * kMxBlockSize : 0);
        const auto bytes = static_cast<size_t>(mx_info(static_cast<MxType>(t)).block_bytes * blocks);
        std::vector<uint8_t> qa(bytes + kGuard, 0xAB), qb(bytes + kGuard, 0xAB);
        active([&](const LowpKernels& k) { return k.mx.quantize[t]; })(xs, blocks, qa.data());
        ref.quantize[t](xs, blocks, qb.data());
        EXPECT_EQ(qa, qb) << path.name() << " " << mx_info(static_cast<MxType>(t)).name << " blocks " << blocks;
        // Dequantize arbitrary bytes too, not only what quantize writes.
        std::vector<uint8_t> any(bytes);
        for (uint8_t& v : any) v = static_cast<uint8_t>(rng());
        for (const auto* in : {&qa, &any}) {
          const size_t n = static_cast<size_t>(blocks * kMxBlockSize);
          std::vector<float> da(n + kGuard, -3.0f), db(n + kGuard, -3.0f);
          active([&](const LowpKernels& k) { return k.mx.dequantize[t]; })(in->data(), blocks, da.data());
          ref.dequantize[t](in->data(), blocks, db.data());
          EXPECT_TRUE(same_bits(da, db)) << path.name() << " " << mx_info(static_cast<MxType>(t)).name << " blocks "
                                         << blocks;
        }
      }
    }
  }
}

}  // namespace
}  // namespace fixq

namespace fixq {
namespace {

// The comparisons above ran each family's own kernels (natively or through SIMDe).
TEST(LowpIsa, EveryInstructionSetIsExercised) {
  test::expect_complete(lowp_detail::registry());
  for (int t = 0; t < kLowpTypeCount; ++t) {
    test::expect_each_family_runs_its_own(lowp_detail::registry(), [t](const LowpKernels& k) { return k.convert.decode[t]; },
                                          "decode");
    test::expect_each_family_runs_its_own(lowp_detail::registry(),
                                          [t](const LowpKernels& k) { return k.convert.encode[t][0]; }, "encode");
  }
  for (int t = 0; t < kMxTypeCount; ++t)
    test::expect_each_family_runs_its_own(lowp_detail::registry(), [t](const LowpKernels& k) { return k.mx.quantize[t]; },
                                          "mx quantize");
}

}  // namespace
}  // namespace fixq
