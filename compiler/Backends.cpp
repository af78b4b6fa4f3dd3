// compiler/Backends.cpp — the targets this build has, and compiler/'s passes.
#include "compiler/Backend.h"
#include "ir/MemoryPlan.h"

#include "compiler/cpu/CpuBackend.h"
#include "compiler/interp/InterpBackend.h"
#include "compiler/passes/Passes.h"
#include "compiler/tc/TcBackend.h"

#include <mutex>

namespace tsl::compiler {

const char* loweringName(Lowering lowering) {
  switch (lowering) {
  case Lowering::Native: return "native";
  case Lowering::RuntimeKernel: return "runtime kernel";
  case Lowering::GenericKernel: return "generic kernel";
  }
  return "?";
}

const char* artifactName(Artifact artifact) {
  switch (artifact) {
  case Artifact::Llvm: return "llvm";
  case Artifact::Asm: return "asm";
  case Artifact::Object: return "obj";
  case Artifact::Library: return "lib";
  case Artifact::Header: return "header";
  }
  return "?";
}

std::string Executable::inspect(std::string_view) const { return {}; }

MemoryUse Executable::memory() const {
  MemoryUse use;
  if (const auto& plan = entry().plan()) {
    use.arenaBytes = plan->arenaBytes;
    use.resultBytes = plan->resultBytes;
    use.donatedBytes = plan->donatedBytes;
  }
  return use;
}

std::string Backend::emit(const ir::Module&, const ir::Function&, Artifact artifact, const CompileOptions&) {
  fail(ErrorKind::Value, "target :", name(), " makes no ", artifactName(artifact), " output (use :cpu)");
}

std::unique_ptr<Backend> makeBackend(std::string_view name) {
  registerPasses();
  if (name == "interp") return makeInterpBackend();
  if (name == "cpu") return makeCpuBackend();
  if (name == "tc") return tc::makeTcBackend();
  return nullptr;
}

const std::vector<std::string>& targetNames() {
  static const std::vector<std::string> names = {"cpu", "interp", "tc"};
  return names;
}

void registerPasses() {
  static std::once_flag once;
  std::call_once(once, [] {
    ir::registerPass("fuse", createFusePass);
    ir::registerPass("expand-einsum", createExpandEinsumPass);
    ir::registerPass("plan-memory", createPlanMemoryPass);
    ir::registerPass("layout-insert", createLayoutInsertPass);
    ir::registerPass("layout-assign", createLayoutAssignPass);
    ir::registerPass("layout-eliminate", createLayoutEliminatePass);
  });
}

const std::vector<std::string>& layoutPasses() {
  static const std::vector<std::string> passes = {"layout-insert", "layout-assign", "layout-eliminate"};
  return passes;
}

std::vector<std::string> passNames() {
  registerPasses();
  return ir::passNames();
}

} // namespace tsl::compiler
