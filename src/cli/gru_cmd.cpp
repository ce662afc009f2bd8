// fixq gru quantize | run | eval: the integer GRU from the command line.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <optional>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/gpu.h"
#include "cli/progress.h"
#include "fixq/error.h"
#include "fixq/file_kind.h"
#include "fixq/gru_ptq.h"
#include "fixq/metrics.h"
#include "fixq/npy.h"
#include "fixq/qgru.h"
#include "fixq/report.h"

namespace fixq::cli {

namespace {

struct Options {
  std::string model, float_model, prefix, out, config = "int8", scales = "pow2", method = "auto", params_out, report;
  std::vector<std::string> calib;
  std::string input, lengths;
  std::string device = "cpu";  // run: cpu or cuda
  bool batch_first = false;
  int64_t calib_batch = 16;
  int threads = 1;  // gru run: GruRunOptions::threads
  // Post-training steps (fixq/gru_ptq.h) and mixed precision.
  std::string rounding = "gptq", config_out;
  bool no_bias_correction = false, auto_bits = false;
  double target_cosine = 0.9999;
  double max_bits_cost = 0.0;  // 0: no budget
};

GruQuantConfig make_config(const Options& o) {
  const ScaleKind kind = parse_scale_kind(o.scales, "--scales");
  if (GruQuantConfig::is_base_name(o.config)) return GruQuantConfig::base(o.config, kind, "--config");
  try {
    return GruQuantConfig::load(o.config);  // neither name: a JSON config file
  } catch (const IoError& e) {
    fail_io(e.sys_errno(), "--config '", o.config, "' is neither int8, int16 nor a readable JSON config file");
  }
}

// A sequence file: [T, B, C], or [B, T, C] with --batch-first.
struct Sequences {
  Shape shape;
  std::vector<float> data;
  bool batch_first = false;
  int64_t T() const { return shape[batch_first ? 1 : 0]; }
  int64_t B() const { return shape[batch_first ? 0 : 1]; }
  int64_t C() const { return shape[2]; }
};

Sequences load_sequences(const std::string& path, bool batch_first) {
  Sequences s;
  s.batch_first = batch_first;
  s.data = load_npy_f32(path, &s.shape);
  require(s.shape.size() == 3, path, ": sequences must be 3-D [T, B, C] (or [B, T, C] with --batch-first), got ",
          shape_str(s.shape));
  return s;
}

GruPtqOptions ptq_options(const Options& o) {
  GruPtqOptions p;
  p.method = parse_range_method(o.method, "--method");
  p.rounding = parse_weight_rounding(o.rounding);
  p.bias_correction = !o.no_bias_correction;
  return p;
}

// "z_pre, g_pre" of the operators at 16 bits, or "none".
std::string wide_ops(const GruQuantConfig& c) {
  std::string s;
  for (int i = 0; i < kGruOpCount; ++i)
    if (c.bits[static_cast<size_t>(i)] > 8) s += (s.empty() ? "" : ", ") + to_string(static_cast<GruOp>(i));
  return s.empty() ? "none" : s;
}

void print_cost(const char* what, const GruBitsCost& c, const GruBitsCost& base) {
  std::printf("  %-8s weight bytes %lld, per step %lld MACs (%lld with a 16-bit operand) + %lld values (%lld 16-bit): "
              "work %lld = %.3fx base\n",
              what, static_cast<long long>(c.weight_bytes), static_cast<long long>(c.macs), static_cast<long long>(c.wide_macs),
              static_cast<long long>(c.elementwise), static_cast<long long>(c.wide_elementwise),
              static_cast<long long>(c.work()), static_cast<double>(c.work()) / static_cast<double>(std::max<int64_t>(1, base.work())));
}

void write_text(const std::string& path, const std::string& text, const char* option) {
  std::ofstream out(path);
  out << text << "\n";
  out.close();
  if (!out) fail("cannot write ", option, " ", path, "; check that its directory exists and is writable");
}

void quantize_cmd(const Options& o) {
  const GruModel model = load_gru_float(o.model, o.prefix);
  const GruQuantConfig cfg = make_config(o);
  require(o.max_bits_cost == 0.0 || o.auto_bits, "--max-bits-cost needs --auto-bits");
  require(o.config_out.empty() || o.auto_bits, "--config-out needs --auto-bits (it writes the chosen config)");
  GruPtq ptq(model, ptq_options(o));
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
      const std::vector<float> x = time_major_items(s.data.data(), s.shape, s.batch_first, b0, b1);
      ptq.observe(x.data(), Shape{s.T(), b1 - b0, s.C()});
      bar.advance(b1 - b0);
    }
    total += s.B();
  }
  GruPtqResult result;
  if (o.auto_bits) {
    GruAutoBitsOptions ab;
    ab.target_cosine = o.target_cosine;
    if (o.max_bits_cost != 0.0) ab.max_work_ratio = o.max_bits_cost;
    GruAutoBitsResult r = ptq.auto_bits(cfg, ab);
    std::printf("auto bits: output cosine %.6f on the calibration data (target %.6f%s)\n", r.result.calib_cosine,
                o.target_cosine, r.target_met ? ", met" : ", NOT met: the budget or the operators ran out");
    std::printf("  16-bit operators: %s (%d of %d)\n", wide_ops(r.result.params.config).c_str(),
                static_cast<int>(std::count_if(r.result.params.config.bits.begin(), r.result.params.config.bits.end(),
                                               [](int b) { return b > 8; })),
                kGruOpCount);
    print_cost("chosen:", r.cost, r.base_cost);
    print_cost("base:", r.base_cost, r.base_cost);
    const std::string json = r.result.params.config.to_json();
    if (!o.config_out.empty()) {
      write_text(o.config_out, json, "--config-out");
      std::printf("  config -> %s (give it back with --config)\n", o.config_out.c_str());
    } else {
      std::printf("  config (save it and give it back with --config):\n%s\n", json.c_str());
    }
    result = std::move(r.result);
  } else {
    result = ptq.quantize(cfg);
  }
  const QuantizedGru q(result.model, result.params);
  q.save(o.out);
  if (!o.params_out.empty()) write_text(o.params_out, result.params.to_json(), "--params-out");
  // The scale kind as the config decided it (a JSON config may override --scales).
  std::printf("calibrated on %lld sequences (%s, %s scales, ranges %s, rounding %s%s): calibration output cosine %.6f -> %s\n",
              static_cast<long long>(total), o.auto_bits ? "auto bits" : o.config.c_str(),
              to_string(result.params.config.scale_kind).c_str(),
              o.method == range_method_name(std::nullopt) ? "per operator by output error" : o.method.c_str(),
              o.rounding.c_str(),
              o.no_bias_correction ? "" : ", bias correction", result.calib_cosine, o.out.c_str());
}

void run_cmd(const Options& o) {
  const Sequences s = load_sequences(o.input, o.batch_first);
  std::vector<int64_t> lengths;
  if (!o.lengths.empty()) lengths = load_npy_i64(o.lengths);
  GruRunOptions opt;
  opt.lengths = lengths;
  opt.batch_first = s.batch_first;
  opt.threads = o.threads;
  GruOutput out;
  std::string gpu;  // the GPU's name with --device cuda
  if (file_kind(o.model) == FileKind::GruQuantized) {
    require(o.prefix.empty(), "--prefix picks a GRU inside a float model file; ", o.model, " is a quantized model");
    const QuantizedGru q = QuantizedGru::load(o.model);
    out = o.device == "cuda" ? gru_forward_cuda(q, s.data.data(), s.shape, opt, &gpu) : q.forward(s.data.data(), s.shape, opt);
  } else {
    require(o.device == "cpu", "--device cuda runs quantized models (.fixq); ", o.model,
            " is a float model: quantize it with `fixq gru quantize` first");
    out = gru_forward(load_gru_float(o.model, o.prefix), s.data.data(), s.shape, opt);
  }
  // Written only once the whole forward succeeded: a failure leaves no output file.
  const int64_t F = static_cast<int64_t>(out.y.size()) / std::max<int64_t>(1, s.T() * s.B());
  const Shape y_shape = s.batch_first ? Shape{s.B(), s.T(), F} : Shape{s.T(), s.B(), F};
  save_npy_f32(o.out, out.y.data(), y_shape);
  std::printf("%s %s -> %s %s%s\n", o.model.c_str(), o.input.c_str(), o.out.c_str(), shape_str(y_shape).c_str(),
              gpu.empty() ? "" : (" on " + gpu).c_str());
}

void eval_cmd(const Options& o) {
  if (!o.report.empty()) check_report_path(o.report);  // before the work, not after it
  const GruModel model = load_gru_float(o.float_model, o.prefix);
  const QuantizedGru q = QuantizedGru::load(o.model);
  const Sequences s = load_sequences(o.input, o.batch_first);
  require(s.C() == model.input_size, o.input, ": sequences have ", s.C(), " features, the model expects ", model.input_size);
  const bool report = !o.report.empty();
  GruEvalOptions eo;
  eo.batch_first = s.batch_first;
  eo.value_histograms = report;  // the report's ranges section
  GruEvaluation r;
  {
    Progress bar("evaluating", s.B() * (report ? 2 : 1));
    int64_t shown = 0;
    eo.progress = [&](int64_t done, int64_t) {
      bar.advance(done - shown);
      shown = done;
    };
    r = evaluate_gru(model, q, s.data.data(), s.shape, eo);
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
    write_gru_report(o.report, GruEvalReport{o.model, o.float_model, o.input, s.T(), s.B(), s.C(), &model, &q.params(), &r});
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
  qc->add_option("--method", q->method,
                 "operator ranges: auto (each operator's by the output error on the calibration data), or one of minmax, "
                 "ema, percentile, mse for all")
      ->capture_default_str();
  qc->add_option("--rounding", q->rounding, "weight rounding: gptq (against the calibration inputs) or nearest")
      ->capture_default_str();
  qc->add_flag("--no-bias-correction", q->no_bias_correction,
               "keep the biases as they are (by default the weight rounding's expected error is subtracted from them)");
  qc->add_flag("--auto-bits", q->auto_bits,
               "promote the fewest operators of --config to 16 bits that reach --target-cosine; prints the widths and "
               "their cost");
  qc->add_option("--target-cosine", q->target_cosine, "--auto-bits: output cosine to reach on the calibration data")
      ->capture_default_str();
  qc->add_option("--max-bits-cost", q->max_bits_cost,
                 "--auto-bits: at most this many times the per-step work of --config (MACs and values, 16-bit ones "
                 "counting twice)");
  qc->add_option("--config-out", q->config_out, "--auto-bits: write the chosen config (JSON, for --config)");
  qc->add_option("--calib-batch", q->calib_batch, "sequences per calibration step")->capture_default_str();
  qc->add_option("--params-out", q->params_out, "also write the parameters as JSON");
  qc->add_flag("--batch-first", q->batch_first, "sequences are [B, T, C]");
  qc->add_option("-o,--output", q->out, "quantized model (.fixq)")->required();
  qc->footer(std::string("By default every post-training step is on: GPTQ weight rounding, bias correction and each\n"
                         "operator's range chosen by the output error (--rounding nearest, --no-bias-correction and\n"
                         "--method minmax|ema|percentile|mse turn them off). A progress bar shows on a terminal while\n"
                         "calibrating.\n"
                         "The second command below promotes the fewest operators to 16 bits that reach an output cosine\n"
                         "of 0.9999, prints them with their cost and writes them as a config for --config.\n"
                         "Example (from the repository root: a torch GRU and sequences, then its int8 model):\n") +
             kExportExample +
             "  build/bin/fixq gru quantize --model gru.safetensors --calib ref/x.npy --config int8 --scales pow2 -o gru.fixq\n"
             "  build/bin/fixq gru quantize --model gru.safetensors --calib ref/x.npy --auto-bits --target-cosine 0.9999 "
             "--config-out widths.json -o gru_mixed.fixq");
  qc->callback([q] { quantize_cmd(*q); });

  auto r = std::make_shared<Options>();
  CLI::App* rc = cmd->add_subcommand("run", "Run a float or quantized GRU over sequences");
  rc->add_option("--model", r->model, "quantized .fixq, or a float model: " + std::string(kFloatModelHelp))
      ->required()
      ->check(CLI::ExistingFile);
  rc->add_option("--prefix", r->prefix, kPrefixHelp);
  rc->add_option("--input", r->input, "sequences .npy [T, B, C]")->required()->check(CLI::ExistingFile);
  rc->add_option("--lengths", r->lengths, "int64 .npy [B] of real steps per sequence")->check(CLI::ExistingFile);
  rc->add_flag("--batch-first", r->batch_first, "sequences are [B, T, C], and so are the outputs");
  rc->add_option("--threads", r->threads,
                 "threads: from a batch of 16, the batch is split over them, with the same outputs (0: every "
                 "hardware thread, or FIXQ_NUM_THREADS)")
      ->capture_default_str()
      ->check(CLI::Range(0, kGruMaxThreads));
  rc->add_option("-o,--output", r->out, "outputs .npy [T, B, D*H] ([B, T, D*H] with --batch-first)")->required();
  rc->add_option("--device", r->device, "cpu, or cuda: a quantized model on NVIDIA GPU 0, bit for bit the CPU's output")
      ->check(CLI::IsMember({"cpu", "cuda"}));
  rc->footer("Example (gru.fixq and ref/x.npy as made in `fixq gru quantize --help`):\n"
             "  build/bin/fixq gru run --model gru.fixq --input ref/x.npy -o y.npy\n"
             "  build/bin/fixq gru run --model gru.fixq --input ref/x.npy --threads 2 -o y.npy\n"
             "On a machine with an NVIDIA GPU and a build with the CUDA part, add --device cuda.");
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
