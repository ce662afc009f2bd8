// QuantizedModel::quantize: the calibration run, then the plan of every value's bits and
// range (searched by output error; for auto, its bits chosen), then the integer model
// (docs/spec.md 10.2). The pieces are in quant_*.cpp.
#include <cmath>

#include "fixq/error.h"
#include "model/quant_state.h"

namespace fixq {

void ModelQuantConfig::validate() const {
  require(preset == "int8" || preset == "int16" || preset == "auto",
          "model quantization preset must be int8, int16 or auto, got '", preset, "'");
  observer.validate();
  require(!observer.per_channel, "model quantization: activations are per tensor; the observer must not be per_channel");
  require(search_sweeps >= 0 && search_sweeps <= 16, "model quantization: search_sweeps must be in [0, 16], got ",
          search_sweeps);
  require(std::isfinite(target_cosine) && target_cosine > 0.0 && target_cosine <= 1.0,
          "model quantization: the target cosine must be in (0, 1], got ", target_cosine);
}

namespace model_detail {

std::unique_ptr<QuantizedModel::Impl> quantize_model(const Model& model,
                                                     const std::vector<std::vector<ModelArray>>& batches,
                                                     const ModelQuantConfig& config) {
  const Calibration cal = calibrate(model, batches, config);
  const Builder b(cal);
  Plan bits;
  bits.bits.assign(model.values.size(), config.preset == "int16" ? 16 : 8);
  Builder::Score s;
  Plan plan = search_ranges(b, bits, config.search_sweeps, &s);
  if (config.preset == "auto") plan = auto_bits(b, plan, &s);
  std::unique_ptr<QuantizedModel::Impl> m = b.build(plan);
  m->calib_cosine = s.cosine;
  return m;
}

}  // namespace model_detail

QuantizedModel QuantizedModel::quantize(const Model& model, const std::vector<std::vector<ModelArray>>& calib_batches,
                                        const ModelQuantConfig& config) {
  model.validate();
  config.validate();
  require(!calib_batches.empty(), "model quantization: no calibration batches");
  return QuantizedModel(model_detail::quantize_model(model, calib_batches, config));
}

}  // namespace fixq
