// compiler/tc/TcTarget.cpp — what the :tc target adds to TSL and to `tsl`: `jit :tc-dtype`,
// the --tc-device, --tc-stats and --tc-trace flags, the tc-stats and tc-asm builtins (and
// the REPL's :tc-stats and :tc), `tsl compile --emit=tc`, and `tsl tc-run`, which runs a
// hand-written tensor-core program on the emulator.
#include "compiler/tc/TcBackend.h"

#include "runtime/Io.h"

#include <array>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <ostream>

namespace tsl::compiler::tc {

namespace {

Stat statsOf(const TcStats& s) {
  std::vector<std::pair<std::string, Stat>> bytes, busy, stall, peak;
  for (size_t i = 0; i < kPaths; ++i) bytes.emplace_back(pathKey(i), Stat::of(s.bytes[i]));
  for (size_t i = 0; i < kPipes; ++i) {
    std::string pipe = pipeName(static_cast<Pipe>(i));
    for (char& c : pipe) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    busy.emplace_back(pipe, Stat::of(s.busy[i]));
    stall.emplace_back(pipe, Stat::of(s.stall[i]));
  }
  for (size_t i = 0; i < s.peak.size(); ++i) peak.emplace_back(bufName(static_cast<Buf>(i)), Stat::of(s.peak[i]));
  std::vector<Stat> tilings;
  for (const std::string& t : s.tilings) tilings.push_back(Stat::ofText(t));
  return Stat::map({
      {"cycles", Stat::of(s.cycles)},
      {"serial-cycles", Stat::of(s.serialCycles)},
      {"cube-cycles", Stat::of(s.cubeCycles)},
      {"macs", Stat::of(s.macs)},
      {"padded-macs", Stat::of(s.paddedMacs)},
      {"utilization", Stat::ofReal(s.utilization())},
      {"bytes", Stat::map(std::move(bytes))},
      {"transdata", Stat::of(s.transdata)},
      {"transdata-bytes", Stat::of(s.transdataBytes)},
      {"busy", Stat::map(std::move(busy))},
      {"stall", Stat::map(std::move(stall))},
      {"peak", Stat::map(std::move(peak))},
      {"numerics", Stat::map({{"overflow", Stat::of(s.numerics.overflow)},
                              {"underflow", Stat::of(s.numerics.underflow)},
                              {"nan", Stat::of(s.numerics.nan)},
                              {"wraps", Stat::of(s.numerics.wraps)}})},
      {"races", Stat::of(s.races)},
      {"programs", Stat::of(s.programs)},
      {"instructions", Stat::of(s.instructions)},
      {"tilings", Stat::list(std::move(tilings))},
  });
}

/// The host dtype of a GM type (i8 has none).
std::optional<DType> hostType(Ty t) {
  switch (t) {
  case Ty::F16: return DType::F16;
  case Ty::BF16: return DType::BF16;
  case Ty::F32: return DType::F32;
  case Ty::F64: return DType::F64;
  case Ty::I32: return DType::I32;
  case Ty::I8: return std::nullopt;
  }
  return std::nullopt;
}

/// --in N=FILE and --out N=FILE: the GM tensor's number and the file.
std::pair<int, std::string> gmFile(const std::string& text, const std::string& flag) {
  const size_t eq = text.find('=');
  char* end = nullptr;
  const long index = eq == std::string::npos ? -1 : std::strtol(text.c_str(), &end, 10);
  if (eq == std::string::npos || end != text.c_str() + eq || index < 0 || index > 1000000)
    fail(ErrorKind::Value, "--", flag, " takes N=FILE.npy (N a GM tensor number)");
  return {static_cast<int>(index), text.substr(eq + 1)};
}

const std::string* flagValue(const FlagValues& flags, std::string_view name) {
  const std::string* found = nullptr;
  for (const auto& [flag, value] : flags)
    if (flag == name) found = &value;
  return found;
}

/// `tsl tc-run FILE`: the program run on the emulator; its statistics as JSON.
int tcRun(const BackendCommand::Context& cx) {
  if (cx.args.size() != 1) {
    std::fprintf(stderr, "usage: tsl tc-run FILE [--tc-device=D] [--in N=X.npy] [--out N=Y.npy] [--races=count]\n");
    return 2;
  }
  const std::string source = cx.readSource(cx.args[0]);
  const std::string fileName = cx.args[0] == "-" ? "<stdin>" : cx.args[0];
  cx.addSource(fileName, source); // errors show the program's line
  const Program program = parseProgram(source, fileName);
  const std::string* device = flagValue(cx.flags, "tc-device");
  const Device dev = deviceFor(device ? *device : std::string());
  // GM tensors: inputs with a fixed pattern (or from .npy), everything else zeroed. The
  // first tensor past the limit is the error (each is at most 2^43 bytes: no overflow).
  std::vector<std::vector<uint8_t>> memory;
  std::vector<GmView> views;
  constexpr int64_t kMaxGmBytes = int64_t{1} << 30;
  int64_t total = 0;
  for (size_t i = 0; i < program.gm.size(); ++i) {
    total += program.gm[i].elements * tySize(program.gm[i].ty);
    if (total > kMaxGmBytes)
      failAt(program.gmSpans[i], ErrorKind::Value, "tc-run: GM tensor %", i, " brings the program's GM tensors to ", total,
             " bytes; tc-run allows 1 GiB (", kMaxGmBytes, " bytes)");
  }
  for (size_t i = 0; i < program.gm.size(); ++i) {
    const GmTensor& g = program.gm[i];
    std::vector<uint8_t> bytes(static_cast<size_t>(g.elements * tySize(g.ty)), 0);
    if (g.role == GmTensor::Role::In)
      for (int64_t e = 0; e < g.elements; ++e) {
        // Values in [-1, 1) with 1/64 steps: exact in every type, products exact in f32.
        const int64_t k = (e * 37 + static_cast<int64_t>(i) * 11) % 128 - 64;
        uint8_t* at = bytes.data() + e * tySize(g.ty);
        switch (g.ty) {
        case Ty::F16: { NumericsCounters c; const uint16_t h = toF16(k / 64.0, dev, c); std::memcpy(at, &h, 2); break; }
        case Ty::BF16: { const float f = static_cast<float>(k / 64.0); uint32_t b; std::memcpy(&b, &f, 4); const uint16_t h = static_cast<uint16_t>(b >> 16); std::memcpy(at, &h, 2); break; }
        case Ty::F32: { const float f = static_cast<float>(k / 64.0); std::memcpy(at, &f, 4); break; }
        case Ty::F64: { const double f = k / 64.0; std::memcpy(at, &f, 8); break; }
        case Ty::I8: *at = static_cast<uint8_t>(static_cast<int8_t>(k)); break;
        case Ty::I32: { const auto v = static_cast<int32_t>(k); std::memcpy(at, &v, 4); break; }
        }
      }
    memory.push_back(std::move(bytes));
  }
  std::vector<std::pair<int, std::string>> inputs, outputs;
  bool countRaces = false;
  for (const auto& [flag, value] : cx.flags) {
    if (flag == "in") inputs.push_back(gmFile(value, flag));
    if (flag == "out") outputs.push_back(gmFile(value, flag));
    if (flag == "races") countRaces = true;
  }
  for (const auto& [index, path] : inputs) {
    if (index < 0 || static_cast<size_t>(index) >= program.gm.size())
      fail(ErrorKind::Value, "tc-run: the program has no GM tensor %", index);
    const GmTensor& g = program.gm[static_cast<size_t>(index)];
    const Tensor t = loadNpy(path);
    if (hostType(g.ty) != t.dtype() || t.numel() != g.elements)
      failAt(program.gmSpans[static_cast<size_t>(index)], ErrorKind::Value, "tc-run: ", path, " holds ",
             TensorType::of(t).str(), ", but %", index, " is ", g.elements, " elements of ", tyName(g.ty));
    const Tensor dense = t.isContiguous() ? t : contiguous(t);
    std::memcpy(memory[static_cast<size_t>(index)].data(), dense.data(), memory[static_cast<size_t>(index)].size());
  }
  for (size_t i = 0; i < memory.size(); ++i) views.push_back({memory[i].data(), program.gm[i].elements});
  std::vector<TraceEvent> trace;
  Emulator::Options o;
  o.countRaces = countRaces;
  o.trace = &trace;
  const TcStats stats = Emulator(dev).run(program, views, o);
  for (const auto& [index, path] : outputs) {
    if (index < 0 || static_cast<size_t>(index) >= program.gm.size())
      fail(ErrorKind::Value, "tc-run: the program has no GM tensor %", index);
    const GmTensor& g = program.gm[static_cast<size_t>(index)];
    const std::optional<DType> type = hostType(g.ty);
    if (!type) fail(ErrorKind::Value, "tc-run: an i8 GM tensor cannot be written as .npy");
    Tensor t = Tensor::empty(*type, Shape{g.elements});
    std::memcpy(t.mutableData(), memory[static_cast<size_t>(index)].data(), memory[static_cast<size_t>(index)].size());
    saveNpy(path, t);
  }
  *cx.out << stats.json() << "\n" << std::flush;
  if (const std::string* file = flagValue(cx.flags, "tc-stats"); file && !file->empty())
    cx.writeFile(*file, stats.json() + "\n");
  if (const std::string* file = flagValue(cx.flags, "tc-trace")) cx.writeFile(*file, traceFile(*file, trace));
  return 0;
}

} // namespace

Stat statisticsOf(const TcStats& stats) { return statsOf(stats); }

Timeline timelineOf(const std::vector<TraceEvent>& events) {
  std::array<int, kPipes> laneOf{};
  laneOf.fill(-1);
  for (const TraceEvent& e : events) laneOf[static_cast<size_t>(e.pipe)] = 0;
  Timeline timeline;
  for (size_t p = 0; p < kPipes; ++p)
    if (laneOf[p] == 0) {
      laneOf[p] = static_cast<int>(timeline.lanes.size());
      timeline.lanes.emplace_back(pipeName(static_cast<Pipe>(p)));
    }
  timeline.boxes.reserve(events.size());
  for (const TraceEvent& e : events)
    timeline.boxes.push_back({laneOf[static_cast<size_t>(e.pipe)], e.start, e.end, opName(e.instr.op),
                              printInstr(e.instr)});
  return timeline;
}

std::string traceFile(const std::string& file, const std::vector<TraceEvent>& events) {
  const bool svg = file.size() >= 4 && file.compare(file.size() - 4, 4, ".svg") == 0;
  return svg ? timelineSvg(timelineOf(events)) : traceJson(events);
}

void beforeRun(Session& session, const FlagValues& flags) {
  if (!flagValue(flags, "tc-trace")) return;
  std::lock_guard lock(session.mutex);
  session.tracing = true;
}

std::vector<Output> afterRun(Session& session, const FlagValues& flags) {
  std::lock_guard lock(session.mutex);
  std::vector<Output> out;
  if (const std::string* file = flagValue(flags, "tc-stats")) out.push_back({*file, session.total.json() + "\n"});
  if (const std::string* file = flagValue(flags, "tc-trace")) out.push_back({*file, traceFile(*file, session.trace)});
  return out;
}

BackendInfo tcBackendInfo() {
  BackendInfo info;
  info.name = "tc";
  info.preference = 30;
  info.layouts = "tc";
  info.make = makeTcBackend;

  BackendOption dtype;
  dtype.name = "tc-dtype";
  dtype.jitKeyword = true;
  dtype.help = "what contractions round their inputs to: :f16 (default) or :bf16";
  dtype.parse = [](const OptionInput& in, const std::string& who) {
    if (!in.isKeyword || (in.keyword != "f16" && in.keyword != "bf16"))
      fail(ErrorKind::Value, who, " :tc-dtype takes :f16 or :bf16, got ", in.printed);
    return in.keyword;
  };
  BackendOption device;
  device.name = "tc-device";
  device.flag = true;
  device.usage = "--tc-device=D";
  device.help = "the tensor core :tc emulates: a2 (default), 910a, or a device\nfile (docs/tensor-core.md)";
  BackendOption stats;
  stats.name = "tc-stats";
  stats.flag = true;
  stats.valueOptional = true;
  stats.compiles = false;
  stats.usage = "--tc-stats[=FILE]";
  stats.help = "after the run, the tensor core's counters over every :tc call,\nas JSON on standard error (or into FILE)";
  BackendOption trace;
  trace.name = "tc-trace";
  trace.flag = true;
  trace.compiles = false;
  trace.usage = "--tc-trace=FILE";
  trace.help = "write every instruction :tc ran as Chrome trace-event JSON,\nor as an SVG timeline when FILE ends in .svg";
  info.options = {dtype, device, stats, trace};
  // tc-run's own flags.
  for (const char* name : {"in", "out"}) {
    BackendOption gm;
    gm.name = name;
    gm.flag = true;
    gm.compiles = false;
    gm.command = "tc-run";
    gm.usage = cat("--", name, " N=", name == std::string("in") ? "X" : "Y", ".npy");
    gm.help = name == std::string("in") ? "GM tensor %N's contents (default: a fixed pattern in [-1, 1))"
                                        : "write GM tensor %N after the run";
    gm.parse = [flag = std::string(name)](const OptionInput& in, const std::string&) {
      (void)gmFile(in.text, flag);
      return in.text;
    };
    info.options.push_back(gm);
  }
  BackendOption races;
  races.name = "races";
  races.flag = true;
  races.compiles = false;
  races.command = "tc-run";
  races.usage = "--races=count";
  races.help = "count races in the statistics instead of failing on the first";
  races.parse = [](const OptionInput& in, const std::string&) {
    if (in.text != "count") fail(ErrorKind::Value, "--races takes count (count races instead of failing on the first)");
    return in.text;
  };
  info.options.push_back(races);

  BackendBuiltin statsBuiltin;
  statsBuiltin.name = "tc-stats";
  statsBuiltin.kind = BackendBuiltin::Kind::Statistics;
  statsBuiltin.doc = "(tc-stats) / (tc-stats :total): the emulated tensor core's counters for the last call on :tc\n"
                     "  (:total: every call) — cycles, macs, utilization, bytes per path, busy and stall per pipe...";
  statsBuiltin.replCommand = ":tc-stats";
  statsBuiltin.replHelp = "what the tensor core did in the last :tc call: (tc-stats), a key a line";
  BackendBuiltin asmBuiltin;
  asmBuiltin.name = "tc-asm";
  asmBuiltin.kind = BackendBuiltin::Kind::Inspect;
  asmBuiltin.what = "tc";
  asmBuiltin.empty = "; no contraction of this function runs on the cube\n";
  asmBuiltin.doc = "(tc-asm f x ...): the tensor-core programs :tc runs for f's contractions at x ..., as text\n"
                   "  `tsl tc-run` reads back";
  asmBuiltin.replCommand = ":tc";
  asmBuiltin.replHelp = "the tensor-core programs :tc runs for f's contractions at x ...";
  BackendBuiltin traceBuiltin;
  traceBuiltin.name = "tc-trace";
  traceBuiltin.kind = BackendBuiltin::Kind::Trace;
  traceBuiltin.doc =
      "(tc-trace): what the emulated tensor core ran in the last call on :tc, as a trace — :lanes (the pipes that\n"
      "  ran), and per instruction :lane, :start and :end (cycles from 0), :name (its mnemonic), :detail (its text);\n"
      "  drawn as a timeline in a notebook and by tsl --pictures\n"
      "  e.g. (do ((jit (fn [a b] (matmul a b)) :target :tc) (ones [16 16]) (ones [16 16])) (:lanes (tc-trace)))"
      "  ; [\"MTE2\" \"MTE1\" \"CUBE\" \"FIXPIPE\"]";
  info.builtins = {statsBuiltin, traceBuiltin, asmBuiltin};
  BackendEmit programs;
  programs.name = "tc";
  programs.inspect = true;
  programs.empty = "; no contraction of this function runs on the cube (at these sizes)\n";
  programs.help = "the tensor-core programs of its contractions";
  info.emits = {programs};

  BackendCommand run;
  run.name = "tc-run";
  run.usage = "tc-run FILE";
  run.help = "run a tensor-core program (the text of tc-asm or --emit=tc) on\n"
             "the emulator; print its statistics as JSON";
  run.run = tcRun;
  info.commands = {run};
  return info;
}

} // namespace tsl::compiler::tc
