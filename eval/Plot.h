// eval/Plot.h — plot values: maps that describe a figure, drawn by runtime/Plot.h.
//
// A plot is a map tagged `:tsl/plot` (its kind: :lines, :points, :hist or :image) holding
// its data as tensors and its texts as strings, so a program can read it, change it with
// assoc and save it again. It prints as a summary (#<plot 2 series "loss">), is drawn
// for the notebook by a representer (image/svg+xml) and written by save-plot.
#pragma once

#include "eval/Value.h"

#include <optional>
#include <string>

namespace tsl {

/// The printed form of a plot value; nothing for any other map.
std::optional<std::string> plotSummary(const MapObj& map);

} // namespace tsl
