// runtime/Plot.h — figures drawn by gnuplot: line and point series, histograms, images.
//
// A figure is plain data (PlotSpec); drawing it is gnuplot's work. TSL writes a gnuplot
// script — the data as inline datablocks of numbers printed with std::to_chars (so the
// locale never matters), every user text in single quotes with `noenhanced` (so nothing
// in a title is markup, a macro or a command) — and runs `gnuplot` as a child process
// (no shell), the script on its standard input and the picture read from its standard
// output, with a time limit. Errors are io errors: gnuplot missing, failing, silent or
// too slow.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tsl {

enum class SeriesStyle : uint8_t { Lines, Points, Boxes };

/// One series: y against x (equal lengths), drawn in a style, with a legend label.
struct PlotSeries {
  std::vector<double> x;
  std::vector<double> y;
  std::string label; ///< empty: no legend entry
  SeriesStyle style = SeriesStyle::Lines;
};

/// A figure: series on shared axes, or one image (a matrix drawn as grey levels).
struct PlotSpec {
  std::string title, xlabel, ylabel;
  std::vector<PlotSeries> series;
  /// An image figure when rows > 0: `image` holds rows x cols values, row-major; row 0
  /// is drawn at the top, with a grey scale from the smallest value (black) to the
  /// largest (white) shown beside it.
  int64_t rows = 0, cols = 0;
  std::vector<double> image;
};

enum class PlotFormat : uint8_t {
  Svg,  ///< SVG text
  Png,  ///< PNG bytes (gnuplot's pngcairo terminal)
  Text, ///< a text drawing (gnuplot's dumb terminal), for a terminal
};

/// The gnuplot script that draws `spec` in `format` at width x height (pixels; characters
/// for Text). Exposed for tests; renderPlot runs it.
std::string gnuplotScript(const PlotSpec& spec, PlotFormat format, int width, int height);

/// Runs gnuplot on gnuplotScript(...) and returns what it draws (the SVG text, the PNG
/// bytes or the text picture). An io error if gnuplot cannot be started (naming the
/// Debian package that provides it), reports an error, exits with a failure, gives no
/// output, or takes longer than `timeoutSeconds` (it is killed). Ctrl-C (runtime/
/// Interrupt.h) kills it and raises `runtime error: interrupted`.
std::string renderPlot(const PlotSpec& spec, PlotFormat format, int width, int height, double timeoutSeconds = 30);

/// A histogram with `bins` equal bins from the smallest to the largest finite value, as
/// NumPy's histogram(values, bins) computes it in float64: edges = linspace(min, max,
/// bins + 1) (min - 0.5 and max + 0.5 when they are equal, 0 and 1 without values), each
/// bin half-open but the last closed. Non-finite values are not counted.
struct Histogram {
  std::vector<double> edges;    ///< bins + 1
  std::vector<int64_t> counts; ///< bins
};
Histogram histogram(const std::vector<double>& values, int64_t bins);

} // namespace tsl
