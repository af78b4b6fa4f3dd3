// runtime/TimelineSvg.h — a timeline as an SVG picture: one lane per unit, one box per
// piece of work, time along the x axis (the emulated tensor core's trace, `(tc-trace)`).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tsl {

/// What ran where and when: lanes (units, top to bottom) and boxes [start, end) on them.
struct Timeline {
  struct Box {
    int lane = 0;          ///< index into lanes
    int64_t start = 0, end = 0;
    std::string name;      ///< what the legend and the colour go by (an instruction's mnemonic)
    std::string detail;    ///< the box's tooltip (the whole instruction)
  };
  std::vector<std::string> lanes;
  std::vector<Box> boxes;
  std::string unit = "cycle"; ///< what a time step is, for the axis
};

/// At most this many boxes are drawn; a longer timeline is drawn up to its
/// kTimelineSvgMaxBoxes-th box (in start order) and says how many it left out.
inline constexpr size_t kTimelineSvgMaxBoxes = 20000;

/// `timeline` as a standalone SVG document (no XML prolog): a labelled lane per entry of
/// lanes, a box per box coloured by its name (a legend lists the names, in order of first
/// appearance), an axis of `unit`s from `from` to `to` with round ticks. `to` < 0: the
/// latest end. Boxes with end == start are drawn half a pixel wide; texts are escaped.
std::string timelineSvg(const Timeline& timeline, int64_t from = 0, int64_t to = -1);

} // namespace tsl
