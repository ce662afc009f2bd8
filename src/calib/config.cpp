// Calibration method names and the validation of ObserverConfig (fixq/calib.h).
#include <cmath>

#include "fixq/calib.h"
#include "fixq/error.h"

namespace fixq {

std::string to_string(CalibMethod method) {
  switch (method) {
    case CalibMethod::MinMax:
      return "minmax";
    case CalibMethod::Ema:
      return "ema";
    case CalibMethod::Percentile:
      return "percentile";
    case CalibMethod::Mse:
      return "mse";
  }
  fail("unknown calibration method ", static_cast<int>(method));
}

CalibMethod parse_calib_method(std::string_view name) {
  for (CalibMethod m : kCalibMethods)
    if (name == to_string(m)) return m;
  fail("unknown calibration method \"", name, "\": expected minmax, ema, percentile or mse");
}

void ObserverConfig::validate() const {
  to_string(method);  // rejects a value outside the enum
  // NaN fails every comparison below, so it is rejected too.
  require(ema_decay > 0.0 && ema_decay < 1.0, "observer config: ema_decay ", ema_decay,
          " must lie in (0, 1) (0.9 keeps 90% of the old range per batch)");
  require(percentile > 50.0 && percentile <= 100.0, "observer config: percentile ", percentile,
          " must lie in (50, 100] (e.g. 99.99)");
  require(bins >= 64 && bins <= (1 << 20), "observer config: bins ", bins, " must lie in [64, 1048576]");
}

}  // namespace fixq
