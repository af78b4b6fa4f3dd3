// eval/Printer.cpp — printing values.
#include "eval/Printer.h"
#include "eval/TraceValue.h"

#include "eval/Plot.h"

#include "eval/Tracer.h"

#include "parser/Syntax.h"
#include "runtime/Format.h"
#include "tsl/StackGuard.h"

namespace tsl {

namespace {

void print(const Value& value, bool readably, std::string& out) {
  checkStack();
  switch (value.kind()) {
  case ValueKind::Nil: out += "nil"; break;
  case ValueKind::Tensor: out += formatTensor(value.tensor()); break;
  case ValueKind::String:
    out += readably ? quoteString(value.string().text()) : value.string().text();
    break;
  case ValueKind::Keyword: out += ':' + value.keyword().name(); break;
  case ValueKind::Symbol: out += value.symbol().name(); break;
  case ValueKind::List: {
    out += '(';
    for (const ListObj* cell = value.list(); cell; cell = cell->next()) {
      print(cell->first(), readably, out);
      if (cell->next()) out += ' ';
    }
    out += ')';
    break;
  }
  case ValueKind::Vector: {
    out += '[';
    bool first = true;
    for (const Value& item : value.vector().items()) {
      if (!first) out += ' ';
      first = false;
      print(item, readably, out);
    }
    out += ']';
    break;
  }
  case ValueKind::Map: {
    if (std::optional<std::string> plot = plotSummary(value.map())) {
      out += *plot;
      break;
    }
    if (std::optional<std::string> trace = traceSummary(value.map())) {
      out += *trace;
      break;
    }
    out += '{';
    bool first = true;
    for (const auto& [k, v] : value.map().entries()) {
      if (!first) out += ", ";
      first = false;
      print(k, readably, out);
      out += ' ';
      print(v, readably, out);
    }
    out += '}';
    break;
  }
  case ValueKind::Function: {
    const FunctionObj& f = value.function();
    out += f.isMacro() ? "#<macro " : "#<fn ";
    out += f.name().empty() ? "anonymous" : f.name();
    out += '>';
    break;
  }
  case ValueKind::Recur: out += "#<recur>"; break;
  case ValueKind::Internal:
    out += traced(value).alive() ? cat("#<traced ", tracedTypeName(value), ">") : "#<traced, escaped>";
    break;
  }
}

} // namespace

std::string printValue(const Value& value, bool readably) {
  std::string out;
  print(value, readably, out);
  return out;
}

} // namespace tsl
