// GPTQ v1 tensors <-> PackedWeights (formats in fixq/weightonly.h, Part 3). Every shape is
// checked before anything is unpacked; the values themselves are checked by from_parts.
#include <bit>
#include <vector>

#include "fixq/error.h"
#include "fixq/weightonly.h"

namespace fixq {

namespace {

void check_tensor(const char* name, const Shape& shape, size_t values) {
  if (shape.size() != 2) fail("GPTQ ", name, " must have rank 2, has shape ", shape_str(shape));
  if (numel(shape) != static_cast<int64_t>(values))
    fail("GPTQ ", name, " of shape ", shape_str(shape), " holds ", values, " values");
}

}  // namespace

PackedWeights import_gptq(const GptqTensors& t) {
  const int b = t.bits;
  require(b == 2 || b == 4 || b == 8, "GPTQ bits must be 2, 4 or 8 here, not ", b);
  check_tensor("qweight", t.qweight_shape, t.qweight.size());
  check_tensor("qzeros", t.qzeros_shape, t.qzeros.size());
  check_tensor("scales", t.scales_shape, t.scales.size());
  const int64_t per = 32 / b, n = t.qweight_shape[1], groups = t.scales_shape[0];
  // An empty qweight may claim any extent beside its zero one: K = rows * per only after.
  if (t.qweight_shape[0] <= 0 || n <= 0) fail("GPTQ qweight of shape ", shape_str(t.qweight_shape), " is empty");
  const int64_t k = t.qweight_shape[0] * per;  // <= per * qweight.size()
  if (t.scales_shape[1] != n || groups <= 0)
    fail("GPTQ scales of shape ", shape_str(t.scales_shape), " do not match qweight's N = ", n, " columns");
  if (n % per != 0) fail("GPTQ qzeros cannot pack N = ", n, " columns ", per, " per int32");
  if (t.qzeros_shape != Shape{groups, n / per})
    fail("GPTQ qzeros of shape ", shape_str(t.qzeros_shape), " do not match [G, N * ", b, " / 32] = ",
         shape_str({groups, n / per}));

  const uint32_t mask = (1u << b) - 1;
  std::vector<uint8_t> q(static_cast<size_t>(k * n));
  for (int64_t r = 0; r < k / per; ++r)
    for (int64_t c = 0; c < n; ++c) {
      const auto word = std::bit_cast<uint32_t>(t.qweight[static_cast<size_t>(r * n + c)]);
      for (int64_t j = 0; j < per; ++j)
        q[static_cast<size_t>((r * per + j) * n + c)] = static_cast<uint8_t>((word >> (b * j)) & mask);
    }
  // v1 stores zero - 1 in b bits: the stored 2^b - 1 can only be zero 0.
  std::vector<int32_t> zeros(static_cast<size_t>(groups * n));
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n / per; ++c) {
      const auto word = std::bit_cast<uint32_t>(t.qzeros[static_cast<size_t>(g * (n / per) + c)]);
      for (int64_t j = 0; j < per; ++j)
        zeros[static_cast<size_t>(g * n + c * per + j)] = static_cast<int32_t>(((word >> (b * j)) + 1) & mask);
    }
  return PackedWeights::from_parts(b, k, n, q, t.scales, zeros, t.g_idx);
}

GptqTensors export_gptq(const PackedWeights& w) {
  const int b = w.bits();
  const int64_t per = 32 / b, k = w.rows(), n = w.cols(), groups = w.groups();
  if (n % per != 0) fail("GPTQ qzeros cannot pack N = ", n, " columns ", per, " per int32");
  const uint32_t mask = (1u << b) - 1;
  GptqTensors t;
  t.bits = b;
  t.qweight_shape = {k / per, n};
  std::vector<uint32_t> qweight(static_cast<size_t>(k / per * n), 0u);
  for (int64_t r = 0; r < k; ++r)
    for (int64_t c = 0; c < n; ++c)
      qweight[static_cast<size_t>(r / per * n + c)] |= w.code(r, c) << (b * (r % per));
  t.qzeros_shape = {groups, n / per};
  std::vector<uint32_t> qzeros(static_cast<size_t>(groups * (n / per)), 0u);
  t.scales_shape = {groups, n};
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < n; ++c) {
      const auto stored = static_cast<uint32_t>(w.zero(g, c) - 1) & mask;
      qzeros[static_cast<size_t>(g * (n / per) + c / per)] |= stored << (b * (c % per));
      t.scales.push_back(w.scale(g, c));
    }
  for (const uint32_t v : qweight) t.qweight.push_back(std::bit_cast<int32_t>(v));
  for (const uint32_t v : qzeros) t.qzeros.push_back(std::bit_cast<int32_t>(v));
  for (int64_t r = 0; r < k; ++r) t.g_idx.push_back(w.group_of_row(r));
  return t;
}

}  // namespace fixq
