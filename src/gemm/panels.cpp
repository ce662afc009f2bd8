// PackedB: the weights, their column sums, and B packed into the panel formats of
// kernels.h on demand.
#include "gemm/panels.h"

#include <algorithm>
#include <cstring>

#include "fixq/error.h"

namespace fixq {

namespace {

gemm_detail::PackedPanels pack_panels(const PackedB::Store& s, const gemm_detail::PanelFormat& f) {
  gemm_detail::PackedPanels p;
  p.format = f;
  p.panels = (s.n + f.nr - 1) / f.nr;
  p.groups = (s.k + f.kr - 1) / f.kr;
  // Zeros past the last panel: a kernel that multiplies whole blocks of 16 k-groups (AMX
  // tiles) reads up to 15 groups beyond the panels' end, times zero activations.
  const int64_t slack = 15 * f.nr * f.kr * f.b_bytes;
  p.data.assign(static_cast<size_t>(p.panels * p.groups * f.nr * f.kr * f.b_bytes + slack), 0);
  for (int64_t n = 0; n < s.n; ++n) {
    int8_t* panel = p.data.data() + (n / f.nr) * p.groups * f.nr * f.kr * f.b_bytes;
    const int64_t j = n % f.nr;
    for (int64_t k = 0; k < s.k; ++k) {
      int16_t v = s.weights[static_cast<size_t>(n * s.k + k)];
      if (f.minus128_as_127 && v == -128) {
        p.minus128.emplace_back(static_cast<int32_t>(n), static_cast<int32_t>(k));
        v = -127;
      }
      const int64_t at = ((k / f.kr) * f.nr + j) * f.kr + k % f.kr;
      if (f.b_bytes == 1) {
        panel[at] = static_cast<int8_t>(v);
      } else {
        std::memcpy(panel + 2 * at, &v, sizeof v);
      }
    }
  }
  // The starting values of the shifted products (kernels.h), as int32 where all fit.
  auto starts = [&](int64_t shift, std::vector<int64_t>& wide, std::vector<int32_t>& narrow) {
    bool fits = true;
    for (int64_t c : s.colsum) {
      wide.push_back(-shift * c);
      fits = fits && wide.back() >= INT32_MIN && wide.back() <= INT32_MAX;
    }
    if (fits) narrow.assign(wide.begin(), wide.end());
  };
  starts(128, p.shift_comp64, p.shift_comp32);
  starts(32768, p.split_comp64, p.split_comp32);
  return p;
}

}  // namespace

const gemm_detail::PackedPanels& PackedB::Store::panels(const gemm_detail::PanelFormat& f) const {
  for (const auto& slot : slots_) {
    const gemm_detail::PackedPanels* p = slot.load(std::memory_order_acquire);
    if (p == nullptr) break;
    if (p->format == f) return *p;
  }
  const std::lock_guard<std::mutex> lock(mutex_);
  for (auto& slot : slots_) {
    const gemm_detail::PackedPanels* p = slot.load(std::memory_order_acquire);
    if (p != nullptr && p->format == f) return *p;
    if (p == nullptr) {
      require(f.b_bytes == 2 || type == IntType::S8, "internal: s16 weights cannot be packed as int8");
      const auto* packed = new gemm_detail::PackedPanels(pack_panels(*this, f));
      slot.store(packed, std::memory_order_release);
      return *packed;
    }
  }
  fail("internal: more than ", kSlots, " GEMM panel formats requested for one weight matrix");
}

PackedB::Store::~Store() {
  for (auto& slot : slots_) delete slot.load(std::memory_order_acquire);
}

PackedB PackedB::pack(const MatrixView& b) {
  require(b.data != nullptr, "PackedB::pack: null weight pointer");
  require(b.rows >= 1 && b.cols >= 1, "PackedB::pack: weights must be at least 1 x 1, got ", b.rows, " x ", b.cols);
  require(b.stride >= b.cols, "PackedB::pack: row stride ", b.stride, " is smaller than a row of ", b.cols);
  require(b.type == IntType::S8 || b.type == IntType::S16,
          "PackedB::pack: weights must be s8 or s16 (symmetric), got u8");
  auto s = std::make_shared<Store>();
  s->type = b.type;
  s->n = b.rows;
  s->k = b.cols;
  s->weights.resize(static_cast<size_t>(b.rows * b.cols));
  s->colsum.assign(static_cast<size_t>(b.rows), 0);
  const auto* base = static_cast<const char*>(b.data);
  for (int64_t n = 0; n < b.rows; ++n) {
    int64_t abs_sum = 0;
    for (int64_t k = 0; k < b.cols; ++k) {
      int16_t v;
      if (b.type == IntType::S8) {
        int8_t e;
        std::memcpy(&e, base + n * b.stride + k, 1);
        v = e;
      } else {
        std::memcpy(&v, base + (n * b.stride + k) * 2, 2);
      }
      s->weights[static_cast<size_t>(n * b.cols + k)] = v;
      s->colsum[static_cast<size_t>(n)] += v;
      abs_sum += v < 0 ? -int64_t{v} : int64_t{v};
    }
    s->max_abs_row_sum = std::max(s->max_abs_row_sum, abs_sum);
  }
  PackedB p;
  p.type_ = b.type;
  p.n_ = b.rows;
  p.k_ = b.cols;
  p.store_ = std::move(s);
  return p;
}

std::span<const int64_t> PackedB::colsum() const { return store_->colsum; }

int64_t PackedB::max_abs_row_sum() const { return store_->max_abs_row_sum; }

}  // namespace fixq
