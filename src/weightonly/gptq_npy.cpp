// GPTQ tensors as .npy files (fixq/npy.h): float16 scales are decoded exactly with
// fixq/lowp.h, and written back as float16 whenever that loses nothing.
#include <cstring>
#include <filesystem>
#include <limits>
#include <vector>

#include "fixq/error.h"
#include "fixq/lowp.h"
#include "fixq/npy.h"
#include "fixq/weightonly.h"

namespace fixq {

namespace {

std::vector<float> load_scales(const std::string& path, Shape* shape) {
  const NpyArray a = load_npy(path);
  if (a.dtype != "<f2") return load_npy_f32(path, shape);
  *shape = a.shape;
  std::vector<uint16_t> codes(a.data.size() / 2);
  std::memcpy(codes.data(), a.data.data(), a.data.size());
  std::vector<float> v(codes.size());
  lowp_decode(LowpType::Fp16, codes.data(), static_cast<int64_t>(codes.size()), v.data());
  return v;
}

std::vector<int32_t> load_g_idx(const std::string& path) {
  const NpyArray a = load_npy(path);
  if (a.shape.size() != 1) fail(path, ": g_idx must have rank 1, has shape ", shape_str(a.shape));
  if (a.dtype == "<i4") return load_npy_i32(path);
  if (a.dtype != "<i8") fail(path, ": g_idx must be <i4 or <i8, not ", a.dtype);
  std::vector<int32_t> v;
  for (const int64_t g : load_npy_i64(path)) {
    if (g < std::numeric_limits<int32_t>::min() || g > std::numeric_limits<int32_t>::max())
      fail(path, ": g_idx entry ", g, " does not fit in int32");
    v.push_back(static_cast<int32_t>(g));
  }
  return v;
}

}  // namespace

GptqTensors load_gptq_npy(const std::string& prefix, int bits) {
  GptqTensors t;
  t.bits = bits;
  t.qweight = load_npy_i32(prefix + "qweight.npy", &t.qweight_shape);
  t.qzeros = load_npy_i32(prefix + "qzeros.npy", &t.qzeros_shape);
  t.scales = load_scales(prefix + "scales.npy", &t.scales_shape);
  if (std::filesystem::exists(prefix + "g_idx.npy")) t.g_idx = load_g_idx(prefix + "g_idx.npy");
  return t;
}

void save_gptq_npy(const std::string& prefix, const GptqTensors& t) {
  save_npy_i32(prefix + "qweight.npy", t.qweight.data(), t.qweight_shape);
  save_npy_i32(prefix + "qzeros.npy", t.qzeros.data(), t.qzeros_shape);
  std::vector<uint16_t> half(t.scales.size());
  lowp_encode(LowpType::Fp16, t.scales.data(), static_cast<int64_t>(half.size()), half.data());
  bool exact = true;
  for (size_t i = 0; i < half.size() && exact; ++i) exact = lowp_decode(LowpType::Fp16, half[i]) == t.scales[i];
  if (exact) {
    NpyArray a{"<f2", t.scales_shape, std::vector<std::byte>(half.size() * 2)};
    std::memcpy(a.data.data(), half.data(), a.data.size());
    save_npy(prefix + "scales.npy", a);
  } else {
    save_npy_f32(prefix + "scales.npy", t.scales.data(), t.scales_shape);
  }
  if (!t.g_idx.empty()) save_npy_i32(prefix + "g_idx.npy", t.g_idx.data(), {static_cast<int64_t>(t.g_idx.size())});
}

}  // namespace fixq
