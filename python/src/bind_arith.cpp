// fixq.FixedPointScale and the rounding primitives of fixq/arith.h, so that Python code
// (tests, GEMM requant epilogues) uses the library's own rounding rules, not look-alikes.
#include <cstdint>
#include <string>

#include "bindings.h"
#include "fixq/arith.h"

namespace fixq::py {

namespace {

FixedPointScale make_raw(int64_t m, int shift) {
  if (m < 1 || m > INT32_MAX) fail("FixedPointScale multiplier m must be in [1, 2^31 - 1], got ", m);
  if (shift < -62 || shift > 126) fail("FixedPointScale shift must be in [-62, 126], got ", shift);
  FixedPointScale s;
  s.m = static_cast<int32_t>(m);
  s.shift = shift;
  return s;
}

// apply() elementwise over an int64 array.
pyb::array_t<int64_t> apply_array(const FixedPointScale& s, const pyb::object& x_obj) {
  const carray<int64_t> x = as_array<int64_t>(x_obj, "x");
  const Shape shape = shape_of(x);
  pyb::array_t<int64_t> out = new_array<int64_t>(shape);
  int64_t* o = out.mutable_data();
  const int64_t* in = x.data();
  const int64_t n = static_cast<int64_t>(x.size());
  pyb::gil_scoped_release nogil;
  for (int64_t i = 0; i < n; ++i) o[i] = s.apply(in[i]);
  return out;
}

}  // namespace

void bind_arith(pyb::module_& m) {
  using namespace pybind11::literals;

  pyb::class_<FixedPointScale>(m, "FixedPointScale",
                               "A positive real factor sigma = m * 2^-shift; apply(x) = (x * m + 2^(shift-1)) >> shift,\n"
                               "one rounding, half up, exact for every int64 x (saturated to int64).")
      .def(pyb::init(&make_raw), "m"_a, "shift"_a, "A scale from its raw multiplier m in [1, 2^31) and shift in [-62, 126].")
      .def_static("from_real", &FixedPointScale::from_real, "sigma"_a,
                  "Normalized 31-bit multiplier (2^30 <= m < 2^31) for sigma in [2^-40, 2^20], m = round_half_even(sigma * 2^shift).")
      .def_static("pow2", &FixedPointScale::pow2, "n"_a, "sigma = 2^-n exactly (m = 1), n in [-62, 126].")
      .def_readonly("m", &FixedPointScale::m)
      .def_readonly("shift", &FixedPointScale::shift)
      .def_property_readonly("is_pow2", &FixedPointScale::is_pow2)
      .def("real", &FixedPointScale::real, "The factor represented, m * 2^-shift (exact in double).")
      .def("apply", &FixedPointScale::apply, "x"_a, "Round-half-up of x * m / 2^shift for one int64.")
      .def("apply", &apply_array, "x"_a, "Elementwise apply over an int64 array; returns int64.")
      .def("__eq__", [](const FixedPointScale& a, const FixedPointScale& b) { return a == b; })
      .def("__hash__", [](const FixedPointScale& a) { return pyb::hash(pyb::make_tuple(a.m, a.shift)); })
      .def("__repr__", [](const FixedPointScale& s) {
        return "FixedPointScale(m=" + std::to_string(s.m) + ", shift=" + std::to_string(s.shift) + ")";
      });

  m.def("round_half_even", &round_half_even, "x"_a, "x rounded to the nearest integer, ties to even (as a float).");
  m.def(
      "rounding_shift_right_half_up",
      [](int64_t x, int n) {
        require(n >= 0, "shift n must be >= 0, got ", n);
        return rounding_shift_right_half_up(x, n);
      },
      "x"_a, "n"_a, "x / 2^n rounded half up (ties toward +infinity), without overflow.");
  m.def(
      "requantize",
      [](int64_t v, const FixedPointScale& scale, int32_t zp_out, int32_t qmin, int32_t qmax) {
        require(qmin <= qmax, "output range [", qmin, ", ", qmax, "] is empty");
        return requantize(v, scale, zp_out, IntRange{qmin, qmax});
      },
      "v"_a, "scale"_a, "zp_out"_a, "qmin"_a, "qmax"_a, "sat(scale.apply(v) + zp_out) into [qmin, qmax].");
}

}  // namespace fixq::py
