// ir/Printer.cpp — modules and functions as text.
#include "ir/Printer.h"

#include "ir/Attributes.h"
#include "parser/Syntax.h"
#include "runtime/Dispatch.h"
#include "runtime/Format.h"
#include "runtime/Interrupt.h"
#include "runtime/Layout.h"
#include "tsl/StackGuard.h"

#include <cctype>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>
#include <unordered_map>

namespace tsl::ir {

namespace {

/// Constants with more elements than this print as hex bytes.
constexpr int64_t kInlineElements = 16;

bool validName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') return false;
  return true;
}


} // namespace

ValueNames valueNames(const Function& f) {
  // Source names where they are valid (the first value of a name keeps it, later ones
  // get `.1`, `.2` — a loop variable named like the parameter it starts from); numbers
  // otherwise.
  ValueNames out;
  std::vector<const Value*> all;
  auto visit = [&](const Value* v) { all.push_back(v); };
  size_t seen = 0; // operations, to poll for Ctrl-C now and then (a long function's names take a while)
  for (const auto& arg : f.body().arguments()) visit(arg.get());
  walk(const_cast<Block&>(f.body()), [&](Operation& op) {
    if ((++seen & 4095) == 0) checkInterrupt();
    for (const auto& region : op.regions())
      for (const auto& arg : region->block().arguments()) visit(arg.get());
    if (op.resultCount() == 1) visit(op.result());
  });
  std::set<std::string> used;
  std::unordered_map<std::string, int> nextSuffix; // per name, the next suffix to try
  for (const Value* v : all) {
    if ((++seen & 4095) == 0) checkInterrupt();
    if (!validName(v->name())) continue;
    std::string name = v->name();
    if (used.count(name)) {
      int& k = nextSuffix[v->name()];
      do name = cat(v->name(), ".", ++k);
      while (used.count(name));
    }
    out.names[v] = "%" + name;
    used.insert(name);
  }
  int next = 0;
  auto fresh = [&] {
    while (used.count(std::to_string(next))) ++next;
    return std::to_string(next++);
  };
  for (const auto& arg : f.body().arguments())
    if (!out.names.count(arg.get())) out.names[arg.get()] = "%" + fresh();
  walk(const_cast<Block&>(f.body()), [&](Operation& op) {
    if ((++seen & 4095) == 0) checkInterrupt();
    for (const auto& region : op.regions())
      for (const auto& arg : region->block().arguments())
        if (!out.names.count(arg.get())) out.names[arg.get()] = "%" + fresh();
    if (op.resultCount() == 1 && !out.names.count(op.result())) out.names[op.result()] = "%" + fresh();
    if (op.resultCount() > 1) {
      const std::string base = "%" + fresh();
      for (size_t i = 0; i < op.resultCount(); ++i) out.names[op.result(i)] = cat(base, "#", i);
      out.groups[&op] = base;
    }
  });
  return out;
}

namespace {

class FunctionPrinter {
public:
  FunctionPrinter(const Function& f, const PrintOptions& options) : f_(f), options_(options) {}

  std::string print() {
    nameValues();
    std::string out = cat("func @", f_.name(), "(");
    const auto& params = f_.body().arguments();
    for (size_t i = 0; i < params.size(); ++i)
      out += cat(i ? ", " : "", name(params[i].get()), ": ", params[i]->type().str());
    out += ") -> (";
    const std::vector<Type> results = f_.resultTypes();
    for (size_t i = 0; i < results.size(); ++i) out += cat(i ? ", " : "", results[i].str());
    out += ")";
    out += location(f_.span());
    out += " {\n";
    block(f_.body(), 1, out);
    out += "}\n";
    return out;
  }

private:
  void nameValues() {
    ValueNames all = valueNames(f_);
    names_ = std::move(all.names);
    groups_ = std::move(all.groups);
  }

  const std::string& name(const Value* v) {
    auto it = names_.find(v);
    TSL_ASSERT(it != names_.end(), "a value used outside the function that defines it");
    return it->second;
  }

  std::string location(const Span& span) const {
    if (!options_.locations || !span.known()) return "";
    return cat(" loc(", quoteString(std::string(span.fileName())), ":", span.line, ":", span.col, "-", span.endLine, ":",
               span.endCol, ")");
  }

  std::string operandList(const Operation& op, size_t from = 0) {
    std::string out;
    for (size_t i = from; i < op.operands().size(); ++i) out += cat(i > from ? ", " : "", name(op.operand(i)));
    return out;
  }

  std::string resultTypes(const Operation& op) {
    std::string out;
    for (size_t i = 0; i < op.resultCount(); ++i) out += cat(i ? ", " : "", op.result(i)->type().str());
    return out;
  }

  void block(const Block& b, int depth, std::string& out) {
    checkStack();
    for (const auto& op : b.ops()) {
      // Ctrl-C stops printing a long function: the compiler prints the optimised IR as
      // its cache key, a second for 300,000 operations (ir/Pass.h).
      if ((++printed_ & 1023) == 0) checkInterrupt();
      operation(*op, depth, out);
    }
  }

  /// What a layout conversion moves, as a comment: "// nc1hwc0 -> row-major, 65536 -> 40960 B".
  static std::string conversionNote(const Operation& op) {
    if (opInfo(op.code().kind).layout != LayoutClass::Converting) return {};
    const Type& from = op.operand(0)->type();
    const Type& to = op.result()->type();
    std::string note = cat("  // ", layoutName(from.layout), " -> ", layoutName(to.layout));
    if (from.concrete() && to.concrete()) note += cat(", ", from.bytes(), " -> ", to.bytes(), " B");
    return note;
  }

  void operation(const Operation& op, int depth, std::string& out) {
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    out += indent;
    if (op.resultCount() == 1) out += name(op.result()) + " = ";
    if (op.resultCount() > 1) out += cat(groups_[&op], ":", op.resultCount(), " = ");
    const OpCode code = op.code();
    if (code.primitive) {
      out += code.name();
      if (!op.operands().empty()) out += " " + operandList(op);
      const std::string attrs = printAttrs(op.attrs());
      if (!attrs.empty()) out += " " + attrs;
      out += " : " + resultTypes(op) + location(op.span()) + conversionNote(op) + "\n";
      return;
    }
    switch (code.structural) {
    case Structural::Constant:
      out += cat("constant ", printConstant(op.constant()), " : ", resultTypes(op), location(op.span()), "\n");
      return;
    case Structural::Call:
      out += cat("call @", op.callee(), "(", operandList(op), ")");
      if (op.resultCount()) out += " : " + resultTypes(op);
      out += location(op.span()) + "\n";
      return;
    case Structural::TapeNew:
    case Structural::TapePush:
    case Structural::TapePop:
      out += code.name();
      if (!op.operands().empty()) out += " " + operandList(op);
      out += " : " + resultTypes(op) + location(op.span()) + "\n";
      return;
    case Structural::Raise:
      out += cat("raise ", errorKindName(op.raiseKind()), " ", quoteString(op.message()), location(op.span()), "\n");
      return;
    case Structural::Yield:
    case Structural::Condition:
    case Structural::Return:
      out += code.name();
      if (!op.operands().empty()) out += " " + operandList(op);
      out += location(op.span()) + "\n";
      return;
    case Structural::If:
      out += cat("if ", name(op.operand(0)));
      if (op.resultCount()) out += " : " + resultTypes(op);
      out += location(op.span()) + " {\n";
      block(op.region(0).block(), depth + 1, out);
      out += indent + "} else {\n";
      block(op.region(1).block(), depth + 1, out);
      out += indent + "}\n";
      return;
    case Structural::Fused: {
      const Block& body = op.region(0).block();
      out += cat("fused ", fusionClassName(fusionKind(op)), " (");
      for (size_t i = 0; i < op.operands().size(); ++i)
        out += cat(i ? ", " : "", name(body.argument(i)), " = ", name(op.operand(i)));
      out += ") : (";
      for (size_t i = 0; i < op.operands().size(); ++i) out += cat(i ? ", " : "", op.operand(i)->type().str());
      out += ") -> (" + resultTypes(op) + ")" + location(op.span()) + " {\n";
      block(body, depth + 1, out);
      out += indent + "}\n";
      return;
    }
    case Structural::While: {
      const Block& before = op.region(0).block();
      const Block& after = op.region(1).block();
      out += "while (";
      for (size_t i = 0; i < op.operands().size(); ++i)
        out += cat(i ? ", " : "", name(before.argument(i)), " = ", name(op.operand(i)));
      out += ") : (";
      for (size_t i = 0; i < op.operands().size(); ++i) out += cat(i ? ", " : "", op.operand(i)->type().str());
      out += ") -> (" + resultTypes(op) + ")" + location(op.span()) + " {\n";
      block(before, depth + 1, out);
      out += indent + "} do (";
      for (size_t i = 0; i < after.arguments().size(); ++i) out += cat(i ? ", " : "", name(after.argument(i)));
      out += ") {\n";
      block(after, depth + 1, out);
      out += indent + "}\n";
      return;
    }
    }
  }

  const Function& f_;
  const PrintOptions& options_;
  std::unordered_map<const Value*, std::string> names_;
  std::unordered_map<const Operation*, std::string> groups_;
  size_t printed_ = 0; ///< operations printed, to poll the interrupt flag now and then
};

} // namespace

namespace {

/// Whether a float tensor holds a NaN whose bits differ from the NaN the parser makes of
/// `nan` (a positive quiet NaN converted to the dtype).
bool hasUnusualNan(const Tensor& value) {
  if (!isFloat(value.dtype()) || value.numel() == 0) return false;
  const Tensor c = contiguous(value);
  return dispatchDType(c.dtype(), [&](auto tag) {
    using T = decltype(tag);
    if constexpr (kIsFloatElement<T>) {
      const T canonical = convertElement<T>(std::numeric_limits<double>::quiet_NaN());
      const T* p = reinterpret_cast<const T*>(c.data());
      for (int64_t i = 0; i < c.numel(); ++i)
        if (std::isnan(toDouble(p[i])) && std::memcmp(&p[i], &canonical, sizeof(T)) != 0) return true;
    }
    return false;
  });
}

} // namespace

std::string irName(std::string_view name) {
  std::string out;
  for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "v" + out;
  return out;
}

std::string printConstant(const Tensor& value) {
  // Empty tensors of rank 2 or more (whose brackets could not say which axis is empty) and
  // NaNs other than the one `nan` reads as (a sign or payload the decimal form would lose)
  // print as their bytes, like large constants.
  const bool odd = (value.numel() == 0 && value.rank() > 1) || hasUnusualNan(value);
  if (value.isScalar() && !odd) return formatScalar(value);
  const Tensor c = contiguous(value);
  if (c.numel() > kInlineElements || odd) {
    static const char* hex = "0123456789abcdef";
    std::string out = "dense<\"0x";
    const auto* bytes = reinterpret_cast<const unsigned char*>(c.data());
    const size_t n = static_cast<size_t>(c.numel()) * c.elementSize();
    out.reserve(out.size() + 2 * n + 3);
    for (size_t i = 0; i < n; ++i) {
      out += hex[bytes[i] >> 4];
      out += hex[bytes[i] & 15];
    }
    return out + "\">";
  }
  // Nested lists, row-major.
  std::string out = "dense<";
  const Shape& shape = c.shape();
  const int64_t n = c.numel();
  for (int64_t i = 0; i < n; ++i) {
    // Open brackets for every axis this element starts.
    int64_t block = 1;
    for (int d = shape.rank() - 1; d >= 0; --d) {
      if (i % (block * shape[d]) != 0) break;
      block *= shape[d];
      out += '[';
    }
    out += formatScalar(Tensor::scalarFromBytes(c.dtype(), c.data() + i * static_cast<int64_t>(c.elementSize())));
    block = 1;
    for (int d = shape.rank() - 1; d >= 0; --d) { // close every axis this element ends
      block *= shape[d];
      if ((i + 1) % block != 0) break;
      out += ']';
    }
    if (i + 1 < n) out += ", ";
  }
  if (n == 0) {
    for (int d = 0; d < shape.rank(); ++d) out += '[';
    for (int d = 0; d < shape.rank(); ++d) out += ']';
  }
  return out + ">";
}

std::string printFunction(const Function& function, const PrintOptions& options) {
  return FunctionPrinter(function, options).print();
}

std::string printModule(const Module& module, const PrintOptions& options) {
  std::string out;
  for (size_t i = 0; i < module.functions().size(); ++i) {
    if (i) out += "\n";
    out += printFunction(*module.functions()[i], options);
  }
  return out;
}

} // namespace tsl::ir
