// Private to the report module: small inline SVG charts for the HTML reports (line chart,
// bar chart, histogram), drawn from the exact values, with axis ticks, labels, a title and a legend.
// Every chart is one <svg data-plot="line|bar|histogram" id="..."> element that needs no
// script, stylesheet or font from outside; its data marks carry the classes "series"
// (line paths), "bar" and "bin" (rects), so a test can count them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace fixq::svg {

// Text for HTML / SVG content and attribute values: & < > " ' replaced by entities.
std::string escape(std::string_view text);

// A number for an axis or a label: at most 4 significant digits ("%.4g"), "-0" as "0",
// infinities as "inf" / "-inf".
std::string fmt_num(double v);

// An axis over [lo, hi] widened to round ticks: about `target` ticks of the form
// k * {1, 2, 5} * 10^e, lo and hi being the first and last of them. A zero-width or
// reversed input range is widened around its value; non-finite bounds are a caller error.
struct Axis {
  double lo = 0, hi = 1;
  std::vector<double> ticks;
};
Axis nice_axis(double lo, double hi, int target);
// Round ticks inside [lo, hi] without widening it (for histograms, whose bins fix the range).
std::vector<double> ticks_inside(double lo, double hi, int target);

// Lines over a shared x: series[k].y[i] is drawn at x[i]. A non-finite y breaks its line
// (e.g. SQNR = inf at an error-free step); a series without a finite point draws nothing
// but keeps its legend entry.
struct Series {
  std::string name;
  std::vector<double> y;
};
struct LineChart {
  std::string id, title, x_label, y_label;
  std::vector<double> x;
  std::vector<Series> series;
  int width = 760, height = 300;
};
std::string line_chart(const LineChart& chart);

// Vertical bars from 0. A +inf value is drawn to the top of the axis and labelled "inf",
// -inf to the bottom, NaN draws no bar and is labelled "n/a".
struct Bar {
  std::string label;
  double value = 0;
};
struct BarChart {
  std::string id, title, y_label;
  std::vector<Bar> bars;
  int width = 760, height = 320;
};
std::string bar_chart(const BarChart& chart);

// counts[k] = number of values in bin k of [lo, hi) split into counts.size() equal bins.
// The marked interval [mark_lo, mark_hi] (a quantizer's range) is shaded; bins outside it
// are drawn in the "clipped" colour. `note` is a line under the title.
struct Histogram {
  std::string id, title, note, x_label;
  double lo = 0, hi = 1;
  std::vector<uint64_t> counts;
  double mark_lo = 0, mark_hi = 0;
  int width = 360, height = 220;
};
std::string histogram(const Histogram& chart);

}  // namespace fixq::svg
