// GpuGru (fixq/cuda.h): QuantizedGru::forward (gru/int/forward.cpp) over device kernels: the
// input quantized, per layer and direction the input projection and the recurrence, the
// outputs rescaled into the next layer, h dequantized. The same integers at every step.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <compare>
#include <map>
#include <mutex>
#include <utility>

#include "cuda/gru_model.h"
#include "cuda/gru_workspace.h"
#include "cuda/runtime.h"
#include "fixq/cuda.h"

namespace fixq::cuda {

namespace {

using namespace detail;

// A recurrence captured as a CUDA graph, by what its kernels' arguments depend on.
struct GraphKey {
  size_t cell = 0;
  int64_t T = 0, B = 0, steps = 0;
  bool lengths = false;
  int64_t generation = 0;
  auto operator<=>(const GraphKey&) const = default;
};

class GraphExec {
 public:
  explicit GraphExec(cudaGraphExec_t e) : exec_(e) {}
  ~GraphExec() {
    if (exec_ != nullptr) cudaGraphExecDestroy(exec_);
  }
  GraphExec(GraphExec&& o) noexcept : exec_(std::exchange(o.exec_, nullptr)) {}
  GraphExec& operator=(GraphExec&&) = delete;
  cudaGraphExec_t get() const { return exec_; }

 private:
  cudaGraphExec_t exec_ = nullptr;
};

// (T, B), checked as QuantizedGru::forward checks them, with its messages.
std::pair<int64_t, int64_t> check_input(const DeviceModel& m, const float* x, const Shape& shape, bool batch_first,
                                        std::span<const int64_t> lengths) {
  require(shape.size() == 3, "GRU input must be 3-D [T, B, C] (or [B, T, C] with batch_first), got ", shape_str(shape));
  const int64_t T = batch_first ? shape[1] : shape[0], B = batch_first ? shape[0] : shape[1];
  require(T >= 0 && B >= 0, "GRU input shape ", shape_str(shape), " has a negative size");
  require(shape[2] == m.input_size, "GRU input has ", shape[2], " features per step; the model expects ", m.input_size);
  require(x != nullptr || T * B == 0, "GRU input: null data pointer");
  require(lengths.empty() || static_cast<int64_t>(lengths.size()) == B, "GRU lengths: ", lengths.size(),
          " entries for a batch of ", B);
  for (int64_t len : lengths) require(len >= 0 && len <= T, "GRU lengths: ", len, " is outside [0, ", T, "]");
  return {T, B};
}

// A [rows, k] (an operator's values, row stride lda) and weights [n, k] with their column
// sums, for a GEMM requantized into `out_q` (per-row scales): the input projection and the
// reference path's recurrent product, as run_cell_reference states them.
struct ProductA {
  OperandQ q;
  const void* data;
  int64_t rows, k, lda;
};
struct ProductB {
  IntType type;
  const void* data;
  int64_t ldb;
  const int64_t* colsum;
};
GemmArgs requantized_product(const ProductA& a, const ProductB& b, const FixedPointScale* scale, const OperandQ& out_q,
                             void* out, int64_t n) {
  GemmArgs g;
  g.a_type = a.q.storage;
  g.a = a.data;
  g.m = a.rows;
  g.k = a.k;
  g.lda = a.lda;
  g.b_type = b.type;
  g.b = b.data;
  g.n = n;
  g.ldb = b.ldb;
  g.e.kind = EpilogueKind::Requant;
  g.e.colsum = b.colsum;
  g.e.azp = a.q.zp;
  g.e.scale_cols = scale;
  g.e.zp_out = out_q.zp;
  g.e.clamp = out_q.range;
  g.e.out_type = out_q.storage;
  g.e.out = out;
  g.e.ldo = n;
  return g;
}

RecurrenceShape recurrence_shape(const DeviceCell& k, int64_t B) {
  const bool eight = k.h.storage == IntType::S8 && k.r_type == IntType::S8;
  return {k.hidden_size, B, int_type_bytes(k.h.storage), int_type_bytes(k.r_type), k.r_stride, eight && k.r_fits_int32};
}

const char* kReferenceRecurrence = "per step the plain GEMM kernel and the pointwise update kernel (the GPU reference)";

}  // namespace

struct GpuGru::Impl {
  DeviceInfo device;
  GpuGruOptions options;
  DeviceModel model;
  cudaStream_t stream = nullptr;   // owned: calls without a stream (blocking: ordered with the legacy stream)
  cudaStream_t capture = nullptr;  // owned, non-blocking: graph capture, which no other thread's work may join
  // Recorded where the last forward ended: the next one, maybe on another stream, waits for
  // it before it reuses the workspace.
  cudaEvent_t done = nullptr;
  // The input check's two indices (first_non_finite), copied back into pinned memory so that
  // the copy is asynchronous, and the event recorded after that copy: the host waits for it
  // only once the whole forward is enqueued, so that the device never idles while the host
  // reads the check (a pageable copy and a synchronize there cost each forward tens of us).
  unsigned long long* check_host = nullptr;
  cudaEvent_t checked = nullptr;
  mutable std::mutex mutex;
  mutable Workspace ws;
  mutable std::map<GraphKey, GraphExec> graphs;
  mutable std::vector<std::string> described;

  ~Impl() {
    graphs.clear();
    if (done != nullptr) cudaEventDestroy(done);
    if (checked != nullptr) cudaEventDestroy(checked);
    if (check_host != nullptr) cudaFreeHost(check_host);
    if (stream != nullptr) cudaStreamDestroy(stream);
    if (capture != nullptr) cudaStreamDestroy(capture);
  }

  // The workspace for (T, B), after the previous forward is done with it, ordered on s.
  void prepare(int64_t T, int64_t B, bool host_buffers, cudaStream_t s) const {
    if (Workspace::for_shape(model, T, B, host_buffers).bytes > ws.memory.bytes())
      check(cudaEventSynchronize(done), "waiting for the previous GRU forward");  // before its memory is freed
    ws.ensure(model, T, B, host_buffers);
    check(cudaStreamWaitEvent(s, done, 0), "ordering the GRU forward after the previous one");
  }

  bool fast() const { return options.path == GruPath::Fast; }
  const DeviceCell& cell(size_t c) const { return model.cells[c]; }

  GemmArgs projection(size_t c, const void* in, int64_t rows) const {
    const DeviceCell& k = cell(c);
    return requantized_product({k.x, in, rows, k.input_size, model.x_stride(c)}, {k.w_type, k.w, k.w_stride, k.colsum_w},
                               k.wx_scale, k.wx, ws.ptr(ws.at.wx), 3 * k.hidden_size);
  }

  // The input projection's kernel (gru_kernels.h); the reference path takes the plain one.
  InputProjection input_kind(size_t c) const { return fast() ? input_projection(cell(c)) : InputProjection::Plain; }
  bool tensor_core_input(size_t c) const { return input_kind(c) == InputProjection::TensorCore; }
  // 16-bit x with s8 W: x = 256 * hi + lo, both byte planes on the tensor cores.
  bool split16_input(size_t c) const { return input_kind(c) == InputProjection::SplitBytes; }

  void project(size_t c, const void* in, int64_t rows, cudaStream_t s) const {
    if (tensor_core_input(c)) return launch_gemm_tensor_core(projection(c, in, rows), s);
    if (!split16_input(c)) return launch_gemm_reference(projection(c, in, rows), s);
    const int64_t K = cell(c).input_size, stride = model.x_stride(c), H3 = 3 * cell(c).hidden_size;
    launch_split16(in, rows, K, stride, ws.ptr(ws.at.hi), ws.ptr(ws.at.lo), stride, s);
    GemmArgs high = projection(c, ws.ptr(ws.at.hi), rows);
    high.a_type = IntType::S8;
    high.e.kind = EpilogueKind::S32;
    high.e.out = ws.ptr(ws.at.acc_hi);
    high.e.ldo = H3;
    launch_gemm_tensor_core(high, s);
    GemmArgs low = projection(c, ws.ptr(ws.at.lo), rows);
    low.a_type = IntType::U8;
    low.e.acc_hi = ws.ptr<int32_t>(ws.at.acc_hi);
    low.e.ld_hi = H3;
    launch_gemm_tensor_core(low, s);
  }

  DeviceLimits limits() const { return {device.multiprocessors, device.shared_memory_per_block, device.cooperative_launch}; }

  RecurrencePlan plan(size_t c, int64_t B) const {
    return plan_recurrence(recurrence_shape(cell(c), B), limits(), options.allow_persistent);
  }

  std::string describe(size_t c, int64_t B, const std::string& recurrence) const {
    const InputProjection kind = input_kind(c);
    std::string input = input_projection_description(kind);
    if (fast() && kind == InputProjection::Plain)
      input += cell(c).w_type == IntType::S8 ? " (the int32 bound does not hold for these weights)"
                                             : " (the tensor cores take 8-bit W)";
    return fixq::detail::cat("cell ", c, " (B = ", B, "): ", input, "; recurrence: ", recurrence);
  }

  // Cell c's time loop; returns which of its two state buffers holds the final state.
  int recurrence(size_t c, int64_t T, int64_t B, int64_t steps, const int64_t* lengths, void* y, cudaStream_t s) const {
    const DeviceCell& k = cell(c);
    RecurrenceArgs a;
    a.cell = k;
    a.batch = B;
    a.T = T;
    a.wx = ws.ptr(ws.at.wx);
    a.h[0] = ws.state(c, 0, B, k.hidden_size);
    a.h[1] = ws.state(c, 1, B, k.hidden_size);
    a.y = y;
    a.lengths = lengths;
    a.reverse = model.directions == 2 && c % 2 == 1;
    if (!fast()) {
      described[c] = describe(c, B, kReferenceRecurrence);
      const GemmArgs g = requantized_product({k.h, a.h[0], B, k.hidden_size, state_stride(k.hidden_size)},
                                             {k.r_type, k.r, k.r_stride, k.colsum_r}, k.rh_scale, k.rh, ws.ptr(ws.at.rh),
                                             3 * k.hidden_size);
      a.rh = g.e.out;
      for (int64_t i = 0; i < steps; ++i) {
        launch_gemm_reference(g, s);
        launch_reference_update(a, i, s);
      }
      return 0;
    }
    if (B == 0 || steps == 0) return 0;  // nothing to run: the states stay as they are
    RecurrencePlan p = plan(c, B);
    a.plan = p.layout;
    // The graph form where the device turns the persistent one down (the same steps and
    // the same state buffers either way).
    auto take_graph_form = [&](const char* refusal) {
      p = graph_instead(recurrence_shape(k, B), limits(), refusal);
      a.plan = p.layout;
      prepare_recurrence(a);
    };
    if (!prepare_recurrence(a)) take_graph_form(kNotCoResident);
    if (p.layout.persistent) {
      if (launch_recurrence(a, 0, steps, s) == CooperativeLaunch::Launched) {
        described[c] = describe(c, B, p.why);
        return static_cast<int>(steps & 1);
      }
      take_graph_form(kCooperativeRefused);
    }
    described[c] = describe(c, B, p.why);
    const GraphKey key{c, T, B, steps, lengths != nullptr, ws.generation};
    auto it = graphs.find(key);
    if (it == graphs.end()) {
      if (graphs.size() >= 64) graphs.clear();
      it = graphs.emplace(key, capture_steps(a, steps)).first;
    }
    check(cudaGraphLaunch(it->second.get(), s), "launching the GRU recurrence's graph");
    return static_cast<int>(steps & 1);
  }

  // The per-step kernels of one recurrence as a graph, captured on the capture stream.
  GraphExec capture_steps(const RecurrenceArgs& a, int64_t steps) const {
    check(cudaStreamBeginCapture(capture, cudaStreamCaptureModeThreadLocal), "capturing the GRU recurrence");
    cudaGraph_t graph = nullptr;
    try {
      for (int64_t i = 0; i < steps; ++i) launch_recurrence(a, i, i + 1, capture);  // the graph form: Launched
    } catch (...) {
      cudaStreamEndCapture(capture, &graph);
      if (graph != nullptr) cudaGraphDestroy(graph);
      throw;
    }
    check(cudaStreamEndCapture(capture, &graph), "capturing the GRU recurrence");
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    cudaGraphDestroy(graph);
    check(e, "instantiating the GRU recurrence's graph");
    return GraphExec(exec);
  }

  // The forward pass over device buffers already checked; the workspace fits (T, B). All of
  // it is enqueued on s before the input check is read: a non-finite input then throws the
  // CPU's message, the kernels having run on in-range stand-ins for its non-finite values
  // (quantize_kernel) into outputs the contract leaves unspecified after an error.
  void run(const float* x, int64_t T, int64_t B, bool batch_first, std::span<const int64_t> lengths, const float* h0,
           float* y, float* h_n, cudaStream_t s) const {
    const int64_t H = model.hidden_size, hs = state_stride(H), rows = T * B;
    const int D = model.directions;
    const size_t cells = model.cells.size();
    const int64_t steps = lengths.empty() ? T : (B > 0 ? *std::max_element(lengths.begin(), lengths.end()) : 0);
    const int64_t* d_lengths = nullptr;
    if (!lengths.empty() && B > 0) {
      copy_to_device(ws.ptr(ws.at.lengths), lengths.data(), B * 8, s, "the lengths");
      d_lengths = ws.ptr<int64_t>(ws.at.lengths);
    }
    auto* flags = ws.ptr<unsigned long long>(ws.at.flags);
    check(cudaMemsetAsync(flags, 0xFF, 16, s), "clearing the input check");
    const DeviceCell& first = cell(0);
    launch_quantize({x, rows, model.input_size, T, B, batch_first, model.x.scale, model.x.zp, first.x.range,
                     first.x.storage, ws.ptr(ws.at.in), model.x_stride(0), flags, 0},
                    s);
    for (size_t c = 0; c < cells; ++c) {
      const DeviceCell& k = cell(c);
      for (int which = 0; which < 2; ++which)
        check(cudaMemsetAsync(ws.state(c, which, B, H), 0, static_cast<size_t>(B * hs * 2), s), "clearing the states");
      const auto offset = static_cast<int64_t>(c) * B * H;
      if (h0 != nullptr)
        launch_quantize({h0 + offset, B, H, B, 1, false, model.h[c].scale, model.h[c].zp, k.h.range, k.h.storage,
                         ws.state(c, 0, B, H), hs, flags + 1, offset},
                        s);
      else
        launch_fill_state(ws.state(c, 0, B, H), k.h.storage, B, H, hs, k.h.zp, s);
    }
    copy_to_host(check_host, flags, 16, s, "the input check");  // pinned: asynchronous
    check(cudaEventRecord(checked, s), "marking the input check");

    void* in = ws.ptr(ws.at.in);
    void* next = ws.ptr(ws.at.next);
    void* out[2] = {ws.ptr(ws.at.out[0]), ws.ptr(ws.at.out[1])};
    std::vector<int> final_state(cells, 0);
    for (int l = 0; l < model.layers; ++l) {
      for (int d = 0; d < D; ++d) {
        const auto c = static_cast<size_t>(l * D + d);
        if (rows > 0) project(c, in, rows, s);
        final_state[c] = recurrence(c, T, B, steps, d_lengths, out[d], s);
      }
      if (l + 1 == model.layers) break;
      const auto up = static_cast<size_t>((l + 1) * D);
      for (int d = 0; d < D; ++d)
        launch_rescale({out[d], cell(static_cast<size_t>(l * D + d)).h.storage, next, cell(up).x.storage, model.x_stride(up), T, B, H, d,
                        model.x_from_below[static_cast<size_t>(l + 1)][static_cast<size_t>(d)], cell(up).x.zp, d_lengths},
                       s);
      std::swap(in, next);
    }
    for (int d = 0; d < D; ++d) {
      const auto c = static_cast<size_t>((model.layers - 1) * D + d);
      launch_dequantize({out[d], cell(c).h.storage, H, model.h[c].scale, model.h[c].zp, y, T, B, H, D, d, batch_first,
                         d_lengths},
                        s);
    }
    if (h_n != nullptr)
      for (size_t c = 0; c < cells; ++c)
        launch_dequantize({ws.state(c, final_state[c], B, H), cell(c).h.storage, hs, model.h[c].scale, model.h[c].zp,
                           h_n + static_cast<int64_t>(c) * B * H, 1, B, H, 1, 0, false, nullptr},
                          s);
    check(cudaEventRecord(done, s), "marking the GRU forward's end");
    report_non_finite(x, T, B, batch_first, s);
  }

  // Waits for the input check (its event only, not the rest of the forward) and throws the
  // CPU's message for the input the CPU names first (first_non_finite): h0, then x.
  void report_non_finite(const float* x, int64_t T, int64_t B, bool batch_first, cudaStream_t s) const {
    check(cudaEventSynchronize(checked), "quantizing the GRU input");
    const unsigned long long bad_x = check_host[0], bad_h0 = check_host[1];
    switch (first_non_finite(bad_x, bad_h0)) {
      case NonFiniteInput::None: return;
      case NonFiniteInput::H0: fail("GRU h0 element ", bad_h0, " is not finite");
      case NonFiniteInput::X: break;
    }
    const auto i = static_cast<int64_t>(bad_x);
    const int64_t C = model.input_size, row = i / C, t = row / B, b = row % B;
    float v = 0;
    copy_to_host(&v, x + (batch_first ? b * T + t : row) * C + i % C, sizeof v, s, "the bad input element");
    synchronize(s, "reading the bad input element");
    fail("GRU input element ", i, " is ", v, ": inputs must be finite");
  }
};

GpuGru::GpuGru(const QuantizedGru& model, const GpuGruOptions& options) : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.device = usable_device(options.device);
  m.options = options;
  DeviceScope scope(m.device.index);
  m.model = upload_model(model);
  check(cudaStreamCreate(&m.stream), "creating the GRU's stream");
  check(cudaStreamCreateWithFlags(&m.capture, cudaStreamNonBlocking), "creating the GRU's capture stream");
  check(cudaEventCreateWithFlags(&m.done, cudaEventDisableTiming), "creating the GRU's event");
  check(cudaEventRecord(m.done, m.stream), "creating the GRU's event");
  check(cudaEventCreateWithFlags(&m.checked, cudaEventDisableTiming), "creating the GRU's input-check event");
  check(cudaMallocHost(reinterpret_cast<void**>(&m.check_host), 16), "allocating the GRU's input check in host memory");
  m.described.assign(m.model.cells.size(), "");
  for (size_t c = 0; c < m.model.cells.size(); ++c)
    m.described[c] = m.describe(c, 1, m.fast() ? m.plan(c, 1).why : kReferenceRecurrence);
}

GpuGru::~GpuGru() = default;
GpuGru::GpuGru(GpuGru&&) noexcept = default;
GpuGru& GpuGru::operator=(GpuGru&&) noexcept = default;

int64_t GpuGru::input_size() const { return impl_->model.input_size; }
int64_t GpuGru::hidden_size() const { return impl_->model.hidden_size; }
int GpuGru::num_layers() const { return impl_->model.layers; }
bool GpuGru::bidirectional() const { return impl_->model.directions == 2; }
const DeviceInfo& GpuGru::device() const { return impl_->device; }

std::vector<std::string> GpuGru::kernels() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->described;
}

void GpuGru::forward_device(const float* x, const Shape& x_shape, float* y, float* h_n, const GpuRunOptions& o) const {
  const Impl& m = *impl_;
  const auto [T, B] = check_input(m.model, x, x_shape, o.batch_first, o.lengths);
  require(y != nullptr || T * B == 0, "GRU output: null data pointer");
  std::lock_guard lock(m.mutex);
  DeviceScope scope(m.device.index);
  const cudaStream_t s = o.stream != nullptr ? o.stream : m.stream;
  m.prepare(T, B, false, s);
  m.run(x, T, B, o.batch_first, o.lengths, o.h0, y, h_n, s);
}

GruOutput GpuGru::forward(const float* x, const Shape& x_shape, const GruRunOptions& o) const {
  const Impl& m = *impl_;
  const auto [T, B] = check_input(m.model, x, x_shape, o.batch_first, o.lengths);
  const int64_t C = m.model.input_size, H = m.model.hidden_size, cells = static_cast<int64_t>(m.model.cells.size());
  std::lock_guard lock(m.mutex);
  DeviceScope scope(m.device.index);
  m.prepare(T, B, true, m.stream);
  const Workspace& ws = m.ws;
  copy_to_device(ws.ptr(ws.at.x), x, T * B * C * 4, m.stream, "the GRU input");
  if (o.h0 != nullptr) copy_to_device(ws.ptr(ws.at.h0), o.h0, cells * B * H * 4, m.stream, "h0");
  m.run(ws.ptr<float>(ws.at.x), T, B, o.batch_first, o.lengths, o.h0 != nullptr ? ws.ptr<float>(ws.at.h0) : nullptr,
        ws.ptr<float>(ws.at.y), ws.ptr<float>(ws.at.h_n), m.stream);
  GruOutput out;
  out.y.resize(static_cast<size_t>(T * B * m.model.directions * H));
  out.h_n.resize(static_cast<size_t>(cells * B * H));
  copy_to_host(out.y.data(), ws.ptr(ws.at.y), static_cast<int64_t>(out.y.size()) * 4, m.stream, "the GRU output");
  copy_to_host(out.h_n.data(), ws.ptr(ws.at.h_n), static_cast<int64_t>(out.h_n.size()) * 4, m.stream, "h_n");
  synchronize(m.stream, "the GRU forward");
  return out;
}

}  // namespace fixq::cuda
