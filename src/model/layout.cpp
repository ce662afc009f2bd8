// Graph inputs and outputs between their external layouts and the internal arrays.
#include "model/layout.h"

#include "fixq/error.h"

namespace fixq::model_detail {

std::string input_name(const ModelValue& v) { return "model input '" + v.name + "'"; }

SeqDims sequence_dims(const ModelValue& v, const Shape& shape, const std::string& what) {
  const std::string& a = v.layout.axes;
  const int64_t C = v.features;
  if (a == "TC") {
    require(shape.size() == 2 && shape[1] == C, what, " (layout TC) must be [T, ", C, "], got ", shape_str(shape));
    return {1, shape[0]};
  }
  require(shape.size() == 3, what, " (layout ", a, ") must be 3-D, got ", shape_str(shape));
  if (a == "BTC") {
    require(shape[2] == C, what, " (layout BTC) must be [B, T, ", C, "], got ", shape_str(shape));
    return {shape[0], shape[1]};
  }
  if (a == "TBC") {
    require(shape[2] == C, what, " (layout TBC) must be [T, B, ", C, "], got ", shape_str(shape));
    return {shape[1], shape[0]};
  }
  require(a == "BCT", what, ": unknown layout '", a, "'");
  require(shape[1] == C, what, " (layout BCT) must be [B, ", C, ", T], got ", shape_str(shape));
  return {shape[0], shape[2]};
}

Shape external_shape(const ModelValue& v, int64_t B, int64_t T) {
  const int64_t C = v.features;
  if (v.kind == ValueKind::State) return {v.rows, B, C};
  const std::string& a = v.layout.axes;
  if (a == "BC") return {B, C};  // the last frame only
  if (a == "TC") return {T, C};
  if (a == "TBC") return {T, B, C};
  if (a == "BCT") return {B, C, T};
  return {B, T, C};
}

namespace {

// Index of element (b, t, c) in the external layout.
int64_t external_index(const std::string& a, int64_t B, int64_t T, int64_t C, int64_t b, int64_t t, int64_t c) {
  if (a == "TBC") return (t * B + b) * C + c;
  if (a == "BCT") return (b * C + c) * T + t;
  return (b * T + t) * C + c;  // BTC, TC (B = 1)
}

template <class E>
std::vector<E> permute(const ModelValue& v, const std::vector<E>& data, int64_t B, int64_t T, bool inward) {
  if (v.kind == ValueKind::Sequence && v.layout.axes == "BC") {
    // An output's last frame (validate() keeps "BC" off inputs): frame T - 1 of each sequence.
    require(!inward, "model input '", v.name, "': layout BC (the last frame) is an output layout only");
    require(T >= 1, "model output '", v.name, "' (layout BC) is the last frame of sequences of ", T, " frames");
    const int64_t C = v.features;
    std::vector<E> out(static_cast<size_t>(B * C));
    for (int64_t b = 0; b < B; ++b)
      for (int64_t c = 0; c < C; ++c)
        out[static_cast<size_t>(b * C + c)] = data[static_cast<size_t>((b * T + T - 1) * C + c)];
    return out;
  }
  if (v.kind == ValueKind::State || v.layout.axes == "BTC" || v.layout.axes == "TC") return data;
  const int64_t C = v.features;
  std::vector<E> out(data.size());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t t = 0; t < T; ++t)
      for (int64_t c = 0; c < C; ++c) {
        const auto i = static_cast<size_t>((b * T + t) * C + c);
        const auto e = static_cast<size_t>(external_index(v.layout.axes, B, T, C, b, t, c));
        if (inward) out[i] = data[e];
        else out[e] = data[i];
      }
  return out;
}

}  // namespace

template <class E>
std::vector<E> to_internal(const ModelValue& v, const std::vector<E>& data, int64_t B, int64_t T) {
  return permute(v, data, B, T, true);
}
template <class E>
std::vector<E> to_external(const ModelValue& v, const std::vector<E>& data, int64_t B, int64_t T) {
  return permute(v, data, B, T, false);
}

template std::vector<float> to_internal(const ModelValue&, const std::vector<float>&, int64_t, int64_t);
template std::vector<float> to_external(const ModelValue&, const std::vector<float>&, int64_t, int64_t);
template std::vector<int32_t> to_internal(const ModelValue&, const std::vector<int32_t>&, int64_t, int64_t);
template std::vector<int32_t> to_external(const ModelValue&, const std::vector<int32_t>&, int64_t, int64_t);

}  // namespace fixq::model_detail
