// compiler/cpu/Jit.cpp — the LLJIT: host symbols, adding modules, freeing code.
#include "compiler/cpu/Jit.h"

#include "compiler/cpu/HostAbi.h"
#include "compiler/cpu/kernels/NativeKernels.h"

#include <llvm/ExecutionEngine/Orc/ExecutionUtils.h>
#include <llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h>

#include <chrono>

namespace tsl::compiler::cpu {

namespace {

[[noreturn]] void llvmFailure(const char* what, llvm::Error error) {
  fail(ErrorKind::Internal, "cpu: ", what, ": ", llvm::toString(std::move(error)));
}

} // namespace

Jit::Jit() : target_(CpuTarget::host()) {
  // The code generator at its highest level: no slower to run here, and the MLP step it
  // makes runs 1.7 times faster than at the default level (measured, 2026-11-24).
  machine_ = makeTargetMachine(target_, 3, true);
  fastMachine_ = makeTargetMachine(target_, 0, true);
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) llvmFailure("cannot describe this machine", builder.takeError());
  builder->setCPU(target_.cpu);
  builder->getFeatures() = llvm::SubtargetFeatures(target_.features);
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Aggressive);
  auto jit = llvm::orc::LLJITBuilder().setJITTargetMachineBuilder(std::move(*builder)).create();
  if (!jit) llvmFailure("cannot start the JIT", jit.takeError());
  jit_ = std::move(*jit);
  llvm::orc::JITDylib& library = jit_->getMainJITDylib();
  // The host functions and the kernels, by name and address: the JIT never searches the
  // process for them.
  llvm::orc::SymbolMap host;
  for (const auto* table : {&hostSymbols(), &kernelSymbols()})
    for (const auto& [name, address] : *table)
      host[jit_->mangleAndIntern(name)] = {llvm::orc::ExecutorAddr::fromPtr(address),
                                           llvm::JITSymbolFlags::Exported | llvm::JITSymbolFlags::Callable};
  if (llvm::Error e = library.define(llvm::orc::absoluteSymbols(std::move(host)))) llvmFailure("cannot define host symbols", std::move(e));
  // What generated code calls of the C library: memcpy, memset, libm's functions.
  auto process = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(jit_->getDataLayout().getGlobalPrefix());
  if (!process) llvmFailure("cannot search the process", process.takeError());
  library.addGenerator(std::move(*process));
}

Jit::~Jit() = default;

Jit::Code::~Code() {
  if (llvm::Error e = tracker_->remove()) llvm::consumeError(std::move(e)); // nothing a destructor can do
}

std::unique_ptr<Jit::Code> Jit::add(const std::shared_ptr<Jit>& jit, std::unique_ptr<llvm::Module> module,
                                    std::unique_ptr<llvm::LLVMContext> context, const std::string& entry, bool fast,
                                    double* codegenSeconds) {
  // The module must die before its context. Parameters die in an order the compiler picks
  // (clang's is context first), so on an exception (an interrupted codegen) they would be
  // destroyed wrongly; locals die in reverse order of declaration.
  std::unique_ptr<llvm::LLVMContext> ownedContext = std::move(context);
  std::unique_ptr<llvm::Module> ownedModule = std::move(module);
  const auto start = std::chrono::steady_clock::now();
  std::string object;
  {
    std::lock_guard<std::mutex> lock(jit->mutex_);
    object = emitCode(*ownedModule, fast || hasHugeBlock(*ownedModule) ? *jit->fastMachine_ : *jit->machine_, true);
  }
  ownedModule.reset();
  ownedContext.reset();
  llvm::orc::ResourceTrackerSP tracker = jit->jit_->getMainJITDylib().createResourceTracker();
  if (llvm::Error e = jit->jit_->addObjectFile(tracker, llvm::MemoryBuffer::getMemBufferCopy(object, entry)))
    llvmFailure("cannot add the code", std::move(e));
  auto symbol = jit->jit_->lookup(entry); // links the object
  if (!symbol) {
    if (llvm::Error e = tracker->remove()) llvm::consumeError(std::move(e));
    llvmFailure("cannot compile the module", symbol.takeError());
  }
  if (codegenSeconds) *codegenSeconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return std::make_unique<Code>(jit, std::move(tracker), symbol->toPtr<EntryFn>());
}

} // namespace tsl::compiler::cpu
