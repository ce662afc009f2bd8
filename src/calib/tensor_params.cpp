// params_from_tensor with a calibration method (fixq/calib.h): one tensor's parameters,
// its ranges taken by the method from the tensor alone.
#include "fixq/calib.h"
#include "fixq/error.h"

namespace fixq {

QuantParams params_from_tensor(const float* x, const Shape& shape, const QuantScheme& scheme, CalibMethod method) {
  if (scheme.granularity != Granularity::PerTensor && scheme.granularity != Granularity::PerChannel) {
    require(method == CalibMethod::MinMax, "calibration ", to_string(method),
            " supports per_tensor and per_channel granularity; use minmax with ", to_string(scheme.granularity));
    return params_from_tensor(x, shape, scheme);
  }
  ObserverConfig config;
  config.method = method;
  config.per_channel = scheme.granularity == Granularity::PerChannel;
  config.axis = scheme.axis;
  Observer observer(config);
  observer.observe(x, shape);
  return params_from_ranges(scheme, shape, observer.ranges(scheme));
}

}  // namespace fixq
