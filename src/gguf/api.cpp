// The front end of fixq/gguf.h: checks arguments once, then runs the kernels of the
// active instruction set.
#include <algorithm>
#include <cmath>
#include <string>

#include "fixq/error.h"
#include "fixq/gguf.h"
#include "gguf/kernels.h"

namespace fixq::gguf {

namespace {

// Each operation walks the registry for its own kernel only: once per call, and the
// registry's trace (last_picked, which the kernel report's test reads) is then that kernel's
// family. (detail::active_kernels picks all four, the last being matvec's.)
template <class Get>
auto kernel_of(Get get) {
  return detail::registry().pick(get).kernel;
}
std::size_t index_of(Type type) { return static_cast<std::size_t>(type); }

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
  const std::size_t i = index_of(type);
  kernel_of([i](const detail::GgufKernels& k) { return k.format[i].quantize; })(x, n / t.block_elems, out);
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
  const std::size_t i = index_of(type);
  kernel_of([i](const detail::GgufKernels& k) { return k.format[i].dequantize; })(packed.data(), n / traits(type).block_elems,
                                                                                  out);
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

namespace {

const TypeTraits& dot_partner(const TypeTraits& t) {
  if (!t.dot_type) fail(t.name, " has no dot product of its own (it is the right-hand operand of other formats)");
  return traits(*t.dot_type);
}

}  // namespace

float dot(Type type, std::span<const std::byte> x, std::span<const std::byte> y) {
  const TypeTraits& t = traits(type);
  const TypeTraits& ty = dot_partner(t);
  const int64_t nx = packed_elements(type, x.size()), ny = packed_elements(ty.type, y.size());
  if (nx != ny)
    fail("dot ", t.name, " . ", ty.name, ": ", nx, " elements (", x.size(), " bytes) against ", ny, " (", y.size(),
         " bytes)");
  if (nx == 0) return 0.0f;
  const std::size_t i = index_of(type);
  return kernel_of([i](const detail::GgufKernels& k) { return k.format[i].dot; })(x.data(), y.data(), nx / t.block_elems);
}

void matvec(Type type, std::span<const std::byte> x, int64_t rows, std::span<const std::byte> y, float* out) {
  const TypeTraits& t = traits(type);
  const TypeTraits& ty = dot_partner(t);
  require(rows >= 0, "matvec ", t.name, " . ", ty.name, ": negative row count ", rows);
  const int64_t n = packed_elements(ty.type, y.size());
  if (n % t.block_elems != 0)
    fail("matvec ", t.name, " . ", ty.name, ": the activation row has ", n, " elements, not a multiple of ",
         t.name, "'s block of ", t.block_elems);
  const std::size_t row_bytes = packed_size(type, n);
  const bool whole_rows = row_bytes == 0 ? x.empty()
                                         : x.size() % row_bytes == 0 && x.size() / row_bytes == static_cast<std::size_t>(rows);
  if (!whole_rows)
    fail("matvec ", t.name, " . ", ty.name, ": ", rows, " rows of ", n, " elements (", row_bytes, " bytes each) against ",
         x.size(), " bytes of ", t.name, " weights");
  if (rows == 0) return;
  require(out != nullptr, "matvec ", t.name, ": null output for ", rows, " rows");
  if (n == 0) {
    std::fill(out, out + rows, 0.0f);
    return;
  }
  const std::size_t i = index_of(type);
  const int64_t blocks = n / t.block_elems;
  if (const auto mv = detail::registry().find([i](const detail::GgufKernels& k) { return k.format[i].matvec; }).kernel) {
    mv(x.data(), rows, blocks, y.data(), out);
    return;
  }
  const auto dot = kernel_of([i](const detail::GgufKernels& k) { return k.format[i].dot; });
  for (int64_t r = 0; r < rows; ++r) out[r] = dot(x.data() + static_cast<std::size_t>(r) * row_bytes, y.data(), blocks);
}

std::vector<float> matvec(Type type, std::span<const std::byte> x, int64_t rows, std::span<const std::byte> y) {
  require(rows >= 0, "matvec ", traits(type).name, ": negative row count ", rows);
  std::vector<float> out(static_cast<std::size_t>(rows));
  matvec(type, x, rows, y, out.data());
  return out;
}

}  // namespace fixq::gguf
