// compiler/interp/InterpBackend.cpp — the :interp target: optimised IR run on eager kernels.
#include "compiler/interp/InterpBackend.h"

#include "compiler/interp/IrRunner.h"
#include "compiler/passes/Passes.h"

namespace tsl::compiler {

namespace {

class InterpExecutable final : public Executable {
public:
  InterpExecutable(std::shared_ptr<const ir::Module> module, const ir::Function& entry)
      : module_(std::move(module)), entry_(entry) {}
  const ir::Module& module() const override { return *module_; }
  const ir::Function& entry() const override { return entry_; }
  using Executable::run;
  std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<const uint8_t>) override {
    return runIr(*module_, entry_, inputs);
  }

private:
  std::shared_ptr<const ir::Module> module_;
  const ir::Function& entry_;
};

class InterpBackend final : public Backend {
public:
  const char* name() const override { return "interp"; }

  const std::vector<std::string>& pipeline() const override {
    static const std::vector<std::string> passes = [] {
      std::vector<std::string> p = optimizationPasses(); // with bucket-all-reduce (docs/distributed.md)
      p.insert(p.end(), layoutPasses().begin(), layoutPasses().end());
      p.push_back("plan-memory"); // when each tensor can be dropped
      return p;
    }();
    return passes;
  }

  // Every operation runs on its eager kernel, which is this backend's native way.
  Lowering lowering(OpKind) const override { return Lowering::Native; }

  std::unique_ptr<Executable> compile(std::shared_ptr<const ir::Module> module, const ir::Function& entry,
                                      const CompileOptions&) override {
    return std::make_unique<InterpExecutable>(std::move(module), entry);
  }
};

} // namespace

std::unique_ptr<Backend> makeInterpBackend() { return std::make_unique<InterpBackend>(); }

BackendInfo interpBackendInfo() {
  BackendInfo info;
  info.name = "interp";
  info.preference = 20;
  info.make = makeInterpBackend;
  return info;
}

} // namespace tsl::compiler
