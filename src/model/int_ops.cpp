// The integer kernels of whole models: Linear / Conv1d (reference and GEMM), softmax.
#include "model/int_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>

#include "fixq/error.h"
#include "gemm/driver.h"
#include "gemm/epilogue_formulas.h"
#include "gemm/kernels.h"
#include "model/float_ops.h"

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

// The GEMM's A: per row, group after group, [i * K + j] (for kernel 1, x itself narrowed).
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
        for (int64_t g = 0; g < node.groups; ++g)
          for (int64_t i = 0; i < cin_g; ++i) row[g * cin_g * K + i * K + j] = static_cast<S>(f[g * cin_g + i]);
      }
    }
}

// Whether outputs [o0, o0 + n) of 32-bit sums can take the 64-bit epilogue below: every
// shift in [1, 62] and (2^31 + |offset|) * |m| <= 2^62, offset = bias - zp_x * colsum
// (filled in). Then acc + offset and its product by m fit int64 with room to spare.
bool epilogue_fits_64(const QNode& q, const ConvIo& io, const PackedB& b, int64_t o0, int64_t n,
                      std::vector<int64_t>& offset) {
  grow(offset, n);
  for (int64_t o = 0; o < n; ++o) {
    const FixedPointScale& s = q.requant[static_cast<size_t>(o0 + o)];
    const int64_t bias = q.q_b.empty() ? 0 : q.q_b[static_cast<size_t>(o0 + o)];
    const int64_t off = gemm_detail::compensated(0, io.zp_x, b.colsum()[static_cast<size_t>(o)]) + bias;
    const detail::int128 bound = (detail::int128{1} << 31) + (off < 0 ? -detail::int128{off} : detail::int128{off});
    const detail::int128 m = s.m < 0 ? -detail::int128{s.m} : detail::int128{s.m};
    if (s.shift < 1 || s.shift > 62 || bound * m > (detail::int128{1} << 62)) return false;
    offset[static_cast<size_t>(o)] = off;
  }
  return true;
}

// requant_element(acc - zp_x * colsum + bias, ...) where epilogue_fits_64 holds: the same
// integers without apply's 128-bit product. p = v * m fits int64, so apply(v) is its
// 64-bit branch, rounding_shift_right_half_up(p, shift); |that| <= 2^62, so adding zp_y
// cannot overflow, and rescaled_term's clamp to +-2^40 changes nothing once the result
// is saturated to an output range of at most 32 bits (zp_y inside it).
void requant_rows_64(const int32_t* acc, int64_t rows, int64_t n, const int64_t* offset, const FixedPointScale* scale,
                     int32_t zp_y, IntRange out, int32_t* y, int64_t ldy) {
  const int64_t lo = out.qmin, hi = out.qmax;
  for (int64_t r = 0; r < rows; ++r) {
    const int32_t* ar = acc + r * n;
    int32_t* yr = y + r * ldy;
    for (int64_t o = 0; o < n; ++o) {
      const int64_t p = (ar[o] + offset[o]) * scale[o].m;
      yr[o] = static_cast<int32_t>(saturate(rounding_shift_right_half_up(p, scale[o].shift) + zp_y, lo, hi));
    }
  }
}

// Group g's outputs: the exact sums, then gemm_requant's epilogue formula per element.
template <class Acc>
void accumulate_requant(const QNode& q, const ConvIo& io, const PackedB& b, const gemm_detail::BoundProduct& bp,
                        const MatrixView& a, int64_t o0, int64_t Cout, std::vector<Acc>& acc, int32_t* y,
                        std::vector<int64_t>& offset) {
  const int64_t rows = a.rows, n = bp.n;
  grow(acc, rows * n);
  gemm_detail::accumulate(bp, a, acc.data(), n);
  if constexpr (std::is_same_v<Acc, int32_t>) {
    if (epilogue_fits_64(q, io, b, o0, n, offset)) {
      requant_rows_64(acc.data(), rows, n, offset.data(), q.requant.data() + o0, io.zp_y, io.out, y + o0, Cout);
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
    if (gemm_detail::fits_int32(type, b)) accumulate_requant(q, io, b, bp, a, g * cout_g, Cout, s.acc32, y, s.offset);
    else accumulate_requant(q, io, b, bp, a, g * cout_g, Cout, s.acc64, y, s.offset);
  }
}

void conv_int_fast(const ModelNode& node, const QNode& q, const ConvIo& io, const int32_t* x, int64_t B, int64_t T,
                   const int32_t* hist, int32_t* y) {
  ConvScratch s;
  conv_int_fast(node, q, io, x, B, T, hist, y, s);
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
