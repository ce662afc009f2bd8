// Private: float64 tensor data as float32, for every loader that accepts float64 weights
// (GGUF, safetensors, npy, ONNX).
#pragma once

#include <string>
#include <vector>

namespace fixq::io_detail {

// Each value rounded to float32 (to nearest, ties to even: the conversion's own rounding).
// A finite value beyond the float32 range throws fixq::Error "<what> element <i> = <v> is
// beyond the float32 range" (checked before converting it: the conversion is not defined
// for it); infinities and NaN convert as they are.
std::vector<float> narrow_to_float32(const std::vector<double>& wide, const std::string& what);

}  // namespace fixq::io_detail
