// The integer GRU from docs/spec.md, section by section, in int128: see q_oracle.h.
#include "gru/q_oracle.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "fixq/arith.h"

namespace fixq::gru_oracle {

using detail::int128;

namespace {

constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max(), kI64Min = std::numeric_limits<int64_t>::min();

int64_t sat64(int128 v) { return static_cast<int64_t>(std::min<int128>(std::max<int128>(v, kI64Min), kI64Max)); }

// RSHR of spec 2.1 on an int128: floor((v + 2^(n-1)) / 2^n), computed without overflow.
int128 rshr(int128 v, int n) {
  if (n <= 0) return v;
  if (n >= 127) return 0;
  return (v >> n) + ((v >> (n - 1)) & 1);
}

// A(ρ, x) for |x| < 2^80: p = x m exact in int128, then one rounding half up (right
// shift) or an exact left shift, saturated to int64.
int64_t apply_wide(const Ratio& r, int128 x) {
  const int128 p = x * r.m;
  if (r.shift > 0) return sat64(rshr(p, r.shift));
  if (p == 0) return 0;
  if (p > kI64Max || p < kI64Min || -r.shift >= 64) return p > 0 ? kI64Max : kI64Min;  // |p| >= 1 only grows
  return sat64(p * (int128{1} << -r.shift));
}

// One operator's integer format and parameters (per tensor).
struct Op {
  double s;
  int32_t z, lo, hi;
  int32_t sat(int64_t v) const { return static_cast<int32_t>(std::clamp<int64_t>(v, lo, hi)); }
};

Op op_of(const QuantParams& p) { return {double{p.scale[0]}, p.zero_point[0], p.scheme.format.qmin(), p.scheme.format.qmax()}; }

// Spec 2.4: SAT_range(CLAMP(A(ρ, v), -2^40, 2^40) + Z).
int32_t requantize(int64_t v, const Ratio& r, const Op& out) {
  return out.sat(std::clamp<int64_t>(apply(r, v), -(int64_t{1} << 40), int64_t{1} << 40) + out.z);
}

std::vector<int32_t> quantize_rows(const std::vector<float>& w, int64_t rows, const QuantParams& p) {
  const int64_t n = static_cast<int64_t>(w.size()) / rows;
  std::vector<int32_t> q(w.size());
  for (int64_t j = 0; j < rows; ++j)
    for (int64_t k = 0; k < n; ++k)
      q[static_cast<size_t>(j * n + k)] = quantize_value(w[static_cast<size_t>(j * n + k)], p.scale[static_cast<size_t>(j)],
                                                         p.zero_point[static_cast<size_t>(j)], p.scheme.format.qmin(),
                                                         p.scheme.format.qmax());
  return q;
}

// Spec 4: the constants of one cell, recomputed here from the parameters.
struct Cell {
  explicit Cell(const GruCellParams& p)
      : x(op_of(p[GruOp::X])), h(op_of(p[GruOp::H])), wx(op_of(p[GruOp::Wx])), rh(op_of(p[GruOp::Rh])),
        zp(op_of(p[GruOp::ZPre])), rp(op_of(p[GruOp::RPre])), gp(op_of(p[GruOp::GPre])), zo(op_of(p[GruOp::ZOut])),
        ro(op_of(p[GruOp::ROut])), go(op_of(p[GruOp::GOut])), ab(op_of(p[GruOp::RhAddBr])), rr(op_of(p[GruOp::RRh])),
        oc(op_of(p[GruOp::OldContrib])), nc(op_of(p[GruOp::NewContrib])),
        sig_z(ActivationLut::build(ActivationLut::Fn::Sigmoid, p[GruOp::ZPre], p[GruOp::ZOut])),
        sig_r(ActivationLut::build(ActivationLut::Fn::Sigmoid, p[GruOp::RPre], p[GruOp::ROut])),
        tanh_g(ActivationLut::build(ActivationLut::Fn::Tanh, p[GruOp::GPre], p[GruOp::GOut])) {}

  Op x, h, wx, rh, zp, rp, gp, zo, ro, go, ab, rr, oc, nc;
  ActivationLut sig_z, sig_r, tanh_g;  // spec 4.4
  int64_t C = 0, H = 0;
  std::vector<int32_t> W, R;  // [3H, C], [3H, H]
  std::vector<Ratio> wx_scale, rh_scale;
  Ratio wx_to_z, rh_to_z, wx_to_r, rh_to_r, rh_to_rhab, wx_to_g, rrh_to_g, rrh_mul, old_mul, new_mul, old_to_h, new_to_h;
  std::vector<int64_t> bias_z, bias_r, bias_rhab, bias_g;
  int64_t q_one = 0;
  // Spec 5.4, the reset-before cell: r * h -> h, Rh -> g_pre, and g_pre's bias bx_g + br_g.
  bool reset_before = false;
  Ratio reset_mul, rh_to_g;
  std::vector<int64_t> bias_g_rb;
};

Cell make_cell(const GruCell& m, const GruCellParams& p, ScaleKind kind, GruCellKind cell_kind) {
  Cell c(p);
  c.reset_before = cell_kind == GruCellKind::ResetBefore;
  c.C = m.input_size;
  c.H = m.hidden_size;
  const int64_t H3 = 3 * c.H;
  c.W = quantize_rows(m.W, H3, p[GruOp::W]);
  c.R = quantize_rows(m.R, H3, p[GruOp::R]);
  const std::vector<int32_t> bx = quantize_rows(m.bx, H3, p[GruOp::Bx]), br = quantize_rows(m.br, H3, p[GruOp::Br]);
  auto rho = [&](double sigma) { return ratio(sigma, kind); };
  // 4.1
  for (int64_t j = 0; j < H3; ++j) {
    c.wx_scale.push_back(rho(double{p[GruOp::W].scale[static_cast<size_t>(j)]} * c.x.s / c.wx.s));
    c.rh_scale.push_back(rho(double{p[GruOp::R].scale[static_cast<size_t>(j)]} * c.h.s / c.rh.s));
  }
  c.wx_to_z = rho(c.wx.s / c.zp.s), c.rh_to_z = rho(c.rh.s / c.zp.s);
  c.wx_to_r = rho(c.wx.s / c.rp.s), c.rh_to_r = rho(c.rh.s / c.rp.s);
  c.wx_to_g = rho(c.wx.s / c.gp.s);
  if (c.reset_before) {
    c.reset_mul = rho(c.ro.s);  // S_r_out S_h / S_h
    c.rh_to_g = rho(c.rh.s / c.gp.s);
  } else {
    c.rh_to_rhab = rho(c.rh.s / c.ab.s);
    c.rrh_to_g = rho(c.rr.s / c.gp.s);
    c.rrh_mul = rho(c.ro.s * c.ab.s / c.rr.s);
  }
  c.old_mul = rho(c.zo.s * c.h.s / c.oc.s);
  c.new_mul = rho(c.zo.s * c.go.s / c.nc.s);
  c.old_to_h = rho(c.oc.s / c.h.s), c.new_to_h = rho(c.nc.s / c.h.s);
  // 4.2: K(q, σ) = SAT_int32(A(ρ(σ), q)), 0 in multiplier mode when σ < 2^-40.
  auto K = [&](const std::vector<int32_t>& q, GruOp op, int64_t row, double target) -> int64_t {
    const double sigma = double{p[op].scale[static_cast<size_t>(row)]} / target;
    if (kind == ScaleKind::Multiplier && sigma < 0x1p-40) return 0;
    return std::clamp<int64_t>(apply(rho(sigma), q[static_cast<size_t>(row)]), INT32_MIN, INT32_MAX);
  };
  auto sat32 = [](int64_t v) { return std::clamp<int64_t>(v, INT32_MIN, INT32_MAX); };
  for (int64_t j = 0; j < c.H; ++j) {
    const int64_t z = j, r = c.H + j, g = 2 * c.H + j;
    c.bias_z.push_back(sat32(K(bx, GruOp::Bx, z, c.zp.s) + K(br, GruOp::Br, z, c.zp.s)));
    c.bias_r.push_back(sat32(K(bx, GruOp::Bx, r, c.rp.s) + K(br, GruOp::Br, r, c.rp.s)));
    if (c.reset_before) {
      c.bias_g_rb.push_back(sat32(K(bx, GruOp::Bx, g, c.gp.s) + K(br, GruOp::Br, g, c.gp.s)));
    } else {
      c.bias_rhab.push_back(K(br, GruOp::Br, g, c.ab.s));
      c.bias_g.push_back(K(bx, GruOp::Bx, g, c.gp.s));
    }
  }
  // 4.3
  c.q_one = static_cast<int64_t>(std::nearbyint(1.0 / c.zo.s)) + c.zo.z;
  return c;
}

// Spec 5.1: one row of a GEMM with requantization, v = sum_k q_w[j, k] (q_in[k] - Z_in).
int32_t gemm_row(const std::vector<int32_t>& w, int64_t j, int64_t n, const int32_t* in, int32_t z_in, const Ratio& r,
                 const Op& out) {
  int128 v = 0;
  for (int64_t k = 0; k < n; ++k) v += int128{w[static_cast<size_t>(j * n + k)]} * (int128{in[k]} - z_in);
  return requantize(sat64(v), r, out);  // |v| < 2^48: exact
}

// Spec 5.2: the new state of unit j from the Wx row, the Rh row and the old state h.
int32_t update_unit(const Cell& c, int64_t j, const int32_t* wx, const int32_t* rh, int32_t h) {
  const int64_t H = c.H;
  const int64_t dwx_z = wx[j] - c.wx.z, dwx_r = wx[H + j] - c.wx.z, dwx_g = wx[2 * H + j] - c.wx.z;
  const int64_t drh_z = rh[j] - c.rh.z, drh_r = rh[H + j] - c.rh.z, drh_g = rh[2 * H + j] - c.rh.z;
  const size_t u = static_cast<size_t>(j);
  const int32_t z_pre = c.zp.sat(apply(c.wx_to_z, dwx_z) + apply(c.rh_to_z, drh_z) + c.bias_z[u] + c.zp.z);
  const int32_t r_pre = c.rp.sat(apply(c.wx_to_r, dwx_r) + apply(c.rh_to_r, drh_r) + c.bias_r[u] + c.rp.z);
  const int32_t z = c.sig_z(z_pre), r = c.sig_r(r_pre);
  const int32_t rhab = c.ab.sat(apply(c.rh_to_rhab, drh_g) + c.bias_rhab[u] + c.ab.z);
  const int32_t rrh = c.rr.sat(apply(c.rrh_mul, int64_t{r - c.ro.z} * (rhab - c.ab.z)) + c.rr.z);
  const int32_t g_pre = c.gp.sat(apply(c.wx_to_g, dwx_g) + apply(c.rrh_to_g, rrh - c.rr.z) + c.bias_g[u] + c.gp.z);
  const int32_t g = c.tanh_g(g_pre);
  const int32_t old_c = c.oc.sat(apply(c.old_mul, int64_t{z - c.zo.z} * (h - c.h.z)) + c.oc.z);
  const int64_t one_minus_z = c.q_one - z + c.zo.z;  // not saturated
  // (one_minus_z - Z) (g - Z) can pass 2^63 (spec 5.3): A takes it in int128 here.
  const int32_t new_c = c.nc.sat(apply_wide(c.new_mul, int128{one_minus_z - c.zo.z} * (g - c.go.z)) + c.nc.z);
  return c.h.sat(apply(c.old_to_h, old_c - c.oc.z) + apply(c.new_to_h, new_c - c.nc.z) + c.h.z);
}

// Spec 5.4: the reset-before step of one item, from its Wx row, its old state hb [H] and
// the cell's R: z, r of every unit, r * h in h's parameters, R_g (r * h), then g and h'.
std::vector<int32_t> reset_before_step(const Cell& c, const int32_t* wx, const int32_t* hb) {
  const int64_t H = c.H;
  std::vector<int32_t> z(static_cast<size_t>(H)), reset_h(static_cast<size_t>(H)), out(static_cast<size_t>(H));
  for (int64_t j = 0; j < H; ++j) {
    const size_t u = static_cast<size_t>(j);
    const int64_t rh_z = gemm_row(c.R, j, H, hb, c.h.z, c.rh_scale[u], c.rh) - c.rh.z;
    const int64_t rh_r = gemm_row(c.R, H + j, H, hb, c.h.z, c.rh_scale[static_cast<size_t>(H + j)], c.rh) - c.rh.z;
    const int32_t z_pre = c.zp.sat(apply(c.wx_to_z, wx[j] - c.wx.z) + apply(c.rh_to_z, rh_z) + c.bias_z[u] + c.zp.z);
    const int32_t r_pre = c.rp.sat(apply(c.wx_to_r, wx[H + j] - c.wx.z) + apply(c.rh_to_r, rh_r) + c.bias_r[u] + c.rp.z);
    z[u] = c.sig_z(z_pre);
    const int32_t r = c.sig_r(r_pre);
    reset_h[u] = c.h.sat(apply(c.reset_mul, int64_t{r - c.ro.z} * (hb[j] - c.h.z)) + c.h.z);
  }
  for (int64_t j = 0; j < H; ++j) {
    const size_t u = static_cast<size_t>(j);
    const int64_t rh_g =
        gemm_row(c.R, 2 * H + j, H, reset_h.data(), c.h.z, c.rh_scale[static_cast<size_t>(2 * H + j)], c.rh) - c.rh.z;
    const int32_t g_pre =
        c.gp.sat(apply(c.wx_to_g, wx[2 * H + j] - c.wx.z) + apply(c.rh_to_g, rh_g) + c.bias_g_rb[u] + c.gp.z);
    const int32_t g = c.tanh_g(g_pre);
    const int32_t h = hb[j];
    const int32_t old_c = c.oc.sat(apply(c.old_mul, int64_t{z[u] - c.zo.z} * (h - c.h.z)) + c.oc.z);
    const int64_t one_minus_z = c.q_one - z[u] + c.zo.z;
    const int32_t new_c = c.nc.sat(apply_wide(c.new_mul, int128{one_minus_z - c.zo.z} * (g - c.go.z)) + c.nc.z);
    out[u] = c.h.sat(apply(c.old_to_h, old_c - c.oc.z) + apply(c.new_to_h, new_c - c.nc.z) + c.h.z);
  }
  return out;
}

// Spec 5 and 6.2-6.3: one cell over the layer input in [T, B, C] (already in the cell's x
// parameters), the state q_h [B, H] updated in place, the outputs q_y [T, B, H] (Z_h where
// a step is not computed).
std::vector<int32_t> run_cell(const Cell& c, const std::vector<int32_t>& in, int64_t T, int64_t B,
                              std::span<const int64_t> lengths, bool reverse, std::vector<int32_t>& q_h) {
  const int64_t H = c.H, H3 = 3 * H;
  std::vector<int32_t> q_y(static_cast<size_t>(T * B * H), c.h.z);
  for (int64_t i = 0; i < T; ++i) {
    std::vector<int32_t> next = q_h;
    for (int64_t b = 0; b < B; ++b) {
      const int64_t len = lengths.empty() ? T : lengths[static_cast<size_t>(b)];
      if (i >= len) continue;
      const int64_t t = reverse ? len - 1 - i : i;
      const int32_t* xt = in.data() + (t * B + b) * c.C;
      const int32_t* hb = q_h.data() + b * H;
      if (c.reset_before) {
        std::vector<int32_t> wx(static_cast<size_t>(H3));
        for (int64_t j = 0; j < H3; ++j)
          wx[static_cast<size_t>(j)] = gemm_row(c.W, j, c.C, xt, c.x.z, c.wx_scale[static_cast<size_t>(j)], c.wx);
        const std::vector<int32_t> hn = reset_before_step(c, wx.data(), hb);
        for (int64_t j = 0; j < H; ++j) {
          next[static_cast<size_t>(b * H + j)] = hn[static_cast<size_t>(j)];
          q_y[static_cast<size_t>((t * B + b) * H + j)] = hn[static_cast<size_t>(j)];
        }
        continue;
      }
      std::vector<int32_t> wx(static_cast<size_t>(H3)), rh(static_cast<size_t>(H3));
      for (int64_t j = 0; j < H3; ++j) {
        wx[static_cast<size_t>(j)] = gemm_row(c.W, j, c.C, xt, c.x.z, c.wx_scale[static_cast<size_t>(j)], c.wx);
        rh[static_cast<size_t>(j)] = gemm_row(c.R, j, H, hb, c.h.z, c.rh_scale[static_cast<size_t>(j)], c.rh);
      }
      for (int64_t j = 0; j < H; ++j) {
        const int32_t hn = update_unit(c, j, wx.data(), rh.data(), hb[j]);
        next[static_cast<size_t>(b * H + j)] = hn;
        q_y[static_cast<size_t>((t * B + b) * H + j)] = hn;
      }
    }
    q_h = std::move(next);  // every unit of this step read the old state
  }
  return q_y;
}

float dequantize(int32_t q, const Op& op, float scale) {
  return static_cast<float>(q - op.z) * scale;  // spec 3.1: fl32(float(q - Z) * S)
}

}  // namespace

Ratio ratio(double sigma, ScaleKind kind) {
  if (!(sigma > 0.0) || !std::isfinite(sigma)) throw std::invalid_argument("oracle: ratio must be positive and finite");
  int e = 0;
  const double f = std::frexp(sigma, &e);
  if (kind == ScaleKind::PowerOfTwo) {
    if (f != 0.5) throw std::invalid_argument("oracle: pow2 ratio that is not a power of two");
    return {1, 1 - e};
  }
  int64_t m = static_cast<int64_t>(std::nearbyint(f * 0x1p31));
  int shift = 31 - e;
  if (m == (int64_t{1} << 31)) m = int64_t{1} << 30, --shift;
  return {m, shift};
}

int64_t apply(const Ratio& r, int64_t x) { return apply_wide(r, x); }

int32_t quantize_value(float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
  const float d = x / scale;  // one binary32 division
  const double lo = static_cast<double>(qmin) - zero_point, hi = static_cast<double>(qmax) - zero_point;
  const double r = std::isnan(d) ? lo : std::clamp(std::nearbyint(double{d}), lo, hi);
  return zero_point + static_cast<int32_t>(r);
}

GruOutput forward(const GruModel& model, const GruQuantParams& params, const float* x, int64_t T, int64_t B,
                  std::span<const int64_t> lengths, const float* h0) {
  const int D = model.directions();
  const int64_t H = model.hidden_size;
  const ScaleKind kind = params.config.scale_kind;
  std::vector<Cell> cells;
  for (size_t c = 0; c < model.cells.size(); ++c) cells.push_back(make_cell(model.cells[c], params.cells[c], kind, model.cell_kind));
  // 6.1: x with cell 0's x parameters; each state from h0 with its cell's h parameters, or Z_h.
  const QuantParams& x0 = params.cells[0][GruOp::X];
  std::vector<int32_t> in(static_cast<size_t>(T * B * model.input_size));
  for (size_t i = 0; i < in.size(); ++i)
    in[i] = quantize_value(x[i], x0.scale[0], x0.zero_point[0], x0.scheme.format.qmin(), x0.scheme.format.qmax());
  std::vector<std::vector<int32_t>> state;
  for (size_t c = 0; c < cells.size(); ++c) {
    std::vector<int32_t> s(static_cast<size_t>(B * H), cells[c].h.z);
    const QuantParams& hp = params.cells[c][GruOp::H];
    if (h0 != nullptr)
      for (int64_t i = 0; i < B * H; ++i)
        s[static_cast<size_t>(i)] = quantize_value(h0[static_cast<int64_t>(c) * B * H + i], hp.scale[0], hp.zero_point[0],
                                                   hp.scheme.format.qmin(), hp.scheme.format.qmax());
    state.push_back(std::move(s));
  }
  auto real_step = [&](int64_t t, int64_t b) { return lengths.empty() || t < lengths[static_cast<size_t>(b)]; };
  std::vector<std::vector<int32_t>> out(static_cast<size_t>(D));
  for (int64_t l = 0; l < model.num_layers; ++l) {
    // 6.2: forward cell, then the reverse one, over the same layer input.
    for (int d = 0; d < D; ++d) {
      const size_t c = static_cast<size_t>(l * D + d);
      out[static_cast<size_t>(d)] = run_cell(cells[c], in, T, B, lengths, d == 1, state[c]);
    }
    if (l + 1 == model.num_layers) break;
    // 6.4: each direction's q_y rescaled from its cell's h into the next forward cell's x.
    const Cell& nx = cells[static_cast<size_t>((l + 1) * D)];
    std::vector<int32_t> next(static_cast<size_t>(T * B * D * H), nx.x.z);
    for (int d = 0; d < D; ++d) {
      const Cell& src = cells[static_cast<size_t>(l * D + d)];
      const Ratio rho = ratio(src.h.s / nx.x.s, kind);
      for (int64_t t = 0; t < T; ++t)
        for (int64_t b = 0; b < B; ++b) {
          if (!real_step(t, b)) continue;  // padding: Z_x of the next layer
          for (int64_t j = 0; j < H; ++j)
            next[static_cast<size_t>((t * B + b) * D * H + d * H + j)] =
                requantize(out[static_cast<size_t>(d)][static_cast<size_t>((t * B + b) * H + j)] - src.h.z, rho, nx.x);
        }
    }
    in = std::move(next);
  }
  // 6.5
  GruOutput o;
  o.y.assign(static_cast<size_t>(T * B * D * H), 0.0f);
  for (int d = 0; d < D; ++d) {
    const size_t c = static_cast<size_t>((model.num_layers - 1) * D + d);
    const float s = params.cells[c][GruOp::H].scale[0];
    for (int64_t t = 0; t < T; ++t)
      for (int64_t b = 0; b < B; ++b)
        if (real_step(t, b))
          for (int64_t j = 0; j < H; ++j)
            o.y[static_cast<size_t>((t * B + b) * D * H + d * H + j)] =
                dequantize(out[static_cast<size_t>(d)][static_cast<size_t>((t * B + b) * H + j)], cells[c].h, s);
  }
  for (size_t c = 0; c < cells.size(); ++c)
    for (int64_t i = 0; i < B * H; ++i)
      o.h_n.push_back(dequantize(state[c][static_cast<size_t>(i)], cells[c].h, params.cells[c][GruOp::H].scale[0]));
  return o;
}

}  // namespace fixq::gru_oracle
