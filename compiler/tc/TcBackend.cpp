// compiler/tc/TcBackend.cpp — the :tc target: IR run with its contractions on the cube.
#include "compiler/tc/TcBackend.h"

#include "compiler/interp/IrRunner.h"
#include "compiler/passes/Layouts.h"
#include "compiler/passes/Passes.h"
#include "compiler/tc/Contract.h"
#include "runtime/Layout.h"
#include "runtime/Ops.h"

#include <filesystem>
#include <set>

namespace tsl::compiler::tc {

namespace {

/// What a contraction's program does besides the contraction: the operations after it
/// (each the only user of the one before, in the same block) that its drain performs —
/// FIXPIPE's (or the vector unit's) conversion to row-major, bias add and ReLU.
struct EpiloguePlan {
  const ir::Value* bias = nullptr;
  bool relu = false;
  std::optional<Layout> layout;
};

/// The epilogues of a function's contractions, and the operations they absorb.
void planEpilogues(const ir::Function& f, std::map<const ir::Operation*, EpiloguePlan>& plans,
                   std::set<const ir::Operation*>& absorbed) {
  std::map<const ir::Value*, std::vector<const ir::Operation*>> users;
  ir::walk(const_cast<ir::Block&>(f.body()), [&](ir::Operation& op) {
    for (const ir::Value* v : op.operands()) users[v].push_back(&op);
  });
  auto soleUser = [&](const ir::Operation& op) -> const ir::Operation* {
    const auto it = users.find(op.result());
    if (it == users.end() || it->second.size() != 1) return nullptr;
    const ir::Operation* u = it->second.front();
    return u->parent() == op.parent() && u->code().primitive && u->resultCount() == 1 ? u : nullptr;
  };
  ir::walk(const_cast<ir::Block&>(f.body()), [&](ir::Operation& op) {
    if (!op.code().primitive || !runsOnCube(op.code().kind) || op.resultCount() != 1) return;
    const bool matmul = op.operands().size() == 2 && op.operand(0)->type().rank() >= 2 &&
                        op.operand(1)->type().rank() >= 2 && op.operand(0)->type().rank() != 4;
    const bool conv = op.operand(0)->type().rank() == 4 && op.operand(1)->type().rank() == 4;
    if (!matmul && !conv) return;
    // Only what the cube runs for certain: floating-point operands (f64 not for conv2d).
    auto cubeType = [&](const ir::Value* v) {
      const DType d = v->type().dtype;
      return d == DType::F16 || d == DType::BF16 || d == DType::F32 || (matmul && d == DType::F64);
    };
    if (!cubeType(op.operand(0)) || !cubeType(op.operand(1)) || !cubeType(op.result())) return;
    EpiloguePlan plan;
    std::vector<const ir::Operation*> taken;
    const ir::Operation* cur = &op;
    const ir::Operation* u = soleUser(*cur);
    // A matmul's NZ result converted to row-major: FIXPIPE writes it so (NZ → ND).
    if (matmul && u && layouts::isConversion(*u) && u->result()->type().layout == Layout::RowMajor &&
        cur->result()->type().layout == Layout::FractalNZ) {
      plan.layout = Layout::RowMajor, taken.push_back(u), cur = u, u = soleUser(*cur);
    }
    // + bias[N] along the last axis, the bias computed before the contraction.
    const ir::Type& t = cur->result()->type();
    if (matmul && u && u->code().kind == OpKind::Add && u->operands().size() == 2 &&
        u->operand(0) == cur->result() && u->result()->type() == t && t.layout == Layout::RowMajor) {
      const ir::Value* b = u->operand(1);
      const ir::Type& bt = b->type();
      bool before = !b->def();
      for (const auto& o : op.parent()->ops()) {
        if (o.get() == &op) break;
        before |= o.get() == b->def();
      }
      if (before && bt.rank() == 1 && bt.dtype == t.dtype && bt.layout == Layout::RowMajor && t.rank() >= 1 &&
          !bt.dims[0].symbolic() && !t.dims.back().symbolic() && bt.dims[0].size == t.dims.back().size) {
        plan.bias = b, taken.push_back(u), cur = u, u = soleUser(*cur);
      }
    }
    if (u && u->code().kind == OpKind::Relu && u->result()->type() == cur->result()->type()) {
      plan.relu = true, taken.push_back(u);
    }
    if (taken.empty()) return;
    plans[&op] = plan;
    absorbed.insert(taken.begin(), taken.end());
  });
}

class TcExecutable final : public Executable {
public:
  TcExecutable(std::shared_ptr<const ir::Module> module, const ir::Function& entry, Device device, Ty cube,
               std::shared_ptr<Session> session, const std::vector<Tensor>& constants)
      : module_(std::move(module)), entry_(entry), device_(std::move(device)), cube_(cube), session_(std::move(session)) {
    planEpilogues(entry_, plans_, absorbed_);
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

  using Executable::run;
  std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<const uint8_t>) override {
    TcStats stats;
    std::vector<TraceEvent> trace;
    int64_t clock;
    bool tracing;
    {
      std::lock_guard lock(session_->mutex);
      clock = session_->clock;
      tracing = session_->tracing;
    }
    const int64_t callStart = clock;
    std::vector<Tensor> results;
    {
      std::lock_guard lock(mutex_); // the program cache
      // Every call is traced: (tc-trace) shows the last (a few bytes per instruction).
      const CubeContext cx{device_, cube_, cache_, stats, &trace, &clock, nullptr, {}, nullptr, {}};
      RunOptions options;
      options.primitive = [&](const ir::Operation& op, std::span<const Tensor> in, Tensor& out,
                              const std::function<const Tensor&(const ir::Value*)>& valueOf) {
        // An operation a contraction's program performed: its operand is its result.
        if (absorbed_.count(&op)) {
          out = in[0];
          return true;
        }
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
        if (std::optional<Tensor> r = runPlanned(op, in, cx, valueOf)) {
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
    if (tracing) session_->trace.insert(session_->trace.end(), trace.begin(), trace.end());
    for (TraceEvent& e : trace) {
      e.start -= callStart;
      e.end -= callStart;
    }
    session_->lastTrace = std::move(trace);
    session_->clock = clock;
    return results;
  }

  /// "tc": the program of every contraction of the module the cube runs, made from the
  /// operations' types (each run once on zeros), in the order they appear.
  std::string inspect(std::string_view what) const override {
    if (what != "tc") return {};
    std::lock_guard lock(mutex_);
    TcStats scratch;
    std::vector<const Program*> programs;
    const CubeContext cx{device_, cube_, cache_, scratch, nullptr, nullptr, &programs, {}, nullptr, {}};
    std::map<const ir::Value*, Tensor> zerosOf; // what each value stands for here
    auto zeros = [&](const ir::Value* v) -> const Tensor& {
      auto [it, fresh] = zerosOf.try_emplace(v);
      if (fresh && v->type().concrete())
        it->second = toLayout(Tensor::zeros(v->type().dtype, v->type().shape()), v->type().layout);
      return it->second;
    };
    for (const auto& f : module_->functions())
      ir::walk(f->body(), [&](const ir::Operation& op) {
        if (!op.code().primitive || !runsOnCube(op.code().kind)) return;
        std::vector<Tensor> operands;
        for (const ir::Value* v : op.operands()) {
          if (!v->type().concrete()) return; // symbolic sizes: made when called
          operands.push_back(zeros(v));
        }
        (void)runPlanned(op, operands, cx, zeros);
      });
    std::string out;
    for (const Program* p : programs) out += (out.empty() ? "" : "\n") + printProgram(*p);
    return out;
  }

private:
  /// Runs `op` on the cube with its epilogue, if it has one; nullopt to leave it to its
  /// eager kernel.
  std::optional<Tensor> runPlanned(const ir::Operation& op, std::span<const Tensor> in, const CubeContext& cx,
                                   const std::function<const Tensor&(const ir::Value*)>& valueOf) const {
    const auto plan = plans_.find(&op);
    if (plan == plans_.end()) return runOnCube(op, in, cx);
    CubeContext with = cx;
    with.epilogue.relu = plan->second.relu;
    with.bias = plan->second.bias ? &valueOf(plan->second.bias) : nullptr;
    with.layout = plan->second.layout;
    std::optional<Tensor> r = runOnCube(op, in, with);
    // The absorbed operations do not run: the cube must (floating-point operands).
    if (!r) fail(ErrorKind::Internal, "tc: a contraction with an epilogue did not run on the cube");
    return r;
  }

  std::shared_ptr<const ir::Module> module_;
  const ir::Function& entry_;
  Device device_;
  Ty cube_;
  std::shared_ptr<Session> session_;
  mutable std::mutex mutex_;
  mutable ProgramCache cache_;
  std::map<const ir::Operation*, EpiloguePlan> plans_;
  std::set<const ir::Operation*> absorbed_;
  /// Conversions of constant parameters made at compile time: (the constant, converted).
  std::map<const ir::Operation*, std::pair<Tensor, Tensor>> folded_;
};

class TcBackend final : public Backend {
public:
  const char* name() const override { return "tc"; }

  const std::vector<std::string>& pipeline() const override {
    static const std::vector<std::string> passes = [] {
      std::vector<std::string> p = optimizationPasses(); // with bucket-all-reduce (docs/distributed.md)
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
    auto option = [&](std::string_view name) {
      const auto it = options.backend.find(name);
      return it == options.backend.end() ? std::string() : it->second;
    };
    if (const std::string dtype = option("tc-dtype"); !dtype.empty()) {
      const auto t = tyNamed(dtype);
      if (!t || (*t != Ty::F16 && *t != Ty::BF16))
        fail(ErrorKind::Value, "jit :tc-dtype takes :f16 or :bf16, got :", dtype);
      cube = *t;
    }
    return std::make_unique<TcExecutable>(std::move(module), entry, deviceFor(option("tc-device")), cube, session_,
                                          options.constants);
  }

  Stat statistics(bool total) override {
    std::lock_guard lock(session_->mutex);
    return statisticsOf(total ? session_->total : session_->last);
  }
  std::string statisticsJson(bool total) override {
    std::lock_guard lock(session_->mutex);
    return (total ? session_->total : session_->last).json();
  }
  Timeline trace() override {
    std::lock_guard lock(session_->mutex);
    return timelineOf(session_->lastTrace);
  }
  void beforeRun(const FlagValues& flags) override { tc::beforeRun(*session_, flags); }
  std::vector<Output> afterRun(const FlagValues& flags) override { return tc::afterRun(*session_, flags); }

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
