#include "cli/fake_quant.h"

#include <cmath>
#include <cstdio>

namespace fixq::cli {

ErrorStats quantization_error(const std::vector<float>& x, const Shape& shape, const QuantParams& params) {
  std::vector<int32_t> q(x.size());
  std::vector<float> back(x.size());
  quantize(x.data(), shape, params, q.data());
  dequantize(q.data(), shape, params, back.data());
  ErrorStats stats;
  stats.add(x.data(), back.data(), x.size());
  return stats;
}

std::string fmt_db(double db) {
  if (std::isinf(db)) return db > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", db);
  return buf;
}

}  // namespace fixq::cli
