// eval/BuiltinsTc.cpp — the emulated tensor core from TSL: tc-stats and tc-asm
// (docs/language.md §6).
#include "eval/Builtins.h"
#include "eval/Compile.h"
#include "eval/Evaluator.h"

#include "compiler/Compiler.h"
#include "compiler/tc/TcBackend.h"

namespace tsl::builtins {

namespace {

Value integer(int64_t n) { return Value(Tensor::scalarOf<int64_t>(n, DType::I64)); }

/// A TcStats as a TSL map: the keys docs/language.md §6 names, and the rest of docs/tensor-core.md.
Value statsMap(const compiler::tc::TcStats& s) {
  using namespace compiler::tc;
  std::vector<std::pair<Value, Value>> bytes, busy, stall, peak;
  for (size_t i = 0; i < kPaths; ++i) bytes.emplace_back(makeKeyword(pathKey(i)), integer(s.bytes[i]));
  for (size_t i = 0; i < kPipes; ++i) {
    std::string pipe = pipeName(static_cast<Pipe>(i));
    for (char& c : pipe) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    busy.emplace_back(makeKeyword(pipe), integer(s.busy[i]));
    stall.emplace_back(makeKeyword(pipe), integer(s.stall[i]));
  }
  for (size_t i = 0; i < s.peak.size(); ++i) peak.emplace_back(makeKeyword(bufName(static_cast<Buf>(i))), integer(s.peak[i]));
  std::vector<Value> tilings;
  for (const std::string& t : s.tilings) tilings.push_back(makeString(t));
  return makeMap({
      {makeKeyword("cycles"), integer(s.cycles)},
      {makeKeyword("serial-cycles"), integer(s.serialCycles)},
      {makeKeyword("cube-cycles"), integer(s.cubeCycles)},
      {makeKeyword("macs"), integer(s.macs)},
      {makeKeyword("padded-macs"), integer(s.paddedMacs)},
      {makeKeyword("utilization"), Value(Tensor::scalarOf<double>(s.utilization(), DType::F64))},
      {makeKeyword("bytes"), makeMap(std::move(bytes))},
      {makeKeyword("transdata"), integer(s.transdata)},
      {makeKeyword("transdata-bytes"), integer(s.transdataBytes)},
      {makeKeyword("busy"), makeMap(std::move(busy))},
      {makeKeyword("stall"), makeMap(std::move(stall))},
      {makeKeyword("peak"), makeMap(std::move(peak))},
      {makeKeyword("numerics"), makeMap({{makeKeyword("overflow"), integer(s.numerics.overflow)},
                                         {makeKeyword("underflow"), integer(s.numerics.underflow)},
                                         {makeKeyword("nan"), integer(s.numerics.nan)},
                                         {makeKeyword("wraps"), integer(s.numerics.wraps)}})},
      {makeKeyword("races"), integer(s.races)},
      {makeKeyword("programs"), integer(s.programs)},
      {makeKeyword("instructions"), integer(s.instructions)},
      {makeKeyword("tilings"), makeVector(std::move(tilings))},
  });
}

} // namespace

void registerTcBuiltins(Evaluator& evaluator) {
  // (tc-stats): the counters of the last call on :tc; (tc-stats :total) of every call.
  evaluator.defineBuiltin("tc-stats", 0, 1, [](CallContext& cx, Args args) -> Value {
    bool total = false;
    if (!args.empty()) {
      if (!args[0].isKeyword() || (args[0].keyword().name() != "total" && args[0].keyword().name() != "last"))
        badArgument(cx, 0, ":last or :total", args[0]);
      total = args[0].keyword().name() == "total";
    }
    compiler::tc::Session& session = compiler::tc::sessionOf(cx.evaluator.compiler().backend("tc"));
    std::lock_guard lock(session.mutex);
    return statsMap(total ? session.total : session.last);
  });

  // (tc-asm f x...): the tensor-core programs :tc runs for f at these arguments, as text
  // that `tsl tc-run` reads back.
  evaluator.defineBuiltin("tc-asm", 1, -1, [](CallContext& cx, Args args) -> Value {
    const Value fn = underlying(callableArg(cx, args, 0));
    LowerOptions lower;
    lower.optimize = false; // compiling runs :tc's pipeline
    Lowered lowered = lowerFunction(cx.evaluator, fn, args.subspan(1), cx.span, lower);
    compileLowered(cx.evaluator, lowered, "tc");
    const std::string text = lowered.executable->inspect("tc");
    return makeString(text.empty() ? "; no contraction of this function runs on the cube\n" : text);
  });
}

} // namespace tsl::builtins
