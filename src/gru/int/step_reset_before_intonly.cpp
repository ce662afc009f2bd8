// The integer time loop of one reset-before GRU cell (docs/spec.md 5.4), the definition its
// faster forms must equal. Compiled with -mgeneral-regs-only (*_intonly.cpp): no float or
// double operation can exist here.
//
// Per step, for the whole batch: Rh_zr = R_zr h (requantized), the gates of every unit
// (z, r and r * h in h's parameters), Rh_g = R_g (r * h) (requantized), then every unit's
// candidate and new state. The new states are committed after every unit has read the old
// ones. Bounds: as the reset-after loop (gru/int/step_intonly.cpp); the one new product,
// (r - Z_r_out)(h - Z_h), is below 2^32 (spec 5.4).
#include <cstring>
#include <vector>

#include "gru/int/intonly_io.h"
#include "gru/int/plan.h"
#include "gru/int/unit_reset_before_exact.h"

namespace fixq::gru_detail {

namespace {

using intonly::load;
using intonly::requant_to;
using intonly::store;

size_t bytes(int64_t n, IntType t) { return static_cast<size_t>(n) * static_cast<size_t>(int_type_bytes(t)); }

}  // namespace

void run_cell_reset_before_reference(const CellPlan& p, const void* q_x, int64_t steps, int64_t batch,
                                     const std::vector<int64_t>& lengths, bool reverse, void* q_h, void* q_y) {
  const int64_t H = p.hidden_size, C = p.input_size, H2 = 2 * H, H3 = 3 * H;
  std::vector<char> wx(bytes(steps * batch * H3, p.wx.storage));
  const std::span<const FixedPointScale> rh_scale(p.rh_scale);
  if (steps * batch > 0)
    gemm_requant(MatrixView{p.x.storage, q_x, steps * batch, C, C}, p.w, requant_to(p.wx, p.wx_scale, &p.x.zp),
                 wx.data(), H3);
  // Rh of z and r [B, 2H]; r * h [B, H] in h's storage; Rh of g [B, H].
  std::vector<char> rh_zr(bytes(batch * H2, p.rh.storage)), reset_h(bytes(batch * H, p.h.storage)),
      rh_g(bytes(batch * H, p.rh.storage));
  std::vector<int32_t> z(static_cast<size_t>(batch * H));
  // Both products rescale rows of R times an input in h's parameters (spec 5.4).
  const RequantEpilogue zr_epilogue = requant_to(p.rh, rh_scale.first(static_cast<size_t>(H2)), &p.h.zp);
  const RequantEpilogue g_epilogue = requant_to(p.rh, rh_scale.subspan(static_cast<size_t>(H2)), &p.h.zp);
  auto length = [&](int64_t b) { return lengths.empty() ? steps : lengths[static_cast<size_t>(b)]; };
  const UnitConstants unit = unit_constants(CellRefs(p));
  const ResetBeforeConstants rb{{p.reset_mul, p.rh_to_g}};
  const size_t wx_bytes = static_cast<size_t>(int_type_bytes(p.wx.storage));

  for (int64_t i = 0; i < steps; ++i) {
    gemm_requant(MatrixView{p.h.storage, q_h, batch, H, H}, p.r_zr, zr_epilogue, rh_zr.data(), H2);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (i >= len) {
        // Padding: the product still runs over every item; any value in range will do.
        std::memcpy(reset_h.data() + bytes(b * H, p.h.storage), static_cast<const char*>(q_h) + bytes(b * H, p.h.storage),
                    bytes(H, p.h.storage));
        continue;
      }
      const int64_t t = reverse ? len - 1 - i : i;
      const char* wx_row = wx.data() + static_cast<size_t>((t * batch + b) * H3) * wx_bytes;
      for (int64_t j = 0; j < H; ++j) {
        const int32_t h_old = load(q_h, p.h.storage, b * H + j);
        ExactResetBeforeDomain d{{unit, j}, rb};
        const ResetGateInputs<ExactResetBeforeDomain> in{load(wx_row, p.wx.storage, j), load(wx_row, p.wx.storage, H + j),
                                                         load(rh_zr.data(), p.rh.storage, b * H2 + j),
                                                         load(rh_zr.data(), p.rh.storage, b * H2 + H + j), h_old};
        const ResetGates<ExactResetBeforeDomain> gates = unit_reset_gates(d, in);
        z[static_cast<size_t>(b * H + j)] = static_cast<int32_t>(gates.z);
        store(reset_h.data(), p.h.storage, b * H + j, static_cast<int32_t>(gates.reset_h));
      }
    }
    gemm_requant(MatrixView{p.h.storage, reset_h.data(), batch, H, H}, p.r_g, g_epilogue, rh_g.data(), H);
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (i >= len) continue;  // padding: not computed, output untouched
      const int64_t t = reverse ? len - 1 - i : i;
      const char* wx_row = wx.data() + static_cast<size_t>((t * batch + b) * H3) * wx_bytes;
      for (int64_t j = 0; j < H; ++j) {
        ExactResetBeforeDomain d{{unit, j}, rb};
        const int64_t g_pre =
            unit_reset_candidate(d, int64_t{load(wx_row, p.wx.storage, 2 * H + j)}, int64_t{load(rh_g.data(), p.rh.storage, b * H + j)});
        const int64_t h_new =
            unit_finish(d, UnitGates<ExactResetBeforeDomain>{z[static_cast<size_t>(b * H + j)], g_pre},
                        int64_t{load(q_h, p.h.storage, b * H + j)});
        store(q_y, p.h.storage, (t * batch + b) * H + j, static_cast<int32_t>(h_new));
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t len = length(b);
      if (i >= len) continue;
      const int64_t t = reverse ? len - 1 - i : i;
      for (int64_t j = 0; j < H; ++j) store(q_h, p.h.storage, b * H + j, load(q_y, p.h.storage, (t * batch + b) * H + j));
    }
  }
}

}  // namespace fixq::gru_detail
