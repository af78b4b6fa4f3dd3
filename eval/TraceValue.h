// eval/TraceValue.h — trace values: what a target's trace builtin returns (`(tc-trace)`).
//
// A trace is a map tagged `:tsl/trace` (its value: the target's keyword) holding the
// lanes (the units that ran, as strings) and one column per field of its boxes — :lane
// (index into :lanes), :start, :end (i64 tensors, in :unit steps from 0), :name and
// :detail (vectors of strings) — and :cycles, the latest end. A program reads it as any
// map; it prints as a summary (#<trace :tc 4 lanes 36 instructions 1180 cycles>) and a
// representer draws it as an SVG timeline (runtime/TimelineSvg.h).
#pragma once

#include "eval/Value.h"
#include "runtime/TimelineSvg.h"

#include <optional>
#include <string>

namespace tsl {

/// The trace value of `timeline`, made by target `target`.
Value traceValue(const Timeline& timeline, const std::string& target);
/// The printed form of a trace value; nothing for any other map.
std::optional<std::string> traceSummary(const MapObj& map);

} // namespace tsl
