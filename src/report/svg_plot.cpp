#include "report/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>

namespace fixq::svg {

namespace {

constexpr const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};
constexpr const char* kAxisColour = "#444";
constexpr const char* kGridColour = "#e3e3e3";
constexpr const char* kClippedColour = "#e6550d";

// A coordinate: two decimals are far below a pixel.
std::string px(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  return buf;
}

// The plot area in pixels and the data-to-pixel maps of its two axes.
struct Frame {
  double left, top, right, bottom;
  double x_lo, x_hi, y_lo, y_hi;
  double x(double v) const { return left + (v - x_lo) / (x_hi - x_lo) * (right - left); }
  double y(double v) const { return bottom - (v - y_lo) / (y_hi - y_lo) * (bottom - top); }
};

std::string open_svg(const char* kind, const std::string& id, const std::string& title, int w, int h) {
  const std::string ws = std::to_string(w), hs = std::to_string(h);
  std::string s = "<svg data-plot=\"" + std::string(kind) + "\" id=\"" + escape(id) + "\" viewBox=\"0 0 " + ws + " " + hs +
                  "\" width=\"" + ws + "\" height=\"" + hs + "\" role=\"img\" aria-label=\"" + escape(title) +
                  "\" font-family=\"sans-serif\" font-size=\"11\">\n";
  s += "<title>" + escape(title) + "</title>\n";
  s += "<rect x=\"0\" y=\"0\" width=\"" + ws + "\" height=\"" + hs + "\" fill=\"#fff\"/>\n";
  s += "<text x=\"" + px(w / 2.0) + "\" y=\"16\" text-anchor=\"middle\" font-size=\"13\" font-weight=\"bold\">" +
       escape(title) + "</text>\n";
  return s;
}

std::string text(double x, double y, const std::string& content, const char* anchor, const std::string& extra = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\" text-anchor=\"" + anchor + "\"" + extra + ">" + escape(content) +
         "</text>\n";
}

std::string line(double x1, double y1, double x2, double y2, const char* colour, const std::string& extra = "") {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\" stroke=\"" + colour +
         "\"" + extra + "/>\n";
}

// Grid lines, tick labels, the frame and the axis labels.
std::string axes(const Frame& f, const std::vector<double>& x_ticks, const std::vector<double>& y_ticks,
                 const std::string& x_label, const std::string& y_label) {
  std::string s;
  for (double t : y_ticks) {
    const double y = f.y(t);
    s += line(f.left, y, f.right, y, kGridColour);
    s += text(f.left - 5, y + 4, fmt_num(t), "end");
  }
  for (double t : x_ticks) {
    const double x = f.x(t);
    s += line(x, f.bottom, x, f.bottom + 4, kAxisColour);
    s += text(x, f.bottom + 16, fmt_num(t), "middle");
  }
  s += "<rect x=\"" + px(f.left) + "\" y=\"" + px(f.top) + "\" width=\"" + px(f.right - f.left) + "\" height=\"" +
       px(f.bottom - f.top) + "\" fill=\"none\" stroke=\"" + kAxisColour + "\"/>\n";
  if (!x_label.empty()) s += text((f.left + f.right) / 2, f.bottom + 32, x_label, "middle");
  if (!y_label.empty()) {
    const double cx = 14, cy = (f.top + f.bottom) / 2;
    s += text(cx, cy, y_label, "middle", " transform=\"rotate(-90 " + px(cx) + " " + px(cy) + ")\"");
  }
  return s;
}

// Finite minimum and maximum of values; {+inf, -inf} when there is none.
std::pair<double, double> finite_range(const std::vector<double>& v) {
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (double x : v)
    if (std::isfinite(x)) {
      lo = std::min(lo, x);
      hi = std::max(hi, x);
    }
  return {lo, hi};
}

// The tick step for about `target` ticks over a span > 0: 1, 2 or 5 times a power of 10.
double tick_step(double span, int target) {
  const double raw = span / std::max(1, target);
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  const double norm = raw / mag;
  return (norm < 1.5 ? 1 : norm < 3 ? 2 : norm < 7 ? 5 : 10) * mag;
}

// The k-th multiple of step, with -0 as 0.
double tick(double k, double step) { return k * step == 0 ? 0.0 : k * step; }

// lo < hi, widened around a single value.
std::pair<double, double> widen(double lo, double hi) {
  if (hi > lo) return {lo, hi};
  const double pad = lo == 0 ? 1.0 : std::abs(lo) * 0.1;
  return {lo - pad, lo + pad};
}

}  // namespace

std::string escape(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (char c : in) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string fmt_num(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v == 0 ? 0.0 : v);
  return buf;
}

Axis nice_axis(double lo, double hi, int target) {
  std::tie(lo, hi) = widen(lo, hi);
  const double step = tick_step(hi - lo, target);
  const double first = std::floor(lo / step), last = std::ceil(hi / step);
  if (!(last - first >= 0 && last - first <= 100)) return {lo, hi, {lo, hi}};  // not a handful: plain bounds
  Axis a{first * step, last * step, {}};
  for (int i = 0; i <= static_cast<int>(last - first); ++i) a.ticks.push_back(tick(first + i, step));
  return a;
}

std::vector<double> ticks_inside(double lo, double hi, int target) {
  std::tie(lo, hi) = widen(lo, hi);
  const double step = tick_step(hi - lo, target);
  const double first = std::ceil(lo / step), last = std::floor(hi / step);
  if (!(last - first >= 0 && last - first <= 100)) return {lo, hi};
  std::vector<double> t;
  for (int i = 0; i <= static_cast<int>(last - first); ++i) t.push_back(tick(first + i, step));
  return t;
}

std::string line_chart(const LineChart& c) {
  std::string s = open_svg("line", c.id, c.title, c.width, c.height);
  std::vector<double> all;
  for (const Series& se : c.series) all.insert(all.end(), se.y.begin(), se.y.end());
  auto [ylo, yhi] = finite_range(all);
  if (ylo > yhi) ylo = 0, yhi = 1;
  const Axis ya = nice_axis(ylo, yhi, 5);
  auto [xlo, xhi] = finite_range(c.x);
  if (xlo > xhi) xlo = 0, xhi = 1;
  const Axis xa = nice_axis(xlo, xhi, 8);
  const Frame f{62, 28, c.width - 12.0, c.height - 42.0, xa.lo, xa.hi, ya.lo, ya.hi};
  s += axes(f, xa.ticks, ya.ticks, c.x_label, c.y_label);
  for (size_t k = 0; k < c.series.size(); ++k) {
    const Series& se = c.series[k];
    const char* colour = kPalette[k % std::size(kPalette)];
    std::string d, dots;
    bool pen_down = false;
    const size_t n = std::min(se.y.size(), c.x.size());
    for (size_t i = 0; i < n; ++i) {
      if (!std::isfinite(se.y[i]) || !std::isfinite(c.x[i])) {
        pen_down = false;
        continue;
      }
      const bool isolated = !pen_down && (i + 1 >= n || !std::isfinite(se.y[i + 1]));
      if (isolated)
        dots += "<circle cx=\"" + px(f.x(c.x[i])) + "\" cy=\"" + px(f.y(se.y[i])) + "\" r=\"2\" fill=\"" + colour + "\"/>\n";
      d += (pen_down ? " L" : " M") + px(f.x(c.x[i])) + " " + px(f.y(se.y[i]));
      pen_down = true;
    }
    s += "<path class=\"series\" data-series=\"" + escape(se.name) + "\" d=\"" + d + "\" fill=\"none\" stroke=\"" + colour +
         "\" stroke-width=\"1.5\"/>\n" + dots;
    // Legend, top right inside the frame, one entry per line.
    const double ly = f.top + 14 + 15.0 * static_cast<double>(k);
    s += line(f.right - 150, ly - 4, f.right - 130, ly - 4, colour, " stroke-width=\"2\"");
    s += text(f.right - 125, ly, se.name, "start");
  }
  return s + "</svg>\n";
}

std::string bar_chart(const BarChart& c) {
  std::string s = open_svg("bar", c.id, c.title, c.width, c.height);
  std::vector<double> values;
  for (const Bar& b : c.bars) values.push_back(b.value);
  auto [lo, hi] = finite_range(values);
  if (lo > hi) lo = 0, hi = 1;
  const Axis ya = nice_axis(std::min(lo, 0.0), std::max(hi, 0.0), 5);
  const auto n = static_cast<double>(std::max<size_t>(1, c.bars.size()));
  const Frame f{62, 28, c.width - 12.0, c.height - 78.0, 0, n, ya.lo, ya.hi};
  s += axes(f, {}, ya.ticks, "", c.y_label);
  const double slot = (f.right - f.left) / n, zero = f.y(0);
  for (size_t i = 0; i < c.bars.size(); ++i) {
    const Bar& b = c.bars[i];
    const double cx = f.left + slot * (static_cast<double>(i) + 0.5);
    std::string label = fmt_num(b.value);
    if (!std::isnan(b.value)) {
      const double top = std::isinf(b.value) ? (b.value > 0 ? f.top : f.bottom) : f.y(b.value);
      const double y0 = std::min(top, zero), h = std::abs(zero - top);
      s += "<rect class=\"bar\" x=\"" + px(cx - slot * 0.35) + "\" y=\"" + px(y0) + "\" width=\"" + px(slot * 0.7) +
           "\" height=\"" + px(h) + "\" fill=\"" + (std::isinf(b.value) ? "#9ecae1" : kPalette[0]) + "\"><title>" +
           escape(b.label + ": " + label) + "</title></rect>\n";
      s += text(cx, (b.value >= 0 ? y0 - 3 : y0 + h + 11), label, "middle", " font-size=\"9\"");
    } else {
      s += text(cx, zero - 3, "n/a", "middle", " font-size=\"9\"");
    }
    const double ly = f.bottom + 10;
    s += text(cx, ly, b.label, "end", " transform=\"rotate(-40 " + px(cx) + " " + px(ly) + ")\"");
  }
  return s + "</svg>\n";
}

std::string histogram(const Histogram& c) {
  std::string s = open_svg("histogram", c.id, c.title, c.width, c.height);
  uint64_t peak = 0;
  for (uint64_t k : c.counts) peak = std::max(peak, k);
  const Axis ya = nice_axis(0, std::max<double>(1, static_cast<double>(peak)), 4);
  const auto [lo, hi] = widen(c.lo, c.hi);
  const Frame f{58, 44, c.width - 14.0, c.height - 40.0, lo, hi, ya.lo, ya.hi};
  if (!c.note.empty()) s += text(c.width / 2.0, 32, c.note, "middle", " font-size=\"10\" fill=\"#555\"");
  // The quantizer's range, behind the bins.
  const double m0 = f.x(std::clamp(c.mark_lo, lo, hi)), m1 = f.x(std::clamp(c.mark_hi, lo, hi));
  s += "<rect class=\"range\" x=\"" + px(m0) + "\" y=\"" + px(f.top) + "\" width=\"" + px(std::max(0.0, m1 - m0)) +
       "\" height=\"" + px(f.bottom - f.top) + "\" fill=\"#c7e9c0\" fill-opacity=\"0.6\"/>\n";
  s += axes(f, ticks_inside(lo, hi, 4), ya.ticks, c.x_label, "count");
  const auto n = static_cast<double>(std::max<size_t>(1, c.counts.size()));
  const double bin_w = (hi - lo) / n;
  for (size_t k = 0; k < c.counts.size(); ++k) {
    if (c.counts[k] == 0) continue;
    const double b0 = lo + bin_w * static_cast<double>(k), b1 = b0 + bin_w, mid = (b0 + b1) / 2;
    const bool clipped = mid < c.mark_lo || mid > c.mark_hi;
    const double y = f.y(static_cast<double>(c.counts[k]));
    s += "<rect class=\"bin\" x=\"" + px(f.x(b0)) + "\" y=\"" + px(y) + "\" width=\"" + px(std::max(0.5, f.x(b1) - f.x(b0) - 0.5)) +
         "\" height=\"" + px(f.bottom - y) + "\" fill=\"" + (clipped ? kClippedColour : kPalette[0]) + "\"><title>[" +
         fmt_num(b0) + ", " + fmt_num(b1) + "): " + std::to_string(c.counts[k]) + "</title></rect>\n";
  }
  for (double m : {c.mark_lo, c.mark_hi})
    if (m >= lo && m <= hi) s += line(f.x(m), f.top, f.x(m), f.bottom, "#238b45", " stroke-width=\"1.5\" stroke-dasharray=\"4 2\"");
  return s + "</svg>\n";
}

}  // namespace fixq::svg
