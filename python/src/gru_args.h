// python/src/gru_args.h — the arguments every GRU forward takes from Python (x, h0,
// lengths, batch_first), checked once here so the float and the integer GRU agree.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "bindings.h"
#include "fixq/gru.h"
#include "fixq/qgru.h"

namespace fixq::py {

// config: "int8" | "int16" | GruQuantConfig | dict | os.PathLike of a JSON file, told apart
// by type; scales for the named bases (bind_qgru.cpp).
GruQuantConfig config_arg(const pyb::object& config, const pyb::object& scales);

// The layout of a GRU: what its inputs must look like.
struct GruDims {
  int64_t input_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 1;
  int64_t directions = 1;
};

// x, h0 and lengths as the C++ API takes them; the arrays are held so the pointers stay valid.
struct GruArgs {
  carray<float> x;
  carray<float> h0;
  std::vector<int64_t> lengths;
  Shape x_shape;
  int64_t T = 0, B = 0;
  GruRunOptions options;  // points into this object: do not copy it after make_gru_args
};

inline std::vector<int64_t> lengths_arg(const pyb::object& obj, int64_t B) {
  const pyb::array a = pyb::array::ensure(obj);
  if (!a || (a.dtype().kind() != 'i' && a.dtype().kind() != 'u' && a.size() > 0))
    fail("lengths: expected a 1-D integer array of ", B, " sequence lengths");
  if (a.ndim() != 1 || a.shape(0) != B)
    fail("lengths: expected ", B, " lengths (one per batch item), got shape ", shape_str(shape_of(a)));
  const carray<int64_t> l = carray<int64_t>::ensure(a);
  return std::vector<int64_t>(l.data(), l.data() + l.size());
}

// h0 of shape [layers * directions, B, H] ("streams" take [layers, B, H]).
inline carray<float> h0_arg(const pyb::object& obj, int64_t cells, int64_t B, int64_t H) {
  carray<float> h = as_float_array(obj, "h0");
  const Shape want{cells, B, H};
  if (shape_of(h) != want) fail("h0: expected shape ", shape_str(want), " (layers*directions, batch, hidden), got ", shape_str(shape_of(h)));
  return h;
}

inline void make_gru_args(GruArgs& a, const GruDims& d, const pyb::object& x, const pyb::object& h0,
                          const pyb::object& lengths, bool batch_first) {
  a.x = as_float_array(x, "x");
  a.x_shape = shape_of(a.x);
  if (a.x_shape.size() != 3 || a.x_shape[2] != d.input_size)
    fail("x: expected shape ", batch_first ? "[batch, time, " : "[time, batch, ", d.input_size, "], got ", shape_str(a.x_shape));
  a.T = batch_first ? a.x_shape[1] : a.x_shape[0];
  a.B = batch_first ? a.x_shape[0] : a.x_shape[1];
  a.options.batch_first = batch_first;
  if (!h0.is_none()) {
    a.h0 = h0_arg(h0, d.num_layers * d.directions, a.B, d.hidden_size);
    a.options.h0 = a.h0.data();
  }
  if (!lengths.is_none()) {
    a.lengths = lengths_arg(lengths, a.B);
    a.options.lengths = a.lengths;
  }
}

// (y, h_n) as numpy arrays owning the output's buffers.
inline pyb::tuple gru_result(GruOutput&& out, const GruArgs& a, const GruDims& d) {
  const int64_t F = d.directions * d.hidden_size;
  const Shape y_shape = a.options.batch_first ? Shape{a.B, a.T, F} : Shape{a.T, a.B, F};
  const Shape h_shape{d.num_layers * d.directions, a.B, d.hidden_size};
  return pyb::make_tuple(to_numpy(std::move(out.y), y_shape), to_numpy(std::move(out.h_n), h_shape));
}

// One frame for a stream of `batch` items: [B, C], or [C] when B == 1 (then `flat`).
inline carray<float> frame_arg(const pyb::object& obj, int64_t batch, int64_t C, bool& flat) {
  carray<float> f = as_float_array(obj, "frame");
  const Shape s = shape_of(f);
  flat = s.size() == 1 && batch == 1 && s[0] == C;
  if (!flat && !(s.size() == 2 && s[0] == batch && s[1] == C))
    fail("frame: expected shape ", shape_str(Shape{batch, C}), batch == 1 ? " (or [" + std::to_string(C) + "])" : "",
         ", got ", shape_str(s));
  return f;
}

// A stream (GruStream or QuantizedGruStream) plus what Python needs to check frames and
// shape results; one wrapper serves the float and the integer GRU.
template <class Stream>
struct PyStream {
  Stream stream;
  GruDims dims;
  int64_t batch;
};

template <class Stream, class Model>
PyStream<Stream> make_py_stream(const Model& m, const GruDims& d, int64_t batch, const pyb::object& h0) {
  require(batch >= 1, "stream: batch must be >= 1, got ", batch);
  require(d.directions == 1, "stream: a bidirectional GRU needs the whole sequence; use forward()");
  if (h0.is_none()) return {Stream(m, batch), d, batch};
  const carray<float> h = h0_arg(h0, d.num_layers, batch, d.hidden_size);
  return {Stream(m, batch, h.data()), d, batch};
}

// The GIL stays held: a step is short, and it serialises steps of one stream, whose state
// two threads must not advance at once.
template <class Stream>
pyb::array_t<float> py_stream_step(PyStream<Stream>& s, const pyb::object& frame) {
  bool flat = false;
  const carray<float> f = frame_arg(frame, s.batch, s.dims.input_size, flat);
  std::vector<float> h = s.stream.step(f.data());
  return to_numpy(std::move(h), flat ? Shape{s.dims.hidden_size} : Shape{s.batch, s.dims.hidden_size});
}

template <class Stream>
pyb::array_t<float> py_stream_state(const PyStream<Stream>& s) {
  return to_numpy(std::vector<float>(s.stream.state()), Shape{s.dims.num_layers, s.batch, s.dims.hidden_size});
}

}  // namespace fixq::py
