// fixq gru quantize | run | eval: the integer GRU from the command line.
#include <cstdio>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/fake_quant.h"
#include "cli/gru_report.h"
#include "cli/progress.h"
#include "fixq/error.h"
#include "fixq/metrics.h"
#include "fixq/npy.h"
#include "fixq/qgru.h"
#include "fixq/safetensors.h"

namespace fixq::cli {

namespace {

struct Options {
  std::string model, float_model, prefix, out, config = "int8", scales = "pow2", method = "minmax", params_out, report;
  std::vector<std::string> calib;
  std::string input, lengths;
  bool batch_first = false;
  int64_t calib_batch = 16;
};

std::string read_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("--config '", path, "' is neither int8, int16 nor a readable JSON config file");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

GruQuantConfig make_config(const Options& o) {
  require(o.scales == "pow2" || o.scales == "multiplier", "--scales must be pow2 or multiplier, got '", o.scales, "'");
  const ScaleKind kind = o.scales == "pow2" ? ScaleKind::PowerOfTwo : ScaleKind::Float;
  if (o.config == "int8") return GruQuantConfig::int8(kind);
  if (o.config == "int16") return GruQuantConfig::int16(kind);
  return GruQuantConfig::from_json(read_config_file(o.config));
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

// A .fixq file is safetensors (8 bytes of header length, then '{') marked gru-quantized.
bool is_quantized(const std::string& path) {
  char head[9] = {};
  std::ifstream(path, std::ios::binary).read(head, sizeof head);
  if (head[8] != '{') return false;
  const SafetensorsFile f(path);
  const auto it = f.metadata().find("fixq.format");
  return it != f.metadata().end() && it->second == "gru-quantized";
}

void quantize_cmd(const Options& o) {
  const GruModel model = load_gru_float(o.model, o.prefix);
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
    std::ofstream out(o.params_out);
    out << params.to_json() << "\n";
    out.close();
    if (!out) fail("cannot write --params-out ", o.params_out, "; check that its directory exists and is writable");
  }
  // The scale kind as the config decided it (a JSON config may override --scales).
  const char* scales = params.config.scale_kind == ScaleKind::PowerOfTwo ? "pow2" : "multiplier";
  std::printf("calibrated on %lld sequences (%s, %s scales, %s) -> %s\n", static_cast<long long>(total),
              o.config.c_str(), scales, o.method.c_str(), o.out.c_str());
}

void run_cmd(const Options& o) {
  const Sequences s = load_sequences(o.input, o.batch_first);
  std::vector<int64_t> lengths;
  if (!o.lengths.empty()) lengths = load_npy_i64(o.lengths);
  GruRunOptions opt;
  opt.lengths = lengths;
  GruOutput out;
  if (is_quantized(o.model)) {
    require(o.prefix.empty(), "--prefix picks a GRU inside a float model file; ", o.model, " is a quantized model");
    out = QuantizedGru::load(o.model).forward(s.data.data(), s.shape, opt);
  } else {
    out = gru_forward(load_gru_float(o.model, o.prefix), s.data.data(), s.shape, opt);
  }
  const int64_t F = static_cast<int64_t>(out.y.size()) / std::max<int64_t>(1, s.T() * s.B());
  save_npy_f32(o.out, out.y.data(), Shape{s.T(), s.B(), F});
  std::printf("%s %s -> %s [%lld, %lld, %lld]\n", o.model.c_str(), o.input.c_str(), o.out.c_str(),
              static_cast<long long>(s.T()), static_cast<long long>(s.B()), static_cast<long long>(F));
}

// Sequences per forward call in eval: bounds memory and paces the progress bar. Batch
// items never interact, in the float GRU or the integer one, so results do not depend on it.
constexpr int64_t kEvalBatch = 16;

// The quantized model must be of the float model's shape, or the per-operator parameters
// would not line up with the float run's cells.
void require_same_shape(const GruModel& m, const QuantizedGru& q, const Options& o) {
  if (m.input_size != q.input_size() || m.hidden_size != q.hidden_size() || m.num_layers != q.num_layers() ||
      m.bidirectional != q.bidirectional())
    fail(o.model, " (input ", q.input_size(), ", hidden ", q.hidden_size(), ", layers ", q.num_layers(),
         q.bidirectional() ? ", bidirectional" : "", ") is not a quantization of ", o.float_model, " (input ", m.input_size,
         ", hidden ", m.hidden_size, ", layers ", m.num_layers, m.bidirectional ? ", bidirectional" : "",
         "); pass the float model it was calibrated from");
}

void eval_cmd(const Options& o) {
  if (!o.report.empty()) check_report_path(o.report);  // before the work, not after it
  const GruModel model = load_gru_float(o.float_model, o.prefix);
  const QuantizedGru q = QuantizedGru::load(o.model);
  require_same_shape(model, q, o);
  const Sequences s = load_sequences(o.input, o.batch_first);
  require(s.C() == model.input_size, o.input, ": sequences have ", s.C(), " features, the model expects ", model.input_size);
  const GruQuantParams& p = q.params();
  const bool report = !o.report.empty();

  GruEvalReport r{o.model, o.float_model, o.input, s.T(), s.B(), s.C(), &model, &p, {}, {}, {}, {}};
  r.per_step.resize(static_cast<size_t>(s.T()));
  r.per_op.resize(kGruOpCount);
  r.ops.resize(model.cells.size());
  // Every operator's own quantization error: its float values against their round trip
  // through that operator's parameters, over the float run; and what those values are.
  GruTap observe;
  observe.on_value = [&](int layer, int direction, int64_t, GruOp op, const float* v, const Shape& shape) {
    const size_t cell = static_cast<size_t>(layer * model.directions() + direction);
    const QuantParams& qp = p.cells[cell][op];
    OpValueStats& stats = r.ops[cell][static_cast<size_t>(op)];
    if (stats.empty()) stats = OpValueStats(qp);
    std::vector<float> x(v, v + numel(shape));
    r.per_op[static_cast<size_t>(op)].merge(quantization_error(x, Shape{static_cast<int64_t>(x.size())}, qp));
    stats.observe(v, numel(shape));
  };
  GruTap histogram;
  histogram.on_value = [&](int layer, int direction, int64_t, GruOp op, const float* v, const Shape& shape) {
    r.ops[static_cast<size_t>(layer * model.directions() + direction)][static_cast<size_t>(op)].bin(v, numel(shape));
  };

  {
    // The report needs a second float run: the histograms' bins span the values seen in the first.
    Progress bar("evaluating", s.B() * (report ? 2 : 1));
    for (int64_t b0 = 0; b0 < s.B(); b0 += kEvalBatch) {
      const int64_t b1 = std::min(s.B(), b0 + kEvalBatch), n = b1 - b0;
      const std::vector<float> x = batch_slice(s, b0, b1);
      GruRunOptions fopt;
      fopt.tap = &observe;
      const GruOutput f = gru_forward(model, x.data(), Shape{s.T(), n, s.C()}, fopt);
      const GruOutput i = q.forward(x.data(), Shape{s.T(), n, s.C()});
      r.output.add(f.y.data(), i.y.data(), f.y.size());
      const size_t per_step = f.y.size() / static_cast<size_t>(s.T());
      for (int64_t t = 0; t < s.T(); ++t)
        r.per_step[static_cast<size_t>(t)].add(f.y.data() + t * per_step, i.y.data() + t * per_step, per_step);
      bar.advance(n);
    }
    if (report) {
      for (auto& cell : r.ops)
        for (OpValueStats& v : cell)
          if (!v.empty()) v.fix_bins(kReportHistogramBins);
      for (int64_t b0 = 0; b0 < s.B(); b0 += kEvalBatch) {
        const int64_t b1 = std::min(s.B(), b0 + kEvalBatch);
        const std::vector<float> x = batch_slice(s, b0, b1);
        GruRunOptions fopt;
        fopt.tap = &histogram;
        gru_forward(model, x.data(), Shape{s.T(), b1 - b0, s.C()}, fopt);
        bar.advance(b1 - b0);
      }
    }
  }

  const ErrorStats& all = r.output;
  std::printf("output vs float: cosine %.6f, SQNR %s dB, max error %.6f, rmse %.6f\n", all.cosine(), fmt_db(all.sqnr_db()).c_str(),
              all.maxerr(), all.rmse());
  std::printf("\nper time step:\n%6s %10s %9s %10s\n", "t", "cosine", "SQNR dB", "maxerr");
  for (int64_t t = 0; t < s.T(); ++t) {
    const ErrorStats& e = r.per_step[static_cast<size_t>(t)];
    std::printf("%6lld %10.6f %9s %10.6f\n", static_cast<long long>(t), e.cosine(), fmt_db(e.sqnr_db()).c_str(), e.maxerr());
  }
  std::printf("\nper operator (its own quantization error on the float run):\n%-12s %9s %10s %10s\n", "operator", "SQNR dB",
              "maxerr", "saturated");
  for (int k = 0; k < kGruOpCount; ++k) {
    const ErrorStats& e = r.per_op[static_cast<size_t>(k)];
    if (e.count() == 0) continue;
    uint64_t saturated = 0, count = 0;
    for (const auto& cell : r.ops) {
      saturated += cell[static_cast<size_t>(k)].below() + cell[static_cast<size_t>(k)].above();
      count += cell[static_cast<size_t>(k)].count();
    }
    std::printf("%-12s %9s %10.6f %9.3f%%\n", to_string(static_cast<GruOp>(k)).c_str(), fmt_db(e.sqnr_db()).c_str(), e.maxerr(),
                100.0 * static_cast<double>(saturated) / static_cast<double>(std::max<uint64_t>(1, count)));
  }
  if (report) {
    write_gru_report(o.report, r);
    std::printf("\nreport -> %s\n", o.report.c_str());
  }
}

}  // namespace

// The worked examples chain: the quantize example makes the files the others read.
constexpr const char* kExportExample =
    "  /usr/bin/python3 tools/export_gru.py --out gru.safetensors --input-size 32 --hidden-size 64 --reference ref "
    "--seq-len 40 --batch 8\n";

constexpr const char* kFloatModelHelp =
    "float GRU: .safetensors (fixq's, or any state_dict holding an nn.GRU: safetensors.torch.save_file) or .onnx "
    "(torch.onnx.export)";
constexpr const char* kPrefixHelp =
    "the GRU inside a whole model: its module prefix, e.g. encoder.rnn. (ONNX: the module of its GRU nodes); "
    "needed when the file holds several";

void register_gru(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("gru", "Quantize, run and evaluate integer-only GRUs");
  cmd->require_subcommand(1);
  cmd->footer(std::string("Example (from the repository root: export a torch GRU, quantize it, compare it with float):\n") +
              kExportExample +
              "  build/bin/fixq gru quantize --model gru.safetensors --calib ref/x.npy -o gru.fixq\n"
              "  build/bin/fixq gru eval --model gru.fixq --float gru.safetensors --input ref/x.npy --report eval.html");

  auto q = std::make_shared<Options>();
  CLI::App* qc = cmd->add_subcommand("quantize", "Calibrate a float GRU and write the integer model");
  qc->add_option("--model", q->model, kFloatModelHelp)->required()->check(CLI::ExistingFile);
  qc->add_option("--prefix", q->prefix, kPrefixHelp);
  qc->add_option("--calib", q->calib, "calibration sequences .npy [T, B, C] (repeatable)")->required()->check(CLI::ExistingFile);
  qc->add_option("--config", q->config, "int8, int16 or a JSON config file")->capture_default_str();
  qc->add_option("--scales", q->scales, "pow2 (shifts only) or multiplier")->capture_default_str();
  qc->add_option("--method", q->method, "minmax, ema, percentile or mse")->capture_default_str();
  qc->add_option("--calib-batch", q->calib_batch, "sequences per calibration step")->capture_default_str();
  qc->add_option("--params-out", q->params_out, "also write the parameters as JSON");
  qc->add_flag("--batch-first", q->batch_first, "sequences are [B, T, C]");
  qc->add_option("-o,--output", q->out, "quantized model (.fixq)")->required();
  qc->footer(std::string("A progress bar shows on a terminal while calibrating.\n"
                         "Example (from the repository root: a torch GRU and sequences, then its int8 model):\n") +
             kExportExample +
             "  build/bin/fixq gru quantize --model gru.safetensors --calib ref/x.npy --config int8 --scales pow2 "
             "--method mse -o gru.fixq");
  qc->callback([q] { quantize_cmd(*q); });

  auto r = std::make_shared<Options>();
  CLI::App* rc = cmd->add_subcommand("run", "Run a float or quantized GRU over sequences");
  rc->add_option("--model", r->model, "quantized .fixq, or a float model: " + std::string(kFloatModelHelp))
      ->required()
      ->check(CLI::ExistingFile);
  rc->add_option("--prefix", r->prefix, kPrefixHelp);
  rc->add_option("--input", r->input, "sequences .npy [T, B, C]")->required()->check(CLI::ExistingFile);
  rc->add_option("--lengths", r->lengths, "int64 .npy [B] of real steps per sequence")->check(CLI::ExistingFile);
  rc->add_flag("--batch-first", r->batch_first, "sequences are [B, T, C]");
  rc->add_option("-o,--output", r->out, "outputs .npy [T, B, D*H]")->required();
  rc->footer("Example (gru.fixq and ref/x.npy as made in `fixq gru quantize --help`):\n"
             "  build/bin/fixq gru run --model gru.fixq --input ref/x.npy -o y.npy");
  rc->callback([r] { run_cmd(*r); });

  auto e = std::make_shared<Options>();
  CLI::App* ec = cmd->add_subcommand("eval", "Compare a quantized GRU with its float model");
  ec->add_option("--model", e->model, "quantized .fixq")->required()->check(CLI::ExistingFile);
  ec->add_option("--float", e->float_model, kFloatModelHelp)->required()->check(CLI::ExistingFile);
  ec->add_option("--prefix", e->prefix, kPrefixHelp);
  ec->add_option("--input", e->input, "sequences .npy [T, B, C]")->required()->check(CLI::ExistingFile);
  ec->add_flag("--batch-first", e->batch_first, "sequences are [B, T, C]");
  ec->add_option("--report", e->report,
                 "also write an HTML page: metrics, error per time step, SQNR per operator, calibrated ranges over "
                 "histograms of the values");
  ec->footer("Prints the output's cosine, SQNR and errors against float, per time step and per operator. A progress\n"
             "bar shows on a terminal.\n"
             "Example (files as made in `fixq gru quantize --help`):\n"
             "  build/bin/fixq gru eval --model gru.fixq --float gru.safetensors --input ref/x.npy --report eval.html");
  ec->callback([e] { eval_cmd(*e); });

  register_gru_export(*cmd);
}

}  // namespace fixq::cli
