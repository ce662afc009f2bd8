// float64 to float32 for the loaders (narrow.h).
#include "io/narrow.h"

#include <cmath>
#include <limits>

#include "fixq/error.h"

namespace fixq::io_detail {

std::vector<float> narrow_to_float32(const std::vector<double>& wide, const std::string& what) {
  std::vector<float> out(wide.size());
  for (std::size_t i = 0; i < wide.size(); ++i) {
    if (std::isfinite(wide[i]) && std::fabs(wide[i]) > std::numeric_limits<float>::max())
      fail(what, " element ", i, " = ", wide[i], " is beyond the float32 range");
    out[i] = static_cast<float>(wide[i]);
  }
  return out;
}

}  // namespace fixq::io_detail
