// The page of `fixq gru eval --report` (fixq/report.h), and its safe write.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "fixq/error.h"
#include "fixq/report.h"
#include "io/atomic_file.h"
#include "report/svg_plot.h"

namespace fixq {

namespace {

namespace fs = std::filesystem;
using svg::escape;

// The operators a float run reports (GruTap), in the order the computation produces them.
constexpr GruOp kValueOps[] = {GruOp::X,    GruOp::Wx,   GruOp::Rh,      GruOp::ZPre, GruOp::ZOut,       GruOp::RPre,      GruOp::ROut,
                               GruOp::RhAddBr, GruOp::RRh, GruOp::GPre, GruOp::GOut, GruOp::OldContrib, GruOp::NewContrib, GruOp::H};

constexpr const char* kStyle = R"(
body { font-family: sans-serif; margin: 24px auto; max-width: 1180px; color: #222; }
h1 { font-size: 22px; } h2 { font-size: 18px; border-bottom: 1px solid #ccc; padding-bottom: 4px; margin-top: 32px; }
h3 { font-size: 15px; margin-bottom: 4px; }
table { border-collapse: collapse; margin: 8px 0; font-size: 13px; }
td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
.grid { display: flex; flex-wrap: wrap; gap: 8px; }
.note { color: #555; font-size: 13px; }
svg { border: 1px solid #eee; }
)";

std::string num(const char* fmt, double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string percent(uint64_t part, uint64_t whole) {
  return whole == 0 ? "n/a" : num("%.3g%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string file_size(const std::string& path) {
  std::error_code ec;
  const auto bytes = fs::file_size(path, ec);
  return ec ? "?" : std::to_string(bytes) + " bytes";
}

std::string row(const std::string& key, const std::string& value) {
  return "<tr><th>" + escape(key) + "</th><td>" + escape(value) + "</td></tr>\n";
}

std::string bits_summary(const GruQuantConfig& c) {
  std::string s;
  for (int k = 0; k < kGruOpCount; ++k) {
    if (!s.empty()) s += ", ";
    s += to_string(static_cast<GruOp>(k)) + " " + std::to_string(c.bits[static_cast<size_t>(k)]);
  }
  return s;
}

std::string summary(const GruEvalReport& r) {
  const GruModel& m = *r.model;
  std::string s = "<h2>Model</h2>\n<table>\n";
  s += row("quantized model", r.model_path + " (" + file_size(r.model_path) + ")");
  s += row("float model", r.float_path + " (" + file_size(r.float_path) + ")");
  s += row("shape", "input " + std::to_string(m.input_size) + ", hidden " + std::to_string(m.hidden_size) + ", layers " +
                        std::to_string(m.num_layers) + (m.bidirectional ? ", bidirectional" : ", unidirectional"));
  s += row("bits per operator", bits_summary(r.params->config));
  s += row("scales", r.params->config.scale_kind == ScaleKind::PowerOfTwo ? "powers of two (shifts only)"
                                                                          : "free (fixed-point multipliers)");
  s += row("calibration method", "not recorded in the quantized model file");
  s += row("evaluation data", r.input_path + ": " + std::to_string(r.B) + " sequences of " + std::to_string(r.T) +
                                  " steps, " + std::to_string(r.C) + " features");
  return s + "</table>\n";
}

std::string metrics(const GruEvalReport& r) {
  const ErrorStats& e = r.eval->output;
  std::string s = "<h2>Output against float</h2>\n<table>\n";
  s += "<tr><th>values</th><td class=\"num\">" + std::to_string(e.count()) + "</td></tr>\n";
  s += "<tr><th>cosine</th><td class=\"num\">" + num("%.6f", e.cosine()) + "</td></tr>\n";
  s += "<tr><th>SQNR</th><td class=\"num\">" + fmt_db(e.sqnr_db()) + " dB</td></tr>\n";
  s += "<tr><th>max abs error</th><td class=\"num\">" + num("%.6g", e.maxerr()) + "</td></tr>\n";
  s += "<tr><th>RMSE</th><td class=\"num\">" + num("%.6g", e.rmse()) + "</td></tr>\n";
  return s + "</table>\n";
}

std::string per_step(const GruEvalReport& r) {
  svg::LineChart sqnr{"per-step-sqnr", "SQNR per time step", "time step t", "SQNR (dB)", {}, {{"SQNR", {}}}};
  svg::LineChart err{"per-step-error", "Error per time step", "time step t", "|quantized - float|", {}, {{"max abs error", {}}, {"RMSE", {}}}};
  for (size_t t = 0; t < r.eval->per_step.size(); ++t) {
    const ErrorStats& e = r.eval->per_step[t];
    if (e.count() == 0) continue;
    sqnr.x.push_back(static_cast<double>(t));
    err.x.push_back(static_cast<double>(t));
    sqnr.series[0].y.push_back(e.sqnr_db());
    err.series[0].y.push_back(e.maxerr());
    err.series[1].y.push_back(e.rmse());
  }
  return "<h2>Error per time step</h2>\n<p class=\"note\">All outputs of a step (every sequence, every direction) "
         "against the float GRU. An error-free step has SQNR = inf and leaves a gap in the line.</p>\n" +
         svg::line_chart(sqnr) + svg::line_chart(err);
}

std::string per_op(const GruEvalReport& r) {
  svg::BarChart bars{"per-op-sqnr", "SQNR per operator (its own quantization error on the float run)", "SQNR (dB)", {}};
  std::string table = "<table>\n<tr><th>operator</th><th>format</th><th>SQNR dB</th><th>max abs error</th><th>saturated</th></tr>\n";
  for (GruOp op : kValueOps) {
    const ErrorStats& e = r.eval->per_op[static_cast<size_t>(op)];
    if (e.count() == 0) continue;
    uint64_t clipped = 0, count = 0;
    for (const auto& cell : r.eval->ops) {
      clipped += cell[static_cast<size_t>(op)].below() + cell[static_cast<size_t>(op)].above();
      count += cell[static_cast<size_t>(op)].count();
    }
    const QuantScheme scheme = gru_op_scheme(op, r.params->config);
    bars.bars.push_back({to_string(op), e.sqnr_db()});
    table += "<tr><td>" + escape(to_string(op)) + "</td><td>" + escape(scheme.format.name()) + " " +
             escape(to_string(scheme.symmetry)) + "</td><td class=\"num\">" + fmt_db(e.sqnr_db()) + "</td><td class=\"num\">" +
             num("%.6g", e.maxerr()) + "</td><td class=\"num\">" + percent(clipped, count) + "</td></tr>\n";
  }
  return "<h2>Per operator</h2>\n<p class=\"note\">Each operator's float values on the evaluation data, round-tripped "
         "through that operator's own parameters (all cells together). Saturated: values the quantizer clamps to "
         "qmin or qmax.</p>\n" +
         svg::bar_chart(bars) + table + "</table>\n";
}

std::string ranges(const GruEvalReport& r) {
  std::string s = "<h2>Calibrated ranges</h2>\n<p class=\"note\">Per operator, the histogram of its float values on the "
                  "evaluation data; shaded: the quantizer's range [dequantize(qmin), dequantize(qmax)] from the calibrated "
                  "parameters; orange bins lie outside it.</p>\n";
  const int D = r.model->directions();
  for (size_t cell = 0; cell < r.eval->ops.size(); ++cell) {
    const int layer = static_cast<int>(cell) / D, dir = static_cast<int>(cell) % D;
    const std::string where = "layer " + std::to_string(layer) + (D == 2 ? (dir == 0 ? ", forward" : ", reverse") : "");
    s += "<h3>" + escape(where) + "</h3>\n<div class=\"grid\">\n";
    for (GruOp op : kValueOps) {
      const OpValueStats& v = r.eval->ops[cell][static_cast<size_t>(op)];
      if (v.empty()) continue;
      svg::Histogram h;
      h.id = "range-l" + std::to_string(layer) + "-d" + std::to_string(dir) + "-" + to_string(op);
      h.title = to_string(op) + " (" + gru_op_scheme(op, r.params->config).format.name() + ")";
      h.note = "range [" + svg::fmt_num(v.range_lo()) + ", " + svg::fmt_num(v.range_hi()) + "], values [" +
               svg::fmt_num(v.min()) + ", " + svg::fmt_num(v.max()) + "], saturated " + percent(v.below() + v.above(), v.count());
      h.x_label = "value";
      h.lo = v.bins_lo();
      h.hi = v.bins_hi();
      h.counts = v.bins();
      h.mark_lo = v.range_lo();
      h.mark_hi = v.range_hi();
      s += svg::histogram(h);
    }
    s += "</div>\n";
  }
  return s;
}

// The probe file of check_report_path: hidden, in the report's directory.
fs::path probe_path(const fs::path& p) {
  return (p.has_parent_path() ? p.parent_path() : fs::path(".")) / ("." + p.filename().string() + ".probe-" + std::to_string(getpid()));
}

}  // namespace

void check_report_path(const std::string& path) {
  require(!path.empty(), "--report needs a file name, e.g. --report eval.html");
  const fs::path p(path);
  std::error_code ec;
  if (fs::is_directory(p, ec)) fail("--report ", path, " is a directory; give a file name such as ", (p / "eval.html").string());
  const fs::path dir = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec))
    fail("--report ", path, ": directory ", dir.string(), " does not exist; create it or choose another path");
  // access() says yes to root everywhere, and a read-only mount can say yes too: try it.
  const fs::path probe = probe_path(p);
  if (access(dir.c_str(), W_OK) != 0 || !std::ofstream(probe))
    fail("--report ", path, ": cannot create files in directory ", dir.string(), "; choose a writable directory");
  fs::remove(probe, ec);
}

void write_gru_report(const std::string& path, const GruEvalReport& r) {
  require(r.model != nullptr && r.params != nullptr && r.eval != nullptr, "write_gru_report: the report needs a model, ",
          "its quantization parameters and an evaluation");
  check_report_path(path);
  const std::string page = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>fixq gru eval: " +
                           escape(r.model_path) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>fixq gru eval: " +
                           escape(r.model_path) + "</h1>\n" + summary(r) + metrics(r) + per_step(r) + per_op(r) + ranges(r) +
                           "</body>\n</html>\n";
  write_file_atomically(path, {{page.data(), page.size()}}, "report");
}

}  // namespace fixq
