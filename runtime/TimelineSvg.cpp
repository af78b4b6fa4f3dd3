// runtime/TimelineSvg.cpp — a timeline drawn as SVG (runtime/TimelineSvg.h).
//
// The layout: lane labels in a left margin, one row per lane with a baseline, boxes scaled
// from [from, to] onto the plot's width, a time axis below with ticks at 1, 2 or 5 times a
// power of ten, and a legend of the boxes' names. Colours come from a fixed palette in the
// order names first appear, so the same program draws the same picture.
#include "runtime/TimelineSvg.h"

#include "runtime/Format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string_view>

namespace tsl {

namespace {

constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948",
                                    "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac", "#8cd17d", "#b6992d",
                                    "#499894", "#d37295", "#fabfd2", "#79706e"};
constexpr size_t kColours = sizeof kPalette / sizeof kPalette[0];

std::string number(double x) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.2f", x);
  return buffer;
}

/// A tick step of 1, 2 or 5 times a power of ten giving at most about `most` ticks.
int64_t tickStep(int64_t span, int most) {
  int64_t step = 1;
  while (step < INT64_MAX / 10) {
    for (int64_t m : {1, 2, 5})
      if (span / (step * m) <= most) return step * m;
    step *= 10;
  }
  return step;
}

} // namespace

std::string timelineSvg(const Timeline& timeline, int64_t from, int64_t to) {
  std::vector<const Timeline::Box*> boxes;
  for (const Timeline::Box& b : timeline.boxes)
    if (b.lane >= 0 && static_cast<size_t>(b.lane) < timeline.lanes.size()) boxes.push_back(&b);
  std::stable_sort(boxes.begin(), boxes.end(), [](auto* a, auto* b) { return a->start < b->start; });
  const size_t total = boxes.size();
  if (boxes.size() > kTimelineSvgMaxBoxes) boxes.resize(kTimelineSvgMaxBoxes);
  if (to < 0) {
    to = from;
    for (const Timeline::Box* b : boxes) to = std::max(to, b->end);
  }
  if (to <= from) to = from + 1;

  // The legend: each name once, in order of first appearance, with its colour.
  std::vector<std::string> names;
  std::map<std::string, size_t, std::less<>> colourOf;
  for (const Timeline::Box* b : boxes)
    if (colourOf.try_emplace(b->name, names.size() % kColours).second) names.push_back(b->name);

  constexpr int kWidth = 1000, kLeft = 80, kRight = 20, kTop = 30, kRow = 28, kLegendColumn = 150;
  const int lanes = static_cast<int>(timeline.lanes.size());
  const int axisY = kTop + kRow * lanes;
  const int perLine = (kWidth - kLeft) / kLegendColumn;
  const int legendLines = (static_cast<int>(names.size()) + perLine - 1) / perLine;
  const int height = axisY + 44 + 20 * legendLines + (total > boxes.size() ? 20 : 0);
  const double scale = static_cast<double>(kWidth - kLeft - kRight) / static_cast<double>(to - from);
  auto xOf = [&](int64_t t) { return kLeft + static_cast<double>(std::clamp(t, from, to) - from) * scale; };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
                    std::to_string(height) + "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " +
                    std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // Ticks and their grid lines, under the boxes.
  const int64_t step = tickStep(to - from, 10);
  for (int64_t t = (from + step - 1) / step * step; t <= to; t += step) {
    const std::string x = number(xOf(t));
    svg += "<line x1=\"" + x + "\" x2=\"" + x + "\" y1=\"" + std::to_string(kTop) + "\" y2=\"" +
           std::to_string(axisY + 4) + "\" stroke=\"#eee\"/>";
    svg += "<text x=\"" + x + "\" y=\"" + std::to_string(axisY + 16) + "\" text-anchor=\"middle\" fill=\"#555\">" +
           std::to_string(t) + "</text>\n";
    if (t > INT64_MAX - step) break;
  }
  svg += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" +
         std::to_string(axisY) + "\" y2=\"" + std::to_string(axisY) + "\" stroke=\"#555\"/>\n";
  svg += "<text x=\"" + std::to_string(kWidth - kRight) + "\" y=\"" + std::to_string(axisY + 32) +
         "\" text-anchor=\"end\" fill=\"#555\">" + escapeXml(timeline.unit) + "s</text>\n";
  for (int i = 0; i < lanes; ++i) {
    const int y = kTop + i * kRow;
    svg += "<text class=\"lane\" x=\"5\" y=\"" + std::to_string(y + 17) + "\">" + escapeXml(timeline.lanes[size_t(i)]) +
           "</text>";
    svg += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kWidth - kRight) + "\" y1=\"" +
           std::to_string(y + kRow - 2) + "\" y2=\"" + std::to_string(y + kRow - 2) + "\" stroke=\"#ddd\"/>\n";
  }
  for (const Timeline::Box* b : boxes) {
    if (b->end < from || b->start > to) continue;
    const double x0 = xOf(b->start);
    const double w = std::max(xOf(b->end) - x0, 0.5);
    svg += "<rect x=\"" + number(x0) + "\" y=\"" + std::to_string(kTop + b->lane * kRow + 3) + "\" width=\"" +
           number(w) + "\" height=\"" + std::to_string(kRow - 8) + "\" fill=\"" + kPalette[colourOf.at(b->name)] +
           "\" stroke=\"white\" stroke-width=\"0.3\"><title>" + escapeXml(b->detail.empty() ? b->name : b->detail) +
           " [" + std::to_string(b->start) + ", " + std::to_string(b->end) + ")</title></rect>\n";
  }
  for (size_t i = 0; i < names.size(); ++i) {
    const int x = kLeft + static_cast<int>(i % size_t(perLine)) * kLegendColumn;
    const int y = axisY + 40 + static_cast<int>(i / size_t(perLine)) * 20;
    svg += "<rect class=\"legend\" x=\"" + std::to_string(x) + "\" y=\"" + std::to_string(y) +
           "\" width=\"12\" height=\"12\" fill=\"" + kPalette[colourOf.at(names[i])] + "\"/><text x=\"" +
           std::to_string(x + 16) + "\" y=\"" + std::to_string(y + 10) + "\">" + escapeXml(names[i]) + "</text>\n";
  }
  if (total > boxes.size())
    svg += "<text x=\"" + std::to_string(kLeft) + "\" y=\"" + std::to_string(height - 8) + "\" fill=\"#a00\">the first " +
           std::to_string(boxes.size()) + " of " + std::to_string(total) + " boxes</text>\n";
  return svg + "</svg>\n";
}

} // namespace tsl
