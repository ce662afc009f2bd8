// fixq.PackedB and gemm_s32 / gemm_s64 / gemm_f32 / gemm_requant (fixq/gemm.h) on numpy
// arrays: A [M, K] uint8 / int8 / int16, B [N, K] int8 / int16 ("B transposed", as the
// weight of a Linear layer), packed once into a PackedB or on the fly.
//
// A is read in place when its rows are contiguous (any row stride, so slices A[i:j] and
// A[:, :k] cost no copy); otherwise it is copied once.
#include <pybind11/stl.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bindings.h"
#include "fixq/gemm.h"

namespace fixq::py {

namespace {

// A 2-D integer matrix in place where possible; `keep` owns the memory `view` points to.
struct MatrixArg {
  pyb::array keep;
  MatrixView view;
};

MatrixArg matrix_arg(const pyb::handle& obj, const char* what) {
  pyb::array a = pyb::array::ensure(obj);
  if (!a) fail(what, ": expected a 2-D integer array");
  require_rank(a, 2, what);
  const pyb::dtype dt = a.dtype();
  IntType t{};
  if (dt.kind() == 'u' && dt.itemsize() == 1) {
    t = IntType::U8;
  } else if (dt.kind() == 'i' && dt.itemsize() == 1) {
    t = IntType::S8;
  } else if (dt.kind() == 'i' && dt.itemsize() == 2) {
    t = IntType::S16;
  } else {
    fail(what, ": dtype ", dtype_name(dt), " is not a GEMM operand type; use uint8, int8 or int16 (B: int8 or int16)");
  }
  if (!dt.attr("isnative").cast<bool>())
    fail(what, ": byte order is not the machine's; convert with .astype(a.dtype.newbyteorder('='))");
  const pyb::ssize_t item = dt.itemsize();
  const bool rows_contiguous =
      a.strides(1) == item && a.strides(0) >= 0 && a.strides(0) % item == 0 && a.strides(0) / item >= a.shape(1);
  if (!rows_contiguous) a = pyb::array::ensure(a, pyb::array::c_style);
  MatrixArg m;
  m.view.type = t;
  m.view.data = a.data();
  m.view.rows = a.shape(0);
  m.view.cols = a.shape(1);
  m.view.stride = a.shape(0) <= 1 ? a.shape(1) : a.strides(0) / item;
  if (m.view.stride < m.view.cols) m.view.stride = m.view.cols;  // a single row's stride is arbitrary
  m.keep = a;
  return m;
}

PackedB pack_b(const pyb::handle& obj) {
  const MatrixArg b = matrix_arg(obj, "b");
  if (b.view.type == IntType::U8) fail("b: weights must be int8 or int16 (symmetric), got uint8");
  pyb::gil_scoped_release nogil;
  return PackedB::pack(b.view);
}

// B as given: a PackedB (used as is) or an array (packed for this call only).
struct BArg {
  const PackedB* packed = nullptr;
  PackedB owned;
};

void b_arg(const pyb::object& obj, BArg& out) {
  if (pyb::isinstance<PackedB>(obj)) {
    out.packed = &obj.cast<const PackedB&>();
  } else {
    out.owned = pack_b(obj);
    out.packed = &out.owned;
  }
}

// float32 vector from None (empty), a scalar or a 1-D array-like.
std::vector<float> float_vec(const pyb::object& obj, const char* what) {
  if (obj.is_none()) return {};
  const carray<float> a = as_float_array(obj, what);
  if (a.ndim() > 1) fail(what, ": expected a scalar or a 1-D array, got shape ", shape_str(shape_of(a)));
  return std::vector<float>(a.data(), a.data() + a.size());
}

std::vector<int32_t> int32_vec(const pyb::object& obj, const char* what) {
  if (obj.is_none()) return {};
  const carray<int32_t> a = as_int32_array(obj, what);
  if (a.ndim() > 1) fail(what, ": expected a scalar or a 1-D array, got shape ", shape_str(shape_of(a)));
  return std::vector<int32_t>(a.data(), a.data() + a.size());
}

// Requant scales: a FixedPointScale, a sequence of them, or real factors (from_real each).
std::vector<FixedPointScale> scale_vec(const pyb::object& obj) {
  if (pyb::isinstance<FixedPointScale>(obj)) return {obj.cast<FixedPointScale>()};
  if (pyb::isinstance<pyb::sequence>(obj) && !pyb::isinstance<pyb::str>(obj)) {
    const pyb::sequence seq = obj.cast<pyb::sequence>();
    if (seq.size() > 0 && pyb::isinstance<FixedPointScale>(seq[0])) {
      std::vector<FixedPointScale> v;
      for (const pyb::handle& h : seq) {
        if (!pyb::isinstance<FixedPointScale>(h)) fail("scale: a list of FixedPointScale must hold only FixedPointScale");
        v.push_back(h.cast<FixedPointScale>());
      }
      return v;
    }
  }
  const carray<double> a = carray<double>::ensure(pyb::array::ensure(obj));
  if (!a || a.ndim() > 1) fail("scale: expected a FixedPointScale, a list of them, or real factors (scalar or 1-D)");
  std::vector<FixedPointScale> v;
  for (pyb::ssize_t i = 0; i < a.size(); ++i) v.push_back(FixedPointScale::from_real(a.data()[i]));
  return v;
}

template <class Acc>
pyb::array_t<Acc> gemm_raw(const pyb::object& a_obj, const pyb::object& b_obj) {
  const MatrixArg a = matrix_arg(a_obj, "a");
  BArg b;
  b_arg(b_obj, b);
  pyb::array_t<Acc> c = new_array<Acc>(Shape{a.view.rows, b.packed->n()});
  Acc* out = c.mutable_data();
  pyb::gil_scoped_release nogil;
  if constexpr (std::is_same_v<Acc, int32_t>) {
    gemm_s32(a.view, *b.packed, out, b.packed->n());
  } else {
    gemm_s64(a.view, *b.packed, out, b.packed->n());
  }
  return c;
}

pyb::array_t<float> gemm_f32_py(const pyb::object& a_obj, const pyb::object& b_obj, const pyb::object& scale_a,
                                 const pyb::object& scale_b, const pyb::object& bias, const pyb::object& azp) {
  const MatrixArg a = matrix_arg(a_obj, "a");
  BArg b;
  b_arg(b_obj, b);
  const std::vector<float> sa = float_vec(scale_a, "scale_a"), sb = float_vec(scale_b, "scale_b"), bi = float_vec(bias, "bias");
  const std::vector<int32_t> zp = int32_vec(azp, "azp");
  DequantEpilogue e{sa, sb, bi, zp};
  pyb::array_t<float> d = new_array<float>(Shape{a.view.rows, b.packed->n()});
  float* out = d.mutable_data();
  pyb::gil_scoped_release nogil;
  gemm_f32(a.view, *b.packed, e, out, b.packed->n());
  return d;
}

pyb::array gemm_requant_py(const pyb::object& a_obj, const pyb::object& b_obj, const pyb::object& scale,
                           const pyb::object& bias, const pyb::object& azp, int32_t zp_out, const std::string& out_dtype,
                           const pyb::object& out_min, const pyb::object& out_max) {
  const MatrixArg a = matrix_arg(a_obj, "a");
  BArg b;
  b_arg(b_obj, b);
  const std::vector<FixedPointScale> sc = scale_vec(scale);
  const std::vector<int32_t> bi = int32_vec(bias, "bias"), zp = int32_vec(azp, "azp");
  RequantEpilogue e;
  e.azp = zp;
  e.bias = bi;
  e.scale = sc;
  e.zp_out = zp_out;
  e.out_type = parse_int_type(out_dtype);
  const IntRange r = int_type_range(e.out_type);
  e.out_min = out_min.is_none() ? r.qmin : out_min.cast<int32_t>();
  e.out_max = out_max.is_none() ? r.qmax : out_max.cast<int32_t>();
  const Shape shape{a.view.rows, b.packed->n()};
  pyb::array out;
  switch (e.out_type) {
    case IntType::U8: out = new_array<uint8_t>(shape); break;
    case IntType::S8: out = new_array<int8_t>(shape); break;
    case IntType::S16: out = new_array<int16_t>(shape); break;
  }
  void* o = out.mutable_data();
  pyb::gil_scoped_release nogil;
  gemm_requant(a.view, *b.packed, e, o, b.packed->n());
  return out;
}

}  // namespace

void bind_gemm(pyb::module_& m) {
  using namespace pybind11::literals;

  pyb::class_<PackedB>(m, "PackedB",
                       "Weights B [N, K] (int8 or int16, symmetric) packed once for the GEMM kernels, with their\n"
                       "column sums colsum[n] = sum_k B[n, k]. Pass it as `b` to the gemm_* functions to reuse it.")
      .def(pyb::init(&pack_b), "b"_a, "Packs a 2-D int8 or int16 array [N, K].")
      .def_property_readonly("n", &PackedB::n)
      .def_property_readonly("k", &PackedB::k)
      .def_property_readonly("shape", [](const PackedB& p) { return pyb::make_tuple(p.n(), p.k()); })
      .def_property_readonly("dtype", [](const PackedB& p) { return to_string(p.type()); })
      .def_property_readonly(
          "colsum",
          [](const PackedB& p) { return to_numpy(std::vector<int64_t>(p.colsum().begin(), p.colsum().end()), Shape{p.n()}); },
          "int64 [N]: sum_k B[n, k]")
      .def("__repr__", [](const PackedB& p) {
        return "PackedB(" + to_string(p.type()) + ", N=" + std::to_string(p.n()) + ", K=" + std::to_string(p.k()) + ")";
      });

  m.def("gemm_s32", &gemm_raw<int32_t>, "a"_a, "b"_a,
        "acc = A @ B.T exactly in int32: A [M, K] uint8/int8/int16, B [N, K] int8/int16 array or PackedB.\n"
        "Raises ValueError when max|A| (of A's dtype) * max_n sum_k |B[n, k]| could overflow int32 (use gemm_s64).");
  m.def("gemm_s64", &gemm_raw<int64_t>, "a"_a, "b"_a, "acc = A @ B.T exactly in int64, for any K below 2^31.");
  m.def("gemm_f32", &gemm_f32_py, "a"_a, "b"_a, "scale_a"_a, "scale_b"_a, "bias"_a = pyb::none(), "azp"_a = pyb::none(),
        "Dequantizing epilogue: D = (float(acc - azp[m] * colsum[n]) * scale_b[n]) * scale_a[m] + bias[n], each\n"
        "operation in float32 (no FMA). scale_a: 1 or M values (per tensor / per token); scale_b: 1 or N (per\n"
        "channel); bias: None or N floats; azp: None (symmetric A), 1 or M activation zero points.");
  m.def("gemm_requant", &gemm_requant_py, "a"_a, "b"_a, "scale"_a, "bias"_a = pyb::none(), "azp"_a = pyb::none(),
        "zp_out"_a = 0, "out_dtype"_a = "int8", "out_min"_a = pyb::none(), "out_max"_a = pyb::none(),
        "Requantizing epilogue: y = clamp(scale[n].apply(acc - azp[m] * colsum[n] + bias[n]) + zp_out, out_min,\n"
        "out_max) stored as out_dtype ('uint8', 'int8', 'int16'). scale: a FixedPointScale, a list of N of them, or\n"
        "real factors (each FixedPointScale.from_real); bias: None or N int32 in accumulator units; azp: None, 1\n"
        "or M; out_min / out_max default to out_dtype's range (narrower = fused clamp).");
  m.def(
      "set_gemm_threads",
      [](int n) {
        require(n >= 0, "set_gemm_threads: n must be >= 0 (0 = automatic), got ", n);
        set_gemm_threads(n);
      },
      "n"_a,
        "Threads for large products (M*N*K >= 2^25, or >= 3 * 2^20 while the workers are awake from a recent\n"
        "product); 0 = FIXQ_NUM_THREADS or every hardware thread. Results do not depend on it.");
  m.def("gemm_threads", &gemm_threads, "The thread count large products use.");
}

}  // namespace fixq::py
