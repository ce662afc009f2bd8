// Workspace: the forward pass's device scratch.
#include "cuda/gru_workspace.h"

#include <algorithm>

namespace fixq::cuda::detail {

Workspace::Layout Workspace::for_shape(const DeviceModel& m, int64_t T, int64_t B, bool host_buffers) {
  Layout l;
  int64_t end = 0;
  auto take = [&](int64_t bytes) {
    const int64_t at = end;
    end += (bytes + 255) / 256 * 256;
    return at;
  };
  const int64_t H = m.hidden_size, rows = T * B, cells = static_cast<int64_t>(m.cells.size());
  l.in = take(rows * m.max_x_stride * 2);
  l.next = take(rows * m.max_x_stride * 2);
  l.wx = take(rows * 3 * H * 2);
  l.rh = take(B * 3 * H * 2);
  l.out[0] = take(rows * H * 2);
  l.out[1] = take(m.directions == 2 ? rows * H * 2 : 0);
  l.state = take(cells * 2 * B * state_stride(H) * 2);
  l.lengths = take(B * 8);
  l.flags = take(2 * 8);
  const bool split = std::any_of(m.cells.begin(), m.cells.end(),
                                 [](const DeviceCell& c) { return input_projection(c) == InputProjection::SplitBytes; });
  l.hi = take(split ? rows * m.max_x_stride : 0);
  l.lo = take(split ? rows * m.max_x_stride : 0);
  l.acc_hi = take(split ? rows * 3 * H * 4 : 0);
  if (host_buffers) {
    l.x = take(rows * m.input_size * 4);
    l.y = take(rows * m.directions * H * 4);
    l.h0 = take(cells * B * H * 4);
    l.h_n = take(cells * B * H * 4);
  }
  l.bytes = end;
  return l;
}

void Workspace::ensure(const DeviceModel& m, int64_t T, int64_t B, bool host_buffers) {
  const Layout want = for_shape(m, T, B, host_buffers);
  if (want.bytes <= memory.bytes()) {  // the pieces of a shape always sit at the same offsets
    at = want;
    return;
  }
  memory = DeviceBuffer();  // free first: the old and the new need not fit together
  ++generation;
  memory = DeviceBuffer(want.bytes, fixq::detail::cat("the GRU forward of T = ", T, ", B = ", B, " (sequences, states and "
                                                      "projections)"));
  at = want;
}

}  // namespace fixq::cuda::detail
