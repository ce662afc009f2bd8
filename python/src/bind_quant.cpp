// fixq.QuantScheme, fixq.QuantParams, params_from_ranges / minmax_ranges /
// params_from_tensor and quantize / dequantize (fixq/quant.h) for numpy arrays.
//
// Quantized arrays come back in the smallest numpy dtype that holds the format (int8 /
// uint8 for <= 8 bits, int16 / uint16 for <= 16 bits), unless `dtype` asks for a wider one.
#include <pybind11/stl.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "fixq/quant.h"

namespace fixq::py {

namespace {

// QuantScheme.__init__: the strings parsed, then the library's one constructor.
QuantScheme scheme_from_strings(int bits, bool is_signed, const std::string& symmetry, const std::string& scale,
                                const std::string& granularity, int axis, int64_t group_size) {
  return QuantScheme::make(bits, is_signed, parse_symmetry(symmetry), parse_scale_kind(scale, "scale"),
                           parse_granularity(granularity), axis, group_size);
}

Shape shape_arg(const std::vector<int64_t>& v) { return Shape(v.begin(), v.end()); }

pyb::tuple shape_tuple(const Shape& s) {
  pyb::tuple t(s.size());
  for (size_t i = 0; i < s.size(); ++i) t[i] = pyb::int_(s[i]);
  return t;
}

// Copies of the parameter arrays, shaped as the parameters (param_shape).
template <class T>
pyb::array_t<T> param_array(const std::vector<T>& v, const Shape& shape) {
  return to_numpy(std::vector<T>(v), shape);
}

// exponent e with scale == 2^-e exactly, for power-of-two parameters given by scale alone.
int32_t pow2_exponent(float scale, size_t i) {
  int e = 0;
  const float m = std::frexp(scale, &e);  // scale = m * 2^e, m in [0.5, 1)
  if (!(m == 0.5f)) fail("scale[", i, "] = ", scale, " is not a power of two; pow2 parameters need scale = 2^-exponent");
  return -(e - 1);
}

QuantParams make_params(const QuantScheme& scheme, const pyb::object& scale_obj, const pyb::object& zp_obj,
                        const pyb::object& exp_obj) {
  const carray<float> scale = as_float_array(scale_obj, "scale");
  const carray<int32_t> zp = as_int32_array(zp_obj, "zero_point");
  if (shape_of(scale) != shape_of(zp))
    fail("scale has shape ", shape_str(shape_of(scale)), " but zero_point has shape ", shape_str(shape_of(zp)));
  QuantParams p;
  p.scheme = scheme;
  p.shape = shape_of(scale);
  p.scale.assign(scale.data(), scale.data() + scale.size());
  p.zero_point.assign(zp.data(), zp.data() + zp.size());
  if (!exp_obj.is_none()) {
    const carray<int32_t> e = as_int32_array(exp_obj, "exponent");
    if (shape_of(e) != p.shape) fail("exponent must have the scale's shape ", shape_str(p.shape), ", got ", shape_str(shape_of(e)));
    p.exponent.assign(e.data(), e.data() + e.size());
  } else if (scheme.scale_kind == ScaleKind::PowerOfTwo) {
    for (size_t i = 0; i < p.scale.size(); ++i) p.exponent.push_back(pow2_exponent(p.scale[i], i));
  }
  p.validate();
  return p;
}

// [n, 2] float32 (min, max) <-> Range list.
pyb::array_t<float> ranges_to_numpy(const std::vector<Range>& r) {
  std::vector<float> v;
  v.reserve(r.size() * 2);
  for (const Range& x : r) {
    v.push_back(x.min);
    v.push_back(x.max);
  }
  return to_numpy(std::move(v), Shape{static_cast<int64_t>(r.size()), 2});
}

std::vector<Range> ranges_from(const pyb::object& obj) {
  const carray<float> a = as_float_array(obj, "ranges");
  const Shape s = shape_of(a);
  if (!((s.size() == 2 && s[1] == 2) || (s.size() == 1 && s[0] == 2)))
    fail("ranges: expected pairs (min, max) of shape [n, 2], got shape ", shape_str(s));
  std::vector<Range> r(static_cast<size_t>(a.size() / 2));
  for (size_t i = 0; i < r.size(); ++i) r[i] = {a.data()[2 * i], a.data()[2 * i + 1]};
  return r;
}

// The storage dtype quantize returns: the smallest that holds the format, or `dtype`.
std::string storage_dtype(const IntFormat& f, const pyb::object& dtype) {
  const std::string natural = f.bits <= 8 ? (f.is_signed ? "int8" : "uint8") : (f.is_signed ? "int16" : "uint16");
  if (dtype.is_none()) return natural;
  const std::string want = pyb::dtype::from_args(dtype).attr("name").cast<std::string>();
  const IntRange r = f.range();
  auto holds = [&](int64_t lo, int64_t hi) { return lo <= r.qmin && r.qmax <= hi; };
  const bool ok = (want == "int8" && holds(-128, 127)) || (want == "uint8" && holds(0, 255)) ||
                  (want == "int16" && holds(-32768, 32767)) || (want == "uint16" && holds(0, 65535)) || want == "int32";
  if (!ok) fail("dtype ", want, " cannot hold ", f.name(), " values (use ", natural, ", a wider type, or int32)");
  return want;
}

template <class Q>
pyb::array quantize_as(const carray<float>& x, const QuantParams& p, NanPolicy nan) {
  const Shape shape = shape_of(x);
  pyb::array_t<Q> out = new_array<Q>(shape);
  Q* o = out.mutable_data();
  const float* in = x.data();
  {
    pyb::gil_scoped_release nogil;
    quantize<Q>(in, shape, p, o, nan);
  }
  return out;
}

pyb::array quantize_py(const pyb::object& x_obj, const QuantParams& p, const std::string& nan, const pyb::object& dtype) {
  const NanPolicy policy = parse_nan_policy(nan);
  const carray<float> x = as_float_array(x_obj, "x");
  const std::string t = storage_dtype(p.scheme.format, dtype);
  if (t == "int8") return quantize_as<int8_t>(x, p, policy);
  if (t == "uint8") return quantize_as<uint8_t>(x, p, policy);
  if (t == "int16") return quantize_as<int16_t>(x, p, policy);
  if (t == "uint16") return quantize_as<uint16_t>(x, p, policy);
  return quantize_as<int32_t>(x, p, policy);
}

template <class Q>
pyb::array_t<float> dequantize_as(const pyb::array& q_any, const QuantParams& p) {
  const carray<Q> q = carray<Q>::ensure(q_any);
  const Shape shape = shape_of(q);
  pyb::array_t<float> out = new_array<float>(shape);
  float* o = out.mutable_data();
  const Q* in = q.data();
  {
    pyb::gil_scoped_release nogil;
    dequantize<Q>(in, shape, p, o);
  }
  return out;
}

pyb::array_t<float> dequantize_py(const pyb::object& q_obj, const QuantParams& p) {
  const pyb::array q = pyb::array::ensure(q_obj);
  if (!q) fail("q: expected an integer array");
  const pyb::dtype dt = q.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'i' && size == 1) return dequantize_as<int8_t>(q, p);
  if (kind == 'u' && size == 1) return dequantize_as<uint8_t>(q, p);
  if (kind == 'i' && size == 2) return dequantize_as<int16_t>(q, p);
  if (kind == 'u' && size == 2) return dequantize_as<uint16_t>(q, p);
  if (kind == 'i' && size == 4) return dequantize_as<int32_t>(q, p);
  fail("q: dtype ", dtype_name(dt), " is not a quantized storage type; pass int8, uint8, int16, uint16 or int32 (e.g. ",
       "q.astype(np.int32))");
}

}  // namespace

void bind_quant(pyb::module_& m) {
  using namespace pybind11::literals;

  pyb::class_<QuantScheme>(m, "QuantScheme",
                           "What to quantize to: integer format, symmetry, kind of scale and granularity.\n\n"
                           "Granularity names which elements share one (scale, zero point): 'per_tensor' (one pair),\n"
                           "'per_channel' (one per index along `axis`), 'per_group' (one per run of `group_size`\n"
                           "indices along `axis`) or 'per_token' (one per row: all axes but the last).")
      .def(pyb::init(&scheme_from_strings), "bits"_a = 8, "signed"_a = true, "symmetry"_a = "asymmetric", "scale"_a = "multiplier",
           "granularity"_a = "per_tensor", "axis"_a = 0, "group_size"_a = 0,
           "QuantScheme(bits=8, signed=True, symmetry='asymmetric', scale='multiplier', granularity='per_tensor', axis=0, "
           "group_size=0)\n\nbits in [2, 16]; symmetry 'symmetric' | 'asymmetric'; scale 'multiplier' (any real scale) |\n"
           "'pow2' (scale = 2^-e); the former spelling 'float' is read as 'multiplier'.")
      .def_property_readonly("bits", [](const QuantScheme& s) { return s.format.bits; })
      .def_property_readonly("signed", [](const QuantScheme& s) { return s.format.is_signed; })
      .def_property_readonly("symmetry", [](const QuantScheme& s) { return to_string(s.symmetry); })
      .def_property_readonly("scale", [](const QuantScheme& s) { return to_string(s.scale_kind); })
      .def_property_readonly("granularity", [](const QuantScheme& s) { return to_string(s.granularity); })
      .def_property_readonly("axis", [](const QuantScheme& s) { return s.axis; })
      .def_property_readonly("group_size", [](const QuantScheme& s) { return s.group_size; })
      .def_property_readonly("format", [](const QuantScheme& s) { return s.format.name(); }, "'int8', 'uint4', ...")
      .def_property_readonly("qmin", [](const QuantScheme& s) { return s.format.qmin(); })
      .def_property_readonly("qmax", [](const QuantScheme& s) { return s.format.qmax(); })
      .def("symmetric_zero_point", &QuantScheme::symmetric_zero_point,
           "The zero point of a symmetric scheme: 0 when signed, 2^(bits-1) when unsigned.")
      .def(
          "param_shape", [](const QuantScheme& s, const std::vector<int64_t>& shape) { return shape_tuple(s.param_shape(shape_arg(shape))); },
          "tensor_shape"_a, "The shape of the parameter arrays for a tensor of this shape (raises ValueError if the "
          "scheme does not apply to it).")
      .def("__repr__", [](const QuantScheme& s) {
        std::string r = "QuantScheme(bits=" + std::to_string(s.format.bits) + ", signed=" + (s.format.is_signed ? "True" : "False") +
                        ", symmetry='" + to_string(s.symmetry) + "', scale='" + to_string(s.scale_kind) + "', granularity='" +
                        to_string(s.granularity) + "'";
        if (s.granularity == Granularity::PerChannel || s.granularity == Granularity::PerGroup) r += ", axis=" + std::to_string(s.axis);
        if (s.granularity == Granularity::PerGroup) r += ", group_size=" + std::to_string(s.group_size);
        return r + ")";
      });

  pyb::class_<QuantParams>(m, "QuantParams",
                           "Scales, exponents (pow2 only) and zero points, one per parameter slot, shaped as "
                           "scheme.param_shape(tensor_shape).")
      .def(pyb::init(&make_params), "scheme"_a, "scale"_a, "zero_point"_a, "exponent"_a = pyb::none(),
           "QuantParams(scheme, scale, zero_point, exponent=None)\n\n"
           "scale and zero_point are arrays of the parameter shape. For a 'pow2' scheme, exponent (scale = 2^-exponent)\n"
           "is derived from scale when omitted. Raises ValueError for inconsistent or out-of-range values.")
      .def_property_readonly("scheme", [](const QuantParams& p) { return p.scheme; })
      .def_property_readonly("shape", [](const QuantParams& p) { return shape_tuple(p.shape); })
      .def_property_readonly("scale", [](const QuantParams& p) { return param_array(p.scale, p.shape); }, "float32 array (a copy)")
      .def_property_readonly("zero_point", [](const QuantParams& p) { return param_array(p.zero_point, p.shape); },
                             "int32 array (a copy)")
      .def_property_readonly(
          "exponent",
          [](const QuantParams& p) -> pyb::object {
            if (p.exponent.empty()) return pyb::none();
            return param_array(p.exponent, p.shape);
          },
          "int32 array with scale == 2**-exponent (pow2 schemes), else None")
      .def("__len__", &QuantParams::size)
      .def("__repr__", [](const QuantParams& p) {
        return "QuantParams(" + p.scheme.format.name() + ", " + to_string(p.scheme.granularity) + ", shape " +
               shape_str(p.shape) + ")";
      });

  m.def(
      "params_from_ranges",
      [](const QuantScheme& scheme, const std::vector<int64_t>& tensor_shape, const pyb::object& ranges) {
        const std::vector<Range> r = ranges_from(ranges);
        return params_from_ranges(scheme, shape_arg(tensor_shape), r);
      },
      "scheme"_a, "tensor_shape"_a, "ranges"_a,
      "Parameters that represent every [min, max] of `ranges` (array [n, 2], one row per parameter slot in\n"
      "row-major param_shape order) without clipping; each range is first widened to contain 0.\n"
      "Raises ValueError for min > max, NaN / Inf bounds or a zero-width range.");
  m.def(
      "minmax_ranges",
      [](const pyb::object& x_obj, const QuantScheme& scheme) {
        const carray<float> x = as_float_array(x_obj, "x");
        std::vector<Range> r;
        {
          pyb::gil_scoped_release nogil;
          r = minmax_ranges(x.data(), shape_of(x), scheme);
        }
        return ranges_to_numpy(r);
      },
      "x"_a, "scheme"_a, "Per-slot [min, max] of x under the scheme's granularity: float32 array [n, 2].");
  m.def(
      "params_from_tensor",
      [](const pyb::object& x_obj, const QuantScheme& scheme) {
        const carray<float> x = as_float_array(x_obj, "x");
        pyb::gil_scoped_release nogil;
        return params_from_tensor(x.data(), shape_of(x), scheme);
      },
      "x"_a, "scheme"_a, "minmax_ranges followed by params_from_ranges: min/max calibration of one tensor.");
  m.def("quantize", &quantize_py, "x"_a, "params"_a, "nan"_a = "error", "dtype"_a = pyb::none(),
        "q = sat(round_half_even(x / scale) + zero_point), elementwise under params.\n\n"
        "x: float array (float32 used as is; other real dtypes are converted). Returns the smallest integer dtype\n"
        "that holds the format (int8/uint8/int16/uint16) or `dtype` if given (e.g. 'int32'). +-Inf saturate;\n"
        "NaN raises ValueError (nan='error') or maps to the zero point (nan='zero_point').");
  m.def("dequantize", &dequantize_py, "q"_a, "params"_a,
        "x = float32(q - zero_point) * scale. q: int8, uint8, int16, uint16 or int32 array; values outside the\n"
        "format's range raise ValueError.");
  m.def(
      "quantize_value",
      [](float x, float scale, int32_t zero_point, int32_t qmin, int32_t qmax) {
        require(qmin <= qmax, "qmin ", qmin, " > qmax ", qmax);
        return quantize_value(x, scale, zero_point, IntRange{qmin, qmax});
      },
      "x"_a, "scale"_a, "zero_point"_a, "qmin"_a, "qmax"_a,
      "One value as quantize does it: sat(round_half_even(x / scale) + zero_point) into [qmin, qmax].");
  m.def("dequantize_value", &dequantize_value, "q"_a, "scale"_a, "zero_point"_a, "float32(q - zero_point) * scale.");

  bind_arith(m);
  bind_calib(m);
}

}  // namespace fixq::py
