// fixq/cuda.h's GEMM: the weights and epilogue constants in device memory, checked as the
// CPU's gemm_f32 / gemm_requant check them, and the products over device or host buffers.
#include <cmath>
#include <cstring>

#include "cuda/gemm_args.h"
#include "cuda/runtime.h"
#include "fixq/cuda.h"
#include "gemm/driver.h"
#include "gemm/kernels.h"

namespace fixq::cuda {

struct DeviceWeights::Storage {
  int device = 0;
  PackedB host;               // validation, column sums and the accumulator bound, as on the CPU
  int64_t ldb = 0;            // padded_b_stride(k)
  detail::DeviceBuffer data;  // B [n, ldb] (s8), then colsum [n] (int64)
  const int8_t* b = nullptr;
  const int64_t* colsum = nullptr;
};

struct DeviceDequantEpilogue::Storage {
  int device = 0;
  int64_t n = 0;
  int64_t scale_a_count = 0, azp_count = 0;  // 1 or one per row (azp: 0 too)
  detail::DeviceBuffer data;
  detail::EpilogueArgs args;  // kind, constants; out, ldo, colsum and the per-row arrays' use set per call
};

struct DeviceRequantEpilogue::Storage {
  int device = 0;
  int64_t n = 0;
  int64_t azp_count = 0;
  detail::DeviceBuffer data;
  detail::EpilogueArgs args;
};

namespace {

using detail::EpilogueArgs;
using detail::EpilogueKind;
using detail::GemmArgs;

// The device arrays of an upload, laid out in one allocation: add() reserves an aligned
// piece and keeps its bytes; finish() copies them all at once.
class Upload {
 public:
  template <class T>
  int64_t add(std::span<const T> v) {
    return add(v.data(), static_cast<int64_t>(v.size_bytes()));
  }
  int64_t add(const void* src, int64_t bytes) {
    const int64_t at = (static_cast<int64_t>(image_.size()) + 255) / 256 * 256;
    image_.resize(static_cast<size_t>(at + bytes));
    if (bytes > 0) std::memcpy(image_.data() + at, src, static_cast<size_t>(bytes));
    return at;
  }
  detail::DeviceBuffer finish(int device, const char* what) {
    detail::DeviceScope scope(device);
    detail::DeviceBuffer buf(static_cast<int64_t>(image_.size()), what);
    detail::copy_to_device(buf.get(), image_.data(), static_cast<int64_t>(image_.size()), nullptr, what);
    detail::synchronize(nullptr, what);
    return buf;
  }

 private:
  std::vector<unsigned char> image_;
};

template <class T>
const T* at(const detail::DeviceBuffer& buf, int64_t offset) {
  return reinterpret_cast<const T*>(static_cast<const unsigned char*>(buf.get()) + offset);
}

// A per-row or per-column constant uploaded at offset: its device array where it has
// several entries, else null (its one value stays in the kernel's arguments).
template <class T>
const T* several(const detail::DeviceBuffer& buf, int64_t offset, std::span<const T> v) {
  return v.size() > 1 ? at<T>(buf, offset) : nullptr;
}

// The CPU's rule for a per-tensor or per-row / per-column vector: 1 or `count` entries (or 0).
void check_count(int64_t n, int64_t count, bool may_be_empty, const char* what, const char* per) {
  if (n == 1 || n == count || (may_be_empty && n == 0)) return;
  fail("gemm: ", what, " has ", n, " entries; expected ", may_be_empty ? "0, " : "", "1 or ", count, " (", per, ")");
}

void check_scales(std::span<const float> s, const char* what) {
  for (float v : s) require(std::isfinite(v) && v > 0, "gemm_f32: ", what, " ", v, " must be finite and > 0");
}

void check_activations(const MatrixView& a, const DeviceWeights& b, const char* fn) {
  gemm_detail::validate(a, b.storage().host);
  require(a.type != IntType::S16, fn, ": the GPU GEMM takes u8 or s8 activations; s16 activations run on the CPU");
}

// The kernel for a product: the tensor-core one unless asked for the reference, or unless
// its int32 sums could overflow (then the reference kernel's int64 sums; asking for the
// tensor cores is then an error).
bool use_tensor_cores(const MatrixView& a, const DeviceWeights& b, GemmKernel kernel) {
  const bool fits = gemm_detail::fits_int32(a.type, b.storage().host);
  if (kernel == GemmKernel::TensorCore)
    require(fits, "gemm: the tensor-core kernel sums in int32, and activations up to ", gemm_detail::max_abs(a.type),
            " times weights whose largest row sum of |B| is ", b.storage().host.max_abs_row_sum(), " (K = ", b.k(),
            ") can overflow it; use GemmKernel::Auto or Reference");
  return kernel != GemmKernel::Reference && fits;
}

GemmArgs product(const MatrixView& a, const DeviceWeights& b) {
  const DeviceWeights::Storage& s = b.storage();
  GemmArgs g;
  g.a_type = a.type;
  g.a = a.data;
  g.m = a.rows;
  g.k = a.cols;
  g.lda = a.stride;
  g.b_type = IntType::S8;
  g.b = s.b;
  g.n = s.host.n();
  g.ldb = s.ldb;
  g.e.colsum = s.colsum;
  return g;
}

void run(const GemmArgs& g, bool tensor_cores, const GemmOptions& o, int device) {
  detail::DeviceScope scope(device);
  if (tensor_cores) detail::launch_gemm_tensor_core(g, o.stream);
  else detail::launch_gemm_reference(g, o.stream);
}

void require_same_device(int weights, int epilogue) {
  require(weights == epilogue, "gemm: the epilogue was uploaded to GPU ", epilogue, " and the weights to GPU ", weights);
}

}  // namespace

int64_t DeviceWeights::n() const { return storage_->host.n(); }
int64_t DeviceWeights::k() const { return storage_->host.k(); }
int DeviceWeights::device() const { return storage_->device; }

DeviceWeights DeviceWeights::upload(const MatrixView& b, int device) {
  require(b.type == IntType::S8, "GPU gemm: weights must be s8 (the tensor cores take 8-bit operands); 16-bit weights "
                                 "run on the CPU");
  auto s = std::make_shared<Storage>();
  s->host = PackedB::pack(b);  // the CPU's checks, column sums and bound
  usable_device(device);
  s->device = device;
  s->ldb = detail::padded_b_stride(b.cols);
  std::vector<int8_t> padded(static_cast<size_t>(b.rows * s->ldb), 0);
  for (int64_t r = 0; r < b.rows; ++r)
    std::memcpy(padded.data() + r * s->ldb, static_cast<const int8_t*>(b.data) + r * b.stride, static_cast<size_t>(b.cols));
  Upload up;
  const int64_t b_at = up.add(std::span<const int8_t>(padded)), c_at = up.add(s->host.colsum());
  s->data = up.finish(device, "the GEMM weights");
  s->b = at<int8_t>(s->data, b_at);
  s->colsum = at<int64_t>(s->data, c_at);
  DeviceWeights w;
  w.storage_ = std::move(s);
  return w;
}

DeviceDequantEpilogue DeviceDequantEpilogue::upload(const DequantEpilogue& e, const DeviceWeights& b) {
  const int64_t n = b.n();
  require(!e.scale_a.empty(), "gemm: scale_a has 0 entries; expected 1 or one per row (per tensor or per token)");
  check_count(static_cast<int64_t>(e.scale_b.size()), n, false, "scale_b", "per tensor or per output channel");
  if (!e.bias.empty() && static_cast<int64_t>(e.bias.size()) != n)
    fail("gemm_f32: bias has ", e.bias.size(), " entries; expected 0 or ", n);
  check_scales(e.scale_a, "scale_a");
  check_scales(e.scale_b, "scale_b");
  auto s = std::make_shared<Storage>();
  s->device = b.device();
  s->n = n;
  s->scale_a_count = static_cast<int64_t>(e.scale_a.size());
  s->azp_count = static_cast<int64_t>(e.azp.size());
  EpilogueArgs& a = s->args;
  a.kind = EpilogueKind::F32;
  a.scale_a = e.scale_a[0];
  a.scale_b = e.scale_b[0];
  a.azp = e.azp.empty() ? 0 : e.azp[0];
  Upload up;
  const int64_t sa = up.add(e.scale_a), sb = up.add(e.scale_b), bias = up.add(e.bias), azp = up.add(e.azp);
  s->data = up.finish(b.device(), "the GEMM epilogue");
  a.scale_a_rows = several(s->data, sa, e.scale_a);
  a.scale_b_cols = several(s->data, sb, e.scale_b);
  a.bias_f = e.bias.empty() ? nullptr : at<float>(s->data, bias);  // [N] even where N = 1
  a.azp_rows = several(s->data, azp, e.azp);
  DeviceDequantEpilogue out;
  out.storage_ = std::move(s);
  return out;
}

DeviceRequantEpilogue DeviceRequantEpilogue::upload(const RequantEpilogue& e, const DeviceWeights& b) {
  const int64_t n = b.n();
  check_count(static_cast<int64_t>(e.scale.size()), n, false, "scale", "per tensor or per output channel");
  if (!e.bias.empty() && static_cast<int64_t>(e.bias.size()) != n)
    fail("gemm_requant: bias has ", e.bias.size(), " entries; expected 0 or ", n);
  const IntRange type_range = int_type_range(e.out_type);
  require(e.out_min <= e.out_max && e.out_min >= type_range.qmin && e.out_max <= type_range.qmax,
          "gemm_requant: clamp range [", e.out_min, ", ", e.out_max, "] must be a non-empty part of [", type_range.qmin,
          ", ", type_range.qmax, "]");
  auto s = std::make_shared<Storage>();
  s->device = b.device();
  s->n = n;
  s->azp_count = static_cast<int64_t>(e.azp.size());
  EpilogueArgs& a = s->args;
  a.kind = EpilogueKind::Requant;
  a.scale = e.scale[0];
  a.azp = e.azp.empty() ? 0 : e.azp[0];
  a.zp_out = e.zp_out;
  a.clamp = IntRange{e.out_min, e.out_max};
  a.out_type = e.out_type;
  Upload up;
  const int64_t sc = up.add(e.scale), bias = up.add(e.bias), azp = up.add(e.azp);
  s->data = up.finish(b.device(), "the GEMM epilogue");
  a.scale_cols = several(s->data, sc, e.scale);
  a.bias_i = e.bias.empty() ? nullptr : at<int32_t>(s->data, bias);
  a.azp_rows = several(s->data, azp, e.azp);
  DeviceRequantEpilogue out;
  out.storage_ = std::move(s);
  return out;
}

void gemm_s32(const MatrixView& a, const DeviceWeights& b, int32_t* c, int64_t ldc, const GemmOptions& o) {
  check_activations(a, b, "gemm_s32");
  require(c != nullptr, "gemm_s32: null output pointer");
  require(ldc >= b.n(), "gemm_s32: output row stride ", ldc, " is smaller than a row of ", b.n());
  require(gemm_detail::fits_int32(a.type, b.storage().host), "gemm_s32: activations up to ",
          gemm_detail::max_abs(a.type), " in magnitude times weights whose largest row sum of |B| is ",
          b.storage().host.max_abs_row_sum(), " (K = ", b.k(), ") can overflow int32");
  GemmArgs g = product(a, b);
  g.e.kind = EpilogueKind::S32;
  g.e.out = c;
  g.e.ldo = ldc;
  run(g, use_tensor_cores(a, b, o.kernel), o, b.device());
}

namespace {

// A product through an uploaded epilogue: the checks gemm_f32 and gemm_requant share (as the
// CPU's), the epilogue's constants with this product's output, then the kernel.
template <class Storage>
void run_epilogue(const char* fn, const MatrixView& a, const DeviceWeights& b, const Storage& s, void* out, int64_t ldo,
                  const GemmOptions& o) {
  check_activations(a, b, fn);
  require(out != nullptr, fn, ": null output pointer");
  require(ldo >= b.n(), fn, ": output row stride ", ldo, " is smaller than a row of ", b.n());
  require_same_device(b.device(), s.device);
  require(s.n == b.n(), fn, ": the epilogue was uploaded for N = ", s.n, " but the weights have N = ", b.n());
  check_count(s.azp_count, a.rows, true, "azp", "per tensor or per token");
  GemmArgs g = product(a, b);
  const int64_t* colsum = g.e.colsum;
  g.e = s.args;
  g.e.colsum = colsum;
  g.e.out = out;
  g.e.ldo = ldo;
  run(g, use_tensor_cores(a, b, o.kernel), o, b.device());
}

}  // namespace

void gemm_f32(const MatrixView& a, const DeviceWeights& b, const DeviceDequantEpilogue& e, float* d, int64_t ldd,
              const GemmOptions& o) {
  check_count(e.storage().scale_a_count, a.rows, false, "scale_a", "per tensor or per token");
  run_epilogue("gemm_f32", a, b, e.storage(), d, ldd, o);
}

void gemm_requant(const MatrixView& a, const DeviceWeights& b, const DeviceRequantEpilogue& e, void* out, int64_t ldo,
                  const GemmOptions& o) {
  run_epilogue("gemm_requant", a, b, e.storage(), out, ldo, o);
}

namespace {

// Host buffers: A copied to device rows of a 16-byte multiple (the tensor-core kernel's
// fast loads), the product into a dense device output, copied back row by row.
template <class Out, class Run>
void on_host_buffers(const MatrixView& a, const DeviceWeights& b, Out* out, int64_t ld, int64_t out_bytes, const GemmOptions& o,
                     const char* fn, Run&& run_product) {
  check_activations(a, b, fn);
  require(out != nullptr, fn, ": null output pointer");
  require(ld >= b.n(), fn, ": output row stride ", ld, " is smaller than a row of ", b.n());
  detail::DeviceScope scope(b.device());
  const int64_t lda = (a.cols + 15) / 16 * 16, row_bytes = b.n() * out_bytes;
  detail::DeviceBuffer da(a.rows * lda, "the activations"), dout(a.rows * row_bytes, "the output");
  detail::check(cudaMemcpy2DAsync(da.get(), static_cast<size_t>(lda), a.data, static_cast<size_t>(a.stride), static_cast<size_t>(a.cols),
                                  static_cast<size_t>(a.rows), cudaMemcpyHostToDevice, o.stream),
                "copying the activations to the GPU");
  run_product(MatrixView{a.type, da.get(), a.rows, a.cols, lda}, dout.get());
  detail::check(cudaMemcpy2DAsync(out, static_cast<size_t>(ld * out_bytes), dout.get(), static_cast<size_t>(row_bytes),
                                  static_cast<size_t>(row_bytes), static_cast<size_t>(a.rows), cudaMemcpyDeviceToHost, o.stream),
                "copying the product from the GPU");
  detail::synchronize(o.stream, fn);
}

}  // namespace

void gemm_s32_host(const MatrixView& a, const DeviceWeights& b, int32_t* c, int64_t ldc, const GemmOptions& o) {
  on_host_buffers(a, b, c, ldc, 4, o, "gemm_s32", [&](const MatrixView& da, void* dc) {
    gemm_s32(da, b, static_cast<int32_t*>(dc), b.n(), o);
  });
}

void gemm_f32_host(const MatrixView& a, const DeviceWeights& b, const DequantEpilogue& e, float* d, int64_t ldd,
                   const GemmOptions& o) {
  const DeviceDequantEpilogue de = DeviceDequantEpilogue::upload(e, b);
  on_host_buffers(a, b, d, ldd, 4, o, "gemm_f32", [&](const MatrixView& da, void* dd) {
    gemm_f32(da, b, de, static_cast<float*>(dd), b.n(), o);
  });
}

void gemm_requant_host(const MatrixView& a, const DeviceWeights& b, const RequantEpilogue& e, void* out, int64_t ldo,
                       const GemmOptions& o) {
  const DeviceRequantEpilogue de = DeviceRequantEpilogue::upload(e, b);
  on_host_buffers(a, b, static_cast<unsigned char*>(out), ldo, int_type_bytes(e.out_type), o, "gemm_requant",
                  [&](const MatrixView& da, void* dout) { gemm_requant(da, b, de, dout, b.n(), o); });
}

}  // namespace fixq::cuda
