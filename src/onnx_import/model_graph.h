// Private to load_model_onnx: what the importer knows about each ONNX tensor while it walks
// the graph. A tensor is one of
//   Const    a constant (initializer, Constant, or folded from constants: shape_fold.h);
//   Zeros    a ConstantOfShape of zeros whose shape depends on the data (torch's initial
//            GRU state when none is given): an absent initial state;
//   Data     a view of one value of the fixq graph: which of the value's axes each ONNX
//            axis is (the layout operators only permute, add or drop unit axes, so that
//            each graph input and output gets its external layout);
//   Inner    an output of a GRU layer inside a multi-layer chain, which fixq runs as one
//            operator: only the layer join (Squeeze / Transpose / Reshape) may read it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnx_import/shape_fold.h"

namespace fixq::onnx_import {

// The axes of a Data tensor. B, T: the value's batch and time; C: its features; U: an axis
// of extent 1; D, H: a bidirectional GRU's Y, features split into direction (outer) and
// hidden (inner); S: a State's rows. Ids >= kFirstOpen: an axis of a graph input that is B or
// T, which one known only once an operator needs it (bind()).
enum Axis : int { kB = 0, kT = 1, kC = 2, kU = 3, kD = 4, kH = 5, kS = 6, kFirstOpen = 100 };

struct Data {
  int value = -1;          // the ModelValue
  std::vector<int> axes;   // one Axis (or open id) per ONNX axis
  bool last_frame = false; // the tensor is the value's last frame only (h_n[-1] of a GRU): no T axis
  int64_t row0 = 0, row1 = 0;  // a State: its rows [row0, row1)
  int64_t pad_left = 0;    // zero frames a Pad put before the first (only a Conv may read them)
  std::string pad_node;    // that Pad, for messages
  int64_t trail = 0;       // frames a Conv's end padding added after the last (a Slice drops them)
  std::string trail_node;  // that Conv
};

struct Tensor {
  enum Kind { Const, Zeros, DataView, Inner } kind = Const;
  Folded constant;  // Const; Zeros: the shape as a 1-D Folded of Dims
  Data data;        // DataView
  int chain = -1;   // Inner: the GRU chain
};

}  // namespace fixq::onnx_import
