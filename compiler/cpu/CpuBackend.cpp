// compiler/cpu/CpuBackend.cpp — the :cpu backend and its JIT-compiled executables.
#include "compiler/cpu/CpuBackend.h"

#include "compiler/cpu/Aot.h"
#include "compiler/cpu/Codegen.h"
#include "compiler/cpu/HostAbi.h"
#include "compiler/cpu/Jit.h"
#include "compiler/cpu/Target.h"
#include "compiler/passes/Passes.h"
#include "ir/MemoryPlan.h"
#include "runtime/Interrupt.h"
#include "runtime/Layout.h"
#include "runtime/Views.h"

#include <llvm/IR/LLVMContext.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <ostream>

namespace tsl::compiler {

namespace {

using cpu::Program;

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Every function of the module gets a memory plan (a custom pipeline may lack the pass).
void ensurePlans(ir::Module& module) {
  for (const auto& f : module.functions())
    if (!f->plan()) {
      ir::PassContext scratch;
      createPlanMemoryPass()->run(module, scratch);
      return;
    }
}

class CpuExecutable final : public Executable {
public:
  CpuExecutable(std::shared_ptr<const ir::Module> module, const ir::Function& entry, Program program,
                std::unique_ptr<cpu::Jit::Code> code, CompileOptions options, Backend& backend)
      : module_(std::move(module)), entry_(entry), program_(std::move(program)), code_(std::move(code)),
        options_(std::move(options)), backend_(backend) {
    options_.context = nullptr;
    options_.fallbacks = nullptr;
    for (const ir::Type& t : entry_.resultTypes()) results_.push_back(t);
    // Results the memory plan writes over donated parameters (jit :donate).
    resultDonor_.assign(results_.size(), -1);
    const ir::Operation* ret = entry_.body().terminator();
    if (entry_.plan() && ret)
      for (size_t r = 0; r < ret->operands().size() && r < results_.size(); ++r)
        if (const ir::Placement* p = entry_.plan()->find(ret->operand(r)); p && p->donor)
          resultDonor_[r] = p->donor->index();
  }

  const ir::Module& module() const override { return *module_; }
  const ir::Function& entry() const override { return entry_; }

  using Executable::run;
  std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<const uint8_t> heldAlone) override {
    const auto& params = entry_.body().arguments();
    if (inputs.size() != params.size())
      fail(ErrorKind::Type, "@", entry_.name(), " takes ", params.size(), " arguments, got ", inputs.size());
    std::vector<void*> buffers;
    std::vector<Tensor> held;     // contiguous inputs and the outputs, alive for the call
    std::vector<uint64_t> scalars(inputs.size() + results_.size());
    held.reserve(inputs.size() + results_.size());
    std::vector<size_t> heldAt(inputs.size(), SIZE_MAX); // where each tensor argument is in `held`
    for (size_t i = 0; i < inputs.size(); ++i) {
      const ir::Type& type = params[i]->type();
      const Tensor& t = inputs[i];
      if (t.dtype() != type.dtype || !(t.shape() == type.shape()))
        fail(ErrorKind::Type, "@", entry_.name(), " expects ", type.str(), " for argument ", i + 1, ", got ",
             TensorType::of(t).str());
      if (type.rank() == 0) {
        std::memcpy(&scalars[i], t.data(), t.elementSize());
        buffers.push_back(&scalars[i]);
      } else {
        held.push_back(denseInLayout(t, type.layout)); // stored as the parameter's type says
        heldAt[i] = held.size() - 1;
        buffers.push_back(const_cast<char*>(held.back().physicalData()));
      }
    }
    std::vector<size_t> outputAt;
    for (size_t r = 0; r < results_.size(); ++r) {
      if (results_[r].rank() == 0) {
        buffers.push_back(&scalars[inputs.size() + r]);
        outputAt.push_back(SIZE_MAX);
      } else if (const int d = resultDonor_[r];
                 d >= 0 && countDonation(writableDonation(inputs, heldAlone, static_cast<size_t>(d)))) {
        // Written over the donated argument's buffer (the one compiled code reads): the
        // result takes over its storage, and can be donated in turn.
        const Tensor& donor = held[heldAt[static_cast<size_t>(d)]];
        void* data = const_cast<char*>(donor.physicalData());
        held.push_back(overStorage(*donor.storage(), results_[r].dtype, results_[r].shape(), results_[r].layout));
        outputAt.push_back(held.size() - 1);
        buffers.push_back(data);
      } else {
        held.push_back(emptyInLayout(results_[r].dtype, results_[r].shape(), results_[r].layout));
        outputAt.push_back(held.size() - 1);
        buffers.push_back(const_cast<char*>(held.back().physicalData()));
      }
    }
    Arena arena(*this);
    buffers.push_back(arena.data);
    cpu::HostState host;
    host.program = &program_;
    tsl_context context{};
    context.interrupt = reinterpret_cast<const volatile uint8_t*>(currentInterruptFlag());
    context.host = &host;
    const int32_t status = cpu::callGenerated(code_->entry(), buffers.data(), &context);
    if (status != TSL_OK) cpu::raiseStatus(status, context, host, program_);
    std::vector<Tensor> outputs;
    for (size_t r = 0; r < results_.size(); ++r)
      outputs.push_back(outputAt[r] == SIZE_MAX ? Tensor::scalarFromBytes(results_[r].dtype, &scalars[inputs.size() + r])
                                                : held[outputAt[r]]);
    return outputs;
  }

  MemoryUse memory() const override {
    MemoryUse use = Executable::memory();
    use.arenaBytes = program_.frameBytes; // the entry's arena and the frames of what it calls
    use.donations = donations_.load();
    use.donationsDeclined = donationsDeclined_.load();
    return use;
  }

  std::string inspect(std::string_view what) const override {
    if (what == "fallbacks") {
      std::string out;
      for (const std::string& line : program_.fallbacks) out += line + "\n";
      return out;
    }
    const Artifact artifact = what == "asm" ? Artifact::Asm : Artifact::Llvm;
    return backend_.emit(*module_, entry_, artifact, options_);
  }

private:
  /// Whether donated argument `d` may be written over: a tensor argument nothing but the
  /// call reaches (`heldAlone`: not a program's literal, a global, a local read later),
  /// that is all of its memory (not a slice of a larger tensor, which was not donated),
  /// which no other argument shares (the same tensor passed twice, or a view of it, is
  /// still read).
  static bool writableDonation(std::span<const Tensor> inputs, std::span<const uint8_t> heldAlone, size_t d) {
    if (d >= inputs.size() || d >= heldAlone.size() || !heldAlone[d] || inputs[d].rank() == 0) return false;
    const Tensor& t = inputs[d];
    if (t.offset() != 0 || !t.storage() ||
        (*t.storage())->bytes() != static_cast<size_t>(physicalBytes(t.layout(), t.shape(), t.dtype())))
      return false;
    for (size_t i = 0; i < inputs.size(); ++i)
      if (i != d && inputs[i].rank() > 0 && inputs[i].sharesStorageWith(inputs[d])) return false;
    return true;
  }

  bool countDonation(bool taken) {
    ++(taken ? donations_ : donationsDeclined_);
    return taken;
  }

  /// The executable's arena, reused by every call; a call made while another holds it
  /// (another thread, or a nested call) gets memory of its own.
  struct Arena {
    explicit Arena(CpuExecutable& e) : owner(e) {
      const int64_t bytes = e.program_.frameBytes;
      if (bytes == 0) return;
      if (!e.arenaBusy_.exchange(true)) {
        if (!e.arena_) e.arena_ = Storage::allocate(static_cast<size_t>(bytes), false);
        data = e.arena_->data();
        shared = true;
      } else {
        own = Storage::allocate(static_cast<size_t>(bytes), false);
        data = own->data();
      }
    }
    ~Arena() {
      if (shared) owner.arenaBusy_.store(false);
    }
    CpuExecutable& owner;
    Ref<Storage> own;
    void* data = nullptr;
    bool shared = false;
  };

  std::shared_ptr<const ir::Module> module_;
  const ir::Function& entry_;
  Program program_;
  std::unique_ptr<cpu::Jit::Code> code_;
  CompileOptions options_;
  Backend& backend_;
  std::vector<ir::Type> results_;
  std::vector<int> resultDonor_; ///< per result: the donated parameter it is written over, or -1
  Ref<Storage> arena_;
  std::atomic<bool> arenaBusy_{false};
  std::atomic<int64_t> donations_{0}, donationsDeclined_{0};
};

class CpuBackend final : public Backend {
public:
  const char* name() const override { return "cpu"; }

  const std::vector<std::string>& pipeline() const override {
    static const std::vector<std::string> passes = [] {
      std::vector<std::string> p = optimizationPasses(); // with bucket-all-reduce (docs/distributed.md)
      p.push_back("expand-einsum"); // einsum's contractions on the GEMM
      p.insert(p.end(), layoutPasses().begin(), layoutPasses().end());
      p.push_back("fuse");
      p.push_back("plan-memory");
      return p;
    }();
    return passes;
  }

  const char* layoutTarget() const override { return "cpu"; }

  Lowering lowering(OpKind kind) const override { return cpu::cpuLowering(kind); }

  std::string cacheKey(const CompileOptions& options) const override {
    return cat("cpu ", options.cpu, " O", options.optLevel);
  }

  std::unique_ptr<Executable> compile(std::shared_ptr<const ir::Module> module, const ir::Function& entry,
                                      const CompileOptions& options) override {
    ensurePlans(const_cast<ir::Module&>(*module));
    std::lock_guard<std::mutex> lock(mutex_);
    if (!jit_) jit_ = std::make_shared<cpu::Jit>();
    auto context = std::make_unique<llvm::LLVMContext>();
    cpu::CodegenOptions codegen;
    codegen.symbol = cat("tsl.", entry.name(), ".", ++compiled_);
    // The kernels' shapes follow --target-cpu (a subset of this machine's features runs
    // here: how the other micro-kernels are tested); the code is for this machine.
    codegen.cpuFeatures = options.cpu.empty() || options.cpu == "native" ? jit_->machine().getTargetFeatureString().str()
                                                                         : cpu::CpuTarget::named(options.cpu).features;
    // Named after its entry: the JIT needs every module's name to be unique.
    auto out = std::make_unique<llvm::Module>(codegen.symbol, *context);
    // Each phase's time is recorded as it ends (an interrupted compile reports those done);
    // each phase polls the interrupt flag (Ctrl-C: `runtime error: interrupted`).
    auto record = [&](const char* phase, double seconds) {
      if (options.context && options.context->timePasses) options.context->timings.emplace_back(phase, seconds);
    };
    auto start = std::chrono::steady_clock::now();
    Program program = cpu::generate(*module, entry, *out, codegen);
    record("llvm-ir-generation", secondsSince(start));
    cpu::prepareModule(*out, jit_->machine());
    start = std::chrono::steady_clock::now();
    // A huge traced program gets a light pipeline (cpu::hasHugeBlock).
    cpu::optimizeModule(*out, jit_->machine(), options.optLevel, cpu::hasHugeBlock(*out));
    record("llvm-optimization", secondsSince(start));
    double codegenSeconds = 0;
    auto code = cpu::Jit::add(jit_, std::move(out), std::move(context), codegen.symbol, options.optLevel == 0,
                              &codegenSeconds);
    record("llvm-code-generation", codegenSeconds);
    if (options.fallbacks)
      for (const std::string& line : program.fallbacks) *options.fallbacks << "fallback: " << line << "\n";
    return std::make_unique<CpuExecutable>(std::move(module), entry, std::move(program), std::move(code), options, *this);
  }

  std::string emit(const ir::Module& module, const ir::Function& entry, Artifact artifact,
                   const CompileOptions& options) override {
    ensurePlans(const_cast<ir::Module&>(module));
    return cpu::emitArtifact(module, entry, artifact, options);
  }

private:
  std::mutex mutex_;
  std::shared_ptr<cpu::Jit> jit_; ///< made on the first compilation
  uint64_t compiled_ = 0;         ///< numbers each compilation's symbols
};

} // namespace

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

BackendInfo cpuBackendInfo() {
  BackendInfo info;
  info.name = "cpu";
  info.preference = 10;
  info.layouts = "cpu";
  info.make = makeCpuBackend;
  BackendBuiltin llvm;
  llvm.name = "llvm-ir";
  llvm.kind = BackendBuiltin::Kind::Emit;
  llvm.artifact = Artifact::Llvm;
  llvm.replCommand = ":llvm";
  llvm.replHelp = "the optimised LLVM IR :cpu runs for those arguments";
  BackendBuiltin assembly = llvm;
  assembly.name = "asm";
  assembly.artifact = Artifact::Asm;
  assembly.replCommand = ":asm";
  assembly.replHelp = "the same as assembly for this machine";
  info.builtins = {llvm, assembly};
  auto emit = [](const char* name, Artifact artifact, bool binary, const char* help) {
    BackendEmit e;
    e.name = name;
    e.artifact = artifact;
    e.binary = binary;
    e.help = help;
    return e;
  };
  info.emits = {emit("llvm", Artifact::Llvm, false, "LLVM IR"), emit("asm", Artifact::Asm, false, "assembly"),
                emit("obj", Artifact::Object, true, "an object file"),
                emit("lib", Artifact::Library, true, "a shared library (a C function per entry; libc and libm only)"),
                emit("header", Artifact::Header, false, "the library's C header")};
  return info;
}

} // namespace tsl::compiler
