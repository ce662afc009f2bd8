#include "export/c_gru_code.h"

namespace fixq::export_detail {

const char* const kPrimitivesC = R"C(/* ==== Part 1: primitives (docs/spec.md section 2) ==================================== */

/* A positive real factor m * 2^-shift (2.3); power-of-two scales have m = 1. */
typedef struct {
  int32_t m;
  int32_t shift;
} fx_scale;

/* The zero point and integer range of a per-tensor operator (3.2). */
typedef struct {
  int32_t zp;
  int32_t qmin;
  int32_t qmax;
} quant_op;

/* floor(x / 2^n) for n in [0, 63]: the arithmetic shift right of the spec, written so that
 * it does not rely on the implementation-defined >> of negative numbers. */
static int64_t asr64(int64_t x, int n) {
  return x >= 0 ? (int64_t)((uint64_t)x >> n) : -1 - (int64_t)(~(uint64_t)x >> n);
}

/* RSHR (2.1): x / 2^n rounded to nearest, ties toward +infinity. */
static int64_t rshr(int64_t x, int n) {
  if (n <= 0) return x;
  if (n >= 64) return 0;
  return asr64(x, n) + (asr64(x, n - 1) & 1);
}

/* SAT: v clamped to [lo, hi]. */
static int64_t sat(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : (v > hi ? hi : v);
}

static int32_t sat_op(int64_t v, quant_op o) {
  return (int32_t)sat(v, o.qmin, o.qmax);
}

/* x * 2^n for n >= 0, saturated to int64. */
static int64_t shl_sat(int64_t x, int n) {
  int64_t limit;
  if (x == 0 || n <= 0) return x;
  if (n >= 63) return x > 0 ? INT64_MAX : INT64_MIN;
  limit = INT64_MAX / ((int64_t)1 << n);
  if (x > limit) return INT64_MAX;
  if (x < -limit - 1) return INT64_MIN;
  return x * ((int64_t)1 << n);
}

/* A 128-bit two's-complement integer hi * 2^64 + lo, for the products that leave int64. */
typedef struct {
  uint64_t hi;
  uint64_t lo;
} wide;

/* x * m exactly, for 0 < m < 2^31. */
static wide mul_wide(int64_t x, int32_t m) {
  const uint64_t ax = x < 0 ? 0 - (uint64_t)x : (uint64_t)x;
  const uint64_t p0 = (ax & 0xFFFFFFFFu) * (uint64_t)m, p1 = (ax >> 32) * (uint64_t)m; /* each < 2^63 */
  wide r;
  r.lo = p0 + (p1 << 32);
  r.hi = (p1 >> 32) + (r.lo < p0);
  if (x < 0) {
    r.lo = ~r.lo + 1;
    r.hi = ~r.hi + (r.lo == 0);
  }
  return r;
}

/* floor(a / 2^n) for n in [0, 127]. */
static wide asr_wide(wide a, int n) {
  const uint64_t fill = (a.hi >> 63) ? UINT64_MAX : 0;
  wide r;
  if (n == 0) return a;
  if (n < 64) {
    r.lo = (a.lo >> n) | (a.hi << (64 - n));
    r.hi = (a.hi >> n) | (fill << (64 - n));
  } else if (n == 64) {
    r.lo = a.hi;
    r.hi = fill;
  } else {
    r.lo = (a.hi >> (n - 64)) | (fill << (128 - n));
    r.hi = fill;
  }
  return r;
}

/* a saturated to int64. */
static int64_t wide_to_int64(wide a) {
  if (a.hi == ((a.lo >> 63) ? UINT64_MAX : 0)) return (a.lo >> 63) ? -(int64_t)~a.lo - 1 : (int64_t)a.lo;
  return (a.hi >> 63) ? INT64_MIN : INT64_MAX;
}

/* A(rho, x) when x * m may leave int64: the same rounding on the exact 128-bit product. */
static int64_t scale_apply_wide(fx_scale s, int64_t x) {
  wide p = mul_wide(x, s.m);
  uint64_t bit;
  if (s.shift <= 0) return shl_sat(wide_to_int64(p), -s.shift);
  if (s.shift >= 127) return 0; /* |p| < 2^94: |p / 2^shift| < 1/2 */
  p = asr_wide(p, s.shift - 1);
  bit = p.lo & 1;
  p = asr_wide(p, 1);
  p.lo += bit;
  p.hi += p.lo < bit;
  return wide_to_int64(p);
}

/* A(rho, x) (2.3): x * m * 2^-shift with one rounding, half up, exact for every int64 x,
 * saturated to int64. With |x| <= 2^32 the product x * m fits int64 (m < 2^31). */
static int64_t scale_apply(fx_scale s, int64_t x) {
  if (x >= -((int64_t)1 << 32) && x <= ((int64_t)1 << 32))
    return s.shift <= 0 ? shl_sat(x * s.m, -s.shift) : rshr(x * s.m, s.shift);
  return scale_apply_wide(s, x);
}

/* requantize (2.4): SAT_out(CLAMP(A(rho, v), -2^40, 2^40) + Z_out). */
static int32_t requantize(int64_t v, fx_scale s, quant_op out) {
  const int64_t guard = (int64_t)1 << 40;
  return sat_op(sat(scale_apply(s, v), -guard, guard) + out.zp, out);
}

/* An activation table (4.4): direct, one entry per input value in the output's width, or
 * knots every 2^shift input values with `frac` fractional bits, linearly interpolated. */
typedef struct {
  const int8_t* direct8;
  const int16_t* direct16;
  const int32_t* knots;
  int32_t qmin_in;
  int32_t shift;
  int32_t frac;
  quant_op out;
} act_table;

/* LUT(q) (4.4). */
static int32_t lut(const act_table* t, int32_t q) {
  const int64_t i = (int64_t)q - t->qmin_in;
  int64_t k, fr, lo, hi;
  if (t->knots == NULL) return t->direct8 != NULL ? t->direct8[i] : t->direct16[i];
  k = i >> t->shift; /* i >= 0 */
  fr = i & (((int64_t)1 << t->shift) - 1);
  lo = t->knots[k];
  hi = t->knots[k + 1];
  return sat_op(rshr(lo * ((int64_t)1 << t->shift) + (hi - lo) * fr, t->frac + t->shift), t->out);
}
)C";

const char* const kOperatorsC = R"C(
/* ==== Part 2: one GRU cell (docs/spec.md sections 4 and 5) ============================ */

/* Every constant of one cell (layer x direction), computed by fixq from the .fixq file. */
typedef struct {
  int32_t input_size;
  quant_op x, h, wx, rh, z_pre, r_pre, g_pre, z_out, r_out, g_out, rh_add_br, rrh, old_c, new_c;
  const w_t* w;             /* q_W [3H][input_size], rows z, r, g (3.2) */
  const r_t* r;             /* q_R [3H][H] */
  const int32_t* w_colsum;  /* sum_k q_W[j][k] (4.5) */
  const int32_t* r_colsum;
  const fx_scale* wx_scale; /* per row (4.1) */
  const fx_scale* rh_scale;
  fx_scale wx_to_z, rh_to_z, wx_to_r, rh_to_r, rh_to_rhab, wx_to_g, rrh_to_g; /* 4.1 */
  fx_scale rrh_mul, old_mul, new_mul, old_to_h, new_to_h;
  const int32_t* bias_z; /* 4.2, [H] each */
  const int32_t* bias_r;
  const int32_t* bias_rhab;
  const int32_t* bias_g;
  int32_t q_one; /* 4.3: 1 in z_out's parameters */
  act_table sig_z, sig_r, tanh_g;
  fx_scale h_to_next_x; /* 6.4, cells below the top layer */
  quant_op next_x;
} gru_cell;

/* 5.1: Wx row j = requantize(sum_k q_W[j][k] (q_x[k] - Z_x), wx_scale[j], Wx). */
static int32_t op_wx(const gru_cell* c, int32_t j, const $p_x_t* x) {
  const w_t* w = c->w + (size_t)j * (size_t)c->input_size;
  acc_w_t acc = 0;
  int32_t k;
  for (k = 0; k < c->input_size; ++k) acc += (acc_w_t)w[k] * x[k];
  return requantize((int64_t)acc - (int64_t)c->x.zp * c->w_colsum[j], c->wx_scale[j], c->wx);
}

/* 5.1: Rh row j = requantize(sum_k q_R[j][k] (q_h[k] - Z_h), rh_scale[j], Rh), old state. */
static int32_t op_rh(const gru_cell* c, int32_t j, const $p_h_t* h) {
  const r_t* r = c->r + (size_t)j * $U_HIDDEN_SIZE;
  acc_r_t acc = 0;
  int32_t k;
  for (k = 0; k < $U_HIDDEN_SIZE; ++k) acc += (acc_r_t)r[k] * h[k];
  return requantize((int64_t)acc - (int64_t)c->h.zp * c->r_colsum[j], c->rh_scale[j], c->rh);
}

/* z_pre = SAT(A(wx_to_z, Wx_z - Z_Wx) + A(rh_to_z, Rh_z - Z_Rh) + bias_z[j] + Z_z_pre) */
static int32_t op_z_pre(const gru_cell* c, int32_t j, int32_t wx_z, int32_t rh_z) {
  return sat_op(scale_apply(c->wx_to_z, (int64_t)wx_z - c->wx.zp) + scale_apply(c->rh_to_z, (int64_t)rh_z - c->rh.zp) +
                    c->bias_z[j] + c->z_pre.zp,
                c->z_pre);
}

/* r_pre = SAT(A(wx_to_r, Wx_r - Z_Wx) + A(rh_to_r, Rh_r - Z_Rh) + bias_r[j] + Z_r_pre) */
static int32_t op_r_pre(const gru_cell* c, int32_t j, int32_t wx_r, int32_t rh_r) {
  return sat_op(scale_apply(c->wx_to_r, (int64_t)wx_r - c->wx.zp) + scale_apply(c->rh_to_r, (int64_t)rh_r - c->rh.zp) +
                    c->bias_r[j] + c->r_pre.zp,
                c->r_pre);
}

/* Rh_add_br = SAT(A(rh_to_rhab, Rh_g - Z_Rh) + bias_rhab[j] + Z_Rh_add_br) */
static int32_t op_rh_add_br(const gru_cell* c, int32_t j, int32_t rh_g) {
  return sat_op(scale_apply(c->rh_to_rhab, (int64_t)rh_g - c->rh.zp) + c->bias_rhab[j] + c->rh_add_br.zp, c->rh_add_br);
}

/* rRh = SAT(A(rrh_mul, (r - Z_r_out)(Rh_add_br - Z_Rh_add_br)) + Z_rRh) */
static int32_t op_rrh(const gru_cell* c, int32_t r, int32_t rhab) {
  return sat_op(scale_apply(c->rrh_mul, ((int64_t)r - c->r_out.zp) * ((int64_t)rhab - c->rh_add_br.zp)) + c->rrh.zp, c->rrh);
}

/* g_pre = SAT(A(wx_to_g, Wx_g - Z_Wx) + A(rrh_to_g, rRh - Z_rRh) + bias_g[j] + Z_g_pre) */
static int32_t op_g_pre(const gru_cell* c, int32_t j, int32_t wx_g, int32_t rrh) {
  return sat_op(scale_apply(c->wx_to_g, (int64_t)wx_g - c->wx.zp) + scale_apply(c->rrh_to_g, (int64_t)rrh - c->rrh.zp) +
                    c->bias_g[j] + c->g_pre.zp,
                c->g_pre);
}

/* old_contrib = SAT(A(old_mul, (z - Z_z_out)(h - Z_h)) + Z_old_contrib) */
static int32_t op_old_contrib(const gru_cell* c, int32_t z, int32_t h) {
  return sat_op(scale_apply(c->old_mul, ((int64_t)z - c->z_out.zp) * ((int64_t)h - c->h.zp)) + c->old_c.zp, c->old_c);
}

/* 1 - z in z_out's parameters: q_one - z + Z_z_out, exact and NOT saturated. */
static int64_t op_one_minus_z(const gru_cell* c, int32_t z) {
  return (int64_t)c->q_one - z + c->z_out.zp;
}

/* new_contrib = SAT(A(new_mul, (one_minus_z - Z_z_out)(g - Z_g_out)) + Z_new_contrib) */
static int32_t op_new_contrib(const gru_cell* c, int64_t one_minus_z, int32_t g) {
  return sat_op(scale_apply(c->new_mul, (one_minus_z - c->z_out.zp) * ((int64_t)g - c->g_out.zp)) + c->new_c.zp, c->new_c);
}

/* h_new = SAT(A(old_to_h, old_contrib - Z_old) + A(new_to_h, new_contrib - Z_new) + Z_h) */
static int32_t op_h_new(const gru_cell* c, int32_t old_c, int32_t new_c) {
  return sat_op(scale_apply(c->old_to_h, (int64_t)old_c - c->old_c.zp) + scale_apply(c->new_to_h, (int64_t)new_c - c->new_c.zp) +
                    c->h.zp,
                c->h);
}

/* 5.2: the new value of hidden unit j from the layer input x and the old state h. */
static int32_t unit_update(const gru_cell* c, int32_t j, const $p_x_t* x, const $p_h_t* h) {
  const int32_t H = $U_HIDDEN_SIZE;
  const int32_t wx_z = op_wx(c, j, x), wx_r = op_wx(c, H + j, x), wx_g = op_wx(c, 2 * H + j, x);
  const int32_t rh_z = op_rh(c, j, h), rh_r = op_rh(c, H + j, h), rh_g = op_rh(c, 2 * H + j, h);
  const int32_t z = lut(&c->sig_z, op_z_pre(c, j, wx_z, rh_z));
  const int32_t r = lut(&c->sig_r, op_r_pre(c, j, wx_r, rh_r));
  const int32_t rrh = op_rrh(c, r, op_rh_add_br(c, j, rh_g));
  const int32_t g = lut(&c->tanh_g, op_g_pre(c, j, wx_g, rrh));
  const int32_t old_c = op_old_contrib(c, z, h[j]);
  const int32_t new_c = op_new_contrib(c, op_one_minus_z(c, z), g);
  return op_h_new(c, old_c, new_c);
}

/* 5: one time step of one cell. Every unit reads the old state; the new one is committed
 * after the last unit. */
static void cell_advance(const gru_cell* c, const $p_x_t* x, $p_h_t* h) {
  $p_h_t h_new[$U_HIDDEN_SIZE];
  int32_t j;
  for (j = 0; j < $U_HIDDEN_SIZE; ++j) h_new[j] = ($p_h_t)unit_update(c, j, x, h);
  memcpy(h, h_new, sizeof h_new);
}
)C";

const char* const kNextLayerC = R"C(
/* 6.4: a value of this cell's h in the next layer's x parameters. */
static $p_x_t to_next_layer(const gru_cell* c, int32_t q_h) {
  return ($p_x_t)requantize((int64_t)q_h - c->h.zp, c->h_to_next_x, c->next_x);
}
)C";

const char* const kQuantizeC = R"C(
#ifndef $U_NO_FLOAT
/* 3.1: Z + RNE_SAT(fl32(x / S), qmin - Z, qmax - Z), rounding half to even without libm
 * and whatever the FPU's rounding mode: |x / S| is below 2^24 once clamped, so its integer
 * part and fraction are exact in binary32. NaN gives Z (real 0), as fixq's quantize
 * kernels; fixq itself refuses non-finite inputs to the GRU. Compile without -ffast-math. */
static int32_t quantize_value(float x, float scale, int32_t zp, int32_t qmin, int32_t qmax) {
  const float lo = (float)(qmin - zp), hi = (float)(qmax - zp);
  float t, frac;
  int32_t i;
  if (x != x) return zp;
  t = x / scale;
  if (!(t > lo)) return qmin;
  if (!(t < hi)) return qmax;
  i = (int32_t)t; /* toward zero */
  frac = t - (float)i;
  if (frac > 0.5f || (frac == 0.5f && (i & 1))) ++i;
  else if (frac < -0.5f || (frac == -0.5f && (i & 1))) --i;
  return zp + i;
}
#endif
)C";

}  // namespace fixq::export_detail
