// eval/TcRun.cpp — the emulated tensor core through the embedding API: statistics, traces,
// and hand-written programs run by `tsl tc-run`.
#include "tsl/tsl.h"

#include "compiler/Compiler.h"
#include "compiler/tc/TcBackend.h"
#include "eval/Evaluator.h"
#include "runtime/Io.h"

#include <cstring>

namespace tsl {

namespace {

compiler::tc::Session& session(Evaluator& evaluator) { return compiler::tc::sessionOf(evaluator.compiler().backend("tc")); }

/// The host dtype of a GM type (i8 has none).
std::optional<DType> hostType(compiler::tc::Ty t) {
  using compiler::tc::Ty;
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

} // namespace

std::string Engine::tcStats(bool total) {
  auto& s = session(*impl_);
  std::lock_guard lock(s.mutex);
  return (total ? s.total : s.last).json();
}

void Engine::traceTc(bool on) {
  auto& s = session(*impl_);
  std::lock_guard lock(s.mutex);
  s.tracing = on;
}

std::string Engine::tcTrace() {
  auto& s = session(*impl_);
  std::lock_guard lock(s.mutex);
  return compiler::tc::traceJson(s.trace);
}

Engine::TcRunResult Engine::runTcProgram(std::string_view text, std::string_view fileName, const TcRunOptions& options) {
  using namespace compiler::tc;
  impl_->sources().add(fileName, std::string(text)); // errors show the program's line
  const Program program = parseProgram(text, fileName);
  const Device device = deviceFor(options.device);
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
        case Ty::F16: { NumericsCounters c; const uint16_t h = toF16(k / 64.0, device, c); std::memcpy(at, &h, 2); break; }
        case Ty::BF16: { const float f = static_cast<float>(k / 64.0); uint32_t b; std::memcpy(&b, &f, 4); const uint16_t h = static_cast<uint16_t>(b >> 16); std::memcpy(at, &h, 2); break; }
        case Ty::F32: { const float f = static_cast<float>(k / 64.0); std::memcpy(at, &f, 4); break; }
        case Ty::F64: { const double f = k / 64.0; std::memcpy(at, &f, 8); break; }
        case Ty::I8: *at = static_cast<uint8_t>(static_cast<int8_t>(k)); break;
        case Ty::I32: { const auto v = static_cast<int32_t>(k); std::memcpy(at, &v, 4); break; }
        }
      }
    memory.push_back(std::move(bytes));
  }
  for (const auto& [index, path] : options.inputs) {
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
  o.countRaces = options.countRaces;
  o.trace = &trace;
  const TcStats stats = Emulator(device).run(program, views, o);
  for (const auto& [index, path] : options.outputs) {
    if (index < 0 || static_cast<size_t>(index) >= program.gm.size())
      fail(ErrorKind::Value, "tc-run: the program has no GM tensor %", index);
    const GmTensor& g = program.gm[static_cast<size_t>(index)];
    const std::optional<DType> type = hostType(g.ty);
    if (!type) fail(ErrorKind::Value, "tc-run: an i8 GM tensor cannot be written as .npy");
    Tensor t = Tensor::empty(*type, Shape{g.elements});
    std::memcpy(t.mutableData(), memory[static_cast<size_t>(index)].data(), memory[static_cast<size_t>(index)].size());
    saveNpy(path, t);
  }
  return {stats.json(), traceJson(trace)};
}

} // namespace tsl
