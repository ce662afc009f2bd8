// The integer time loop of one GRU cell. This file is compiled with -mgeneral-regs-only
// (see cmake/FixqLibrary.cmake: *_intonly.cpp): the compiler rejects any float or double
// operation here, which proves that between quantizing the input and dequantizing the
// output the GRU computes with integers only.
//
// Intermediate bounds (H, C <= 4096, every operator at most 16 bits): GEMM accumulators
// |acc| <= 4096 * 2^15 * 2^7 = 2^34 (the GEMM sums in int64 where int32 could overflow);
// every rescaled term |v| <= 2^34 * 2^20 = 2^54 (FixedPointScale ratios are <= 2^20) and
// products of two operator differences <= 2^17 * 2^17 = 2^34, so sums of four terms stay
// far below 2^63; each result is saturated to its operator's range before use.
#include <cstring>

#include "gru/int/intonly_io.h"
#include "gru/int/plan.h"

namespace fixq::gru_detail {

namespace {

using intonly::load;
using intonly::requant_to;
using intonly::store;

// One hidden unit j of one batch item: the exact domain (gru/int/unit_constants.h).
int32_t update_unit(const UnitConstants& c, IntType wt, IntType rt, int64_t H, int64_t j, const void* wx, const void* rh,
                    int32_t h) {
  return update_unit_exact(c, j, load(wx, wt, j), load(wx, wt, H + j), load(wx, wt, 2 * H + j), load(rh, rt, j),
                           load(rh, rt, H + j), load(rh, rt, 2 * H + j), h);
}

}  // namespace

void run_cell_reference(const CellPlan& p, const void* q_x, int64_t steps, int64_t batch,
                        const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y) {
  const int64_t H = p.hidden_size, C = p.input_size, H3 = 3 * H;
  // Wx for every step at once (seed Step 1), compensated for x's zero point.
  std::vector<char> wx(static_cast<size_t>(steps * batch * H3) * static_cast<size_t>(int_type_bytes(p.wx.storage)));
  if (steps * batch > 0)
    gemm_requant(MatrixView{p.x.storage, q_x, steps * batch, C, C}, p.w, requant_to(p.wx, p.wx_scale, &p.x.zp),
                 wx.data(), H3);
  std::vector<char> rh(static_cast<size_t>(batch * H3) * static_cast<size_t>(int_type_bytes(p.rh.storage)));
  const RequantEpilogue rh_epilogue = requant_to(p.rh, p.rh_scale, &p.h.zp);
  auto length = [&](int64_t b) { return lengths.empty() ? steps : lengths[static_cast<size_t>(b)]; };
  const UnitConstants unit = unit_constants(CellRefs(p));

  for (int64_t i = 0; i < steps; ++i) {
    gemm_requant(MatrixView{p.h.storage, q_h, batch, H, H}, p.r, rh_epilogue, rh.data(), H3);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (i >= len) continue;  // padding: not computed, output untouched
      const int64_t t = reverse ? len - 1 - i : i;
      const char* wx_row = wx.data() + static_cast<size_t>((t * batch + b) * H3) * static_cast<size_t>(int_type_bytes(p.wx.storage));
      const char* rh_row = rh.data() + static_cast<size_t>(b * H3) * static_cast<size_t>(int_type_bytes(p.rh.storage));
      for (int64_t j = 0; j < H; ++j) {
        const int32_t h_old = load(q_h, p.h.storage, b * H + j);
        store(q_y, p.h.storage, (t * batch + b) * H + j, update_unit(unit, p.wx.storage, p.rh.storage, H, j, wx_row, rh_row, h_old));
      }
    }
    // Commit the new states only after every unit has read the old ones (Rh used them).
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (i >= len) continue;
      const int64_t t = reverse ? len - 1 - i : i;
      for (int64_t j = 0; j < H; ++j) store(q_h, p.h.storage, b * H + j, load(q_y, p.h.storage, (t * batch + b) * H + j));
    }
  }
}

}  // namespace fixq::gru_detail
