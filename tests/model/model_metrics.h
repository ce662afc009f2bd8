// Cosine and SNR of a quantized model's outputs against float, for the whole-model tests.
#pragma once

#include <cmath>
#include <vector>

#include "fixq/model.h"

namespace fixq::test {

struct OutputError {
  double cosine = 1.0;
  double snr_db = 0.0;
};

inline OutputError output_error(const std::vector<float>& ref, const std::vector<float>& got) {
  double dot = 0, rr = 0, gg = 0, ee = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    dot += double(ref[i]) * got[i];
    rr += double(ref[i]) * ref[i];
    gg += double(got[i]) * got[i];
    ee += (double(ref[i]) - got[i]) * (double(ref[i]) - got[i]);
  }
  OutputError e;
  e.cosine = rr == 0 && gg == 0 ? 1.0 : dot / std::sqrt(rr * gg);
  e.snr_db = ee == 0 ? 200.0 : 10.0 * std::log10(rr / ee);
  return e;
}

}  // namespace fixq::test
