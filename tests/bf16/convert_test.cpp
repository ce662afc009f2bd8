// float32 -> bf16 over all 2^32 float32 patterns, on every distinct encoder kernel, against the
// textbook bit formula (an independent oracle: round the upper half to nearest, ties to
// even, by adding 0x7FFF plus the kept half's lowest bit; NaN -> the quiet NaN with the
// sign, payload dropped), and bf16 -> float32 over all 2^16 codes (exact widening).
// Chunks of 2^16 through the array API keep it to a few seconds per path (the scalar
// kernel: every 16th chunk); under AddressSanitizer every 64th chunk.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <vector>

#include "fixq/bf16.h"
#include "fixq/lowp.h"
#include "lowp/kernels.h"
#include "support/kernel_paths.h"

#if defined(__SANITIZE_ADDRESS__)
#define FIXQ_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIXQ_TEST_SANITIZED 1
#endif
#endif

namespace fixq::bf16 {
namespace {

#ifdef FIXQ_TEST_SANITIZED
constexpr uint64_t kChunkStride = 64;
#else
constexpr uint64_t kChunkStride = 1;
#endif

constexpr uint16_t oracle(uint32_t u) {
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>(((u >> 16) & 0x8000u) | 0x7FC0u);
  return static_cast<uint16_t>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16);
}
static_assert(oracle(0x3F808000u) == 0x3F80);  // tie, kept even
static_assert(oracle(0x3F818000u) == 0x3F82);  // tie, rounded up to even
static_assert(oracle(0x7F7FFFFFu) == 0x7F80);  // max float rounds to +inf
static_assert(oracle(0xFF800001u) == 0xFFC0);  // signalling NaN: quiet, sign kept
static_assert(oracle(0x00000001u) == 0x0000);  // subnormals round like any value

// One path per distinct encoder (the bf16 conversion is lowp's kernel; several families
// inherit the same one, and each pass over 2^32 patterns costs seconds).
std::vector<fixq::test::KernelPath> distinct_encoder_paths() {
  std::vector<fixq::test::KernelPath> out;
  std::vector<lowp_detail::ConvertKernels::Encode> seen;
  for (const fixq::test::KernelPath& p : fixq::test::kernel_paths()) {
    fixq::test::PathScope s(p);
    const auto k = lowp_detail::registry().pick([](const lowp_detail::LowpKernels& t) {
      return t.convert.encode[static_cast<int>(LowpType::Bf16)][0];
    }).kernel;
    if (std::find(seen.begin(), seen.end(), k) != seen.end()) continue;
    seen.push_back(k);
    out.push_back(p);
  }
  return out;
}

class Bf16Convert : public ::testing::TestWithParam<fixq::test::KernelPath> {};

// Branch-free, so the comparison loop vectorizes.
inline uint16_t oracle_fast(uint32_t u) {
  const uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16, nan = ((u >> 16) & 0x8000u) | 0x7FC0u;
  return static_cast<uint16_t>((u & 0x7FFFFFFFu) > 0x7F800000u ? nan : rounded);
}

TEST_P(Bf16Convert, EveryFloat32PatternRoundsToNearestEven) {
  fixq::test::PathScope s(GetParam());
  // The scalar reference kernel, several times slower, sees every 16th chunk.
  const uint64_t stride = kChunkStride * (GetParam().isa == Isa::Scalar ? 16 : 1);
  constexpr uint64_t kChunk = 1 << 16;
  std::vector<uint32_t> u(kChunk);
  std::vector<float> x(kChunk);
  std::vector<uint16_t> got(kChunk);
  uint64_t bad = 0;
  for (uint64_t base = 0; base < (uint64_t{1} << 32); base += kChunk * stride) {
    for (uint32_t i = 0; i < kChunk; ++i) u[i] = static_cast<uint32_t>(base) + i;
    std::memcpy(x.data(), u.data(), kChunk * sizeof(float));
    from_float(x, got);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < kChunk; ++i) wrong += got[i] != oracle_fast(u[i]);
    if (wrong == 0) continue;
    for (uint32_t i = 0; i < kChunk; ++i)
      if (got[i] != oracle(u[i]) && ++bad <= 5)
        ADD_FAILURE() << std::hex << "pattern 0x" << u[i] << ": 0x" << got[i] << ", want 0x" << oracle(u[i]);
  }
  EXPECT_EQ(bad, 0u);
}

TEST_P(Bf16Convert, EveryCodeWidensExactlyAndRoundTrips) {
  fixq::test::PathScope s(GetParam());
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const float f = to_float(static_cast<uint16_t>(c));
    ASSERT_EQ(std::bit_cast<uint32_t>(f), c << 16);
    const bool nan = (c & 0x7FFF) > 0x7F80;
    ASSERT_EQ(from_float(f), nan ? ((c & 0x8000) | 0x7FC0) : c) << std::hex << c;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryEncoder, Bf16Convert, ::testing::ValuesIn(distinct_encoder_paths()),
                         [](const ::testing::TestParamInfo<fixq::test::KernelPath>& i) { return i.param.name(); });

}  // namespace
}  // namespace fixq::bf16
