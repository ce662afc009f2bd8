// Every one of the 2^32 float32 bit patterns, for every type and both overflow policies:
// the encoder of the active instruction set must give the code the independent reference
// (reference.h) says. The reference is slow, so it is not evaluated 2^32 times: rounding
// to nearest is monotone in |x|, so over the positive patterns (whose order is the order
// of their values) the reference's chosen value changes once per code of the type at most
// (2^16 points for bf16/fp16, a few hundred for the others). Bisection finds every such
// point; the encoder's output is then compared, pattern by pattern, with the resulting
// step function, and so are the NaN and infinity patterns and the negative half. The
// scalar reference kernels, several times slower, are checked on every 251st pattern and
// on both sides of every step.
//
// Under AddressSanitizer (CI's second run) the active kernels see every 32nd chunk of 2^12
// patterns only (a different 32nd for each type) and the scalar ones every 8032nd pattern,
// plus all the steps' edges, to keep the sanitizer suite short.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "lowp/kernels.h"
#include "lowp/traits.h"
#include "reference.h"

#if defined(__SANITIZE_ADDRESS__)
#define FIXQ_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FIXQ_TEST_SANITIZED 1
#endif
#endif

namespace fixq {
namespace {

#ifdef FIXQ_TEST_SANITIZED
constexpr uint64_t kChunkStride = 32;
#else
constexpr uint64_t kChunkStride = 1;
#endif
constexpr uint64_t kScalarStride = 251 * kChunkStride;
constexpr uint64_t kChunk = 1 << 12;
constexpr uint64_t kPatterns = uint64_t{1} << 32;
constexpr uint32_t kError = lowp_detail::kNoNanMarker;  // what the kernels write for an error

// [previous run's last + 1, last] all encode to code.
struct Step {
  uint32_t last;
  uint32_t code;
};

uint32_t expected_or_marker(const std::optional<uint32_t>& c) { return c ? *c : kError; }

// The reference's step function over all 2^32 patterns, in pattern order.
std::vector<Step> build_runs(const lowp_ref::Ref& ref, Overflow o) {
  std::vector<Step> runs;
  auto push = [&](uint32_t last, uint32_t code) {
    if (!runs.empty() && runs.back().code == code) {
      runs.back().last = last;
    } else {
      runs.push_back({last, code});
    }
  };
  auto index_of = [&](uint32_t p) { return ref.round_index(static_cast<double>(std::bit_cast<float>(p))); };
  constexpr uint32_t kMaxFinite = 0x7F7FFFFF;
  for (const uint32_t sign : {0u, 0x80000000u}) {
    push(sign, expected_or_marker(ref.encode(sign, o)));  // zero
    for (uint32_t p = 1; p <= kMaxFinite;) {
      const uint32_t idx = index_of(p);
      uint32_t lo = p, hi = kMaxFinite;  // the last pattern with this index lies in [lo, hi]
      while (lo < hi) {
        const uint32_t mid = lo + (hi - lo + 1) / 2;
        if (index_of(mid) == idx) {
          lo = mid;
        } else {
          hi = mid - 1;
        }
      }
      push(sign | lo, expected_or_marker(ref.code_for(idx, sign != 0, o)));
      p = lo + 1;
    }
    push(sign | 0x7F800000, expected_or_marker(ref.encode(sign | 0x7F800000, o)));  // infinity
    push(sign | 0x7FFFFFFF, expected_or_marker(ref.encode(sign | 0x7FC00000, o)));  // every NaN
  }
  return runs;
}

std::string type_name(const testing::TestParamInfo<LowpType>& info) { return std::string(lowp_info(info.param).name); }

class Exhaustive : public testing::TestWithParam<LowpType> {};

// One policy's expectations and kernel, and where the sweep stands in its steps.
template <class Code>
struct Policy {
  std::vector<Step> steps;
  lowp_detail::ConvertKernels::Encode encode;
  std::vector<Code> out;
  size_t step = 0;
  int failures = 0;
};

// Compares out (the codes of patterns base .. base + kChunk - 1) with the steps; returns
// the offset of the first pattern the kernel must report as an error, or -1.
template <class Code>
int64_t check_chunk(Policy<Code>& p, uint64_t base, bool errors) {
  int64_t first_error = -1;
  while (p.steps[p.step].last < base) ++p.step;
  for (uint64_t i = 0; i < kChunk;) {
    const uint64_t end = std::min<uint64_t>(kChunk, uint64_t{p.steps[p.step].last} - base + 1);
    const auto code = static_cast<Code>(p.steps[p.step].code);
    if (errors && code == kError && first_error < 0) first_error = static_cast<int64_t>(i);
    Code diff = 0;
    for (uint64_t j = i; j < end; ++j) diff |= static_cast<Code>(p.out[j] ^ code);
    if (diff != 0 && p.failures < 5) {
      const auto j = static_cast<uint64_t>(
          std::find_if(p.out.begin() + i, p.out.begin() + end, [&](Code c) { return c != code; }) - p.out.begin());
      ADD_FAILURE() << "0x" << std::hex << base + j << " -> 0x" << int{p.out[j]} << ", reference 0x" << int{code};
      ++p.failures;
    }
    i = end;
    if (end < kChunk) ++p.step;
  }
  return first_error;
}

// Every pattern (every kChunkStride-th chunk under the sanitizer, starting at phase)
// through both policies' kernels.
template <class Code>
void sweep(Policy<Code> (&policies)[2], uint64_t phase, bool errors) {
  std::vector<float> in(kChunk);
  for (auto& p : policies) p.out.resize(kChunk);
  for (uint64_t chunk = phase % kChunkStride; chunk * kChunk < kPatterns; chunk += kChunkStride) {
    const uint64_t base = chunk * kChunk;
    const auto base32 = static_cast<uint32_t>(base);
    for (uint32_t i = 0; i < kChunk; ++i) in[i] = std::bit_cast<float>(base32 + i);
    for (auto& p : policies) {
      const int64_t reported = p.encode(in.data(), kChunk, p.out.data());
      EXPECT_EQ(reported, check_chunk(p, base, errors)) << "first error in the chunk at 0x" << std::hex << base;
    }
    if (policies[0].failures + policies[1].failures >= 5) return;
  }
}

// The scalar kernels on a sample: every kScalarStride-th pattern and both sides of every step.
template <class Code>
void sample_scalar(const std::vector<Step>& steps, lowp_detail::ConvertKernels::Encode encode) {
  std::vector<uint32_t> strided, edges, patterns;
  for (uint64_t p = 0; p < kPatterns; p += kScalarStride) strided.push_back(static_cast<uint32_t>(p));
  for (const Step& s : steps) {
    edges.push_back(s.last);
    if (s.last != 0xFFFFFFFFu) edges.push_back(s.last + 1);
  }
  std::merge(strided.begin(), strided.end(), edges.begin(), edges.end(), std::back_inserter(patterns));
  std::vector<float> in(patterns.size());
  std::vector<Code> out(patterns.size());
  for (size_t i = 0; i < patterns.size(); ++i) in[i] = std::bit_cast<float>(patterns[i]);
  encode(in.data(), static_cast<int64_t>(in.size()), out.data());
  int failures = 0;
  size_t s = 0;
  for (size_t i = 0; i < patterns.size() && failures < 5; ++i) {
    while (steps[s].last < patterns[i]) ++s;
    if (out[i] != static_cast<Code>(steps[s].code)) {
      ADD_FAILURE() << "scalar: 0x" << std::hex << patterns[i] << " -> 0x" << int{out[i]} << ", reference 0x"
                    << steps[s].code;
      ++failures;
    }
  }
}

template <class Code>
void run_type(LowpType t) {
  const lowp_ref::Ref ref(t);
  const auto slot = static_cast<size_t>(t);
  Policy<Code> policies[2];
  for (const Overflow o : {Overflow::Default, Overflow::Saturate}) {
    const size_t i = o == Overflow::Saturate;
    policies[i].steps = build_runs(ref, o);
    policies[i].encode =
        lowp_detail::registry().pick([&](const lowp_detail::LowpKernels& k) { return k.convert.encode[slot][i]; }).kernel;
  }
  sweep(policies, slot, !lowp_info(t).has_nan);
  for (size_t i = 0; i < 2; ++i) sample_scalar<Code>(policies[i].steps, lowp_detail::scalar::kLowp.convert.encode[slot][i]);
}

TEST_P(Exhaustive, EveryFloat32PatternEncodesAsTheReferenceSaysUnderBothPolicies) {
  if (lowp_info(GetParam()).bits == 16) {
    run_type<uint16_t>(GetParam());
  } else {
    run_type<uint8_t>(GetParam());
  }
}

std::vector<LowpType> all_types() {
  std::vector<LowpType> v;
  for (int t = 0; t < kLowpTypeCount; ++t) v.push_back(static_cast<LowpType>(t));
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, Exhaustive, testing::ValuesIn(all_types()), type_name);

}  // namespace
}  // namespace fixq
