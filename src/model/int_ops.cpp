// The integer kernels of whole models: Linear / Conv1d (reference and GEMM), softmax.
#include "model/int_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <type_traits>

#include "fixq/error.h"
#include "gemm/driver.h"
#include "gemm/epilogue_formulas.h"
#include "gemm/kernels.h"
#include "arith/lane_scale.h"
#include "model/float_ops.h"
#include "model/kernels.h"

namespace fixq::model_detail {

void conv_int_reference(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                        const int32_t* hist, int32_t* y) {
  const int64_t Cin = node.in_features, Cout = node.out_features, K = node.kernel, d = node.dilation;
  const int64_t P = (K - 1) * d, cin_g = Cin / node.groups, cout_g = Cout / node.groups;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t o = 0; o < Cout; ++o) {
        const int64_t g = o / cout_g;
        int64_t acc = q.q_b.empty() ? 0 : q.q_b[static_cast<size_t>(o)];
        for (int64_t i = 0; i < cin_g; ++i)
          for (int64_t j = 0; j < K; ++j) {
            const int32_t xv = conv_frame(x, hist, b, t - (K - 1 - j) * d, T, P, Cin)[g * cin_g + i];
            acc += int64_t{q.q_w[static_cast<size_t>((o * cin_g + i) * K + j)]} * (int64_t{xv} - io.zp_x);
          }
        y[(b * T + t) * Cout + o] = requantize(acc, q.requant[static_cast<size_t>(o)], io.zp_y, io.out);
      }
}

namespace {

template <class E>
void grow(std::vector<E>& v, int64_t n) {
  if (v.size() < static_cast<size_t>(n)) v.resize(static_cast<size_t>(n));
}

// The GEMM's A: per row, group after group, tap after tap, the tap's frame's channels of
// the group ([j * cin_g + i], the column order prepare_conv packs the weights in); for
// kernel 1, x itself narrowed.
template <class S>
void im2col(const ModelNode& node, const int32_t* x, int64_t B, int64_t T, const int32_t* hist, S* a) {
  const int64_t Cin = node.in_features, K = node.kernel, d = node.dilation;
  const int64_t P = (K - 1) * d, cin_g = Cin / node.groups, cols = Cin * K;
  if (K == 1) {
    for (int64_t i = 0; i < B * T * Cin; ++i) a[i] = static_cast<S>(x[i]);
    return;
  }
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t) {
      S* row = a + (b * T + t) * cols;
      for (int64_t j = 0; j < K; ++j) {
        const int32_t* f = conv_frame(x, hist, b, t - (K - 1 - j) * d, T, P, Cin);
        for (int64_t g = 0; g < node.groups; ++g) {
          const int32_t* src = f + g * cin_g;
          S* dst = row + g * cin_g * K + j * cin_g;
          for (int64_t i = 0; i < cin_g; ++i) dst[i] = static_cast<S>(src[i]);
        }
      }
    }
}

// The lane form's element loop (model/kernels.h's definition, as kernels_lanes.h computes
// each lane): the scalar family's epilogue where prepare_conv found a lane form.
void requant_rows_scalar(const RequantRows& a, bool pow2) {
  for (int64_t r = 0; r < a.rows; ++r)
    for (int64_t o = 0; o < a.n; ++o) {
      // In int32 by prepare_conv's interval: |acc| <= its bound.
      const auto v = static_cast<int32_t>(int64_t{a.acc[r * a.n + o]} + a.offset[o]);
      const LaneScale l{a.m[o], a.left[o], a.right[o], false};
      const int32_t q = pow2 ? lane_apply_pow2(v, l) : lane_apply_multiplier(v, l);
      a.y[r * a.ldy + o] = std::clamp(q, a.lo, a.hi) + a.zp;
    }
}

// Group g's outputs: the exact sums, then the epilogue.
template <class Acc>
void accumulate_requant(const QNode& q, const ConvIo& io, const PackedB& b, const gemm_detail::BoundProduct& bp,
                        const MatrixView& a, int64_t g, int64_t o0, int64_t Cout, std::vector<Acc>& acc, int32_t* y) {
  const int64_t rows = a.rows, n = bp.n;
  grow(acc, rows * n);
  gemm_detail::accumulate(bp, a, acc.data(), n);
  if constexpr (std::is_same_v<Acc, int32_t>) {
    if (!q.lanes.empty()) {
      const int64_t at = g * q.lanes.stride;
      const RequantRows args{acc.data(),         rows, n, q.lanes.offset.data() + at, q.lanes.m.data() + at,
                             q.lanes.left.data() + at, q.lanes.right.data() + at, io.out.qmin - io.zp_y,
                             io.out.qmax - io.zp_y, io.zp_y, y + o0, Cout};
      if (const ModelKernels* k = active_model_kernels()) (q.lanes.pow2 ? k->requant_pow2 : k->requant_multiplier)(args);
      else requant_rows_scalar(args, q.lanes.pow2);
      return;
    }
  }
  // Every constant in a local: y's int32 stores could otherwise alias them, and each
  // element would reload them from memory.
  const int64_t* colsum = b.colsum().data();
  const int32_t* bias = q.q_b.empty() ? nullptr : q.q_b.data() + o0;
  const FixedPointScale* scale = q.requant.data() + o0;
  const int32_t zp_x = io.zp_x, zp_y = io.zp_y;
  const IntRange out = io.out;
  for (int64_t r = 0; r < rows; ++r) {
    const Acc* ar = acc.data() + r * n;
    int32_t* yr = y + r * Cout + o0;
    for (int64_t o = 0; o < n; ++o) {
      const int64_t v = gemm_detail::compensated(ar[o], zp_x, colsum[o]);
      yr[o] = gemm_detail::requant_element(v, bias ? bias[o] : 0, scale[o], zp_y, out);
    }
  }
}

// Outputs [o0, o0 + n)'s lane forms into q.lanes at `at`, or false where one has none. The
// sum acc of a row lies within 2^(bits-1) sum_k |w[o, k]| of 0, so acc + offset within that
// of the offset: the interval lane_form must be exact on (and it keeps it within int32).
bool lane_forms(QNode& q, int32_t zp_x, int bits, int64_t o0, int64_t n, int64_t per_row, bool pow2, int64_t at) {
  for (int64_t o = o0; o < o0 + n; ++o) {
    int64_t colsum = 0, bound = 0;
    for (int64_t k = 0; k < per_row; ++k) {
      const int64_t w = q.q_w[static_cast<size_t>(o * per_row + k)];
      colsum += w;
      bound += w < 0 ? -w : w;
    }
    bound <<= bits - 1;
    const int64_t offset = (q.q_b.empty() ? 0 : q.q_b[static_cast<size_t>(o)]) + gemm_detail::compensated(0, zp_x, colsum);
    const std::optional<LaneScale> l = lane_form(q.requant[static_cast<size_t>(o)], offset - bound, offset + bound, pow2);
    if (!l || offset < INT32_MIN || offset > INT32_MAX) return false;
    const auto i = static_cast<size_t>(at + o - o0);
    q.lanes.offset[i] = static_cast<int32_t>(offset);
    q.lanes.m[i] = l->m;
    q.lanes.left[i] = l->left;
    q.lanes.right[i] = l->right;
  }
  return true;
}

}  // namespace

void conv_int_fast(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                   const int32_t* hist, int32_t* y, ConvScratch& s) {
  const int64_t Cin = node.in_features, Cout = node.out_features, K = node.kernel;
  const int64_t cin_g = Cin / node.groups, cout_g = Cout / node.groups;
  const int64_t rows = B * T, cols = Cin * K;
  const IntType type = io.bits == 16 ? IntType::S16 : IntType::S8;
  const void* a_all = nullptr;
  if (type == IntType::S16) {
    grow(s.a16, rows * cols);
    im2col(node, x, B, T, hist, s.a16.data());
    a_all = s.a16.data();
  } else {
    grow(s.a8, rows * cols);
    im2col(node, x, B, T, hist, s.a8.data());
    a_all = s.a8.data();
  }
  const int64_t bytes = int_type_bytes(type);
  for (int64_t g = 0; g < node.groups; ++g) {
    const PackedB& b = q.packed[static_cast<size_t>(g)];
    const MatrixView a{type, static_cast<const char*>(a_all) + g * cin_g * K * bytes, rows, cin_g * K, cols};
    gemm_detail::validate(a, b);
    const gemm_detail::BoundProduct bp = gemm_detail::bind(type, b, rows);
    if (gemm_detail::fits_int32(type, b)) accumulate_requant(q, io, b, bp, a, g, g * cout_g, Cout, s.acc32, y);
    else accumulate_requant(q, io, b, bp, a, g, g * cout_g, Cout, s.acc64, y);
  }
}

void conv_int_fast(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                   const int32_t* hist, int32_t* y) {
  ConvScratch s;
  conv_int_fast(node, q, io, x, B, T, hist, y, s);
}

void prepare_conv(const ModelNode& node, QNode& q, int32_t zp_x, int bits) {
  const int64_t N = node.out_features, K = node.kernel, cout_g = N / node.groups;
  const int64_t per_row = static_cast<int64_t>(q.q_w.size()) / N, cin_g = per_row / K;
  require(per_row * N == static_cast<int64_t>(q.q_w.size()) && cin_g * K == per_row &&
              static_cast<int64_t>(q.requant.size()) == N,
          "internal: node '", node.name, "' has ", q.q_w.size(), " weights and ", q.requant.size(), " scales for ", N,
          " outputs of kernel ", K);
  q.packed.clear();
  for (int64_t g = 0; g < node.groups; ++g) {
    std::vector<int8_t> w(static_cast<size_t>(cout_g * per_row));
    for (int64_t o = 0; o < cout_g; ++o)
      for (int64_t i = 0; i < cin_g; ++i)
        for (int64_t j = 0; j < K; ++j)  // q_w[o, i, j] to column j * cin_g + i
          w[static_cast<size_t>(o * per_row + j * cin_g + i)] =
              static_cast<int8_t>(q.q_w[static_cast<size_t>(((g * cout_g + o) * cin_g + i) * K + j)]);
    q.packed.push_back(PackedB::pack(MatrixView{IntType::S8, w.data(), cout_g, per_row, per_row}));
  }
  QNode::Lanes& l = q.lanes;
  l = {};
  l.pow2 = std::all_of(q.requant.begin(), q.requant.end(), [](const FixedPointScale& s) { return s.is_pow2(); });
  l.stride = (cout_g + 15) / 16 * 16;
  const auto size = static_cast<size_t>(l.stride * node.groups);
  // Padding lanes: offset 0, m 0, left 0, right 1 (every shift of a lane in range).
  l.offset.assign(size, 0);
  l.m.assign(size, 0);
  l.left.assign(size, 0);
  l.right.assign(size, 1);
  for (int64_t g = 0; g < node.groups; ++g)
    if (!lane_forms(q, zp_x, bits, g * cout_g, cout_g, per_row, l.pow2, g * l.stride)) {
      l = {};
      return;
    }
}

void softmax_int(const QNode& q, const int32_t* x, int64_t rows, int64_t C, int32_t zp_y, IntRange out, int32_t* y) {
  const auto n = static_cast<int64_t>(q.exp_table.size());
  auto e = [&](int64_t dq) -> int64_t { return dq < n ? q.exp_table[static_cast<size_t>(dq)] : 0; };
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* xr = x + r * C;
    const int32_t mx = *std::max_element(xr, xr + C);
    int64_t sum = 0;  // >= table[0] = 2^30, <= C 2^30
    for (int64_t c = 0; c < C; ++c) sum += e(int64_t{mx} - xr[c]);
    for (int64_t c = 0; c < C; ++c) {
      const int64_t num = (e(int64_t{mx} - xr[c]) << (q.out_frac + 1)) + sum;  // <= 2^47 + C 2^30
      y[r * C + c] = static_cast<int32_t>(saturate(num / (2 * sum) + zp_y, out.qmin, out.qmax));
    }
  }
}

std::vector<int32_t> softmax_exp_table(double s_in, int bits) {
  std::vector<int32_t> t;
  const int64_t n = int64_t{1} << bits;
  for (int64_t d = 0; d < n; ++d) {
    const double v = round_half_even(std::ldexp(std::exp(-static_cast<double>(d) * s_in), 30));
    if (v == 0.0) break;
    t.push_back(static_cast<int32_t>(v));
  }
  return t;
}

}  // namespace fixq::model_detail
