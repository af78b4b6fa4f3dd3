// eval/TraceValue.cpp — trace values as maps, their summary and their picture
// (eval/TraceValue.h).
#include "eval/TraceValue.h"

#include "eval/DisplayText.h"
#include "runtime/Elementwise.h"
#include "tsl/Display.h"

#include <algorithm>
#include <cstring>

namespace tsl {

namespace {

constexpr std::string_view kTag = "tsl/trace";

const Value* field(const MapObj& map, std::string_view name) { return map.find(makeKeyword(name)); }

/// The target of a trace map, or empty for any other map.
std::string traceTarget(const MapObj& map) {
  static const Value tag = makeKeyword(kTag); // asked of every map printed: interned once
  const Value* target = map.find(tag);
  return target && target->isKeyword() ? target->keyword().name() : std::string();
}

Value i64Column(const std::vector<int64_t>& values) {
  Tensor t = Tensor::empty(DType::I64, Shape{static_cast<int64_t>(values.size())});
  if (!values.empty()) std::memcpy(t.mutableData(), values.data(), values.size() * sizeof(int64_t));
  return Value(t);
}

/// A column of a trace map as integers; nullopt if it is missing or not a rank-1 tensor
/// of `n` integers.
std::optional<std::vector<int64_t>> intColumn(const MapObj& map, std::string_view name, size_t n) {
  const Value* v = field(map, name);
  if (!v || !v->isTensor() || v->tensor().rank() != 1 || static_cast<size_t>(v->tensor().numel()) != n ||
      !isInteger(v->tensor().dtype()))
    return std::nullopt;
  const Tensor t = astype(v->tensor(), DType::I64).rowMajor();
  const std::span<const int64_t> e = t.elements<int64_t>();
  return std::vector<int64_t>(e.begin(), e.end());
}

/// A column of strings (missing or malformed: empty strings).
std::vector<std::string> textColumn(const MapObj& map, std::string_view name, size_t n) {
  std::vector<std::string> out(n);
  const Value* v = field(map, name);
  if (!v || !v->isVector() || v->vector().count() != n) return out;
  for (size_t i = 0; i < n; ++i)
    if (v->vector()[i].isString()) out[i] = v->vector()[i].string().text();
  return out;
}

size_t boxCount(const MapObj& map) {
  const Value* start = field(map, "start");
  return start && start->isTensor() && start->tensor().rank() == 1 ? static_cast<size_t>(start->tensor().numel()) : 0;
}

/// The timeline a trace map describes; nullopt if it is not one a picture can be made of.
std::optional<Timeline> timelineOfMap(const MapObj& map) {
  Timeline timeline;
  const Value* lanes = field(map, "lanes");
  if (!lanes || !lanes->isVector()) return std::nullopt;
  for (const Value& lane : sequenceItems(*lanes)) {
    if (!lane.isString()) return std::nullopt;
    timeline.lanes.push_back(lane.string().text());
  }
  if (const Value* unit = field(map, "unit"); unit && unit->isString()) timeline.unit = unit->string().text();
  const size_t n = boxCount(map);
  const auto lane = intColumn(map, "lane", n), start = intColumn(map, "start", n), end = intColumn(map, "end", n);
  if (!lane || !start || !end) return std::nullopt;
  const std::vector<std::string> names = textColumn(map, "name", n), details = textColumn(map, "detail", n);
  for (size_t i = 0; i < n; ++i)
    timeline.boxes.push_back({static_cast<int>(std::clamp<int64_t>((*lane)[i], -1, INT32_MAX)), (*start)[i], (*end)[i],
                              names[i], details[i]});
  return timeline;
}

bool representTrace(const Value& value, MimeBundle& bundle) {
  if (!value.isMap() || traceTarget(value.map()).empty()) return false;
  const std::optional<Timeline> timeline = timelineOfMap(value.map());
  if (!timeline) return false;
  addSvg(bundle, timelineSvg(*timeline));
  return true;
}

// Registered at static initialisation, before the generic representers (which would show
// the map's columns as tables); this file is linked whenever traceValue is.
const bool kRepresenterAdded = (addRepresenter(representTrace), true);

} // namespace

Value traceValue(const Timeline& timeline, const std::string& target) {
  (void)kRepresenterAdded;
  std::vector<Value> lanes, names, details;
  for (const std::string& lane : timeline.lanes) lanes.push_back(makeString(lane));
  std::vector<int64_t> lane, start, end;
  int64_t last = 0;
  for (const Timeline::Box& b : timeline.boxes) {
    lane.push_back(b.lane);
    start.push_back(b.start);
    end.push_back(b.end);
    names.push_back(makeString(b.name));
    details.push_back(makeString(b.detail));
    last = std::max(last, b.end);
  }
  return makeMap({{makeKeyword(kTag), makeKeyword(target)},
                  {makeKeyword("unit"), makeString(timeline.unit)},
                  {makeKeyword(timeline.unit + "s"), Value(Tensor::scalarOf<int64_t>(last, DType::I64))},
                  {makeKeyword("lanes"), makeVector(std::move(lanes))},
                  {makeKeyword("lane"), i64Column(lane)},
                  {makeKeyword("start"), i64Column(start)},
                  {makeKeyword("end"), i64Column(end)},
                  {makeKeyword("name"), makeVector(std::move(names))},
                  {makeKeyword("detail"), makeVector(std::move(details))}});
}

std::optional<std::string> traceSummary(const MapObj& map) {
  const std::string target = traceTarget(map);
  if (target.empty()) return std::nullopt;
  std::string out = "#<trace :" + target;
  if (const Value* lanes = field(map, "lanes"); lanes && lanes->isVector())
    out += " " + std::to_string(lanes->vector().count()) + " lanes";
  out += " " + std::to_string(boxCount(map)) + " boxes";
  const Value* unit = field(map, "unit");
  if (unit && unit->isString())
    if (const Value* span = field(map, unit->string().text() + "s"); span && span->isTensor() && span->tensor().isScalar())
      out += " " + std::to_string(span->tensor().toInt()) + " " + unit->string().text() + "s";
  return out + ">";
}

} // namespace tsl
