// compiler/cpu/Target.cpp — target machines, the optimisation pipeline, emitting code.
#include "compiler/cpu/Target.h"

#include "runtime/Interrupt.h"
#include "tsl/Error.h"

#include <llvm/Analysis/TargetLibraryInfo.h>
#include <llvm/IR/LegacyPassManager.h>
#include <llvm/IR/PassInstrumentation.h>
#include <llvm/Pass.h>
#include <llvm/Transforms/Utils/Cloning.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/TargetParser/SubtargetFeature.h>
#include <llvm/TargetParser/Triple.h>

#include <mutex>

namespace tsl::compiler::cpu {

void initializeLlvm() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    llvm::InitializeNativeTargetAsmParser();
  });
}

CpuTarget CpuTarget::host() {
  initializeLlvm();
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = llvm::sys::getHostCPUName().str();
  llvm::SubtargetFeatures features;
  for (const auto& [name, enabled] : llvm::sys::getHostCPUFeatures()) features.AddFeature(name, enabled);
  t.features = features.getString();
  return t;
}

namespace {

/// Whether `feature` is one the subtarget's table lists.
bool hasFeature(const llvm::MCSubtargetInfo& info, llvm::StringRef feature) {
  for (const llvm::SubtargetFeatureKV& kv : info.getAllProcessorFeatures())
    if (feature == kv.Key) return true;
  return false;
}

} // namespace

CpuTarget CpuTarget::named(const std::string& name) {
  initializeLlvm();
  CpuTarget t;
  t.triple = llvm::sys::getProcessTriple();
  t.cpu = name;
  std::string problem;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, problem);
  if (!target) fail(ErrorKind::Internal, "cpu: no LLVM target for ", t.triple, ": ", problem);
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(t.triple, name, ""));
  if (!info || !info->isCPUStringValid(name))
    fail(ErrorKind::Value, "unknown CPU '", name, "' (try x86-64, x86-64-v2, x86-64-v3, x86-64-v4, znver4, skylake-avx512 or native)");
  // LLVM knows 32-bit CPUs too (i686, pentium4, geode...); asked for 64-bit code for one,
  // it aborts the process. Whether a CPU runs 64-bit code is its feature "64bit".
  if (llvm::Triple(t.triple).isArch64Bit() && hasFeature(*info, "64bit") && !info->checkFeatures("+64bit"))
    fail(ErrorKind::Value, "CPU '", name, "' cannot run 64-bit code (try x86-64, x86-64-v2, x86-64-v3, x86-64-v4, znver4, skylake-avx512 or native)");
  return t;
}

std::unique_ptr<llvm::TargetMachine> makeTargetMachine(const CpuTarget& t, int optLevel, bool pic) {
  initializeLlvm();
  std::string problem;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(t.triple, problem);
  if (!target) fail(ErrorKind::Internal, "cpu: no LLVM target for ", t.triple, ": ", problem);
  llvm::TargetOptions options;
  const llvm::CodeGenOptLevel level = optLevel <= 0   ? llvm::CodeGenOptLevel::None
                                      : optLevel == 1 ? llvm::CodeGenOptLevel::Less
                                      : optLevel == 2 ? llvm::CodeGenOptLevel::Default
                                                      : llvm::CodeGenOptLevel::Aggressive;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      t.triple, t.cpu, t.features, options, pic ? llvm::Reloc::PIC_ : llvm::Reloc::Static, llvm::CodeModel::Small, level));
  if (!machine) fail(ErrorKind::Internal, "cpu: LLVM made no target machine for ", t.cpu);
  return machine;
}

void prepareModule(llvm::Module& module, llvm::TargetMachine& machine) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple().str());
  const std::string cpu = machine.getTargetCPU().str(), features = machine.getTargetFeatureString().str();
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    f.addFnAttr("target-cpu", cpu);
    f.addFnAttr("target-features", features);
    f.removeFnAttr("tune-cpu");
  }
}

namespace {

const char* const kGeneratedCodePipeline =
    "function(sroa,early-cse<memssa>,simplifycfg,instcombine<no-verify-fixpoint>,loop-mssa(loop-rotate,licm),indvars,"
    "loop-vectorize<interleave-forced-only>,instcombine<no-verify-fixpoint>,simplifycfg,early-cse,dce),globaldce";

/// For a huge program (hasHugeBlock): the same without the vectoriser (a loop body of
/// hundreds of operations vectorised takes the fast code generator seconds) and without
/// -O1's module-wide passes (interprocedural constant propagation and the like, whole
/// seconds at 10^5 operations for straight-line code that gains nothing from them, and
/// not to be stopped by Ctrl-C while they run).
const char* const kHugeProgramPipeline =
    "function(sroa,early-cse<memssa>,simplifycfg,instcombine<no-verify-fixpoint>,loop-mssa(loop-rotate,licm),"
    "indvars,simplifycfg,dce),globaldce";

/// Inlines the calls of always-inline functions (the kernel library's scalar functions),
/// as the pipelines' first step: LLVM's always-inline pass does it for the whole module at
/// once, a second at 10^5 operations that Ctrl-C cannot stop; this stops between
/// functions (the pipeline after it then skips its passes).
void inlineAlwaysInline(llvm::Module& module) {
  for (llvm::Function& f : module) {
    if (f.isDeclaration()) continue;
    if (interruptRequested()) return;
    std::vector<llvm::CallBase*> calls;
    auto note = [&](llvm::Value* v) {
      auto* call = llvm::dyn_cast_or_null<llvm::CallBase>(v);
      llvm::Function* callee = call ? call->getCalledFunction() : nullptr;
      if (callee && callee != &f && !callee->isDeclaration() && callee->hasFnAttribute(llvm::Attribute::AlwaysInline))
        calls.push_back(call);
    };
    for (llvm::BasicBlock& block : f)
      for (llvm::Instruction& instruction : block) note(&instruction);
    while (!calls.empty()) { // calls inside what was inlined are inlined too
      llvm::CallBase* call = calls.back();
      calls.pop_back();
      llvm::InlineFunctionInfo info;
      if (llvm::InlineFunction(*call, info, /*MergeAttributes=*/true).isSuccess())
        for (llvm::CallBase* inner : info.InlinedCallSites) note(inner);
    }
  }
}

} // namespace

void optimizeModule(llvm::Module& module, llvm::TargetMachine& machine, int optLevel, bool huge) {
  llvm::LoopAnalysisManager loops;
  llvm::FunctionAnalysisManager functions;
  llvm::CGSCCAnalysisManager cgscc;
  llvm::ModuleAnalysisManager modules;
  // Once Ctrl-C is pressed every optional pass is skipped, so the pipeline ends within one
  // pass on one function; the interrupt is raised after it.
  llvm::PassInstrumentationCallbacks instrumentation;
  instrumentation.registerShouldRunOptionalPassCallback([](llvm::StringRef, llvm::Any) { return !interruptRequested(); });
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = optLevel >= 2;
  tuning.SLPVectorization = optLevel >= 2;
  tuning.LoopInterleaving = false;
  tuning.LoopUnrolling = false;
  llvm::PassBuilder builder(&machine, tuning, std::nullopt, &instrumentation);
  // The library info first: the function analyses would otherwise register a default one.
  llvm::TargetLibraryInfoImpl library(machine.getTargetTriple());
  functions.registerPass([&] { return llvm::TargetLibraryAnalysis(library); });
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  const llvm::OptimizationLevel level = optLevel <= 0   ? llvm::OptimizationLevel::O0
                                        : optLevel == 1 ? llvm::OptimizationLevel::O1
                                        : optLevel == 2 ? llvm::OptimizationLevel::O2
                                                        : llvm::OptimizationLevel::O3;
  llvm::ModulePassManager pipeline;
  if ((huge && optLevel > 0) || optLevel == 2) inlineAlwaysInline(module);
  if (huge && optLevel > 0) {
    if (llvm::Error e = builder.parsePassPipeline(pipeline, kHugeProgramPipeline))
      fail(ErrorKind::Internal, "cpu: bad pass pipeline: ", llvm::toString(std::move(e)));
  } else if (optLevel == 2) {
    // The default: what generated code needs and no more (the full -O2 pipeline costs
    // twice as long for the same code). Inline the kernel library's scalar functions, turn
    // slots into registers, simplify, hoist invariants out of loops, vectorise the
    // innermost loops, and clean up.
    if (llvm::Error e = builder.parsePassPipeline(pipeline, kGeneratedCodePipeline))
      fail(ErrorKind::Internal, "cpu: bad pass pipeline: ", llvm::toString(std::move(e)));
  } else {
    pipeline = optLevel <= 0 ? builder.buildO0DefaultPipeline(level) : builder.buildPerModuleDefaultPipeline(level);
  }
  pipeline.run(module, modules);
  checkInterrupt();
}

bool hasHugeBlock(const llvm::Module& module) {
  constexpr size_t kHugeBlock = 1000; // instructions; measured: 4,000 take the schedulers 2.6 s
  for (const llvm::Function& f : module)
    for (const llvm::BasicBlock& block : f)
      if (block.size() > kHugeBlock) return true;
  return false;
}

std::string llvmText(const llvm::Module& module) {
  std::string text;
  llvm::raw_string_ostream out(text);
  module.print(out, nullptr);
  return out.str();
}

namespace {

/// The last pass of code generation, run on each function after it is emitted: once
/// Ctrl-C is pressed it deletes the bodies of the functions not yet compiled, so that
/// code generation ends with the function at hand (its output is then dropped).
class StopWhenInterrupted final : public llvm::FunctionPass {
public:
  static char ID;
  StopWhenInterrupted() : llvm::FunctionPass(ID) {}
  llvm::StringRef getPassName() const override { return "tsl: stop when interrupted"; }
  void getAnalysisUsage(llvm::AnalysisUsage& usage) const override { usage.setPreservesAll(); }
  bool runOnFunction(llvm::Function& f) override {
    if (!interruptRequested()) return false;
    llvm::Module& m = *f.getParent();
    for (auto it = std::next(f.getIterator()); it != m.end(); ++it)
      if (!it->isDeclaration()) it->deleteBody();
    return false;
  }
};

char StopWhenInterrupted::ID = 0;

} // namespace

std::string emitCode(llvm::Module& module, llvm::TargetMachine& machine, bool object) {
  llvm::SmallString<0> buffer;
  llvm::raw_svector_ostream out(buffer);
  llvm::legacy::PassManager passes;
  const auto type = object ? llvm::CodeGenFileType::ObjectFile : llvm::CodeGenFileType::AssemblyFile;
  if (machine.addPassesToEmitFile(passes, out, nullptr, type))
    fail(ErrorKind::Internal, "cpu: the target machine cannot emit ", object ? "objects" : "assembly");
  passes.add(new StopWhenInterrupted());
  passes.run(module);
  checkInterrupt();
  return std::string(buffer.str());
}

} // namespace tsl::compiler::cpu
