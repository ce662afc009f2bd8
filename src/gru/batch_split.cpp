// A GRU forward as contiguous batch slices on the shared workers (gru/batch_split.h): gather
// each slice's x, h0 and lengths, run the one-thread forward on it, scatter its y and h_n.
//
// Inside a slice every product stays on its thread: the pool runs one job at a time, and a
// job started from inside a task (the GEMM's panel split, a bidirectional layer's second
// direction) runs on the calling thread (cpu/thread_pool.h), so there is no nested
// parallelism. Each thread keeps its own buffers (the integer loop's and this file's are
// thread_local), and the model is only read.
#include "gru/batch_split.h"

#include <algorithm>
#include <cstring>
#include <exception>
#include <vector>

#include "cpu/thread_address.h"
#include "cpu/thread_pool.h"
#include "fixq/error.h"
#include "fixq/gemm.h"

namespace fixq::gru_detail {

namespace {

// One thread's slice inputs and outputs, kept between calls: a slice of a batch of 64 x 100
// steps is megabytes, which fresh allocations would take as zeroed pages every call.
struct SliceBuffers {
  std::vector<float> x, h0;
  GruOutput out;
};

thread_local SliceBuffers buffers_of_thread;

// rows blocks of `width` floats from src (block r at r * src_stride) to dst (at r * dst_stride).
void copy_rows(const float* src, int64_t src_stride, float* dst, int64_t dst_stride, int64_t rows, int64_t width) {
  for (int64_t r = 0; r < rows; ++r)
    std::memcpy(dst + r * dst_stride, src + r * src_stride, sizeof(float) * static_cast<size_t>(width));
}

}  // namespace

int forward_threads(const GruRunOptions& options, int64_t batch) {
  require(options.threads >= 0 && options.threads <= kGruMaxThreads, "GruRunOptions::threads is ", options.threads,
          "; expected 0..", kGruMaxThreads, " (0: the process's thread count, set_gemm_threads / FIXQ_NUM_THREADS)");
  if (options.tap != nullptr || batch < kGruMinThreadedBatch) return 1;
  const int64_t want = options.threads == 0 ? gemm_threads() : options.threads;
  return static_cast<int>(std::min(want, batch));
}

bool forward_in_slices(const float* x, const Shape& x_shape, const GruRunOptions& options, const ForwardDims& dims,
                       GruOutput& out, const SliceForward& forward) {
  // A shape the slices could not be cut from is left to the forward, which names the fault;
  // so is one without features: [T, B, 0] holds no data whatever T and B claim (a .npy
  // file's (2^40, 2^40, 0), say), and T * B * width below could overflow. With C >= 1 the
  // caller's data holds T * B * C floats.
  if (x_shape.size() != 3 || std::any_of(x_shape.begin(), x_shape.end(), [](int64_t e) { return e < 0; }) ||
      x_shape[2] == 0)
    return false;
  const bool bf = options.batch_first;
  const int64_t T = bf ? x_shape[1] : x_shape[0], B = bf ? x_shape[0] : x_shape[1], C = x_shape[2];
  const int n = forward_threads(options, B);
  if (n <= 1 || (x == nullptr && T * C > 0)) return false;
  if (!options.lengths.empty() && static_cast<int64_t>(options.lengths.size()) != B) return false;
  const int64_t H = dims.hidden, W = dims.out_width;
  out.y.resize(static_cast<size_t>(T * B * W));
  out.h_n.resize(static_cast<size_t>(dims.cells * B * H));
  auto run_slice = [&](int i) {
    const int64_t b0 = B * i / n, nb = B * (i + 1) / n - b0;
    SliceBuffers& buf = cpu::thread_address(buffers_of_thread);
    GruRunOptions o = options;
    o.threads = 1;
    const float* xs = x + b0 * T * C;  // batch-first: the slice's rows are contiguous
    if (!bf) {
      buf.x.resize(static_cast<size_t>(T * nb * C));
      copy_rows(x + b0 * C, B * C, buf.x.data(), nb * C, T, nb * C);
      xs = buf.x.data();
    }
    if (options.h0 != nullptr) {
      buf.h0.resize(static_cast<size_t>(dims.cells * nb * H));
      copy_rows(options.h0 + b0 * H, B * H, buf.h0.data(), nb * H, dims.cells, nb * H);
      o.h0 = buf.h0.data();
    }
    if (!options.lengths.empty()) o.lengths = options.lengths.subspan(static_cast<size_t>(b0), static_cast<size_t>(nb));
    forward(xs, bf ? Shape{nb, T, C} : Shape{T, nb, C}, o, buf.out);
    if (bf) std::copy_n(buf.out.y.data(), nb * T * W, out.y.data() + b0 * T * W);
    else copy_rows(buf.out.y.data(), nb * W, out.y.data() + b0 * W, B * W, T, nb * W);
    copy_rows(buf.out.h_n.data(), nb * H, out.h_n.data() + b0 * H, B * H, dims.cells, nb * H);
  };
  try {
    cpu_detail::parallel_for(n, run_slice);
  } catch (...) {
    // Bad input (a NaN, a length out of range): the one-thread forward reports it, with
    // the element numbered in the whole batch rather than in a slice.
    GruRunOptions one = options;
    one.threads = 1;
    forward(x, x_shape, one, out);
  }
  return true;
}

}  // namespace fixq::gru_detail
