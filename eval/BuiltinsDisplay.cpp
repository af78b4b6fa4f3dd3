// eval/BuiltinsDisplay.cpp — `display`, `load`, and the rich representations of values
// (tsl/Display.h): a tensor as an HTML table with a dtype/shape/layout caption (summarised
// like NumPy past a size), maps and vectors as nested HTML, a string holding an SVG
// document (layout-svg) as the picture, Graphviz DOT (graph) drawn by `dot` as SVG, IR
// text (ir) highlighted.
#include "eval/Builtins.h"
#include "eval/DisplayText.h"
#include "eval/Evaluator.h"
#include "eval/Printer.h"

#include "runtime/Elementwise.h"
#include "runtime/Format.h"
#include "runtime/Io.h"
#include "runtime/Layout.h"

#include <cctype>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <sys/wait.h>
#include <unistd.h>

namespace tsl::builtins {

namespace {

constexpr int64_t kEdge = 3;      ///< elements shown at each end of a long axis
constexpr int64_t kFullRows = 20; ///< axes up to this long are shown whole

/// The indices of an axis of length n to show (-1 marks the ellipsis).
std::vector<int64_t> shownIndices(int64_t n) {
  std::vector<int64_t> out;
  if (n <= kFullRows) {
    for (int64_t i = 0; i < n; ++i) out.push_back(i);
    return out;
  }
  for (int64_t i = 0; i < kEdge; ++i) out.push_back(i);
  out.push_back(-1);
  for (int64_t i = n - kEdge; i < n; ++i) out.push_back(i);
  return out;
}

std::string formatElement(double v, bool integral) {
  char buffer[64];
  if (integral) std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(v));
  else std::snprintf(buffer, sizeof buffer, "%.6g", v);
  return buffer;
}

/// A tensor of rank 1 or 2 (the last two axes of the first matrix of a higher rank) as an
/// HTML table; its caption gives dtype, shape and layout.
std::string tensorHtml(const Tensor& tensor) {
  const bool integral = tensor.dtype() == DType::I32 || tensor.dtype() == DType::I64 || tensor.dtype() == DType::Bool;
  const Tensor values = astype(tensor, DType::F64).rowMajor();
  const std::span<const double> data = values.elements<double>();
  const int rank = tensor.rank();
  const int64_t rows = rank >= 2 ? tensor.shape()[rank - 2] : 1;
  const int64_t cols = tensor.shape()[rank - 1];
  std::string html = "<table class=\"tsl-tensor\" style=\"font-family:monospace;border-collapse:collapse\">";
  html += "<caption style=\"text-align:left;color:#555;white-space:nowrap\">" + escapeXml(formatType(tensor));
  html += std::string(" · ") + layoutKeyword(tensor.layout(), rank);
  if (rank > 2) html += " · the first " + std::to_string(rows) + "×" + std::to_string(cols) + " matrix";
  html += "</caption>";
  for (int64_t r : shownIndices(rows)) {
    html += "<tr>";
    for (int64_t c : shownIndices(cols)) {
      html += "<td style=\"padding:1px 6px;text-align:right;border:1px solid #ddd\">";
      html += r < 0 ? (c < 0 ? "⋱" : "⋮") : c < 0 ? "…" : formatElement(data[static_cast<size_t>(r * cols + c)], integral);
      html += "</td>";
    }
    html += "</tr>";
  }
  return html + "</table>";
}

/// Maps and vectors as nested tables; tensors inside as their tables; the rest as text.
std::string nestedHtml(const Value& value, int depth) {
  if (depth > 8) return "<code>" + escapeXml(printValue(value, true)) + "</code>";
  if (value.isTensor() && value.tensor().rank() > 0) return tensorHtml(value.tensor());
  const char* cell = "<td style=\"padding:2px 6px;border:1px solid #ddd;vertical-align:top;text-align:left\">";
  if (value.isMap()) {
    std::string html = "<table class=\"tsl-map\" style=\"border-collapse:collapse\">";
    for (const auto& [key, item] : value.map().entries())
      html += std::string("<tr>") + cell + "<b>" + escapeXml(printValue(key, true)) + "</b></td>" + cell +
              nestedHtml(item, depth + 1) + "</td></tr>";
    return html + "</table>";
  }
  if (value.isVector()) {
    std::string html = "<table class=\"tsl-vector\" style=\"border-collapse:collapse\"><tr>";
    for (const Value& item : sequenceItems(value)) html += cell + nestedHtml(item, depth + 1) + "</td>";
    return html + "</tr></table>";
  }
  return "<code>" + escapeXml(printValue(value, true)) + "</code>";
}

bool containsTensor(const Value& value) {
  if (value.isTensor()) return value.tensor().rank() > 0;
  if (value.isMap()) {
    for (const auto& [key, item] : value.map().entries())
      if (containsTensor(item)) return true;
  } else if (value.isVector()) {
    for (const Value& item : sequenceItems(value))
      if (containsTensor(item)) return true;
  }
  return false;
}

/// Runs `dot -Tsvg` on `source`: the SVG, or empty if Graphviz is missing or fails.
std::string dotToSvg(const std::string& source) {
  char inPath[] = "/tmp/tsl-dot-XXXXXX";
  const int fd = mkstemp(inPath);
  if (fd < 0) return {};
  const bool written = write(fd, source.data(), source.size()) == static_cast<ssize_t>(source.size());
  close(fd);
  std::string svg;
  if (written) {
    const std::string command = std::string("dot -Tsvg '") + inPath + "' 2>/dev/null";
    if (FILE* pipe = popen(command.c_str(), "r")) {
      char buffer[4096];
      for (size_t n; (n = fread(buffer, 1, sizeof buffer, pipe)) > 0;) svg.append(buffer, n);
      if (pclose(pipe) != 0) svg.clear();
    }
  }
  unlink(inPath);
  return svg;
}

/// IR text (what `ir` returns) as HTML with its values, types, keywords and comments
/// coloured.
std::string irHtml(const std::string& text) {
  std::string html = "<pre class=\"tsl-ir\" style=\"line-height:1.3\">";
  auto span = [&](const char* colour, std::string_view token) {
    html += std::string("<span style=\"color:") + colour + "\">" + escapeXml(token) + "</span>";
  };
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    size_t end = i + 1;
    if (c == '%' || c == '@') {
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                                   text[end] == '.'))
        ++end;
      span(c == '%' ? "#1f6feb" : "#8250df", std::string_view(text).substr(i, end - i));
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      while (end < text.size() && (std::isalnum(static_cast<unsigned char>(text[end])) || text[end] == '_' ||
                                   text[end] == '-' || text[end] == '.'))
        ++end;
      const std::string_view word = std::string_view(text).substr(i, end - i);
      const bool type = end < text.size() && text[end] == '[';
      const bool keyword = word == "func" || word == "return" || word == "yield" || word == "fused" || word == "loc";
      if (type) span("#0a7f5a", word);
      else if (keyword) span("#cf222e", word);
      else html += escapeXml(word);
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      end = text.find('\n', i);
      if (end == std::string::npos) end = text.size();
      span("#6e7781", std::string_view(text).substr(i, end - i));
    } else {
      html += escapeXml(std::string_view(text).substr(i, 1));
    }
    i = end;
  }
  return html + "</pre>";
}

bool representValueRichly(const Value& value, MimeBundle& bundle) {
  if (value.isString()) {
    const std::string& text = value.string().text();
    const size_t first = text.find_first_not_of(" \t\n");
    if (first == std::string::npos) return false;
    if (text.compare(first, 6, "func @") == 0 || text.compare(first, 7, "module ") == 0) {
      bundle.add("text/html", irHtml(text));
      return true;
    }
    std::string svg;
    if (text.compare(first, 4, "<svg") == 0 || text.compare(first, 5, "<?xml") == 0) svg = bareSvg(text);
    else if (text.compare(first, 8, "digraph ") == 0) svg = bareSvg(dotToSvg(text));
    if (svg.empty()) return false;
    addSvg(bundle, svg);
    return true;
  }
  if (!containsTensor(value)) return false;
  bundle.add("text/html", nestedHtml(value, 0));
  return true;
}

} // namespace

void registerDisplayBuiltins(Evaluator& evaluator) {
  // Representers are registered once, when the first engine starts (a static library's
  // static initialisers would be dropped by the linker).
  static std::once_flag once;
  std::call_once(once, [] { addRepresenter(representValueRichly); });

  evaluator.defineBuiltin("display", 1, 1, [](CallContext& cx, Args args) {
    cx.evaluator.show(args[0]);
    return Value();
  });
  // (load "file.tsl"): runs a file in the user namespace, relative to the loading file's
  // folder (a notebook's cells: the notebook's folder, where its kernel runs).
  evaluator.defineBuiltin("load", 1, 1, [](CallContext& cx, Args args) {
    namespace fs = std::filesystem;
    const std::string path = stringArg(cx, args, 0);
    fs::path file(path);
    if (file.is_relative() && cx.span.file) {
      const fs::path base = fs::path(*cx.span.file).parent_path();
      std::error_code ec;
      if (!base.empty() && fs::exists(base / file, ec)) file = base / file;
    }
    return cx.evaluator.evalSource(readTextFile(file.string(), kMaxSourceBytes), file.string(), cx.evaluator.user());
  });
}

} // namespace tsl::builtins
