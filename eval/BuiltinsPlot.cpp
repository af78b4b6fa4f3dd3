// eval/BuiltinsPlot.cpp — plots as values: plot, scatter-plot, hist, imshow, save-plot,
// and the representer that draws them for a notebook (eval/Plot.h).
//
// Making a plot only collects its data (as f64 tensors in a map); gnuplot draws it when
// it is saved or shown (runtime/Plot.h), so a loop may build plots freely.
#include "eval/Builtins.h"
#include "eval/DisplayText.h"
#include "eval/Plot.h"
#include "runtime/Elementwise.h"
#include "runtime/Io.h"
#include "runtime/Plot.h"
#include "tsl/Display.h"

#include <algorithm>
#include <cctype>
#include <cstring>

namespace tsl {

namespace {

constexpr std::string_view kTag = "tsl/plot";
/// The most values a plot may hold (gnuplot reads them as text).
constexpr int64_t kMaxPlotValues = int64_t(1) << 22;

Value keyword(std::string_view name) { return makeKeyword(name); }

const Value* field(const MapObj& map, std::string_view name) { return map.find(keyword(name)); }

std::string textField(const MapObj& map, std::string_view name) {
  const Value* v = field(map, name);
  return v && v->isString() ? v->string().text() : std::string();
}

/// The kind of a plot map (lines, points, hist, image), or empty for any other map.
std::string plotKind(const MapObj& map) {
  static const Value tag = keyword(kTag); // asked of every map printed: interned once
  const Value* kind = map.find(tag);
  return kind && kind->isKeyword() ? kind->keyword().name() : std::string();
}

Tensor f64Tensor(const std::vector<double>& values, const Shape& shape) {
  Tensor t = Tensor::empty(DType::F64, shape);
  if (!values.empty()) std::memcpy(t.mutableData(), values.data(), values.size() * sizeof(double));
  return t;
}

std::vector<double> doublesOf(const Tensor& t) {
  const Tensor f = astype(t, DType::F64).rowMajor();
  const std::span<const double> e = f.elements<double>();
  return {e.begin(), e.end()};
}

} // namespace

std::optional<std::string> plotSummary(const MapObj& map) {
  const std::string kind = plotKind(map);
  if (kind.empty()) return std::nullopt;
  std::string out = "#<plot";
  if (kind == "image") {
    const Value* image = field(map, "image");
    if (image && image->isTensor() && image->tensor().rank() == 2)
      out += cat(" image ", image->tensor().shape()[0], "x", image->tensor().shape()[1]);
  } else if (kind == "hist") {
    const Value* counts = field(map, "counts");
    if (counts && counts->isTensor()) out += cat(" hist ", counts->tensor().numel(), " bins");
  } else {
    const Value* series = field(map, "series");
    const size_t n = series && series->isVector() ? series->vector().count() : 0;
    out += cat(" ", n, " series");
  }
  const std::string title = textField(map, "title");
  if (!title.empty()) out += " " + quoteString(title);
  return out + ">";
}

namespace builtins {

namespace {

/// Numbers from a tensor (every element, row-major) or a list or vector of numbers.
std::vector<double> numbersOf(const CallContext& cx, const Value& v, std::string_view what) {
  std::vector<double> out;
  if (v.isTensor()) {
    out = doublesOf(v.tensor());
  } else if (v.isSequential()) {
    for (const Value& item : sequenceItems(v)) {
      if (!item.isTensor() || !item.tensor().isScalar())
        fail(ErrorKind::Type, cx.self.name(), ": ", what, " must be numbers, got ", describeKind(item));
      out.push_back(item.tensor().toDouble());
    }
  } else {
    fail(ErrorKind::Type, cx.self.name(), ": ", what, " must be a tensor or a vector of numbers, got ", describeKind(v));
  }
  if (static_cast<int64_t>(out.size()) > kMaxPlotValues)
    fail(ErrorKind::Value, cx.self.name(), ": ", what, " has ", out.size(), " values (a plot holds at most 2^22)");
  return out;
}

/// The series ys holds: one sequence of numbers, or several — a vector of sequences, or
/// the rows of a rank-2 tensor.
std::vector<std::vector<double>> seriesOf(const CallContext& cx, const Value& ys) {
  std::vector<std::vector<double>> out;
  if (ys.isTensor() && ys.tensor().rank() == 2) {
    const std::vector<double> all = doublesOf(ys.tensor());
    const auto cols = static_cast<size_t>(ys.tensor().shape()[1]);
    for (int64_t r = 0; r < ys.tensor().shape()[0]; ++r)
      out.emplace_back(all.begin() + static_cast<ptrdiff_t>(r * cols), all.begin() + static_cast<ptrdiff_t>((r + 1) * cols));
  } else if (ys.isSequential() && sequenceCount(ys) > 0 &&
             (sequenceItems(ys)[0].isSequential() || sequenceItems(ys)[0].isNonScalarTensor())) {
    for (const Value& one : sequenceItems(ys)) out.push_back(numbersOf(cx, one, "each series"));
  } else {
    if (ys.isTensor() && ys.tensor().rank() != 1)
      fail(ErrorKind::Shape, cx.self.name(), ": ys must be of rank 1 (one series) or 2 (a series per row), got ",
           describeKind(ys));
    out.push_back(numbersOf(cx, ys, "ys"));
  }
  return out;
}

/// :label as one string per series (a string, or a vector of strings).
std::vector<std::string> labelsOf(const CallContext& cx, const Value* label, size_t n) {
  std::vector<std::string> out(n);
  if (!label || label->isNil()) return out;
  if (label->isString()) {
    if (n != 1) fail(ErrorKind::Value, cx.self.name(), ": :label gives 1 label for ", n, " series; give a vector of ", n);
    out[0] = label->string().text();
    return out;
  }
  if (!label->isSequential()) fail(ErrorKind::Type, cx.self.name(), ": :label must be a string or a vector of strings, got ", describeKind(*label));
  const std::vector<Value> items = sequenceItems(*label);
  if (items.size() != n) fail(ErrorKind::Value, cx.self.name(), ": :label gives ", items.size(), " labels for ", n, " series");
  for (size_t i = 0; i < n; ++i) {
    if (!items[i].isString()) fail(ErrorKind::Type, cx.self.name(), ": each :label must be a string, got ", describeKind(items[i]));
    out[i] = items[i].string().text();
  }
  return out;
}

/// The :title :xlabel :ylabel entries given, as strings.
void addTexts(const CallContext& cx, const KeywordArgs& kw, std::vector<std::pair<Value, Value>>& entries) {
  for (std::string_view name : {"title", "xlabel", "ylabel"}) {
    const Value* v = kw.find(name);
    if (!v || v->isNil()) continue;
    if (!v->isString()) fail(ErrorKind::Type, cx.self.name(), ": :", name, " must be a string, got ", describeKind(*v));
    entries.emplace_back(keyword(name), *v);
  }
}

Value seriesMap(const std::vector<double>& x, const std::vector<double>& y, const std::string& label, std::string_view style) {
  std::vector<std::pair<Value, Value>> entries;
  entries.emplace_back(keyword("x"), Value(f64Tensor(x, Shape{static_cast<int64_t>(x.size())})));
  entries.emplace_back(keyword("y"), Value(f64Tensor(y, Shape{static_cast<int64_t>(y.size())})));
  if (!label.empty()) entries.emplace_back(keyword("label"), makeString(label));
  entries.emplace_back(keyword("style"), keyword(style));
  return makeMap(std::move(entries));
}

/// (plot ys ...) and (plot xs ys ...), (scatter-plot ...) alike: series in `style`.
Value seriesPlot(CallContext& cx, Args args, std::string_view style) {
  KeywordArgs kw(cx, args, 1, {"label", "title", "xlabel", "ylabel"});
  const Args positional = kw.positional();
  if (positional.empty() || positional.size() > 2)
    fail(ErrorKind::Type, cx.self.name(), ": expected (", cx.self.name(), " ys) or (", cx.self.name(),
         " xs ys) with options :label :title :xlabel :ylabel");
  const std::vector<std::vector<double>> ys = seriesOf(cx, positional.back());
  const std::vector<std::string> labels = labelsOf(cx, kw.find("label"), ys.size());
  std::vector<double> xs;
  if (positional.size() == 2) xs = numbersOf(cx, positional[0], "xs");
  std::vector<Value> series;
  for (size_t s = 0; s < ys.size(); ++s) {
    std::vector<double> x = xs;
    if (positional.size() == 1) {
      for (size_t i = 0; i < ys[s].size(); ++i) x.push_back(static_cast<double>(i));
    } else if (xs.size() != ys[s].size()) {
      fail(ErrorKind::Shape, cx.self.name(), ": xs has ", xs.size(), " values but series ", s + 1, " has ", ys[s].size());
    }
    series.push_back(seriesMap(x, ys[s], labels[s], style));
  }
  std::vector<std::pair<Value, Value>> entries;
  entries.emplace_back(keyword(kTag), keyword(style));
  addTexts(cx, kw, entries);
  entries.emplace_back(keyword("series"), makeVector(std::move(series)));
  return makeMap(std::move(entries));
}

Value hist(CallContext& cx, Args args) {
  KeywordArgs kw(cx, args, 1, {"bins", "title", "xlabel", "ylabel"});
  if (kw.positional().size() != 1) fail(ErrorKind::Type, "hist: expected (hist x :bins 10)");
  int64_t bins = 10;
  if (const Value* b = kw.find("bins")) {
    if (!b->isTensor() || !b->tensor().isScalar() || !isInteger(b->tensor().dtype()))
      fail(ErrorKind::Type, "hist: :bins must be an integer, got ", describeKind(*b));
    bins = b->tensor().toInt();
    if (bins < 1 || bins > 100000) fail(ErrorKind::Value, "hist: :bins must be between 1 and 100000, got ", bins);
  }
  const Histogram h = histogram(numbersOf(cx, kw.positional()[0], "x"), bins);
  std::vector<double> centres, counts;
  for (int64_t i = 0; i < bins; ++i) {
    centres.push_back((h.edges[static_cast<size_t>(i)] + h.edges[static_cast<size_t>(i) + 1]) / 2);
    counts.push_back(static_cast<double>(h.counts[static_cast<size_t>(i)]));
  }
  Tensor countTensor = Tensor::empty(DType::I64, Shape{bins});
  std::memcpy(countTensor.mutableData(), h.counts.data(), h.counts.size() * sizeof(int64_t));
  std::vector<std::pair<Value, Value>> entries;
  entries.emplace_back(keyword(kTag), keyword("hist"));
  addTexts(cx, kw, entries);
  entries.emplace_back(keyword("counts"), Value(countTensor));
  entries.emplace_back(keyword("edges"), Value(f64Tensor(h.edges, Shape{bins + 1})));
  entries.emplace_back(keyword("series"), makeVector({seriesMap(centres, counts, "", "boxes")}));
  return makeMap(std::move(entries));
}

Value imshow(CallContext& cx, Args args) {
  KeywordArgs kw(cx, args, 1, {"title", "xlabel", "ylabel"});
  if (kw.positional().size() != 1) fail(ErrorKind::Type, "imshow: expected (imshow img)");
  const Value& img = kw.positional()[0];
  if (!img.isTensor() || img.tensor().rank() != 2)
    fail(ErrorKind::Shape, "imshow: the image must be a rank-2 tensor [height width], got ", describeKind(img));
  if (img.tensor().numel() == 0) fail(ErrorKind::Shape, "imshow: the image ", describeKind(img), " is empty");
  if (img.tensor().numel() > kMaxPlotValues) fail(ErrorKind::Value, "imshow: the image has more than 2^22 pixels");
  std::vector<std::pair<Value, Value>> entries;
  entries.emplace_back(keyword(kTag), keyword("image"));
  addTexts(cx, kw, entries);
  entries.emplace_back(keyword("image"), Value(astype(img.tensor(), DType::F64).rowMajor()));
  return makeMap(std::move(entries));
}

[[noreturn]] void notAPlot(std::string_view who, const Value& v) {
  fail(ErrorKind::Type, who, " expects a plot (from plot, scatter-plot, hist or imshow), got ", describeKind(v));
}

/// The figure a plot value describes, checked (a map changed by hand may be wrong).
PlotSpec specOf(std::string_view who, const Value& v) {
  if (!v.isMap() || plotKind(v.map()).empty()) notAPlot(who, v);
  const MapObj& map = v.map();
  PlotSpec spec;
  spec.title = textField(map, "title");
  spec.xlabel = textField(map, "xlabel");
  spec.ylabel = textField(map, "ylabel");
  if (plotKind(map) == "image") {
    const Value* image = field(map, "image");
    if (!image || !image->isTensor() || image->tensor().rank() != 2 || image->tensor().numel() == 0)
      fail(ErrorKind::Value, who, ": the plot's :image must be a non-empty rank-2 tensor");
    spec.rows = image->tensor().shape()[0];
    spec.cols = image->tensor().shape()[1];
    spec.image = doublesOf(image->tensor());
    return spec;
  }
  const Value* series = field(map, "series");
  if (!series || !series->isVector()) fail(ErrorKind::Value, who, ": the plot has no :series vector");
  for (const Value& s : series->vector().items()) {
    const Value* x = s.isMap() ? field(s.map(), "x") : nullptr;
    const Value* y = s.isMap() ? field(s.map(), "y") : nullptr;
    if (!x || !y || !x->isTensor() || !y->isTensor() || x->tensor().numel() != y->tensor().numel())
      fail(ErrorKind::Value, who, ": each series must be a map with tensors :x and :y of one length");
    PlotSeries one;
    one.x = doublesOf(x->tensor());
    one.y = doublesOf(y->tensor());
    one.label = textField(s.map(), "label");
    const Value* style = field(s.map(), "style");
    const std::string styleName = style && style->isKeyword() ? style->keyword().name() : "lines";
    one.style = styleName == "points" ? SeriesStyle::Points : styleName == "boxes" ? SeriesStyle::Boxes : SeriesStyle::Lines;
    spec.series.push_back(std::move(one));
  }
  return spec;
}

int sizeOption(const KeywordArgs& kw, std::string_view name, int fallback) {
  const Value* v = kw.find(name);
  if (!v) return fallback;
  if (!v->isTensor() || !v->tensor().isScalar() || !isInteger(v->tensor().dtype()))
    fail(ErrorKind::Type, "save-plot: :", name, " must be an integer (pixels), got ", describeKind(*v));
  const int64_t n = v->tensor().toInt();
  if (n < 16 || n > 8192) fail(ErrorKind::Value, "save-plot: :", name, " must be between 16 and 8192 pixels, got ", n);
  return static_cast<int>(n);
}

std::string lowercaseExtension(const std::string& path) {
  const size_t dot = path.rfind('.');
  const size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) return "";
  std::string ext = path.substr(dot);
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

/// A plot for the notebook: its SVG (tsl/Display.h's two forms). A plot gnuplot cannot
/// draw keeps only its text form.
bool representPlot(const Value& value, MimeBundle& bundle) {
  if (!value.isMap() || plotKind(value.map()).empty()) return false;
  try {
    addSvg(bundle, renderPlot(specOf("display", value), PlotFormat::Svg, 640, 400));
    return true;
  } catch (const Error&) {
    return false;
  }
}

const bool kRepresenterAdded = (addRepresenter(representPlot), true);

} // namespace

void registerPlotBuiltins(Evaluator& evaluator) {
  (void)kRepresenterAdded;
  evaluator.defineBuiltin("plot", 1, -1, [](CallContext& cx, Args args) { return seriesPlot(cx, args, "lines"); });
  evaluator.defineBuiltin("scatter-plot", 1, -1,
                          [](CallContext& cx, Args args) { return seriesPlot(cx, args, "points"); });
  evaluator.defineBuiltin("hist", 1, -1, [](CallContext& cx, Args args) { return hist(cx, args); });
  evaluator.defineBuiltin("imshow", 1, -1, [](CallContext& cx, Args args) { return imshow(cx, args); });
  // (save-plot p path :width 640 :height 480): drawn by gnuplot, written atomically.
  evaluator.defineBuiltin("save-plot", 2, 6, [](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"width", "height"});
    if (kw.positional().size() != 2) fail(ErrorKind::Type, "save-plot: expected (save-plot p path :width 640 :height 480)");
    const std::string& path = stringArg(cx, args, 1);
    const std::string ext = lowercaseExtension(path);
    if (ext != ".svg" && ext != ".png")
      fail(ErrorKind::Value, "save-plot: cannot tell the picture format of '", path, "': the path must end in .svg or .png");
    const PlotSpec spec = specOf("save-plot", args[0]);
    const std::string picture = renderPlot(spec, ext == ".svg" ? PlotFormat::Svg : PlotFormat::Png,
                                           sizeOption(kw, "width", 640), sizeOption(kw, "height", 480));
    writeFileAtomically(path, picture);
    return Value();
  });
  // (plot-text p :width 80 :height 24): the plot drawn in characters, for a terminal.
  evaluator.defineBuiltin("plot-text", 1, 5, [](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 1, {"width", "height"});
    if (kw.positional().size() != 1) fail(ErrorKind::Type, "plot-text: expected (plot-text p :width 80 :height 24)");
    const PlotSpec spec = specOf("plot-text", args[0]);
    auto chars = [&](std::string_view name, int fallback) {
      const Value* v = kw.find(name);
      if (!v) return fallback;
      if (!v->isTensor() || !v->tensor().isScalar() || !isInteger(v->tensor().dtype()) || v->tensor().toInt() < 10 ||
          v->tensor().toInt() > 1000)
        fail(ErrorKind::Value, "plot-text: :", name, " must be an integer from 10 to 1000 (characters)");
      return static_cast<int>(v->tensor().toInt());
    };
    return makeString(renderPlot(spec, PlotFormat::Text, chars("width", 80), chars("height", 24)));
  });

  document(evaluator, "plot", "(plot ys) or (plot xs ys :label s :title s :xlabel s :ylabel s): a line plot of ys (against 0, 1, ... or xs); ys a vector of series or a rank-2 tensor draws one line per series, :label then a vector of names. A plot is a map describing the figure; save-plot and the notebook draw it with gnuplot.\n  e.g. (plot [0.9 0.5 0.3] :title \"loss\")  ; #<plot 1 series \"loss\">");
  document(evaluator, "scatter-plot", "(scatter-plot xs ys :label s :title s :xlabel s :ylabel s): ys against xs as points (several series as in plot).\n  e.g. (scatter-plot [1 2 3] [2.0 4.1 5.9])  ; #<plot 1 series>");
  document(evaluator, "hist", "(hist x :bins 10 :title s :xlabel s :ylabel s): a histogram of x's elements in equal bins from its smallest to its largest value (NumPy's histogram); :counts and :edges hold the numbers.\n  e.g. (:counts (hist [1 2 2 3 3 3] :bins 3))  ; i64[3] [1 2 3]");
  document(evaluator, "imshow", "(imshow img :title s): a rank-2 tensor [height width] as a grey-level image (row 0 at the top, black the smallest value) with its scale — a digit, a feature map, an attention matrix.\n  e.g. (imshow (reshape (arange 16) [4 4]))  ; #<plot image 4x4>");
  document(evaluator, "save-plot", "(save-plot p path :width 640 :height 480): draws the plot p with gnuplot into an SVG or PNG file, chosen by path's suffix (.svg, .png); written atomically; nil.\n  e.g. (save-plot (plot [3 1 2]) \"loss.svg\")");
  document(evaluator, "plot-text", "(plot-text p :width 80 :height 24): the plot p drawn in characters by gnuplot, for a terminal.\n  e.g. (println (plot-text (plot [3 1 2]) :width 40 :height 12))");
}

} // namespace builtins

} // namespace tsl
