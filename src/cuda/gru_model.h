// Private: a QuantizedGru's integer plan copied to one GPU: each cell's weights (rows padded
// for the kernels), column sums, per-row scales, unit constants and activation tables in
// one device allocation, and what the forward pass needs beside them.
#pragma once

#include <cstdint>
#include <vector>

#include "cuda/gru_kernels.h"
#include "cuda/runtime.h"
#include "fixq/qgru.h"

namespace fixq::cuda::detail {

// Per-tensor quantization of a float tensor: layer 0's x, each cell's h.
struct FloatQ {
  float scale = 1.0f;
  int32_t zp = 0;
};

struct DeviceModel {
  int64_t input_size = 0, hidden_size = 0;
  int layers = 1, directions = 1;
  std::vector<DeviceCell> cells;       // [layer * directions + direction], pointers into `memory`
  std::vector<FloatQ> h;               // per cell: its h parameters (h0 in, y and h_n out)
  FloatQ x;                            // layer 0's x parameters
  std::vector<std::vector<Rescale>> x_from_below;  // [layer][direction below]: layers above the first
  int64_t max_x_stride = 0;            // the widest layer input, in elements (rows of 16 bytes' multiples)
  DeviceBuffer memory;

  // Elements per row of cell c's quantized input (its K rounded up to 16 bytes' worth).
  int64_t x_stride(size_t cell) const { return (cells[cell].input_size + 15) / 16 * 16; }
};

// Copies the model's plan to the current device. Throws OutOfMemory when it does not fit.
DeviceModel upload_model(const QuantizedGru& model);

// The model's cells as upload_model describes them, [layer * directions + direction], before
// the upload: the weight, sum and scale pointers null, the unit constants' pointing into the
// model's host plan. What the kernel choices read (input_projection, the recurrence's
// shape), on the host, without a device.
std::vector<DeviceCell> host_cells(const QuantizedGru& model);

}  // namespace fixq::cuda::detail
