// The one-line reports of ErrorStats: llama.cpp quantize-stats' line and fixq's summary.
#include <cstdio>
#include <string>

#include "fixq/metrics.h"

namespace fixq {
namespace {

// std::snprintf into a std::string of exactly the formatted length.
template <class... Args>
std::string printf_string(const char* format, Args... args) {
  const int len = std::snprintf(nullptr, 0, format, args...);
  std::string out(static_cast<std::size_t>(len), '\0');
  std::snprintf(out.data(), out.size() + 1, format, args...);
  return out;
}

}  // namespace

std::string ErrorStats::llama_line(const std::string& name) const {
  // quantize-stats' print_error_stats prints exactly this, plus a newline.
  return printf_string("%-50s: rmse %.8f, maxerr %.8f, 95pct<%.4f, median<%.4f", name.c_str(),
                       rmse(), maxerr(), quantile(0.95), quantile(0.5));
}

std::string ErrorStats::summary() const {
  return printf_string("n %llu, nmse %.6e, mae %.8f, cosine %.8f, sqnr %.2f dB",
                       static_cast<unsigned long long>(count()), nmse(), mae(), cosine(),
                       sqnr_db());
}

}  // namespace fixq
