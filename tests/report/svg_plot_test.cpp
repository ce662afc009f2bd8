// The report module's charts (src/report/svg_plot.h) and page (write_gru_report), read back
// by an independent reader: tests/report/svg_check.py parses every chart with Python's XML
// parser and recovers the data from the drawing alone (the axes' tick labels give the
// data-to-pixel map), which must be the data the charts were given. The axis rules are
// checked here against their definition: ticks k * {1, 2, 5} * 10^e, evenly spaced,
// covering the range.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "fixq/qgru.h"
#include "fixq/report.h"
#include "gru/float_test_util.h"
#include "report/svg_plot.h"

namespace fixq {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// JSON has no infinities or NaN: the reader takes these strings for them.
json value(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
json values(const std::vector<double>& v) {
  json a = json::array();
  for (double x : v) a.push_back(value(x));
  return a;
}

class TempDir {
 public:
  TempDir() {
    std::string t = (fs::temp_directory_path() / "fixq-svg-XXXXXX").string();
    if (!mkdtemp(t.data())) throw std::runtime_error("mkdtemp failed");
    path_ = t;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_text(const fs::path& p, const std::string& s) {
  std::ofstream out(p, std::ios::binary);
  out << s;
  ASSERT_TRUE(out.good()) << p;
}

// Runs the independent reader over dir; its output on failure.
void expect_reader_agrees(const fs::path& dir) {
  const std::string cmd =
      "/usr/bin/python3 " FIXQ_SOURCE_DIR "/tests/report/svg_check.py '" + dir.string() + "' 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  EXPECT_EQ(status, 0) << out;
  EXPECT_NE(out.find("svg_check: "), std::string::npos) << out;
}

// Every property of an axis that the charts rely on, from its definition.
void expect_nice(const std::vector<double>& ticks, double lo, double hi, bool covers, const std::string& what) {
  ASSERT_GE(ticks.size(), 2u) << what;
  const double step = ticks[1] - ticks[0];
  ASSERT_GT(step, 0) << what;
  const double mag = std::pow(10.0, std::floor(std::log10(step) + 1e-9));
  const double m = step / mag;
  EXPECT_TRUE(std::abs(m - 1) < 1e-9 || std::abs(m - 2) < 1e-9 || std::abs(m - 5) < 1e-9) << what << ": step " << step;
  for (size_t i = 0; i < ticks.size(); ++i) {
    const double k = ticks[i] / step;
    EXPECT_NEAR(k, std::round(k), 1e-6) << what << ": tick " << ticks[i] << " is not a multiple of " << step;
    if (i > 0) {
      EXPECT_NEAR(ticks[i] - ticks[i - 1], step, 1e-9 * std::max(1.0, std::abs(step))) << what;
    }
    EXPECT_FALSE(std::signbit(ticks[i]) && ticks[i] == 0) << what << ": -0 tick";
  }
  const double slack = 1e-9 * std::max({1.0, std::abs(lo), std::abs(hi)});
  if (covers) {  // nice_axis: the ticks reach past the range, by less than one step
    EXPECT_LE(ticks.front(), lo + slack) << what;
    EXPECT_GE(ticks.back(), hi - slack) << what;
    EXPECT_GT(ticks.front() + step, lo - slack) << what;
    EXPECT_LT(ticks.back() - step, hi + slack) << what;
  } else {  // ticks_inside: within the range, the next ones outside it
    EXPECT_GE(ticks.front(), lo - slack) << what;
    EXPECT_LE(ticks.back(), hi + slack) << what;
    EXPECT_LT(ticks.front() - step, lo + slack) << what;
    EXPECT_GT(ticks.back() + step, hi - slack) << what;
  }
}

TEST(SvgAxis, TicksAreOneTwoFiveTimesAPowerOfTenAndCoverTheRange) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> mant(-1, 1);
  std::uniform_int_distribution<int> exp10(-6, 6), target(2, 10);
  for (int i = 0; i < 2000; ++i) {
    const double scale = std::pow(10.0, exp10(rng));
    double lo = mant(rng) * scale, hi = lo + std::abs(mant(rng)) * scale * 3 + scale * 1e-3;
    const int t = target(rng);
    const std::string what = "[" + std::to_string(lo) + ", " + std::to_string(hi) + "] target " + std::to_string(t);
    const svg::Axis a = svg::nice_axis(lo, hi, t);
    EXPECT_EQ(a.lo, a.ticks.front()) << what;
    EXPECT_EQ(a.hi, a.ticks.back()) << what;
    EXPECT_LE(a.ticks.size(), static_cast<size_t>(2 * t + 2)) << what;
    expect_nice(a.ticks, lo, hi, true, what);
    const std::vector<double> inside = svg::ticks_inside(lo, hi, t);
    if (inside.size() >= 2) expect_nice(inside, lo, hi, false, what);
  }
  // A single value is widened around itself; zero to [-1, 1].
  const svg::Axis one = svg::nice_axis(5, 5, 4);
  EXPECT_LT(one.lo, 5);
  EXPECT_GT(one.hi, 5);
  const svg::Axis zero = svg::nice_axis(0, 0, 4);
  EXPECT_LE(zero.lo, -1);
  EXPECT_GE(zero.hi, 1);
}

TEST(SvgText, EscapesEveryMarkupCharacterAndFormatsNumbers) {
  EXPECT_EQ(svg::escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&#39;");
  EXPECT_EQ(svg::escape("plain"), "plain");
  EXPECT_EQ(svg::fmt_num(-0.0), "0");
  EXPECT_EQ(svg::fmt_num(123456), "1.235e+05");
  EXPECT_EQ(svg::fmt_num(0.5), "0.5");
  EXPECT_EQ(svg::fmt_num(kInf), "inf");
  EXPECT_EQ(svg::fmt_num(-kInf), "-inf");
  EXPECT_EQ(svg::fmt_num(kNaN), "nan");
}

TEST(SvgCharts, AnIndependentReaderRecoversTheDataFromTheDrawing) {
  const TempDir dir;
  json cases = json::array();
  const std::string tricky = "a <b> & \"c\" 'd'";  // must reach the reader as this text

  // Lines: gaps at non-finite values, a lone point between gaps (drawn as a dot), negative
  // values, a series with no finite point (legend only).
  {
    svg::LineChart c{"line-1", "SQNR " + tricky, "t", "dB", {}, {}};
    for (int t = 0; t < 24; ++t) c.x.push_back(t);
    std::vector<double> a, b, none(24, kNaN);
    for (int t = 0; t < 24; ++t) {
      a.push_back(30 + 7 * std::sin(t * 0.4));
      b.push_back(-2.5 + 0.37 * t);
    }
    a[5] = kInf;  // an error-free step
    a[7] = kNaN;  // a[6] alone between two gaps
    b[23] = -kInf;
    c.series = {{"first " + tricky, a}, {"second", b}, {"none", none}};
    write_text(dir.path() / "line-1.svg", svg::line_chart(c));
    json s = json::array();
    for (const auto& se : c.series) s.push_back({{"name", se.name}, {"y", values(se.y)}});
    cases.push_back({{"kind", "line"}, {"file", "line-1.svg"}, {"id", c.id}, {"title", c.title}, {"x", values(c.x)}, {"series", s}});
  }
  // Lines at a tiny scale and an irregular x.
  {
    svg::LineChart c{"line-2", "small", "x", "y", {0.001, 0.0015, 0.0031, 0.004}, {{"s", {2e-7, -3e-7, 1.1e-6, 4e-7}}}};
    write_text(dir.path() / "line-2.svg", svg::line_chart(c));
    cases.push_back({{"kind", "line"}, {"file", "line-2.svg"}, {"id", c.id}, {"title", c.title}, {"x", values(c.x)},
                     {"series", json::array({{{"name", "s"}, {"y", values(c.series[0].y)}}})}});
  }
  // Bars: positive, negative, zero, +inf, -inf, NaN.
  {
    svg::BarChart c{"bar-1", "per op " + tricky, "dB", {{"x", 41.25}, {"Wx", 12.5}, {"neg", -7.75}, {"zero", 0}, {"exact", kInf},
                                                        {"minus", -kInf}, {"undefined", kNaN}, {tricky, 3.125}}};
    write_text(dir.path() / "bar-1.svg", svg::bar_chart(c));
    json bars = json::array();
    for (const auto& b : c.bars) bars.push_back({{"label", b.label}, {"value", value(b.value)}});
    cases.push_back({{"kind", "bar"}, {"file", "bar-1.svg"}, {"id", c.id}, {"title", c.title}, {"bars", bars}});
  }
  // Histograms: a range inside the bins (bins both sides clipped), a range wider than the
  // bins, empty bins, one tall bin.
  {
    std::vector<uint64_t> counts(40);
    std::mt19937 rng(9);
    std::normal_distribution<double> nd(0.2, 0.6);
    for (int i = 0; i < 5000; ++i) {
      const int k = static_cast<int>(std::floor((nd(rng) + 2.0) / 4.0 * 40));
      if (k >= 0 && k < 40) ++counts[static_cast<size_t>(k)];
    }
    const struct {
      const char* id;
      double lo, hi, mark_lo, mark_hi;
      std::vector<uint64_t> counts;
    } hs[] = {{"hist-1", -2.0, 2.0, -1.0, 1.25, counts},
              {"hist-2", -0.75, 0.5, -1.0, 1.0, {0, 3, 0, 17, 250000, 1, 0, 0}},
              {"hist-3", 100, 356, 128, 255, {1, 2, 3, 4, 5, 6, 7, 8}}};
    for (const auto& h : hs) {
      svg::Histogram c{h.id, std::string("values of ") + h.id, "note " + tricky, "value", h.lo, h.hi, h.counts, h.mark_lo, h.mark_hi};
      const std::string file = std::string(h.id) + ".svg";
      write_text(dir.path() / file, svg::histogram(c));
      cases.push_back({{"kind", "histogram"}, {"file", file}, {"id", c.id}, {"title", c.title}, {"note", c.note},
                       {"lo", c.lo}, {"hi", c.hi}, {"mark_lo", c.mark_lo}, {"mark_hi", c.mark_hi}, {"counts", c.counts}});
    }
  }
  write_text(dir.path() / "cases.json", cases.dump(1));
  expect_reader_agrees(dir.path());
}

// The order in which a float run reports the operators (GruTap, fixq/gru.h), which the
// page follows.
constexpr GruOp kTapOrder[] = {GruOp::X,    GruOp::Wx,   GruOp::Rh,         GruOp::ZPre,      GruOp::ZOut,
                               GruOp::RPre, GruOp::ROut, GruOp::RhAddBr,    GruOp::RRh,       GruOp::GPre,
                               GruOp::GOut, GruOp::OldContrib, GruOp::NewContrib, GruOp::H};

TEST(GruReport, ThePageShowsTheEvaluation) {
  const GruModel model = gru_test::random_model(5, 7, 2, true, 3);
  const Shape shape{9, 6, 5};
  const std::vector<float> x = gru_test::random_values(9 * 6 * 5, 11);
  GruCalibrator cal(model, GruQuantConfig::int8(ScaleKind::PowerOfTwo), ObserverConfig{});
  std::vector<float> half(x);
  for (float& v : half) v *= 0.5f;  // so that some operators saturate on x
  cal.observe(half.data(), shape);
  const QuantizedGru q(model, cal.finalize());
  GruEvalOptions o;
  o.value_histograms = true;
  const GruEvaluation e = evaluate_gru(model, q, x.data(), shape, o);

  const TempDir dir;
  const fs::path page = dir.path() / "page.html";
  GruEvalReport r;
  r.model_path = "q <&>.fixq";
  r.float_path = "float.safetensors";
  r.input_path = "x.npy";
  r.T = 9, r.B = 6, r.C = 5;
  r.model = &model;
  r.params = &q.params();
  r.eval = &e;
  write_gru_report(page.string(), r);

  json spec;
  spec["page"] = page.string();
  std::vector<double> per_step;
  for (const ErrorStats& s : e.per_step) per_step.push_back(s.sqnr_db());
  spec["per_step_sqnr"] = values(per_step);
  json per_op = json::array();
  for (GruOp op : kTapOrder)
    if (e.per_op[static_cast<size_t>(op)].count() > 0)
      per_op.push_back({{"label", to_string(op)}, {"value", value(e.per_op[static_cast<size_t>(op)].sqnr_db())}});
  spec["per_op"] = per_op;
  json hists = json::array();
  const int D = model.directions();
  for (size_t cell = 0; cell < e.ops.size(); ++cell)
    for (GruOp op : kTapOrder) {
      const OpValueStats& v = e.ops[cell][static_cast<size_t>(op)];
      if (v.empty()) continue;
      hists.push_back({{"id", "range-l" + std::to_string(cell / D) + "-d" + std::to_string(cell % D) + "-" + to_string(op)},
                       {"lo", v.bins_lo()}, {"hi", v.bins_hi()}, {"mark_lo", v.range_lo()}, {"mark_hi", v.range_hi()},
                       {"counts", v.bins()}});
    }
  EXPECT_EQ(hists.size(), e.ops.size() * 14);
  spec["histograms"] = hists;
  spec["sqnr_text"] = fmt_db(e.output.sqnr_db());
  spec["values"] = e.output.count();
  write_text(dir.path() / "report.json", spec.dump(1));
  write_text(dir.path() / "cases.json", "[]");
  expect_reader_agrees(dir.path());
}

}  // namespace
}  // namespace fixq
