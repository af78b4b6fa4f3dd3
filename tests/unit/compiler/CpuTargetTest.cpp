// tests/unit/compiler/CpuTargetTest.cpp — every CPU name LLVM knows either compiles code
// for this process's 64-bit triple or is refused as a value error: none aborts; a JIT
// compile stopped by Ctrl-C fails cleanly.
#include "compiler/cpu/Jit.h"
#include "compiler/cpu/Target.h"
#include "runtime/Interrupt.h"
#include "tsl/Error.h"

#include <doctest/doctest.h>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/MC/MCSubtargetInfo.h>
#include <llvm/MC/TargetRegistry.h>
#include <llvm/TargetParser/Host.h>

#include <set>

using namespace tsl;
using namespace tsl::compiler::cpu;

namespace {

/// The message of the error `named(cpu)` raises ("" if it accepts the name).
std::string refusal(const std::string& cpu) {
  try {
    CpuTarget::named(cpu);
  } catch (const Error& e) {
    return std::string(errorKindName(e.kind())) + " error: " + e.message();
  }
  return "";
}

/// Assembly for `int f(void) { return 7; }` on `cpu` (LLVM aborts here for a 32-bit CPU).
std::string assemble(const std::string& cpu) {
  llvm::LLVMContext context;
  llvm::Module module("cpu-test", context);
  auto* fn = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getInt32Ty(context), false),
                                    llvm::Function::ExternalLinkage, "f", module);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(context, "entry", fn));
  b.CreateRet(b.getInt32(7));
  auto machine = makeTargetMachine(CpuTarget::named(cpu), 0, false);
  prepareModule(module, *machine);
  return emitCode(module, *machine, false);
}

} // namespace

TEST_CASE("a 32-bit CPU is refused as a value error, a 64-bit one compiles") {
  for (const char* cpu : {"i386", "i686", "pentium4", "yonah", "geode"})
    CHECK(refusal(cpu) == std::string("value error: CPU '") + cpu +
                              "' cannot run 64-bit code (try x86-64, x86-64-v2, x86-64-v3, x86-64-v4, znver4, "
                              "skylake-avx512 or native)");
  CHECK(refusal("no-such-cpu").starts_with("value error: unknown CPU 'no-such-cpu'"));
  for (const char* cpu : {"x86-64", "x86-64-v3", "core2", "nocona", "znver4"}) {
    CAPTURE(cpu);
    CHECK(refusal(cpu).empty());
  }
}

TEST_CASE("every CPU LLVM lists is refused or compiles: the set comes from LLVM's feature 64bit") {
  initializeLlvm();
  const std::string triple = llvm::sys::getProcessTriple();
  std::string problem;
  const llvm::Target* target = llvm::TargetRegistry::lookupTarget(triple, problem);
  REQUIRE(target);
  std::unique_ptr<llvm::MCSubtargetInfo> info(target->createMCSubtargetInfo(triple, "", ""));
  REQUIRE(info);
  std::set<std::string> refused, accepted;
  for (const llvm::SubtargetSubTypeKV& kv : info->getAllProcessorDescriptions()) {
    const std::string cpu = kv.Key;
    CAPTURE(cpu);
    const std::string why = refusal(cpu);
    if (!why.empty()) {
      CHECK(why.find("cannot run 64-bit code") != std::string::npos);
      refused.insert(cpu);
      continue;
    }
    accepted.insert(cpu);
    CHECK(assemble(cpu).find("movl\t$7, %eax") != std::string::npos);
  }
  // The 32-bit names of the issue are among the refused, and most names are 64-bit.
  for (const char* cpu : {"i386", "i486", "i586", "pentium", "i686", "pentium4", "yonah", "geode", "k6", "athlon"})
    CHECK(refused.count(cpu) == 1);
  CHECK(accepted.size() > refused.size());
}

TEST_CASE("a JIT compile interrupted in code generation raises 'interrupted' and frees its module before its context") {
  // Clang destroys by-value parameters left to right: the context went first and the
  // module's destructor then crashed in LLVMContext::removeModule (the REPL's Ctrl-C
  // during the first eager matmul, which compiles the micro-kernels).
  initializeLlvm();
  auto jit = std::make_shared<Jit>();
  auto makeModule = [](std::unique_ptr<llvm::LLVMContext>& context) {
    context = std::make_unique<llvm::LLVMContext>();
    auto module = std::make_unique<llvm::Module>("interrupt-test", *context);
    auto* i32 = llvm::Type::getInt32Ty(*context);
    auto* ptr = llvm::PointerType::get(*context, 0);
    auto* fn = llvm::Function::Create(llvm::FunctionType::get(i32, {ptr, ptr}, false),
                                      llvm::Function::ExternalLinkage, "entry", *module);
    llvm::IRBuilder<> b(llvm::BasicBlock::Create(*context, "entry", fn));
    b.CreateRet(b.getInt32(7));
    return module;
  };
  InterruptFlag stop{true};
  {
    InterruptScope scope(&stop);
    std::unique_ptr<llvm::LLVMContext> context;
    auto module = makeModule(context);
    std::string message;
    try {
      Jit::add(jit, std::move(module), std::move(context), "entry", false, nullptr);
    } catch (const Error& e) {
      message = std::string(errorKindName(e.kind())) + " error: " + e.message();
    }
    CHECK(message == "runtime error: interrupted");
  }
  // The JIT is still usable afterwards.
  std::unique_ptr<llvm::LLVMContext> context;
  auto module = makeModule(context);
  auto code = Jit::add(jit, std::move(module), std::move(context), "entry", false, nullptr);
  CHECK(code->entry()(nullptr, nullptr) == 7);
}
