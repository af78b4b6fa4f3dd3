// ir/Graphviz.cpp — DOT text for an IR function.
#include "ir/Graphviz.h"

#include "ir/Attributes.h"
#include "ir/Printer.h"
#include "tsl/StackGuard.h"

#include <unordered_map>

namespace tsl::ir {

namespace {

/// Escapes text for a double-quoted DOT string.
std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

class DotPrinter {
public:
  explicit DotPrinter(const Function& f) : f_(f) {}

  std::string print() {
    out_ = cat("digraph \"", escape(f_.name()), "\" {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n");
    const auto& params = f_.body().arguments();
    for (size_t i = 0; i < params.size(); ++i) {
      const std::string id = node(params[i].get());
      const std::string label = params[i]->name().empty() ? cat("arg", i) : params[i]->name();
      out_ += cat("  ", id, " [shape=ellipse, label=\"", escape(label), "\\n", escape(params[i]->type().str()), "\"];\n");
    }
    block(f_.body(), 1);
    out_ += "}\n";
    return out_;
  }

private:
  std::string node(const Value* v) {
    auto it = valueNode_.find(v);
    if (it != valueNode_.end()) return it->second;
    return valueNode_[v] = cat("n", next_++);
  }

  void edges(const Operation& op, const std::string& id, int depth) {
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    for (size_t i = 0; i < op.operands().size(); ++i) {
      out_ += cat(indent, node(op.operand(i)), " -> ", id);
      if (op.operands().size() > 1) out_ += cat(" [label=\"", i, "\"]");
      out_ += ";\n";
    }
  }

  void block(const Block& b, int depth) {
    checkStack();
    const std::string indent(static_cast<size_t>(depth) * 2, ' ');
    for (const auto& owned : b.ops()) {
      const Operation& op = *owned;
      const std::string id = cat("op", next_++);
      const OpCode code = op.code();
      std::string label = code.name();
      std::string shape = "box";
      if (code.primitive) {
        const std::string attrs = printAttrs(op.attrs());
        if (!attrs.empty()) label += "\n" + attrs;
        if (opInfo(code.kind).layout == LayoutClass::Converting) { // what a conversion moves
          const Type& from = op.operand(0)->type();
          const Type& to = op.result()->type();
          label += cat("\n", layoutName(from.layout), " -> ", layoutName(to.layout));
          if (from.concrete() && to.concrete()) label += cat("\n", from.bytes(), " -> ", to.bytes(), " B");
          shape = "hexagon";
        }
      } else if (code.is(Structural::Constant)) {
        std::string literal = printConstant(op.constant());
        if (literal.size() > 40) literal = literal.substr(0, 37) + "...";
        label += " " + literal;
        shape = "note";
      } else if (code.is(Structural::Call)) {
        label += " @" + op.callee();
      } else if (code.isTerminator()) {
        shape = "plaintext";
      }
      for (size_t i = 0; i < op.resultCount(); ++i) label += "\n" + op.result(i)->type().str();
      out_ += cat(indent, id, " [shape=", shape, ", label=\"", escape(label), "\"];\n");
      edges(op, id, depth);
      // Results are the operation itself (several results share its node).
      for (size_t i = 0; i < op.resultCount(); ++i) valueNode_[op.result(i)] = id;
      for (size_t r = 0; r < op.regions().size(); ++r) {
        const Block& inner = op.region(r).block();
        const char* title = code.is(Structural::If)      ? (r == 0 ? "then" : "else")
                            : code.is(Structural::Fused) ? fusionClassName(fusionKind(op))
                                                         : (r == 0 ? "before" : "do");
        out_ += cat(indent, "subgraph cluster_", next_++, " {\n", indent, "  label=\"", op.code().name(), " ", title,
                    "\"; style=dashed;\n");
        for (const auto& arg : inner.arguments()) {
          const std::string argId = node(arg.get());
          out_ += cat(indent, "  ", argId, " [shape=ellipse, label=\"", escape(arg->type().str()), "\"];\n");
          out_ += cat(indent, "  ", id, " -> ", argId, " [style=dotted];\n");
        }
        block(inner, depth + 1);
        out_ += indent + "}\n";
      }
    }
  }

  const Function& f_;
  std::string out_;
  std::unordered_map<const Value*, std::string> valueNode_;
  int next_ = 0;
};

} // namespace

std::string printDot(const Function& function) { return DotPrinter(function).print(); }

} // namespace tsl::ir
