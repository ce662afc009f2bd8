// fixq quant-error: how much a float tensor loses when quantized, at each bit width.
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "fixq/calib.h"
#include "fixq/error.h"
#include "fixq/npy.h"
#include "fixq/report.h"

namespace fixq::cli {

namespace {

struct Options {
  std::string path;
  std::vector<int> bits{2, 3, 4, 5, 6, 8, 12, 16};
  bool is_unsigned = false;
  bool symmetric = false;
  bool pow2 = false;
  std::string granularity = "per_tensor";
  int axis = 0;
  int64_t group_size = 32;
  std::string calib = "minmax";
};

void run(const Options& o) {
  Shape shape;
  const std::vector<float> x = load_npy_f32(o.path, &shape);
  const Granularity g = parse_granularity(o.granularity, "--granularity");
  const CalibMethod m = parse_calib_method(o.calib);
  // Every bit width first, so that a bad --bits or --calib fails before any output.
  const ScaleKind kind = o.pow2 ? ScaleKind::PowerOfTwo : ScaleKind::Multiplier;
  std::vector<std::string> lines;
  for (int b : o.bits) {
    const QuantScheme s = QuantScheme::make(b, !o.is_unsigned, o.symmetric ? Symmetry::Symmetric : Symmetry::Asymmetric,
                                            kind, g, o.axis, o.group_size);
    const ErrorStats e = quantization_error(x, shape, params_from_tensor(x.data(), shape, s, m));
    lines.push_back(e.llama_line(s.format.name()) + "\n    " + e.summary());
  }
  std::printf("%s %s: %s %s %s, %s scale, calibration %s\n", o.path.c_str(), shape_str(shape).c_str(),
              o.is_unsigned ? "unsigned" : "signed", o.symmetric ? "symmetric" : "asymmetric",
              to_string(g).c_str(), to_string(kind).c_str(), to_string(m).c_str());
  for (const std::string& line : lines) std::printf("%s\n", line.c_str());
}

}  // namespace

void register_quant_error(CLI::App& app) {
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("quant-error", "Quantization error of a float32 .npy tensor at each bit width");
  cmd->add_option("file", o->path, "float32 (or float64) .npy file")->required()->check(CLI::ExistingFile);
  cmd->add_option("--bits", o->bits, "bit widths to try (2..16)")->delimiter(',')->capture_default_str();
  cmd->add_flag("--unsigned", o->is_unsigned, "unsigned integers (default signed)");
  cmd->add_flag("--symmetric", o->symmetric, "symmetric (zero point fixed) instead of asymmetric");
  cmd->add_flag("--pow2", o->pow2, "pow2 scales (powers of two: shifts only) instead of multiplier scales");
  cmd->add_option("--granularity", o->granularity, "per_tensor, per_channel, per_group or per_token")->capture_default_str();
  cmd->add_option("--axis", o->axis, "channel or group axis (negative counts from the end)")->capture_default_str();
  cmd->add_option("--group-size", o->group_size, "group size along --axis")->capture_default_str();
  cmd->add_option("--calib", o->calib, "minmax, ema, percentile or mse")->capture_default_str();
  cmd->footer(
      "Prints llama.cpp quantize-stats lines (rmse, maxerr, 95pct, median) and nmse, mae, cosine, SQNR.\n"
      "Example:\n  build/bin/fixq quant-error data/charlm/gru.weight_hh_l0.npy --symmetric --granularity per_channel --bits 4,8");
  cmd->callback([o] { run(*o); });
}

}  // namespace fixq::cli
