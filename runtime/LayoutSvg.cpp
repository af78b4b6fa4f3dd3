// runtime/LayoutSvg.cpp — drawing a tensor's physical layout as SVG.
#include "runtime/LayoutSvg.h"

#include "runtime/Format.h"
#include "runtime/Layout.h"
#include "runtime/Ops.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tsl {

namespace {

constexpr int kCell = 26;      ///< a cell's side, in pixels
constexpr int kGap = 18;       ///< between blocks
constexpr int kLabel = 16;     ///< the height of a block's label
constexpr int kMargin = 12;
constexpr int kTitle = 44;
constexpr int kMaxWidth = 1100; ///< blocks wrap onto a new row of blocks past this width

/// The names of the physical axes, for block labels.
std::vector<std::string> axisNames(Layout layout, int physicalRank, int logicalRank) {
  switch (layout) {
  case Layout::NHWC: return {"n", "h", "w", "c"};
  case Layout::NC1HWC0: return {"n", "c1", "h", "w", "c0"};
  case Layout::FractalZ: return {"k1", "n1", "n0", "c0"};
  case Layout::FractalNZ: {
    std::vector<std::string> names;
    for (int d = 0; d + 4 < physicalRank; ++d) names.push_back(cat("b", d));
    for (const char* n : {"k1", "m1", "m0", "k0"}) names.push_back(n);
    return names;
  }
  case Layout::RowMajor: break;
  }
  if (logicalRank == 4) return {"n", "c", "h", "w"};
  std::vector<std::string> names;
  for (int d = 0; d < physicalRank; ++d) names.push_back(cat("d", d));
  return names;
}

/// A colour along the logical order: t in [0, 1] from blue to orange.
std::string colour(double t) {
  const double hue = 210.0 - 180.0 * t;
  return cat("hsl(", static_cast<int>(std::lround(hue)), ",70%,", 78, "%)");
}

} // namespace

std::string layoutSvg(const Tensor& x) {
  const Shape logical = x.shape();
  const Layout layout = x.layout();
  const DType dtype = x.dtype();
  const Shape physical = x.rank() == 0 ? Shape{1} : physicalShape(layout, logical, dtype);
  const int64_t cells = physical.numel();
  if (cells > kLayoutSvgMaxElements)
    fail(ErrorKind::Value, "layout-svg draws tensors of at most ", kLayoutSvgMaxElements, " physical elements; ",
         TensorType::of(x).str(), " in ", layoutName(layout), " has ", cells);
  // Which logical element (row-major number) each physical element holds; -1: padding.
  std::vector<int64_t> holds(static_cast<size_t>(cells), -1);
  const int64_t n = logical.numel();
  std::vector<int64_t> index(static_cast<size_t>(std::max(1, logical.rank())), 0);
  for (int64_t flat = 0; flat < n; ++flat) {
    int64_t rest = flat;
    for (int d = logical.rank() - 1; d >= 0; --d) {
      index[static_cast<size_t>(d)] = rest % logical[d];
      rest /= logical[d];
    }
    const int64_t at = x.rank() == 0 ? 0 : physicalOffset(layout, logical, dtype, index.data());
    holds[static_cast<size_t>(at)] = flat;
  }
  // Rows of the innermost physical axis; blocks of the next one; outer indices label blocks.
  const int rank = physical.rank();
  const int64_t perRow = physical[rank - 1];
  const int64_t rowsPerBlock = rank >= 2 ? physical[rank - 2] : 1;
  const int64_t blocks = cells / std::max<int64_t>(1, perRow * rowsPerBlock);
  const std::vector<std::string> names = axisNames(layout, rank, logical.rank());
  const int blockWidth = static_cast<int>(perRow) * kCell, blockHeight = static_cast<int>(rowsPerBlock) * kCell + kLabel;
  const int perLine = std::max(1, (kMaxWidth - 2 * kMargin + kGap) / (blockWidth + kGap));
  const int lines = static_cast<int>((blocks + perLine - 1) / perLine);
  const int width = 2 * kMargin + static_cast<int>(std::min<int64_t>(blocks, perLine)) * (blockWidth + kGap) - kGap;
  const int height = kTitle + kMargin + lines * (blockHeight + kGap);
  const int64_t bytes = cells * static_cast<int64_t>(dtypeSize(dtype));
  const int64_t useful = n * static_cast<int64_t>(dtypeSize(dtype));
  std::string out = cat(R"(<svg xmlns="http://www.w3.org/2000/svg" width=")", std::max(width, 520), R"(" height=")", height,
                        R"(" font-family="DejaVu Sans Mono, monospace" font-size="10">)", "\n");
  out += R"~(<defs><pattern id="pad" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">)~"
         R"(<rect width="6" height="6" fill="#d9d9d9"/><line x1="0" y1="0" x2="0" y2="6" stroke="#9a9a9a" stroke-width="2"/>)"
         "</pattern></defs>\n";
  out += R"(<rect width="100%" height="100%" fill="white"/>)" "\n";
  const std::string physicalText = cat("[", [&] {
    std::string s;
    for (int d = 0; d < rank; ++d) s += cat(d ? "," : "", names[static_cast<size_t>(d)], "=", physical[d]);
    return s;
  }(), "]");
  out += cat(R"(<text x=")", kMargin, R"(" y="18" font-size="13">)",
             escapeXml(cat(TensorType::of(x).str(), " stored ", layoutName(layout), ": physical ", physicalText)),
             "</text>\n");
  out += cat(R"(<text x=")", kMargin, R"(" y="34" font-size="11" fill="#444">)",
             escapeXml(cat(bytes, " B for ", useful, " B of elements (",
                            bytes == 0 ? 0.0 : std::round(1000.0 * static_cast<double>(bytes - useful) / static_cast<double>(bytes)) / 10.0,
                            " % padding); each cell: the row-major number of the element stored there")),
             "</text>\n");
  for (int64_t block = 0; block < blocks; ++block) {
    const int bx = kMargin + static_cast<int>(block % perLine) * (blockWidth + kGap);
    const int by = kTitle + static_cast<int>(block / perLine) * (blockHeight + kGap);
    // The block's outer index, named by physical axis.
    std::string label;
    int64_t rest = block;
    std::vector<int64_t> outer(static_cast<size_t>(std::max(0, rank - 2)));
    for (int d = rank - 3; d >= 0; --d) {
      outer[static_cast<size_t>(d)] = rest % physical[d];
      rest /= physical[d];
    }
    for (int d = 0; d < rank - 2; ++d) label += cat(d ? " " : "", names[static_cast<size_t>(d)], "=", outer[static_cast<size_t>(d)]);
    if (!label.empty()) out += cat(R"(<text x=")", bx, R"(" y=")", by + 11, R"(" fill="#333">)", escapeXml(label), "</text>\n");
    for (int64_t r = 0; r < rowsPerBlock; ++r)
      for (int64_t c = 0; c < perRow; ++c) {
        const int64_t at = (block * rowsPerBlock + r) * perRow + c;
        const int64_t element = holds[static_cast<size_t>(at)];
        const int cx = bx + static_cast<int>(c) * kCell, cy = by + kLabel + static_cast<int>(r) * kCell;
        const std::string fill =
            element < 0 ? "url(#pad)" : colour(n <= 1 ? 0.0 : static_cast<double>(element) / static_cast<double>(n - 1));
        out += cat(R"(<rect x=")", cx, R"(" y=")", cy, R"(" width=")", kCell, R"(" height=")", kCell, R"(" fill=")", fill,
                   R"(" stroke="white"/>)");
        if (element >= 0)
          out += cat(R"(<text x=")", cx + kCell / 2, R"(" y=")", cy + kCell / 2 + 4, R"(" text-anchor="middle">)", element,
                     "</text>");
        out += "\n";
      }
    out += cat(R"(<rect x=")", bx, R"(" y=")", by + kLabel, R"(" width=")", blockWidth, R"(" height=")",
               blockHeight - kLabel, R"(" fill="none" stroke="#333" stroke-width="1.5"/>)", "\n");
  }
  out += "</svg>\n";
  return out;
}

} // namespace tsl
