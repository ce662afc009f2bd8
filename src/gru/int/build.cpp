// build_plan: fixed-point ratios, compensation and bias constants, tables (docs/spec.md
// section 4).
#include <cmath>
#include <deque>
#include <mutex>
#include <string>
#include <tuple>

#include "fixq/error.h"
#include "gru/int/fast/loop.h"

namespace fixq::gru_detail {

namespace {

OpQ op_q(const QuantParams& p) {
  return OpQ{p.zero_point[0], p.scheme.format.range(), p.scheme.format.bits <= 8 ? IntType::S8 : IntType::S16};
}

// One ratio of scales as integer arithmetic: a pure shift in power-of-two mode, else a
// normalized 31-bit multiplier.
FixedPointScale ratio(double num, double den, const GruQuantConfig& c, const char* what) {
  const double sigma = num / den;
  // Both modes share the multiplier's upper bound, which keeps every sum of the step
  // inside int64 (gru/int/step_intonly.cpp); a larger ratio means broken parameters.
  if (!(sigma <= FixedPointScale::kMaxReal))
    fail("GRU rescale ", what, ": ratio ", sigma, " of scales exceeds 2^20; the parameters are not usable");
  try {
    return make_scale(sigma, c.scale_kind);
  } catch (const Error& e) {
    fail("GRU rescale ", what, ": ", e.what());
  }
}

// A per-channel constant q * sigma in the target's LSBs, rounded half up. Ratios below the
// multiplier range contribute less than 2^-24 of an LSB (|q| <= 2^15) and so round to 0.
int32_t constant_term(int32_t q, double sigma, const GruQuantConfig& c, const char* what) {
  if (sigma < FixedPointScale::kMinReal && c.scale_kind == ScaleKind::Multiplier) return 0;
  const FixedPointScale s = ratio(sigma, 1.0, c, what);
  return static_cast<int32_t>(saturate(s.apply(q), INT32_MIN, INT32_MAX));
}

// ActivationLut::build, remembered: a table depends only on its input's and output's
// parameters, and parameter searches (fixq/gru_ptq.h) build the same interpolated 16-bit
// tables hundreds of times (each costs milliseconds of exp / tanh and verification). The
// last kLutCacheSize distinct tables are kept; the result is the same table either way.
ActivationLut build_lut(ActivationLut::Fn fn, const QuantParams& in, const QuantParams& out) {
  constexpr size_t kLutCacheSize = 24;
  using Key = std::tuple<int, float, int32_t, int, bool, float, int32_t, int, bool>;
  struct Entry {
    Key key;
    ActivationLut lut;
  };
  static std::mutex mutex;
  static std::deque<Entry> cache;
  if (in.size() != 1 || out.size() != 1) return ActivationLut::build(fn, in, out);  // build() names the error
  const Key key{static_cast<int>(fn), in.scale[0], in.zero_point[0], in.scheme.format.bits, in.scheme.format.is_signed,
                out.scale[0], out.zero_point[0], out.scheme.format.bits, out.scheme.format.is_signed};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    for (const Entry& e : cache)
      if (e.key == key) return e.lut;
  }
  ActivationLut lut = ActivationLut::build(fn, in, out);
  const std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() == kLutCacheSize) cache.pop_front();
  cache.push_back({key, lut});
  return lut;
}

PackedB pack(const std::vector<int32_t>& q, int64_t rows, int64_t cols, int bits) {
  if (bits <= 8) {
    std::vector<int8_t> v(q.begin(), q.end());
    return PackedB::pack(MatrixView{IntType::S8, v.data(), rows, cols, cols});
  }
  std::vector<int16_t> v(q.begin(), q.end());
  return PackedB::pack(MatrixView{IntType::S16, v.data(), rows, cols, cols});
}

}  // namespace

CellPlan build_plan(const GruCellParams& p, const GruQuantConfig& config, int64_t input_size, int64_t hidden_size,
                    std::vector<int32_t> q_w, std::vector<int32_t> q_r, std::vector<int32_t> q_bx,
                    std::vector<int32_t> q_br, StoredTables* stored, GruCellKind kind) {
  const int64_t H = hidden_size, C = input_size, H3 = 3 * H;
  require(q_w.size() == static_cast<size_t>(H3 * C) && q_r.size() == static_cast<size_t>(H3 * H) &&
              q_bx.size() == static_cast<size_t>(H3) && q_br.size() == static_cast<size_t>(H3),
          "GRU cell weights do not match input size ", C, " and hidden size ", H);
  if ((config.bits_of(GruOp::W) > 8 && config.bits_of(GruOp::X) > 8) ||
      (config.bits_of(GruOp::R) > 8 && config.bits_of(GruOp::H) > 8))
    fail("GRU config: 16-bit weights need 8-bit x and h (16 x 16-bit products are not supported by the GEMM)");
  CellPlan c;
  c.kind = kind;
  const bool reset_after = kind == GruCellKind::ResetAfter;
  c.input_size = C;
  c.hidden_size = H;
  c.x = op_q(p[GruOp::X]);
  c.h = op_q(p[GruOp::H]);
  c.wx = op_q(p[GruOp::Wx]);
  c.rh = op_q(p[GruOp::Rh]);
  c.z_pre = op_q(p[GruOp::ZPre]);
  c.r_pre = op_q(p[GruOp::RPre]);
  c.g_pre = op_q(p[GruOp::GPre]);
  c.z_out = op_q(p[GruOp::ZOut]);
  c.r_out = op_q(p[GruOp::ROut]);
  c.g_out = op_q(p[GruOp::GOut]);
  c.rh_add_br = op_q(p[GruOp::RhAddBr]);
  c.rrh = op_q(p[GruOp::RRh]);
  c.old_c = op_q(p[GruOp::OldContrib]);
  c.new_c = op_q(p[GruOp::NewContrib]);

  auto s = [&](GruOp op) { return static_cast<double>(p[op].scale[0]); };
  const QuantParams &pw = p[GruOp::W], &pr = p[GruOp::R], &pbx = p[GruOp::Bx], &pbr = p[GruOp::Br];
  for (int64_t j = 0; j < H3; ++j) {
    c.wx_scale.push_back(ratio(double{pw.scale[j]} * s(GruOp::X), s(GruOp::Wx), config, "W x -> Wx"));
    c.rh_scale.push_back(ratio(double{pr.scale[j]} * s(GruOp::H), s(GruOp::Rh), config, "R h -> Rh"));
  }
  c.wx_to_z = ratio(s(GruOp::Wx), s(GruOp::ZPre), config, "Wx -> z_pre");
  c.rh_to_z = ratio(s(GruOp::Rh), s(GruOp::ZPre), config, "Rh -> z_pre");
  c.wx_to_r = ratio(s(GruOp::Wx), s(GruOp::RPre), config, "Wx -> r_pre");
  c.rh_to_r = ratio(s(GruOp::Rh), s(GruOp::RPre), config, "Rh -> r_pre");
  c.wx_to_g = ratio(s(GruOp::Wx), s(GruOp::GPre), config, "Wx -> g_pre");
  if (reset_after) {
    c.rh_to_rhab = ratio(s(GruOp::Rh), s(GruOp::RhAddBr), config, "Rh -> Rh_add_br");
    c.rrh_to_g = ratio(s(GruOp::RRh), s(GruOp::GPre), config, "rRh -> g_pre");
    c.rrh_mul = ratio(s(GruOp::ROut) * s(GruOp::RhAddBr), s(GruOp::RRh), config, "r * Rh_add_br -> rRh");
  } else {
    // docs/spec.md 5.4: r * h in h's own parameters, σ = S_r_out S_h / S_h = S_r_out
    // (the binary64 product is exact, so the quotient is S_r_out exactly).
    c.reset_mul = ratio(s(GruOp::ROut) * s(GruOp::H), s(GruOp::H), config, "r * h -> h");
    c.rh_to_g = ratio(s(GruOp::Rh), s(GruOp::GPre), config, "Rh -> g_pre");
  }
  c.old_mul = ratio(s(GruOp::ZOut) * s(GruOp::H), s(GruOp::OldContrib), config, "z * h -> old_contrib");
  c.new_mul = ratio(s(GruOp::ZOut) * s(GruOp::GOut), s(GruOp::NewContrib), config, "(1 - z) * g -> new_contrib");
  c.old_to_h = ratio(s(GruOp::OldContrib), s(GruOp::H), config, "old_contrib -> h");
  c.new_to_h = ratio(s(GruOp::NewContrib), s(GruOp::H), config, "new_contrib -> h");
  for (int64_t j = 0; j < H; ++j) {
    const size_t z = static_cast<size_t>(j), r = static_cast<size_t>(H + j), g = static_cast<size_t>(2 * H + j);
    // Two saturated int32 terms: their sum is taken in int64 and saturated again.
    c.bias_z.push_back(saturate_cast<int32_t>(int64_t{constant_term(q_bx[z], pbx.scale[z] / s(GruOp::ZPre), config, "bx_z")} +
                                              constant_term(q_br[z], pbr.scale[z] / s(GruOp::ZPre), config, "br_z")));
    c.bias_r.push_back(saturate_cast<int32_t>(int64_t{constant_term(q_bx[r], pbx.scale[r] / s(GruOp::RPre), config, "bx_r")} +
                                              constant_term(q_br[r], pbr.scale[r] / s(GruOp::RPre), config, "br_r")));
    if (reset_after) {
      c.bias_rhab.push_back(constant_term(q_br[g], pbr.scale[g] / s(GruOp::RhAddBr), config, "br_g"));
      c.bias_g.push_back(constant_term(q_bx[g], pbx.scale[g] / s(GruOp::GPre), config, "bx_g"));
    } else {
      // Both biases of g meet in g_pre, as z's and r's do in theirs (spec 5.4).
      c.bias_rhab.push_back(0);
      c.bias_g.push_back(saturate_cast<int32_t>(int64_t{constant_term(q_bx[g], pbx.scale[g] / s(GruOp::GPre), config, "bx_g")} +
                                                constant_term(q_br[g], pbr.scale[g] / s(GruOp::GPre), config, "br_g")));
    }
  }
  // docs/spec.md 4.3: 1 in z_out's scale, so that 1 - z reuses z_out's parameters.
  // 1 / S_z_out must be an integer that fits with room for the zero point: z_out holds
  // values in [0, 1], so any sane scale is far above 2^-30.
  const double one = round_half_even(1.0 / s(GruOp::ZOut));
  require(one <= 0x1p30, "GRU z_out scale ", s(GruOp::ZOut), " is too small: 1 / scale must stay below 2^30");
  c.q_one = static_cast<int32_t>(one) + c.z_out.zp;
  if (stored != nullptr) {
    auto name = [&](const char* t) { return "quantized GRU " + stored->file + ": table cell" + std::to_string(stored->cell) + "." + t; };
    c.sig_z = ActivationLut::from_entries(p[GruOp::ZPre], p[GruOp::ZOut], std::move(stored->sig_z), name("sig_z"));
    c.sig_r = ActivationLut::from_entries(p[GruOp::RPre], p[GruOp::ROut], std::move(stored->sig_r), name("sig_r"));
    c.tanh_g = ActivationLut::from_entries(p[GruOp::GPre], p[GruOp::GOut], std::move(stored->tanh_g), name("tanh_g"));
  } else {
    c.sig_z = build_lut(ActivationLut::Fn::Sigmoid, p[GruOp::ZPre], p[GruOp::ZOut]);
    c.sig_r = build_lut(ActivationLut::Fn::Sigmoid, p[GruOp::RPre], p[GruOp::ROut]);
    c.tanh_g = build_lut(ActivationLut::Fn::Tanh, p[GruOp::GPre], p[GruOp::GOut]);
  }
  c.w = pack(q_w, H3, C, config.bits_of(GruOp::W));
  c.r = pack(q_r, H3, H, config.bits_of(GruOp::R));
  if (!reset_after) {
    const auto g_rows = q_r.begin() + static_cast<std::ptrdiff_t>(2 * H * H);
    c.r_zr = pack(std::vector<int32_t>(q_r.begin(), g_rows), 2 * H, H, config.bits_of(GruOp::R));
    c.r_g = pack(std::vector<int32_t>(g_rows, q_r.end()), H, H, config.bits_of(GruOp::R));
  }
  c.q_w = std::move(q_w);
  c.q_r = std::move(q_r);
  c.q_bx = std::move(q_bx);
  c.q_br = std::move(q_br);
  if (std::optional<FastPlan> fast = reset_after ? build_fast_plan(c) : std::nullopt) c.fast = std::make_shared<const FastPlan>(std::move(*fast));
  return c;
}

}  // namespace fixq::gru_detail
