// tests/unit/ir/GraphvizTest.cpp — printDot writes well-formed DOT: balanced braces and
// quotes, one node per operation, one edge per operand, one cluster per region.
#include "IrTestSupport.h"

#include "ir/Graphviz.h"

#include <map>
#include <regex>
#include <set>

using namespace tsl;
using namespace tsl::ir;
using namespace tsl::ir::test;

namespace {

const char* kProgram = R"(func @helper(%a: f32[2,4]) -> (f32[2,4]) {
  %0 = tanh %a : f32[2,4]
  return %0
}

func @f(%x: f32[2,3], %w: f32[3,4], %c: bool, %n: i64) -> (f32[2,4], i64) {
  %mm = einsum %x, %w {spec = "ij,jk->ik"} : f32[2,4]
  %big = constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0]]> : f32[2,4]
  %s = add %mm, %big : f32[2,4]
  %h = call @helper(%s) : f32[2,4]
  %r = if %c : f32[2,4] {
    %neg = neg %h : f32[2,4]
    yield %neg
  } else {
    yield %s
  }
  %zero = constant 0 : i64
  %loop = while (%i = %zero) : (i64) -> (i64) {
    %more = less %i, %n : bool
    condition %more, %i
  } do (%j) {
    %one = constant 1 : i64
    %j1 = add %j, %one : i64
    yield %j1
  }
  return %r, %loop
}
)";

/// The DOT text split into statements (one per line), after checking that strings and
/// braces are balanced and that no string spans a line.
std::vector<std::string> statements(const std::string& dot) {
  int depth = 0;
  bool inString = false, ok = true;
  std::string line;
  std::vector<std::string> out;
  for (size_t i = 0; i < dot.size(); ++i) {
    const char c = dot[i];
    if (inString) {
      if (c == '\\') {
        line += c;
        line += dot[++i];
        continue;
      }
      if (c == '"') inString = false;
      if (c == '\n') ok = false; // a raw newline inside a string
    } else if (c == '"') {
      inString = true;
    } else if (c == '{') {
      ++depth;
    } else if (c == '}') {
      if (--depth < 0) ok = false;
    }
    if (c == '\n' && !inString) {
      out.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  CHECK(ok);
  CHECK_FALSE(inString);
  CHECK(depth == 0);
  CHECK(line.empty()); // ends with a newline
  return out;
}

} // namespace

TEST_CASE("printDot writes balanced DOT with a node per operation and an edge per operand") {
  std::unique_ptr<Module> m = parseModule(kProgram);
  REQUIRE_NOTHROW(verify(*m));
  const Function& f = *m->find("f");
  const std::string dot = printDot(f);
  CAPTURE(dot);
  const std::vector<std::string> lines = statements(dot);
  REQUIRE(!lines.empty());
  CHECK(lines.front() == "digraph \"f\" {");
  CHECK(lines.back() == "}");

  // Node declarations and edges, outside the quoted labels.
  const std::regex node(R"re(^\s*(\w+) \[shape=(\w+), label="(.*)"\];$)re");
  const std::regex edge(R"re(^\s*(\w+) -> (\w+)( \[label="(\d+)"\]| \[style=dotted\])?;$)re");
  std::vector<std::string> opNodes; // in order of appearance
  std::set<std::string> declared;
  std::map<std::string, std::string> labelOf;
  std::map<std::string, std::vector<int>> operandEdges; // target -> operand positions (-1: unlabelled)
  int ellipses = 0, dotted = 0, clusters = 0;
  for (const std::string& s : lines) {
    std::smatch match;
    if (std::regex_match(s, match, node)) {
      CHECK(declared.insert(match[1]).second); // each node declared once
      labelOf[match[1]] = match[3];
      if (match[2] == "ellipse") ++ellipses;
      else opNodes.push_back(match[1]);
    } else if (std::regex_match(s, match, edge)) {
      if (match[3] == " [style=dotted]") {
        ++dotted;
        continue;
      }
      operandEdges[match[2]].push_back(match[4].matched ? std::stoi(match[4]) : -1);
    } else if (s.find("subgraph cluster_") != std::string::npos) {
      ++clusters;
    }
  }

  // One box (or note, or plaintext) per operation, in walk order.
  std::vector<const Operation*> ops;
  walk(const_cast<Block&>(f.body()), [&](Operation& op) { ops.push_back(&op); });
  REQUIRE(opNodes.size() == ops.size());
  CHECK(static_cast<int>(ops.size()) == countOps(f));
  int regions = 0, regionArgs = 0;
  for (size_t k = 0; k < ops.size(); ++k) {
    const Operation& op = *ops[k];
    CAPTURE(std::string(op.code().name()));
    CHECK(labelOf[opNodes[k]].rfind(op.code().name(), 0) == 0);
    // Edges: one per operand, labelled with the position when there are several.
    const std::vector<int>& positions = operandEdges[opNodes[k]];
    REQUIRE(positions.size() == op.operands().size());
    for (size_t i = 0; i < positions.size(); ++i)
      CHECK(positions[i] == (op.operands().size() > 1 ? static_cast<int>(i) : -1));
    regions += static_cast<int>(op.regions().size());
    for (const auto& r : op.regions()) regionArgs += static_cast<int>(r->block().arguments().size());
  }
  CHECK(clusters == regions);
  CHECK(ellipses == static_cast<int>(f.body().arguments().size()) + regionArgs);
  CHECK(dotted == regionArgs);
  // Every edge starts at a declared node.
  for (const std::string& s : lines) {
    std::smatch match;
    if (std::regex_match(s, match, edge)) {
      CHECK(declared.count(match[1]));
      CHECK(declared.count(match[2]));
    }
  }
  // Quotes inside labels are escaped: the einsum spec survives whole.
  CHECK(dot.find(R"(einsum\n{spec = \"ij,jk->ik\"}\nf32[2,4])") != std::string::npos);
  CHECK(dot.find("call @helper") != std::string::npos);
  CHECK(dot.find("label=\"if then\"") != std::string::npos);
  CHECK(dot.find("label=\"while do\"") != std::string::npos);
}

TEST_CASE("printDot shortens long constants and names parameters") {
  std::unique_ptr<Module> m = parseModule(kProgram);
  const std::string dot = printDot(*m->find("f"));
  // The 8-element constant's literal is longer than 40 characters: cut with "...".
  CHECK(dot.find("constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6....\\nf32[2,4]") != std::string::npos);
  CHECK(dot.find("label=\"x\\nf32[2,3]\"") != std::string::npos);
  CHECK(dot.find("label=\"c\\nbool\"") != std::string::npos);
  const std::string helper = printDot(*m->find("helper"));
  CHECK(statements(helper).size() == 9); // header (3), %a, tanh, edge, return, edge, "}"
}
