// tests/support/simde_supplement.h, the AVX-512 names SIMDe 0.7 lacks, against the instructions
// they stand for. Every name runs on two paths: "avx512_simde", the supplement as the
// emulated kernels see it (supplement_avx512*.cpp built with FIXQ_EMULATE_X86), and
// "avx512", the hardware instruction (skipped where the CPU lacks the family). Both must
// give, bit for bit, what a scalar statement of the instruction's operation section in
// Intel's SDM / intrinsics guide gives, written here independently of the supplement, so
// the two paths equal each other too.
//
// Inputs: random lanes mixed with the extremes of each type (INT_MIN / INT_MAX, +-0,
// subnormals, +-Inf, quiet and signalling NaNs with payloads, the rounding edges of each
// conversion), every half-precision value, and for masked memory operations every mask
// shape (0, all ones, prefixes, suffixes, single lanes, random) with the bytes of the
// selected lanes flush against a PROT_NONE page on either side and in an exactly sized heap
// block (AddressSanitizer): a masked-off lane that is read or written faults.
#include <gtest/gtest.h>

#if !defined(__x86_64__)
// The supplement is x86 intrinsics, for the x86 families' SIMDe copies, which only an x86-64
// build has (tests/CMakeLists.txt).
TEST(Supplement, NeedsAnX86Build) { GTEST_SKIP() << "SIMDe's AVX-512 supplement is tested in x86-64 builds only"; }
#else
#include <sys/mman.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iomanip>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "fixq/cpu.h"
#include "supplement_checks.h"

namespace fixq {
namespace {

namespace sc = supplement_checks;
using Bytes = std::vector<uint8_t>;

// ---------------------------------------------------------------------------------------
// Lanes, inputs and comparisons

template <class T>
T get(const uint8_t* v, int i) {
  T t;
  std::memcpy(&t, v + sizeof(T) * i, sizeof t);
  return t;
}
template <class T>
void put(uint8_t* v, int i, T t) {
  std::memcpy(v + sizeof(T) * i, &t, sizeof t);
}

float f32(uint32_t u) { return std::bit_cast<float>(u); }
uint32_t bits(float f) { return std::bit_cast<uint32_t>(f); }

std::string hex(const uint8_t* v, size_t n, int lane_bytes) {
  std::ostringstream os;
  os << std::hex << std::setfill('0');
  for (size_t i = 0; i < n; i += lane_bytes) {
    os << (i ? " " : "");
    for (int b = lane_bytes - 1; b >= 0; --b) os << std::setw(2) << int{v[i + b]};
  }
  return os.str();
}

// got == want byte for byte; the message lists both as lanes, most significant byte first.
testing::AssertionResult same(const uint8_t* got, const uint8_t* want, size_t n, int lane_bytes) {
  if (std::memcmp(got, want, n) == 0) return testing::AssertionSuccess();
  std::string lanes;
  for (size_t i = 0; i < n; i += lane_bytes)
    if (std::memcmp(got + i, want + i, lane_bytes) != 0) lanes += " " + std::to_string(i / lane_bytes);
  return testing::AssertionFailure() << "lanes" << lanes << " differ\n  got  " << hex(got, n, lane_bytes)
                                     << "\n  want " << hex(want, n, lane_bytes);
}

// The extremes of each lane type (as bit patterns, truncated to the lane).
const std::vector<uint64_t> kInt8 = {0x00, 0x01, 0x7F, 0x80, 0x81, 0xFF, 0xFE, 0x40};
const std::vector<uint64_t> kInt16 = {0x0000, 0x0001, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0xFFFE, 0x00FF, 0xFF00, 0x0080};
const std::vector<uint64_t> kInt32 = {
    0, 1, 0xFFFFFFFF, 0x80000000, 0x80000001, 0x7FFFFFFF, 0x7FFFFFFE, 0x7F, 0x80, 0xFF, 0xFFFFFF80, 0xFFFFFF7F,
    0x7FFF, 0x8000, 0xFFFF, 0xFFFF8000, 0xFFFF7FFF, 0x10000,
    // int32 -> float32 rounding edges: 2^24 + 1 (tie to even), 2^24 + 3, 2^31 - 64 (tie, to
    // 2^31), 2^31 - 65 and -2^31 + 64
    0x01000001, 0x01000003, 0xFEFFFFFF, 0x7FFFFFC0, 0x7FFFFFBF, 0x80000040, 0x7FFFFF80, 0x0FFFFFFF};
const std::vector<uint64_t> kInt64 = {0, 1, ~0ull, 0x8000000000000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000001,
                                      0x00000000FFFFFFFF, 0xFFFFFFFF00000000, 0x4000000000000000};
const std::vector<uint64_t> kFloat = {
    0x00000000, 0x80000000,              // +-0
    0x00000001, 0x80000001, 0x007FFFFF,  // subnormals
    0x00800000, 0x80800000, 0x7F7FFFFF, 0xFF7FFFFF,  // +-FLT_MIN, +-FLT_MAX
    0x7F800000, 0xFF800000,                          // +-Inf
    0x7FC00000, 0xFFC00000, 0x7FC12345, 0x7F800001, 0xFFA00001, 0x7FBFFFFF,  // quiet, signalling NaNs
    0x3F000000, 0xBF000000, 0x3F7FFFFF, 0x3FC00000, 0xBFC00000, 0x40200000,  // 0.5, 1 - ulp, 1.5, 2.5
    // float -> int32 edges: 2^31 (out of range), -2^31 (in range), the floats next to them
    0x4F000000, 0xCF000000, 0x4EFFFFFF, 0xCF000001, 0xCEFFFFFF, 0x4B800001, 0x4B000001};

// n bytes of lanes of lane_bytes: half of them extremes of `special`, half random bits; for
// float lanes (floats == true) a third of all lanes are finite values of moderate exponent.
Bytes draw(std::mt19937_64& rng, size_t n, int lane_bytes, const std::vector<uint64_t>& special,
           bool floats = false) {
  Bytes v(n);
  for (size_t i = 0; i < n; i += lane_bytes) {
    uint64_t x = rng();
    const uint64_t pick = rng() % 6;
    if (pick < 3) x = special[rng() % special.size()];
    else if (floats && pick == 3)
      x = (x & 0x807FFFFFu) | (uint64_t{100 + rng() % 60} << 23);  // about 2^-27 .. 2^33
    std::memcpy(&v[i], &x, lane_bytes);
  }
  return v;
}

// Every shape of mask over n lanes: none, all, alternating, the two ends, every prefix and
// suffix (tails), every single lane and random ones.
std::vector<uint64_t> masks(int n, std::mt19937_64& rng) {
  const uint64_t all = n == 64 ? ~0ull : (1ull << n) - 1;
  std::vector<uint64_t> v = {0, all, 0x5555555555555555ull & all, 0xAAAAAAAAAAAAAAAAull & all, 1 | (1ull << (n - 1))};
  for (int i = 0; i < n; ++i) {
    const uint64_t prefix = (1ull << i) - 1;
    v.push_back(prefix);
    v.push_back(all & ~prefix);
    v.push_back(1ull << i);
  }
  for (int i = 0; i < 64; ++i) v.push_back(rng() & all);
  return v;
}

// ---------------------------------------------------------------------------------------
// Memory whose neighbours fault: one read-write page between two PROT_NONE pages.

class GuardedPage {
 public:
  GuardedPage() : page_(static_cast<size_t>(sysconf(_SC_PAGESIZE))) {
    void* m = mmap(nullptr, 3 * page_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::runtime_error("mmap failed");
    base_ = static_cast<uint8_t*>(m);
    if (mprotect(base_ + page_, page_, PROT_READ | PROT_WRITE) != 0) throw std::runtime_error("mprotect failed");
  }
  ~GuardedPage() { munmap(base_, 3 * page_); }
  GuardedPage(const GuardedPage&) = delete;
  GuardedPage& operator=(const GuardedPage&) = delete;
  uint8_t* begin() const { return base_ + page_; }
  uint8_t* end() const { return base_ + 2 * page_; }

 private:
  size_t page_;
  uint8_t* base_;
};

// `at` moved by `bytes` (possibly outside its object: the address of a masked-off lane).
void* offset(void* at, int64_t bytes) {
  return reinterpret_cast<void*>(reinterpret_cast<uintptr_t>(at) + static_cast<uintptr_t>(bytes));
}

// The bytes a masked memory operation over lanes of lane_bytes may touch under mask k (k !=
// 0): from its lowest to its highest set lane. Each placement puts them somewhere whose
// neighbours fault and hands back the lane-0 address.
struct Span {
  int lo, hi, lane_bytes;
  size_t bytes() const { return static_cast<size_t>(hi - lo + 1) * lane_bytes; }
};
Span span_of(uint64_t k, int lane_bytes) {
  return {std::countr_zero(k), 63 - std::countl_zero(k), lane_bytes};
}

enum class Place { PageEnd, PageStart, ExactHeap };
const Place kPlaces[] = {Place::PageEnd, Place::PageStart, Place::ExactHeap};
const char* name(Place p) { return p == Place::PageEnd ? "page end" : p == Place::PageStart ? "page start" : "heap"; }

// Storage for the span of one placement; data() holds the span's bytes.
class Placed {
 public:
  Placed(const GuardedPage& g, Place place, Span s) : s_(s) {
    if (place == Place::ExactHeap) {
      heap_ = std::make_unique<uint8_t[]>(s.bytes());
      data_ = heap_.get();
    } else {
      data_ = place == Place::PageEnd ? g.end() - s.bytes() : g.begin();
    }
  }
  uint8_t* data() const { return data_; }
  void* lane0() const { return offset(data_, -int64_t{s_.lo} * s_.lane_bytes); }

 private:
  Span s_;
  std::unique_ptr<uint8_t[]> heap_;
  uint8_t* data_;
};

// ---------------------------------------------------------------------------------------
// The two paths

class Supplement : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !cpu_supports(Isa::Avx512)) GTEST_SKIP() << "this CPU lacks AVX-512 F/BW/DQ/VL/VNNI";
  }
  static const sc::Ops& ops() { return GetParam() ? sc::avx512::kOps : sc::avx512_emulated::kOps; }
};

std::string path_name(const testing::TestParamInfo<bool>& info) { return info.param ? "avx512" : "avx512_simde"; }
INSTANTIATE_TEST_SUITE_P(Paths, Supplement, testing::Values(false, true), path_name);

// ---------------------------------------------------------------------------------------
// Masked loads: lane i = k[i] ? MEM[p + i * lane] : (maskz ? 0 : src[i]); masked-off lanes
// are not read (fault suppression).

struct LoadCase {
  const char* name;
  int lane_bytes, lanes;
  bool merge;  // mask_ (lanes outside k from src) rather than maskz_
  void (*op)(const sc::Ops&, const void* src, uint64_t k, const void* p, void* out);
};

const LoadCase kLoads[] = {
    {"_mm512_maskz_loadu_epi32", 4, 16, false,
     [](const sc::Ops& o, const void*, uint64_t k, const void* p, void* r) { o.maskz_loadu_epi32(k, p, r); }},
    {"_mm512_maskz_loadu_epi8", 1, 64, false,
     [](const sc::Ops& o, const void*, uint64_t k, const void* p, void* r) { o.maskz_loadu_epi8(k, p, r); }},
    {"_mm512_maskz_loadu_epi16", 2, 32, false,
     [](const sc::Ops& o, const void*, uint64_t k, const void* p, void* r) { o.maskz_loadu_epi16(k, p, r); }},
    {"_mm512_maskz_loadu_ps", 4, 16, false,
     [](const sc::Ops& o, const void*, uint64_t k, const void* p, void* r) { o.maskz_loadu_ps(k, p, r); }},
    {"_mm512_mask_loadu_ps", 4, 16, true,
     [](const sc::Ops& o, const void* s, uint64_t k, const void* p, void* r) { o.mask_loadu_ps(s, k, p, r); }},
    {"_mm_maskz_loadu_epi8", 1, 16, false,
     [](const sc::Ops& o, const void*, uint64_t k, const void* p, void* r) { o.mm_maskz_loadu_epi8(k, p, r); }},
    {"_mm256_maskz_loadu_epi16", 2, 16, false,
     [](const sc::Ops& o, const void*, uint64_t k, const void* p, void* r) { o.mm256_maskz_loadu_epi16(k, p, r); }},
};

TEST_P(Supplement, MaskedLoadsReadOnlyTheirLanes) {
  std::mt19937_64 rng(11);
  GuardedPage guard;
  int checked = 0;
  for (const LoadCase& c : kLoads) {
    const size_t width = size_t{1} * c.lane_bytes * c.lanes;
    for (uint64_t k : masks(c.lanes, rng)) {
      const Bytes src = draw(rng, width, c.lane_bytes, kFloat, true);
      Bytes want(width), got(width);
      if (k == 0) {  // nothing may be read: the address is the guard page itself
        c.op(ops(), src.data(), k, guard.end(), got.data());
        if (c.merge) want = src;
        ASSERT_TRUE(same(got.data(), want.data(), width, c.lane_bytes)) << c.name << " k = 0";
        continue;
      }
      const Span s = span_of(k, c.lane_bytes);
      for (Place place : kPlaces) {
        Placed mem(guard, place, s);
        const Bytes data = draw(rng, s.bytes(), c.lane_bytes, kFloat, true);
        std::memcpy(mem.data(), data.data(), data.size());
        for (int i = 0; i < c.lanes; ++i) {
          const uint8_t* from = ((k >> i) & 1) ? &data[(i - s.lo) * c.lane_bytes]
                                : c.merge      ? &src[i * c.lane_bytes]
                                               : nullptr;
          if (from) std::memcpy(&want[i * c.lane_bytes], from, c.lane_bytes);
          else std::memset(&want[i * c.lane_bytes], 0, c.lane_bytes);
        }
        std::fill(got.begin(), got.end(), uint8_t{0xCD});
        c.op(ops(), src.data(), k, mem.lane0(), got.data());
        ASSERT_TRUE(same(got.data(), want.data(), width, c.lane_bytes))
            << c.name << " k = 0x" << std::hex << k << " at " << name(place);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 1000);
}

// ---------------------------------------------------------------------------------------
// Masked stores: for i in k, MEM[p + i * size] = lane i of a, narrowed to `size` bytes
// (VPMOVDB / VPMOVDW truncate); no other byte is written.

struct StoreCase {
  const char* name;
  int size;  // bytes stored per int32 lane
  void (*op)(const sc::Ops&, void* p, uint64_t k, const void* a);
};

const StoreCase kStores[] = {
    {"_mm512_mask_storeu_epi32", 4, [](const sc::Ops& o, void* p, uint64_t k, const void* a) { o.mask_storeu_epi32(p, k, a); }},
    {"_mm512_mask_storeu_ps", 4, [](const sc::Ops& o, void* p, uint64_t k, const void* a) { o.mask_storeu_ps(p, k, a); }},
    {"_mm512_mask_cvtepi32_storeu_epi8", 1,
     [](const sc::Ops& o, void* p, uint64_t k, const void* a) { o.mask_cvtepi32_storeu_epi8(p, k, a); }},
    {"_mm512_mask_cvtepi32_storeu_epi16", 2,
     [](const sc::Ops& o, void* p, uint64_t k, const void* a) { o.mask_cvtepi32_storeu_epi16(p, k, a); }},
};

TEST_P(Supplement, MaskedStoresWriteOnlyTheirLanes) {
  std::mt19937_64 rng(12);
  GuardedPage guard;
  int checked = 0;
  for (const StoreCase& c : kStores) {
    for (uint64_t k : masks(16, rng)) {
      const Bytes a = draw(rng, 64, 4, c.size == 4 ? kFloat : kInt32, c.size == 4);
      if (k == 0) {  // nothing may be written: the address is the guard page itself
        c.op(ops(), guard.end(), k, a.data());
        continue;
      }
      const Span s = span_of(k, c.size);
      for (Place place : kPlaces) {
        Placed mem(guard, place, s);
        const Bytes before = draw(rng, s.bytes(), 1, kInt8);
        std::memcpy(mem.data(), before.data(), before.size());
        Bytes want = before;
        for (int i = s.lo; i <= s.hi; ++i)  // the low `size` bytes of a little-endian lane
          if ((k >> i) & 1) std::memcpy(&want[(i - s.lo) * c.size], &a[4 * i], c.size);
        c.op(ops(), mem.lane0(), k, a.data());
        ASSERT_TRUE(same(mem.data(), want.data(), want.size(), c.size))
            << c.name << " k = 0x" << std::hex << k << " at " << name(place);
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 500);
}

// ---------------------------------------------------------------------------------------
// One-operand conversions, lane by lane from the SDM's operation sections.

// VCVTDQ2PS under the default MXCSR: the int32 rounded to 24 significant bits, ties to even.
uint32_t int32_to_float_bits(int32_t x) {
  if (x == 0) return 0;
  const uint32_t sign = x < 0 ? 0x80000000u : 0;
  uint64_t m = x < 0 ? uint64_t{0} - static_cast<uint64_t>(int64_t{x}) : static_cast<uint64_t>(x);
  int e = 63 - std::countl_zero(m);  // m in [2^e, 2^(e+1))
  if (e > 23) {
    const int drop = e - 23;
    const uint64_t rem = m & ((uint64_t{1} << drop) - 1), half = uint64_t{1} << (drop - 1);
    m >>= drop;
    if (rem > half || (rem == half && (m & 1))) ++m;
    if (m == (uint64_t{1} << 24)) {
      m >>= 1;
      ++e;
    }
  } else {
    m <<= 23 - e;
  }
  return sign | static_cast<uint32_t>(e + 127) << 23 | (static_cast<uint32_t>(m) & 0x7FFFFF);
}

// VCVTTPS2DQ: truncation toward zero; NaN, +-Inf and values outside int32 give the integer
// indefinite 0x80000000 (which is also -2^31's own value).
int32_t float_bits_to_int32_truncated(uint32_t u) {
  const int exp = static_cast<int>((u >> 23) & 0xFF) - 127;
  if (exp < 0) return 0;  // |x| < 1, subnormals and zeros included
  if (exp >= 31) return INT32_MIN;  // |x| >= 2^31, Inf and NaN
  const uint32_t m = (u & 0x7FFFFF) | 0x800000;
  const int32_t mag = static_cast<int32_t>(exp >= 23 ? m << (exp - 23) : m >> (23 - exp));
  return (u >> 31) ? -mag : mag;
}

// VCVTPH2PS: binary16 -> binary32, exact; a NaN keeps sign and payload and comes out quiet.
uint32_t half_to_float_bits(uint16_t h) {
  const bool neg = h >> 15;
  const int exp = (h >> 10) & 0x1F;
  const int frac = h & 0x3FF;
  if (exp == 0x1F) {
    if (frac == 0) return neg ? 0xFF800000u : 0x7F800000u;
    return (neg ? 0x80000000u : 0) | 0x7FC00000u | (uint32_t(frac) << 13);
  }
  // value = frac * 2^-24 (subnormal) or (1024 + frac) * 2^(exp - 25): exact in float.
  const float mag = exp == 0 ? std::ldexp(static_cast<float>(frac), -24) : std::ldexp(static_cast<float>(1024 + frac), exp - 25);
  return bits(neg ? -mag : mag);
}

// Sign extension by bits: the top bit of a `width`-bit value copied into the upper bits.
int64_t sign_extend(uint64_t x, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1), low = (width == 64 ? ~0ull : (sign << 1) - 1);
  x &= low;
  return static_cast<int64_t>((x & sign) ? (x | ~low) : x);
}

struct UnaryCase {
  const char* name;
  size_t in_bytes, out_bytes;
  int in_lane, out_lane;  // lane widths in bytes, for inputs and for the messages
  const std::vector<uint64_t>* special;
  bool float_in;
  void (*op)(const sc::Ops&, const void* a, void* out);
  void (*oracle)(const uint8_t* a, uint8_t* out);
};

template <int InBytes, int OutBytes, bool Signed, int Lanes>
void widen_oracle(const uint8_t* a, uint8_t* out) {
  for (int i = 0; i < Lanes; ++i) {
    uint64_t x = 0;
    std::memcpy(&x, a + InBytes * i, InBytes);
    const uint64_t w = Signed ? static_cast<uint64_t>(sign_extend(x, 8 * InBytes)) : x;
    std::memcpy(out + OutBytes * i, &w, OutBytes);
  }
}

template <int OutBytes>
void truncate_oracle(const uint8_t* a, uint8_t* out) {
  for (int i = 0; i < 16; ++i) std::memcpy(out + OutBytes * i, a + 4 * i, OutBytes);  // little-endian low bytes
}

template <int InBytes>
void zext_oracle(const uint8_t* a, uint8_t* out) {
  std::memset(out, 0, 64);
  std::memcpy(out, a, InBytes);
}

const UnaryCase kUnary[] = {
    {"_mm512_cvtepi32_ps", 64, 64, 4, 4, &kInt32, false, [](const sc::Ops& o, const void* a, void* r) { o.cvtepi32_ps(a, r); },
     [](const uint8_t* a, uint8_t* r) {
       for (int i = 0; i < 16; ++i) put<uint32_t>(r, i, int32_to_float_bits(get<int32_t>(a, i)));
     }},
    {"_mm512_cvttps_epi32", 64, 64, 4, 4, &kFloat, true, [](const sc::Ops& o, const void* a, void* r) { o.cvttps_epi32(a, r); },
     [](const uint8_t* a, uint8_t* r) {
       for (int i = 0; i < 16; ++i) put<int32_t>(r, i, float_bits_to_int32_truncated(get<uint32_t>(a, i)));
     }},
    {"_mm512_cvtepi8_epi32", 16, 64, 1, 4, &kInt8, false, [](const sc::Ops& o, const void* a, void* r) { o.cvtepi8_epi32(a, r); },
     widen_oracle<1, 4, true, 16>},
    {"_mm512_cvtepu8_epi32", 16, 64, 1, 4, &kInt8, false, [](const sc::Ops& o, const void* a, void* r) { o.cvtepu8_epi32(a, r); },
     widen_oracle<1, 4, false, 16>},
    {"_mm512_cvtepi16_epi32", 32, 64, 2, 4, &kInt16, false,
     [](const sc::Ops& o, const void* a, void* r) { o.cvtepi16_epi32(a, r); }, widen_oracle<2, 4, true, 16>},
    {"_mm512_cvtepu16_epi32", 32, 64, 2, 4, &kInt16, false,
     [](const sc::Ops& o, const void* a, void* r) { o.cvtepu16_epi32(a, r); }, widen_oracle<2, 4, false, 16>},
    {"_mm512_cvtepi32_epi64", 32, 64, 4, 8, &kInt32, false,
     [](const sc::Ops& o, const void* a, void* r) { o.cvtepi32_epi64(a, r); }, widen_oracle<4, 8, true, 8>},
    {"_mm512_cvtepi32_epi16", 64, 32, 4, 2, &kInt32, false,
     [](const sc::Ops& o, const void* a, void* r) { o.cvtepi32_epi16(a, r); }, truncate_oracle<2>},
    {"_mm512_cvtepi32_epi8", 64, 16, 4, 1, &kInt32, false,
     [](const sc::Ops& o, const void* a, void* r) { o.cvtepi32_epi8(a, r); }, truncate_oracle<1>},
    {"_mm512_cvtepu8_epi16", 32, 64, 1, 2, &kInt8, false,
     [](const sc::Ops& o, const void* a, void* r) { o.cvtepu8_epi16(a, r); }, widen_oracle<1, 2, false, 32>},
    {"_mm512_zextsi128_si512", 16, 64, 1, 1, &kInt8, false,
     [](const sc::Ops& o, const void* a, void* r) { o.zextsi128_si512(a, r); }, zext_oracle<16>},
    {"_mm512_zextsi256_si512", 32, 64, 1, 1, &kInt8, false,
     [](const sc::Ops& o, const void* a, void* r) { o.zextsi256_si512(a, r); }, zext_oracle<32>},
};

TEST_P(Supplement, ConversionsFollowTheOperationSections) {
  std::mt19937_64 rng(13);
  for (const UnaryCase& c : kUnary) {
    for (int t = 0; t < 4000; ++t) {
      const Bytes a = draw(rng, c.in_bytes, c.in_lane, *c.special, c.float_in);
      Bytes got(c.out_bytes, 0xCD), want(c.out_bytes, 0xEF);
      c.op(ops(), a.data(), got.data());
      c.oracle(a.data(), want.data());
      ASSERT_TRUE(same(got.data(), want.data(), c.out_bytes, c.out_lane))
          << c.name << " of " << hex(a.data(), c.in_bytes, c.in_lane);
    }
  }
}

// Every binary16 value, through both widths of VCVTPH2PS.
TEST_P(Supplement, HalfToFloatIsExactForEveryHalf) {
  for (uint32_t h0 = 0; h0 < 65536; h0 += 16) {
    uint8_t a[32], got[64], want[64];
    for (int i = 0; i < 16; ++i) {
      put<uint16_t>(a, i, static_cast<uint16_t>(h0 + i));
      put<uint32_t>(want, i, half_to_float_bits(static_cast<uint16_t>(h0 + i)));
    }
    ops().cvtph_ps(a, got);
    ASSERT_TRUE(same(got, want, 64, 4)) << "_mm512_cvtph_ps from 0x" << std::hex << h0;
    for (int q = 0; q < 4; ++q) {  // _mm_cvtph_ps reads the low 4 halves of its 16 bytes
      uint8_t a128[16], got128[16];
      std::memcpy(a128, a + 8 * q, 8);
      std::memset(a128 + 8, 0xA5, 8);
      ops().mm_cvtph_ps(a128, got128);
      ASSERT_TRUE(same(got128, want + 16 * q, 16, 4)) << "_mm_cvtph_ps from 0x" << std::hex << h0 + 4 * q;
    }
  }
}

// ---------------------------------------------------------------------------------------
// Two-operand lane operations.

struct BinaryCase {
  const char* name;
  size_t out_bytes;
  int in_lane, out_lane;
  const std::vector<uint64_t>* special_a;
  const std::vector<uint64_t>* special_b;
  void (*op)(const sc::Ops&, const void* a, const void* b, void* out);
  void (*oracle)(const uint8_t* a, const uint8_t* b, uint8_t* out);
};

// Shift counts: in range, at and past the lane width, and huge (as unsigned) ones.
const std::vector<uint64_t> kCounts = {0, 1, 2, 7, 15, 16, 31, 32, 33, 63, 64, 65, 255, 256, 0x7FFFFFFF,
                                       0x80000000, 0xFFFFFFFF, 0x100000000, 0x8000000000000000, ~0ull};

// VPSRAV: count (unsigned, whole lane) >= width gives the sign in every bit; otherwise the
// bits shift right with the sign bit copied into the vacated ones.
template <class S, class U>
S sra(S x, U count) {
  constexpr unsigned width = 8 * sizeof(S);
  const U u = static_cast<U>(x), fill = (x < 0) ? ~U{0} : U{0};
  if (count >= width) return static_cast<S>(fill);
  if (count == 0) return x;
  return static_cast<S>((u >> count) | (fill << (width - count)));
}

template <class S, class U, int Lanes>
void srav_oracle(const uint8_t* a, const uint8_t* c, uint8_t* out) {
  for (int i = 0; i < Lanes; ++i) put<S>(out, i, sra<S, U>(get<S>(a, i), get<U>(c, i)));
}

const BinaryCase kBinary[] = {
    {"_mm512_cmplt_epi32_mask", 2, 4, 2, &kInt32, &kInt32,
     [](const sc::Ops& o, const void* a, const void* b, void* r) { o.cmplt_epi32_mask(a, b, static_cast<uint16_t*>(r)); },
     [](const uint8_t* a, const uint8_t* b, uint8_t* r) {
       uint16_t k = 0;
       for (int i = 0; i < 16; ++i) k |= static_cast<uint16_t>((get<int32_t>(a, i) < get<int32_t>(b, i)) << i);
       put<uint16_t>(r, 0, k);
     }},
    {"_mm512_cmpneq_epi32_mask", 2, 4, 2, &kInt32, &kInt32,
     [](const sc::Ops& o, const void* a, const void* b, void* r) { o.cmpneq_epi32_mask(a, b, static_cast<uint16_t*>(r)); },
     [](const uint8_t* a, const uint8_t* b, uint8_t* r) {
       uint16_t k = 0;
       for (int i = 0; i < 16; ++i) k |= static_cast<uint16_t>((get<uint32_t>(a, i) != get<uint32_t>(b, i)) << i);
       put<uint16_t>(r, 0, k);
     }},
    {"_mm512_srav_epi32", 64, 4, 4, &kInt32, &kCounts,
     [](const sc::Ops& o, const void* a, const void* b, void* r) { o.srav_epi32(a, b, r); },
     srav_oracle<int32_t, uint32_t, 16>},
    {"_mm512_srav_epi64", 64, 8, 8, &kInt64, &kCounts,
     [](const sc::Ops& o, const void* a, const void* b, void* r) { o.srav_epi64(a, b, r); },
     srav_oracle<int64_t, uint64_t, 8>},
    {"_mm512_mulhi_epu16", 64, 2, 2, &kInt16, &kInt16,
     [](const sc::Ops& o, const void* a, const void* b, void* r) { o.mulhi_epu16(a, b, r); },
     [](const uint8_t* a, const uint8_t* b, uint8_t* r) {
       for (int i = 0; i < 32; ++i)
         put<uint16_t>(r, i, static_cast<uint16_t>((uint32_t{get<uint16_t>(a, i)} * get<uint16_t>(b, i)) >> 16));
     }},
    // VPMADDWD: the two int16 products of a pair added in 32 bits; only
    // (-2^15)(-2^15) + (-2^15)(-2^15) = 2^31 leaves int32, and wraps to -2^31.
    {"_mm512_madd_epi16", 64, 2, 4, &kInt16, &kInt16,
     [](const sc::Ops& o, const void* a, const void* b, void* r) { o.madd_epi16(a, b, r); },
     [](const uint8_t* a, const uint8_t* b, uint8_t* r) {
       for (int i = 0; i < 16; ++i) {
         const int64_t sum = int64_t{get<int16_t>(a, 2 * i)} * get<int16_t>(b, 2 * i) +
                             int64_t{get<int16_t>(a, 2 * i + 1)} * get<int16_t>(b, 2 * i + 1);
         put<uint32_t>(r, i, static_cast<uint32_t>(sum));
       }
     }},
};

TEST_P(Supplement, LaneOperationsFollowTheOperationSections) {
  std::mt19937_64 rng(14);
  for (const BinaryCase& c : kBinary) {
    for (int t = 0; t < 4000; ++t) {
      const Bytes a = draw(rng, 64, c.in_lane, *c.special_a);
      Bytes b = draw(rng, 64, c.in_lane, *c.special_b);
      if (t % 4 == 0) b = a;  // equal lanes for the comparisons
      if (c.special_b == &kCounts && t % 2)  // mostly counts around the lane width
        for (int i = 0; i < 64 / c.in_lane; ++i) {
          const uint64_t n = rng() % (8 * c.in_lane + 3);
          std::memcpy(&b[i * c.in_lane], &n, c.in_lane);
        }
      Bytes got(c.out_bytes, 0xCD), want(c.out_bytes, 0xEF);
      c.op(ops(), a.data(), b.data(), got.data());
      c.oracle(a.data(), b.data(), want.data());
      ASSERT_TRUE(same(got.data(), want.data(), c.out_bytes, c.out_lane))
          << c.name << " of\n  a " << hex(a.data(), 64, c.in_lane) << "\n  b " << hex(b.data(), 64, c.in_lane);
    }
  }
}

// VPSRAQ zmm, imm8: every count from 0 past 64 (sign fill) up to 255.
TEST_P(Supplement, ShiftRightArithmeticByImmediate) {
  std::mt19937_64 rng(15);
  for (unsigned n = 0; n < 256; ++n) {
    for (int t = 0; t < 20; ++t) {
      const Bytes a = draw(rng, 64, 8, kInt64);
      uint8_t got[64], want[64];
      ops().srai_epi64(a.data(), n, got);
      for (int i = 0; i < 8; ++i) put<int64_t>(want, i, sra<int64_t, uint64_t>(get<int64_t>(a.data(), i), n));
      ASSERT_TRUE(same(got, want, 64, 8)) << "_mm512_srai_epi64 by " << n << " of " << hex(a.data(), 64, 8);
    }
  }
}

// VPSRLW / VPSRLD zmm {k}, zmm, imm8: lanes in k shifted right logically (counts >= the
// lane width give 0), the others from src.
TEST_P(Supplement, MaskedShiftRightLogicalByImmediate) {
  std::mt19937_64 rng(16);
  struct Case {
    const char* name;
    int lane;
    void (*op)(const sc::Ops&, const void*, uint64_t, const void*, unsigned, void*);
  };
  const Case cases[] = {
      {"_mm512_mask_srli_epi16", 2,
       [](const sc::Ops& o, const void* s, uint64_t k, const void* a, unsigned n, void* r) { o.mask_srli_epi16(s, k, a, n, r); }},
      {"_mm512_mask_srli_epi32", 4,
       [](const sc::Ops& o, const void* s, uint64_t k, const void* a, unsigned n, void* r) { o.mask_srli_epi32(s, k, a, n, r); }},
  };
  for (const Case& c : cases) {
    const int lanes = 64 / c.lane;
    const std::vector<uint64_t> ks = masks(lanes, rng);
    for (unsigned n : {0u, 1u, 3u, 4u, 7u, 8u, 15u, 16u, 17u, 31u, 32u, 33u, 64u, 255u}) {
      for (uint64_t k : ks) {
        const Bytes src = draw(rng, 64, c.lane, kInt32), a = draw(rng, 64, c.lane, kInt32);
        uint8_t got[64], want[64];
        c.op(ops(), src.data(), k, a.data(), n, got);
        for (int i = 0; i < lanes; ++i) {
          uint64_t x = 0;
          std::memcpy(&x, ((k >> i) & 1) ? &a[i * c.lane] : &src[i * c.lane], c.lane);
          if ((k >> i) & 1) x = n >= 8u * c.lane ? 0 : x >> n;
          std::memcpy(want + i * c.lane, &x, c.lane);
        }
        ASSERT_TRUE(same(got, want, 64, c.lane)) << c.name << " by " << n << " k = 0x" << std::hex << k;
      }
    }
  }
}

// A 512-bit gather of `lanes` elements of `width` bytes: lane i = the bytes at base +
// sign_extend(index[i]) * scale, from an exactly sized heap block, indices down to its
// first and up to its last element (unaligned for scales below the width).
using GatherFn = void (*)(const void* index, const void* base, int scale, void* out);
void check_gather(GatherFn gather, int width, const char* name, uint64_t seed) {
  std::mt19937_64 rng(seed);
  constexpr int kBytes = 256, kMid = 128;
  const int lanes = 64 / width;
  const auto block = std::make_unique<uint8_t[]>(kBytes);
  for (int i = 0; i < kBytes; ++i) block[i] = static_cast<uint8_t>(rng());
  const uint8_t* base = block.get() + kMid;
  for (int scale : {1, 2, 4, 8}) {
    const int lo = -kMid / scale, hi = (kBytes - kMid - width) / scale;
    for (int t = 0; t < 500; ++t) {
      uint8_t index[64], got[64], want[64];
      for (int i = 0; i < lanes; ++i) {
        const int32_t x = t == 0 ? (i % 2 ? lo : hi) : lo + static_cast<int32_t>(rng() % (hi - lo + 1));
        put<int32_t>(index, i, x);
        std::memcpy(want + width * i, block.get() + kMid + x * scale, static_cast<size_t>(width));
      }
      gather(index, base, scale, got);
      ASSERT_TRUE(same(got, want, 64, width)) << name << " scale " << scale << " indices " << hex(index, 4 * lanes, 4);
    }
  }
}

// VPGATHERDD: 16 int32.
TEST_P(Supplement, GatherReadsBasePlusScaledIndex) { check_gather(ops().i32gather_epi32, 4, "_mm512_i32gather_epi32", 17); }

// VPGATHERDQ: 8 int64 at 8 int32 indices (the GRU step reads two adjacent int32 knots as
// one element).
TEST_P(Supplement, Gather64ReadsBasePlusScaledIndex) { check_gather(ops().i32gather_epi64, 8, "_mm512_i32gather_epi64", 18); }

// ---------------------------------------------------------------------------------------
// VDPBF16PS (AVX512_BF16): per float32 lane,
//   c = c + a.bf16[2i+1] * b.bf16[2i+1];  then  c = c + a.bf16[2i] * b.bf16[2i]
// each step one rounding to nearest even, with subnormal inputs read as zero (DAZ) and a
// result that is tiny flushed to zero of its sign (FTZ); MXCSR is not consulted. x86
// decides tininess after rounding with an unbounded exponent: a result that rounds, at 24
// bits, below 2^-126 is flushed even where the subnormal format would round it up to 2^-126.

class SupplementBf16 : public testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    if (GetParam() && !cpu_supports(Isa::Avx512Bf16)) GTEST_SKIP() << "this CPU lacks AVX512_BF16";
  }
  static const sc::Bf16Ops& ops() { return GetParam() ? sc::avx512bf16::kBf16Ops : sc::avx512bf16_emulated::kBf16Ops; }
};
INSTANTIATE_TEST_SUITE_P(Paths, SupplementBf16, testing::Values(false, true), path_name);

bool is_nan(uint32_t u) { return (u & 0x7FFFFFFF) > 0x7F800000; }
uint32_t daz(uint32_t u) { return (u & 0x7F800000) == 0 ? u & 0x80000000 : u; }

// One lane's result: its bits, or "some NaN" where two or more NaN operands meet (the SDM
// does not say which one an instruction of three sources returns; fixq/bf16.h leaves NaN
// payloads out of its contract).
struct Bf16Lane {
  uint32_t bits;
  bool any_nan;
};

// One step c + p * q (float32 bit patterns, p and q widened from bf16).
Bf16Lane dp_step(Bf16Lane acc, uint32_t pb, uint32_t qb) {
  const uint32_t c = daz(acc.bits), p = daz(pb), q = daz(qb);
  const int nans = int{is_nan(c)} + is_nan(p) + is_nan(q);
  if (nans > 1 || (acc.any_nan && nans > 0)) return {0x7FC00000u, true};
  if (nans == 1) {  // that NaN, quiet, sign and payload kept
    const uint32_t n = is_nan(p) ? p : is_nan(q) ? q : c;
    return {n | 0x00400000u, false};
  }
  const double pd = f32(p), qd = f32(q), cd = f32(c);
  const double prod = pd * qd;  // exact: two 8-bit significands
  if (!std::isfinite(prod) || !std::isfinite(cd)) {
    const double r = prod + cd;  // Inf * 0, Inf - Inf: x86's default NaN, the "QNaN indefinite"
    return {std::isnan(r) ? 0xFFC00000u : bits(static_cast<float>(r)), false};
  }
  // The exact sum is s + e (TwoSum); s rounded to odd keeps it exact enough to round once
  // more, to float32's 24 bits, correctly (Boldo and Melquiond, "Emulation of FMA and
  // correctly rounded sums: proved algorithms using rounding to odd").
  double s = prod + cd;
  const double bv = s - prod, e = (prod - (s - bv)) + (cd - bv);
  if (e != 0 && (std::bit_cast<uint64_t>(s) & 1) == 0)
    s = std::nextafter(s, e > 0 ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity());
  if (s == 0) return {bits(static_cast<float>(s)), false};  // an exact zero keeps IEEE's sign
  // Tininess after rounding, exponent unbounded: round at 24 bits far from the subnormals.
  if (std::fabs(static_cast<float>(s * 0x1p64)) < 0x1p-62f) return {s < 0 ? 0x80000000u : 0u, false};
  return {bits(static_cast<float>(s)), false};
}

// bf16 pairs chosen so that products and sums reach every regime: overflow, underflow into
// the subnormals and past them, cancellation, exact ties.
const std::vector<uint64_t> kBf16 = {0x0000, 0x8000, 0x0001, 0x807F, 0x0080, 0x8080, 0x7F7F, 0xFF7F, 0x7F80,
                                     0xFF80, 0x7FC0, 0xFFC1, 0x7F81, 0x3F80, 0xBF80, 0x3F81, 0x1F80, 0x2000,
                                     0x2080, 0x3400, 0x4B80, 0xCB80};

TEST_P(SupplementBf16, DotProductStepsRoundOnceWithDazAndFtz) {
  std::mt19937_64 rng(18);
  for (int t = 0; t < 40000; ++t) {
    Bytes src = draw(rng, 64, 4, kFloat, true);
    Bytes a(64), b(64);
    for (int i = 0; i < 32; ++i) {
      // bf16 of random sign and mantissa, exponent within +-70 of 1 (products near float32's
      // ends), or an extreme.
      for (Bytes* v : {&a, &b}) {
        uint16_t h = static_cast<uint16_t>((rng() & 0x807F) | ((57 + rng() % 141) << 7));
        if (rng() % 4 == 0) h = static_cast<uint16_t>(kBf16[rng() % kBf16.size()]);
        put<uint16_t>(v->data(), i, h);
      }
    }
    if (t % 3 == 1)  // c just above 2^-126 less products near 2^-150: both sides of the FTZ threshold
      for (int i = 0; i < 16; ++i) {
        put<uint32_t>(src.data(), i, static_cast<uint32_t>((rng() & 0x80000000u) | (0x00800000u + rng() % 4)));
        for (Bytes* v : {&a, &b})
          put<uint16_t>(v->data(), 2 * i + 1, static_cast<uint16_t>((rng() & 0x807F) | ((50 + rng() % 5) << 7)));
      }
    if (t % 3 == 0)  // the accumulator cancels the first product: exact zeros and tiny sums
      for (int i = 0; i < 16; ++i) {
        const double prod = double{f32(uint32_t{get<uint16_t>(a.data(), 2 * i + 1)} << 16)} *
                            f32(uint32_t{get<uint16_t>(b.data(), 2 * i + 1)} << 16);
        const float c = static_cast<float>(-prod);
        if (std::isfinite(c)) put<uint32_t>(src.data(), i, bits(c));
      }
    uint8_t got[64];
    ops().dpbf16_ps(src.data(), a.data(), b.data(), got);
    for (int i = 0; i < 16; ++i) {
      Bf16Lane lane{get<uint32_t>(src.data(), i), false};
      for (int half : {1, 0})
        lane = dp_step(lane, uint32_t{get<uint16_t>(a.data(), 2 * i + half)} << 16,
                       uint32_t{get<uint16_t>(b.data(), 2 * i + half)} << 16);
      const uint32_t g = get<uint32_t>(got, i);
      if (lane.any_nan) {
        ASSERT_TRUE(is_nan(g)) << "lane " << i << " got " << std::hex << g;
      } else {
        ASSERT_EQ(g, lane.bits) << std::hex << "_mm512_dpbf16_ps lane " << i << ": c " << get<uint32_t>(src.data(), i)
                                << " a " << get<uint32_t>(a.data(), i) << " b " << get<uint32_t>(b.data(), i);
      }
    }
  }
}

// The FTZ edge itself: 2^-126 + 2^-149 - (13 * 2^-80)(197 * 2^-80) = 2^-126 - 2^-151 -
// 2^-160 rounds to 2^-126 in the subnormal format but to 2^-126 - 2^-150 at 24 bits with
// an unbounded exponent, so it is tiny and flushes; one ulp of c higher it is not. The even
// elements then add (-0)(+0) = -0, which keeps the sign of the flushed zero.
TEST_P(SupplementBf16, TininessIsDecidedAfterRoundingWithUnboundedExponent) {
  const auto bf16_of = [](float f) { return static_cast<uint16_t>(bits(f) >> 16); };
  const uint16_t p = bf16_of(std::ldexp(13.0f, -80)), q = bf16_of(-std::ldexp(197.0f, -80));
  ASSERT_EQ(uint32_t{p} << 16, bits(std::ldexp(13.0f, -80)));
  ASSERT_EQ(uint32_t{q} << 16, bits(-std::ldexp(197.0f, -80)));
  for (uint32_t c : {0x00800001u, 0x00800002u, 0x80800001u}) {
    const uint16_t qq = (c >> 31) ? static_cast<uint16_t>(q ^ 0x8000) : q;  // the mirror image
    uint8_t src[64] = {}, a[64] = {}, b[64] = {}, got[64];
    put<uint32_t>(src, 0, c);
    put<uint32_t>(a, 0, uint32_t{p} << 16 | 0x8000);  // the odd element (high half) steps first
    put<uint32_t>(b, 0, uint32_t{qq} << 16);
    ops().dpbf16_ps(src, a, b, got);
    const uint32_t want = c == 0x00800001u ? 0u : c == 0x80800001u ? 0x80000000u : 0x00800001u;
    EXPECT_EQ(get<uint32_t>(got, 0), want) << std::hex << "c " << c;
    const Bf16Lane odd = dp_step({c, false}, uint32_t{p} << 16, uint32_t{qq} << 16);
    EXPECT_EQ(dp_step(odd, 0x80000000u, 0).bits, want) << std::hex << "oracle, c " << c;
  }
}

// ---------------------------------------------------------------------------------------
// VFMADD*PS zmm: per lane RoundFPControl(a * b + c), one rounding to nearest even of the
// exact value (SIMDe 0.7's own simde_mm512_fmadd_ps rounds twice in the tests' build).

// a * b + c rounded once, without an FMA: p = a * b is exact in double (two 24-bit
// significands), s + e = p + c exactly (Knuth's TwoSum), and rounding s to float equals
// rounding s + e unless s lies exactly on a midpoint between two floats (|e| is below half
// a double ulp of s, so it cannot carry s + e across one), where e's sign decides.
float fma_oracle(float a, float b, float c) {
  const double p = double{a} * b;
  if (!std::isfinite(p) || !std::isfinite(c)) return static_cast<float>(p + c);
  const double s = p + c, bb = s - p, e = (p - (s - bb)) + (c - bb);
  const float r = static_cast<float>(s);
  if (e == 0 || double{r} == s) return r;
  if (std::isinf(r)) {  // s at or past FLT_MAX + half an ulp: at exactly that tie, e decides
    const double edge = std::copysign(0x1.ffffffp127, s);
    return s == edge && (e > 0) != (s > 0) ? std::copysign(std::numeric_limits<float>::max(), s) : r;
  }
  const float other = std::nextafter(r, double{r} < s ? INFINITY : -INFINITY);
  if (s != (double{r} + other) / 2) return r;  // the midpoint is exact: the floats are adjacent
  return (e > 0) == (double{other} > double{r}) ? other : r;
}

TEST_P(Supplement, FusedMultiplyAddRoundsOnce) {
  std::mt19937_64 rng(19);
  int fused_differs = 0;
  for (int t = 0; t < 20000; ++t) {
    const Bytes a = draw(rng, 64, 4, kFloat, true), b = draw(rng, 64, 4, kFloat, true);
    Bytes c = draw(rng, 64, 4, kFloat, true);
    for (int i = 0; i < 16; ++i) {
      const float x = get<float>(a.data(), i), y = get<float>(b.data(), i);
      const uint64_t pick = rng() % 4;
      if (pick == 0) put<float>(c.data(), i, -(x * y));  // the product's rounding error is the result
      if (pick == 1) put<float>(c.data(), i, std::ldexp(x * y, -30 + static_cast<int>(rng() % 60)));
    }
    uint8_t got[64];
    ops().fmadd_ps(a.data(), b.data(), c.data(), got);
    for (int i = 0; i < 16; ++i) {
      const float x = get<float>(a.data(), i), y = get<float>(b.data(), i), z = get<float>(c.data(), i);
      const float want = fma_oracle(x, y, z);
      const uint32_t g = get<uint32_t>(got, i);
      if (std::isnan(want)) {
        ASSERT_TRUE(is_nan(g)) << "_mm512_fmadd_ps lane " << i << " got " << std::hex << g;
        continue;
      }
      ASSERT_EQ(g, bits(want)) << std::hex << "_mm512_fmadd_ps lane " << i << ": a " << bits(x) << " b " << bits(y)
                               << " c " << bits(z);
      fused_differs += bits(want) != bits(x * y + z);
    }
  }
  EXPECT_GT(fused_differs, 1000) << "the inputs do not tell one rounding from two";
}

}  // namespace
}  // namespace fixq

#endif  // __x86_64__
