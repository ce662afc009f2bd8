// Activation lookup tables: exact for 8-bit inputs, interpolated for 16-bit inputs with a
// bound that is checked for every input value when the table is built.
#include <cmath>
#include <string>

#include "fixq/error.h"
#include "fixq/qgru.h"
#include "gru/int/lut_eval.h"

namespace fixq {

namespace {

// Fractional bits of interpolated table entries: enough that their own rounding (2^-13
// of an output LSB) is negligible, while entry * 2^shift stays far inside int64.
constexpr int kFracBits = 12;
constexpr int kMaxShift = 10;

double apply(ActivationLut::Fn fn, double x) {
  return fn == ActivationLut::Fn::Sigmoid ? 1.0 / (1.0 + std::exp(-x)) : std::tanh(x);
}

}  // namespace

ActivationLut ActivationLut::with_ranges(const QuantParams& in, const QuantParams& out) {
  require(in.size() == 1 && out.size() == 1, "activation tables need per-tensor input and output parameters");
  ActivationLut lut;
  lut.qmin_ = in.scheme.format.qmin();
  lut.out_min_ = out.scheme.format.qmin();
  lut.out_max_ = out.scheme.format.qmax();
  return lut;
}

ActivationLut ActivationLut::build(Fn fn, const QuantParams& in, const QuantParams& out) {
  ActivationLut lut = with_ranges(in, out);
  const IntFormat fi = in.scheme.format, fo = out.scheme.format;
  const double s_in = in.scale[0], s_out = out.scale[0];
  const int32_t z_in = in.zero_point[0], z_out = out.zero_point[0];
  // The exact output, in output LSBs, of every input value (one beyond qmax too, the
  // right end of the last interpolation segment).
  const int64_t count = int64_t{fi.qmax()} - fi.qmin() + 1;
  std::vector<double> exact(static_cast<size_t>(count + 1));
  for (int64_t i = 0; i <= count; ++i)
    exact[static_cast<size_t>(i)] = apply(fn, static_cast<double>(lut.qmin_ + i - z_in) * s_in) / s_out + z_out;
  auto clamp_out = [&](double v) { return std::min<double>(std::max<double>(v, lut.out_min_), lut.out_max_); };

  if (fi.bits <= 8) {
    lut.table_.resize(static_cast<size_t>(count));
    for (int64_t i = 0; i < count; ++i)
      lut.table_[static_cast<size_t>(i)] =
          static_cast<int32_t>(round_half_even_saturate(exact[static_cast<size_t>(i)], lut.out_min_, lut.out_max_));
    return lut;
  }
  // The bound of fixq/qgru.h: 1 LSB for an 8-bit output, 2 LSB for a 16-bit one.
  const double bound = fo.bits <= 8 ? 1.0 : 2.0;
  for (int s = kMaxShift; s >= 0; --s) {
    ActivationLut c = lut;
    c.shift_ = s;
    c.frac_bits_ = kFracBits;
    const int64_t knots = (count >> s) + 1;
    c.table_.resize(static_cast<size_t>(knots));
    for (int64_t i = 0; i < knots; ++i)
      c.table_[static_cast<size_t>(i)] = static_cast<int32_t>(round_half_even_saturate(
          std::ldexp(exact[static_cast<size_t>(i << s)], kFracBits), INT32_MIN, INT32_MAX));
    bool ok = true;
    for (int64_t i = 0; i < count && ok; ++i)
      ok = std::fabs(c(static_cast<int32_t>(lut.qmin_ + i)) - clamp_out(exact[static_cast<size_t>(i)])) <= bound;
    if (ok) return c;
  }
  fail("internal: no activation table meets its error bound");  // s = 0 is exact to 1/2 LSB
}

ActivationLut ActivationLut::from_entries(const QuantParams& in, const QuantParams& out, std::vector<int32_t> entries,
                                          const std::string& what) {
  ActivationLut lut = with_ranges(in, out);
  const IntFormat fi = in.scheme.format;
  const int64_t count = int64_t{fi.qmax()} - fi.qmin() + 1;
  const int64_t n = static_cast<int64_t>(entries.size());
  if (fi.bits <= 8) {
    if (n != count) fail(what, ": ", n, " entries; a table of an ", fi.bits, "-bit input has ", count);
    for (int64_t i = 0; i < n; ++i)
      if (entries[static_cast<size_t>(i)] < lut.out_min_ || entries[static_cast<size_t>(i)] > lut.out_max_)
        fail(what, ": entry ", i, " = ", entries[static_cast<size_t>(i)], " is outside the output range [", lut.out_min_,
             ", ", lut.out_max_, "]");
  } else {
    int s = 0;
    while (s <= kMaxShift && (count >> s) + 1 != n) ++s;
    if (s > kMaxShift)
      fail(what, ": ", n, " knots fit no interpolation step; a ", fi.bits, "-bit input has (", count,
           " >> s) + 1 knots, s in [0, ", kMaxShift, "]");
    lut.shift_ = s;
    lut.frac_bits_ = kFracBits;
  }
  lut.table_ = std::move(entries);
  return lut;
}

int32_t ActivationLut::operator()(int32_t q) const {
  return gru_detail::lookup_exact({table_.data(), qmin_, shift_, frac_bits_, {out_min_, out_max_}}, q);
}

}  // namespace fixq
