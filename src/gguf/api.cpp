// The front end of fixq/gguf.h: checks arguments once, then runs the kernels of the
// active instruction set.
#include <cmath>
#include <string>

#include "fixq/error.h"
#include "fixq/gguf.h"
#include "gguf/kernels.h"

namespace fixq::gguf {

namespace {

detail::FormatKernels active_kernels(Type type) { return detail::active_kernels(type); }

int64_t first_nonfinite(const float* x, int64_t n) {
  return detail::registry().pick([](const detail::GgufKernels& k) { return k.first_nonfinite; }).kernel(x, n);
}

std::string describe(float v) {
  if (std::isnan(v)) return "NaN";
  return v > 0 ? "+inf" : "-inf";
}

}  // namespace

std::size_t packed_size(Type type, int64_t n) {
  const TypeTraits& t = traits(type);
  if (n < 0 || n % t.block_elems != 0)
    fail(t.name, " packs whole blocks of ", t.block_elems, " elements; ", n, " elements are not a multiple of ",
         t.block_elems);
  // n / block_elems * block_bytes < 1.15 n: fits size_t for every int64 n.
  return static_cast<std::size_t>(n / t.block_elems) * t.block_bytes;
}

std::size_t packed_size(Type type, const Shape& shape) {
  const TypeTraits& t = traits(type);
  const int64_t n = numel(shape);
  if (shape.empty() || shape.back() % t.block_elems != 0)
    fail(t.name, " packs each row in blocks of ", t.block_elems,
         " elements, so the last dimension must be a multiple of ", t.block_elems, "; shape ", shape_str(shape),
         shape.empty() ? " is a scalar" : " is not");
  return packed_size(type, n);
}

int64_t packed_elements(Type type, std::size_t bytes) {
  const TypeTraits& t = traits(type);
  if (bytes % t.block_bytes != 0)
    fail(bytes, " bytes are not a whole number of ", t.name, " blocks (", t.block_bytes, " bytes each)");
  return static_cast<int64_t>(bytes / t.block_bytes) * t.block_elems;
}

void quantize(Type type, const float* x, int64_t n, std::byte* out) {
  const TypeTraits& t = traits(type);
  packed_size(type, n);
  if (n == 0) return;
  require(x != nullptr && out != nullptr, "quantize to ", t.name, ": null pointer for ", n, " elements");
  const int64_t bad = first_nonfinite(x, n);
  if (bad >= 0)
    fail("quantize to ", t.name, ": element ", bad, " (in block ", bad / t.block_elems, ") is ", describe(x[bad]),
         "; ggml's formats hold finite values only");
  active_kernels(type).quantize(x, n / t.block_elems, out);
}

std::vector<std::byte> quantize(Type type, std::span<const float> x) {
  const auto n = static_cast<int64_t>(x.size());
  std::vector<std::byte> out(packed_size(type, n));
  quantize(type, x.data(), n, out.data());
  return out;
}

void dequantize(Type type, std::span<const std::byte> packed, float* out) {
  const int64_t n = packed_elements(type, packed.size());
  if (n == 0) return;
  require(out != nullptr, "dequantize ", traits(type).name, ": null output for ", n, " elements");
  active_kernels(type).dequantize(packed.data(), n / traits(type).block_elems, out);
}

std::vector<float> dequantize(Type type, std::span<const std::byte> packed) {
  std::vector<float> out(static_cast<std::size_t>(packed_elements(type, packed.size())));
  dequantize(type, packed, out.data());
  return out;
}

std::vector<float> dequantize(Type type, std::span<const std::byte> packed, const Shape& shape) {
  const std::size_t want = packed_size(type, shape);
  if (packed.size() != want)
    fail(traits(type).name, " data of shape ", shape_str(shape), " must be ", want, " bytes; got ", packed.size(),
         packed.size() < want ? " (truncated)" : " (oversized)");
  return dequantize(type, packed);
}

float dot(Type type, std::span<const std::byte> x, std::span<const std::byte> y) {
  const TypeTraits& t = traits(type);
  if (!t.dot_type) fail(t.name, " has no dot product of its own (it is the right-hand operand of other formats)");
  const TypeTraits& ty = traits(*t.dot_type);
  const int64_t nx = packed_elements(type, x.size()), ny = packed_elements(ty.type, y.size());
  if (nx != ny)
    fail("dot ", t.name, " . ", ty.name, ": ", nx, " elements (", x.size(), " bytes) against ", ny, " (", y.size(),
         " bytes)");
  if (nx == 0) return 0.0f;
  return active_kernels(type).dot(x.data(), y.data(), nx / t.block_elems);
}

}  // namespace fixq::gguf
