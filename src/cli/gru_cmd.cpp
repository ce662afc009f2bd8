// fixq gru quantize | run | eval: the integer GRU from the command line.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/fake_quant.h"
#include "cli/progress.h"
#include "fixq/error.h"
#include "fixq/metrics.h"
#include "fixq/npy.h"
#include "fixq/qgru.h"
#include "fixq/safetensors.h"

namespace fixq::cli {

namespace {

struct Options {
  std::string model, float_model, out, config = "int8", scales = "pow2", method = "minmax", params_out;
  std::vector<std::string> calib;
  std::string input, lengths;
  bool batch_first = false;
  int64_t calib_batch = 16;
};

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot read ", path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

GruQuantConfig make_config(const Options& o) {
  require(o.scales == "pow2" || o.scales == "multiplier", "--scales must be pow2 or multiplier, got '", o.scales, "'");
  const ScaleKind kind = o.scales == "pow2" ? ScaleKind::PowerOfTwo : ScaleKind::Float;
  if (o.config == "int8") return GruQuantConfig::int8(kind);
  if (o.config == "int16") return GruQuantConfig::int16(kind);
  return GruQuantConfig::from_json(read_text(o.config));
}

// A sequence file: [T, B, C] (or [B, T, C] with --batch-first) float32.
struct Sequences {
  Shape shape;
  std::vector<float> data;
  int64_t T() const { return shape[0]; }
  int64_t B() const { return shape[1]; }
  int64_t C() const { return shape[2]; }
};

Sequences load_sequences(const std::string& path, bool batch_first) {
  Sequences s;
  s.data = load_npy_f32(path, &s.shape);
  require(s.shape.size() == 3, path, ": sequences must be 3-D [T, B, C] (or [B, T, C] with --batch-first), got ",
          shape_str(s.shape));
  if (batch_first) {  // to time-major, once
    const int64_t B = s.shape[0], T = s.shape[1], C = s.shape[2];
    std::vector<float> t(s.data.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t i = 0; i < T; ++i) std::copy_n(s.data.begin() + (b * T + i) * C, C, t.begin() + (i * B + b) * C);
    s.data = std::move(t);
    s.shape = {T, B, C};
  }
  return s;
}

// Items [b0, b1) of time-major sequences.
std::vector<float> batch_slice(const Sequences& s, int64_t b0, int64_t b1) {
  std::vector<float> out;
  out.reserve(static_cast<size_t>(s.T() * (b1 - b0) * s.C()));
  for (int64_t t = 0; t < s.T(); ++t)
    out.insert(out.end(), s.data.begin() + (t * s.B() + b0) * s.C(), s.data.begin() + (t * s.B() + b1) * s.C());
  return out;
}

bool is_quantized(const std::string& path) {
  const SafetensorsFile f(path);
  const auto it = f.metadata().find("fixq.format");
  return it != f.metadata().end() && it->second == "gru-quantized";
}

void quantize_cmd(const Options& o) {
  const GruModel model = load_gru_float(o.model);
  const GruQuantConfig cfg = make_config(o);
  ObserverConfig oc;
  oc.method = parse_calib_method(o.method);
  GruCalibrator cal(model, cfg, oc);
  require(!o.calib.empty(), "--calib needs at least one .npy file of calibration sequences");
  require(o.calib_batch >= 1, "--calib-batch must be >= 1");
  // One file at a time, o.calib_batch sequences per observation.
  int64_t total = 0;
  for (const std::string& path : o.calib) {
    const Sequences s = load_sequences(path, o.batch_first);
    require(s.C() == model.input_size, path, ": sequences have ", s.C(), " features, the model expects ", model.input_size);
    Progress bar("calibrating " + path, s.B());
    for (int64_t b0 = 0; b0 < s.B(); b0 += o.calib_batch) {
      const int64_t b1 = std::min(s.B(), b0 + o.calib_batch);
      const std::vector<float> x = batch_slice(s, b0, b1);
      cal.observe(x.data(), Shape{s.T(), b1 - b0, s.C()});
      bar.advance(b1 - b0);
    }
    total += s.B();
  }
  const GruQuantParams params = cal.finalize();
  const QuantizedGru q(model, params);
  q.save(o.out);
  if (!o.params_out.empty()) {
    std::ofstream(o.params_out) << params.to_json() << "\n";
  }
  std::printf("calibrated on %lld sequences (%s, %s scales, %s) -> %s\n", static_cast<long long>(total),
              o.config.c_str(), o.scales.c_str(), o.method.c_str(), o.out.c_str());
}

void run_cmd(const Options& o) {
  const Sequences s = load_sequences(o.input, o.batch_first);
  std::vector<int64_t> lengths;
  if (!o.lengths.empty()) lengths = load_npy_i64(o.lengths);
  GruRunOptions opt;
  opt.lengths = lengths;
  GruOutput out;
  if (is_quantized(o.model)) {
    out = QuantizedGru::load(o.model).forward(s.data.data(), s.shape, opt);
  } else {
    out = gru_forward(load_gru_float(o.model), s.data.data(), s.shape, opt);
  }
  const int64_t F = static_cast<int64_t>(out.y.size()) / std::max<int64_t>(1, s.T() * s.B());
  save_npy_f32(o.out, out.y.data(), Shape{s.T(), s.B(), F});
  std::printf("%s %s -> %s [%lld, %lld, %lld]\n", o.model.c_str(), o.input.c_str(), o.out.c_str(),
              static_cast<long long>(s.T()), static_cast<long long>(s.B()), static_cast<long long>(F));
}

void eval_cmd(const Options& o) {
  const GruModel model = load_gru_float(o.float_model);
  const QuantizedGru q = QuantizedGru::load(o.model);
  const Sequences s = load_sequences(o.input, o.batch_first);
  // Every operator's own quantization error: its float values against their round trip
  // through that operator's parameters, over the float run.
  std::vector<ErrorStats> per_op(kGruOpCount);
  const GruQuantParams& p = q.params();
  GruTap tap;
  tap.on_value = [&](int layer, int direction, int64_t, GruOp op, const float* v, const Shape& shape) {
    const QuantParams& qp = p.cells[static_cast<size_t>(layer * model.directions() + direction)][op];
    std::vector<float> x(v, v + numel(shape));
    const ErrorStats e = quantization_error(x, Shape{static_cast<int64_t>(x.size())}, qp);
    per_op[static_cast<size_t>(op)].merge(e);
  };
  GruRunOptions fopt;
  fopt.tap = &tap;
  const GruOutput f = gru_forward(model, s.data.data(), s.shape, fopt);
  const GruOutput i = q.forward(s.data.data(), s.shape);
  ErrorStats all;
  all.add(f.y.data(), i.y.data(), f.y.size());
  std::printf("output vs float: cosine %.6f, SQNR %s dB, max error %.6f, rmse %.6f\n", all.cosine(), fmt_db(all.sqnr_db()).c_str(),
              all.maxerr(), all.rmse());
  const int64_t per_step = static_cast<int64_t>(f.y.size()) / std::max<int64_t>(1, s.T());
  std::printf("\nper time step:\n%6s %10s %9s %10s\n", "t", "cosine", "SQNR dB", "maxerr");
  for (int64_t t = 0; t < s.T(); ++t) {
    ErrorStats e;
    e.add(f.y.data() + t * per_step, i.y.data() + t * per_step, static_cast<size_t>(per_step));
    std::printf("%6lld %10.6f %9s %10.6f\n", static_cast<long long>(t), e.cosine(), fmt_db(e.sqnr_db()).c_str(), e.maxerr());
  }
  std::printf("\nper operator (its own quantization error on the float run):\n%-12s %9s %10s\n", "operator", "SQNR dB", "maxerr");
  for (int k = 0; k < kGruOpCount; ++k) {
    if (per_op[static_cast<size_t>(k)].count() == 0) continue;
    std::printf("%-12s %9s %10.6f\n", to_string(static_cast<GruOp>(k)).c_str(), fmt_db(per_op[static_cast<size_t>(k)].sqnr_db()).c_str(),
                per_op[static_cast<size_t>(k)].maxerr());
  }
}

}  // namespace

void register_gru(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("gru", "Quantize, run and evaluate integer-only GRUs");
  cmd->require_subcommand(1);

  auto q = std::make_shared<Options>();
  CLI::App* qc = cmd->add_subcommand("quantize", "Calibrate a float GRU and write the integer model");
  qc->add_option("--model", q->model, "float model (.safetensors from tools/export_gru.py)")->required()->check(CLI::ExistingFile);
  qc->add_option("--calib", q->calib, "calibration sequences .npy [T, B, C] (repeatable)")->required();
  qc->add_option("--config", q->config, "int8, int16 or a JSON config file")->capture_default_str();
  qc->add_option("--scales", q->scales, "pow2 (shifts only) or multiplier")->capture_default_str();
  qc->add_option("--method", q->method, "minmax, ema, percentile or mse")->capture_default_str();
  qc->add_option("--calib-batch", q->calib_batch, "sequences per calibration step")->capture_default_str();
  qc->add_option("--params-out", q->params_out, "also write the parameters as JSON");
  qc->add_flag("--batch-first", q->batch_first, "sequences are [B, T, C]");
  qc->add_option("-o,--output", q->out, "quantized model (.fixq)")->required();
  qc->footer("Example:\n  build/bin/fixq gru quantize --model gru.safetensors --calib calib.npy --config int8 --scales pow2 -o gru.fixq");
  qc->callback([q] { quantize_cmd(*q); });

  auto r = std::make_shared<Options>();
  CLI::App* rc = cmd->add_subcommand("run", "Run a float or quantized GRU over sequences");
  rc->add_option("--model", r->model, "float .safetensors or quantized .fixq")->required()->check(CLI::ExistingFile);
  rc->add_option("--input", r->input, "sequences .npy [T, B, C]")->required()->check(CLI::ExistingFile);
  rc->add_option("--lengths", r->lengths, "int64 .npy [B] of real steps per sequence");
  rc->add_flag("--batch-first", r->batch_first, "sequences are [B, T, C]");
  rc->add_option("-o,--output", r->out, "outputs .npy [T, B, D*H]")->required();
  rc->footer("Example:\n  build/bin/fixq gru run --model gru.fixq --input x.npy -o y.npy");
  rc->callback([r] { run_cmd(*r); });

  auto e = std::make_shared<Options>();
  CLI::App* ec = cmd->add_subcommand("eval", "Compare a quantized GRU with its float model");
  ec->add_option("--model", e->model, "quantized .fixq")->required()->check(CLI::ExistingFile);
  ec->add_option("--float", e->float_model, "float .safetensors")->required()->check(CLI::ExistingFile);
  ec->add_option("--input", e->input, "sequences .npy [T, B, C]")->required()->check(CLI::ExistingFile);
  ec->add_flag("--batch-first", e->batch_first, "sequences are [B, T, C]");
  ec->footer("Example:\n  build/bin/fixq gru eval --model gru.fixq --float gru.safetensors --input x.npy");
  ec->callback([e] { eval_cmd(*e); });
}

}  // namespace fixq::cli
