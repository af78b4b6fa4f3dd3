// compiler/tc/TcBackend.cpp — the :tc target: IR run with its contractions on the cube.
#include "compiler/tc/TcBackend.h"

#include "compiler/interp/IrRunner.h"
#include "compiler/passes/Layouts.h"
#include "compiler/passes/Passes.h"
#include "compiler/tc/Contract.h"
#include "runtime/Layout.h"

#include <filesystem>
#include <set>

namespace tsl::compiler::tc {

namespace {

class TcExecutable final : public Executable {
public:
  TcExecutable(std::shared_ptr<const ir::Module> module, const ir::Function& entry, Device device, Ty cube,
               std::shared_ptr<Session> session, const std::vector<Tensor>& constants)
      : module_(std::move(module)), entry_(entry), device_(std::move(device)), cube_(cube), session_(std::move(session)) {
    // Conversions of constant parameters (weights) happen now, at compile time, as the
    // layout passes fold those of constants in the IR.
    const auto& params = entry_.body().arguments();
    const size_t first = params.size() - std::min(params.size(), constants.size());
    ir::walk(entry_.body(), [&](const ir::Operation& op) {
      if (!layouts::isConversion(op)) return;
      for (size_t i = first; i < params.size(); ++i)
        if (op.operand(0) == params[i].get()) {
          const Tensor& value = constants[i - first];
          folded_[&op] = {value, denseInLayout(value, op.result()->type().layout)};
        }
    });
  }

  const ir::Module& module() const override { return *module_; }
  const ir::Function& entry() const override { return entry_; }

  std::vector<Tensor> run(std::span<const Tensor> inputs) override {
    TcStats stats;
    std::vector<TraceEvent> trace;
    int64_t clock;
    bool tracing;
    {
      std::lock_guard lock(session_->mutex);
      clock = session_->clock;
      tracing = session_->tracing;
    }
    std::vector<Tensor> results;
    {
      std::lock_guard lock(mutex_); // the program cache
      const CubeContext cx{device_, cube_, cache_, stats, tracing ? &trace : nullptr, &clock};
      RunOptions options;
      options.primitive = [&](const ir::Operation& op, std::span<const Tensor> in, Tensor& out) {
        // Layout conversions run on the host (a device's transdata would run on the vector
        // unit, which is not modelled for them); they are counted.
        if (auto it = folded_.find(&op); it != folded_.end() && in[0].sharesStorageWith(it->second.first) &&
                                          in[0].offset() == it->second.first.offset()) {
          out = it->second.second;
          return true;
        }
        if (layouts::isConversion(op)) {
          ++stats.transdata;
          stats.transdataBytes += layouts::conversionBytes(op.operand(0)->type(), op.result()->type().layout);
          return false;
        }
        if (std::optional<Tensor> r = runOnCube(op, in, cx)) {
          out = std::move(*r);
          return true;
        }
        return false;
      };
      results = runIr(*module_, entry_, inputs, options);
    }
    std::lock_guard lock(session_->mutex);
    session_->last = stats;
    session_->total.add(stats);
    session_->clock = clock;
    if (tracing) session_->trace.insert(session_->trace.end(), trace.begin(), trace.end());
    return results;
  }

  /// "tc": the program of every contraction of the module the cube runs, made from the
  /// operations' types (each run once on zeros), in the order they appear.
  std::string inspect(std::string_view what) const override {
    if (what != "tc") return {};
    std::lock_guard lock(mutex_);
    TcStats scratch;
    std::vector<const Program*> programs;
    const CubeContext cx{device_, cube_, cache_, scratch, nullptr, nullptr, &programs};
    for (const auto& f : module_->functions())
      ir::walk(f->body(), [&](const ir::Operation& op) {
        if (!op.code().primitive || !runsOnCube(op.code().kind)) return;
        std::vector<Tensor> zeros;
        for (const ir::Value* v : op.operands()) {
          const ir::Type& t = v->type();
          if (!t.concrete()) return; // symbolic sizes: made when called
          Shape shape;
          for (const ir::Dim& d : t.dims) shape.push(d.size);
          zeros.push_back(toLayout(Tensor::zeros(t.dtype, shape), t.layout));
        }
        (void)runOnCube(op, zeros, cx);
      });
    std::string out;
    for (const Program* p : programs) out += (out.empty() ? "" : "\n") + printProgram(*p);
    return out;
  }

private:
  std::shared_ptr<const ir::Module> module_;
  const ir::Function& entry_;
  Device device_;
  Ty cube_;
  std::shared_ptr<Session> session_;
  mutable std::mutex mutex_;
  mutable ProgramCache cache_;
  /// Conversions of constant parameters made at compile time: (the constant, converted).
  std::map<const ir::Operation*, std::pair<Tensor, Tensor>> folded_;
};

class TcBackend final : public Backend {
public:
  const char* name() const override { return "tc"; }

  const std::vector<std::string>& pipeline() const override {
    static const std::vector<std::string> passes = [] {
      std::vector<std::string> p = ir::optimizationPasses();
      p.push_back("expand-einsum"); // einsum's contractions as matmuls on the cube
      p.insert(p.end(), layoutPasses().begin(), layoutPasses().end());
      p.push_back("plan-memory");
      return p;
    }();
    return passes;
  }

  const char* layoutTarget() const override { return "tc"; }

  // Contractions the cube runs are its native code; everything else is an eager kernel.
  Lowering lowering(OpKind kind) const override {
    return runsOnCube(kind) ? Lowering::Native : Lowering::GenericKernel;
  }

  std::unique_ptr<Executable> compile(std::shared_ptr<const ir::Module> module, const ir::Function& entry,
                                      const CompileOptions& options) override {
    Ty cube = Ty::F16;
    if (!options.tcDtype.empty()) {
      const auto t = tyNamed(options.tcDtype);
      if (!t || (*t != Ty::F16 && *t != Ty::BF16))
        fail(ErrorKind::Value, "jit :tc-dtype takes :f16 or :bf16, got :", options.tcDtype);
      cube = *t;
    }
    return std::make_unique<TcExecutable>(std::move(module), entry, deviceFor(options.tcDevice), cube, session_,
                                          options.constants);
  }

  Session& session() { return *session_; }

private:
  std::shared_ptr<Session> session_ = std::make_shared<Session>();
};

} // namespace

Device deviceFor(const std::string& nameOrFile) {
  if (nameOrFile.empty()) return preset(presetNames().front());
  for (const std::string& p : presetNames())
    if (p == nameOrFile) return preset(p);
  std::error_code ec;
  if (!std::filesystem::exists(nameOrFile, ec))
    fail(ErrorKind::Io, "tc device '", nameOrFile, "' is neither a preset (a2, 910a) nor a file");
  return loadDevice(nameOrFile);
}

std::unique_ptr<Backend> makeTcBackend() { return std::make_unique<TcBackend>(); }

Session& sessionOf(Backend& tcBackend) {
  auto* b = dynamic_cast<TcBackend*>(&tcBackend);
  TSL_ASSERT(b, "sessionOf: not the :tc backend");
  return b->session();
}

} // namespace tsl::compiler::tc
