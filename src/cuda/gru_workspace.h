// Private: the device scratch of a GRU forward pass, laid out in one allocation that grows
// to the largest (T, B) seen and is then reused.
#pragma once

#include <cstdint>

#include "cuda/gru_model.h"
#include "cuda/runtime.h"

namespace fixq::cuda::detail {

struct Workspace {
  // Each piece's offset in `memory`; sizes for (T, B) as for_shape computes them.
  struct Layout {
    int64_t in = 0, next = 0;  // quantized layer inputs [T * B, max_x_stride], 2 bytes a value at most
    int64_t wx = 0;            // [T * B, 3H]
    int64_t rh = 0;            // [B, 3H] (the reference path)
    int64_t out[2] = {0, 0};   // each direction's h sequence [T * B, H]
    int64_t state = 0;         // per cell two states [B, state_stride(H)]
    int64_t lengths = 0;       // [B] int64
    int64_t flags = 0;         // two first-bad indices (x, h0)
    int64_t hi = 0, lo = 0;    // a 16-bit input's bytes [T * B, max_x_stride] (split16)
    int64_t acc_hi = 0;        // the high bytes' products [T * B, 3H] (int32)
    int64_t x = 0, y = 0, h0 = 0, h_n = 0;  // floats, host-buffer calls only
    int64_t bytes = 0;
  };
  static Layout for_shape(const DeviceModel& m, int64_t T, int64_t B, bool host_buffers);

  DeviceBuffer memory;
  Layout at;
  int64_t generation = 0;  // bumped on every reallocation: graphs cached by shape hold its pointers

  // Grows the allocation to fit (T, B); throws OutOfMemory naming the shape.
  void ensure(const DeviceModel& m, int64_t T, int64_t B, bool host_buffers);
  template <class P = void>
  P* ptr(int64_t offset) const {
    return reinterpret_cast<P*>(static_cast<unsigned char*>(memory.get()) + offset);
  }
  void* state(size_t cell, int which, int64_t B, int64_t H) const {
    return ptr(at.state + (static_cast<int64_t>(cell) * 2 + which) * B * state_stride(H) * 2);
  }
};

}  // namespace fixq::cuda::detail
