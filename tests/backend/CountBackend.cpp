// tests/backend/CountBackend.cpp — a target that exists only in the tests: `:count` runs
// the optimised IR on the IR runner (as :interp does) and counts the primitive operations
// it runs, each weighing `:count-weight` (jit's keyword, or `--count-weight=N` on the
// command line; 1 by default). (count-stats) gives the counts of the last call,
// (count-stats :total) of every call. It is registered by a static object in this file
// alone: linking the file into a program is all it takes to add the target — the proof
// that targets are peers behind compiler/Backend.h's interface.
#include "compiler/Backend.h"
#include "compiler/interp/IrRunner.h"
#include "ir/Pass.h"

#include <cstdlib>
#include <mutex>

namespace tsl::compiler::testing {

namespace {

struct Counts {
  std::mutex mutex;
  int64_t lastOperations = 0, totalOperations = 0, calls = 0, weight = 1;
};

class CountExecutable final : public Executable {
public:
  CountExecutable(std::shared_ptr<const ir::Module> module, const ir::Function& entry, int64_t weight,
                  std::shared_ptr<Counts> counts)
      : module_(std::move(module)), entry_(entry), weight_(weight), counts_(std::move(counts)) {}
  const ir::Module& module() const override { return *module_; }
  const ir::Function& entry() const override { return entry_; }
  using Executable::run;
  std::vector<Tensor> run(std::span<const Tensor> inputs, std::span<const uint8_t>) override {
    int64_t operations = 0;
    RunOptions options;
    options.primitive = [&](const ir::Operation&, std::span<const Tensor>, Tensor&,
                            const std::function<const Tensor&(const ir::Value*)>&) {
      operations += weight_;
      return false; // the eager kernel runs it
    };
    std::vector<Tensor> results = runIr(*module_, entry_, inputs, options);
    std::lock_guard lock(counts_->mutex);
    counts_->lastOperations = operations;
    counts_->totalOperations += operations;
    ++counts_->calls;
    counts_->weight = weight_;
    return results;
  }

private:
  std::shared_ptr<const ir::Module> module_;
  const ir::Function& entry_;
  int64_t weight_;
  std::shared_ptr<Counts> counts_;
};

class CountBackend final : public Backend {
public:
  const char* name() const override { return "count"; }
  const std::vector<std::string>& pipeline() const override { return ir::optimizationPasses(); }
  Lowering lowering(OpKind) const override { return Lowering::Native; }
  std::unique_ptr<Executable> compile(std::shared_ptr<const ir::Module> module, const ir::Function& entry,
                                      const CompileOptions& options) override {
    const auto it = options.backend.find("count-weight");
    const int64_t weight = it == options.backend.end() ? 1 : std::strtoll(it->second.c_str(), nullptr, 10);
    return std::make_unique<CountExecutable>(std::move(module), entry, weight, counts_);
  }
  Stat statistics(bool total) override {
    std::lock_guard lock(counts_->mutex);
    return Stat::map({{"operations", Stat::of(total ? counts_->totalOperations : counts_->lastOperations)},
                      {"calls", Stat::of(total ? counts_->calls : counts_->calls > 0 ? 1 : 0)},
                      {"weight", Stat::of(counts_->weight)}});
  }
  std::vector<Output> afterRun(const FlagValues& flags) override {
    for (const auto& [flag, value] : flags)
      if (flag == "count-report") return {{value, cat("count: ", statistics(true).json(), "\n")}};
    return {};
  }

private:
  std::shared_ptr<Counts> counts_ = std::make_shared<Counts>();
};

BackendInfo countInfo() {
  BackendInfo info;
  info.name = "count";
  info.preference = 1000; // listed last; never the default
  info.make = [] { return std::make_unique<CountBackend>(); };
  BackendOption weight;
  weight.name = "count-weight";
  weight.jitKeyword = true;
  weight.flag = true;
  weight.usage = "--count-weight=N";
  weight.help = "what each operation :count runs counts for (1 to 1000)";
  weight.parse = [](const OptionInput& in, const std::string& who) {
    char* end = nullptr;
    const long long n = std::strtoll(in.text.c_str(), &end, 10);
    if (in.isKeyword || in.text.empty() || *end != '\0' || n < 1 || n > 1000)
      fail(ErrorKind::Value, who == "jit" ? "jit :" : "--", "count-weight takes an integer from 1 to 1000, got ", in.printed);
    return std::to_string(n);
  };
  BackendOption report;
  report.name = "count-report";
  report.flag = true;
  report.valueOptional = true;
  report.compiles = false;
  report.usage = "--count-report[=FILE]";
  report.help = "after the run, the operations :count ran (standard error, or FILE)";
  info.options = {weight, report};
  BackendBuiltin stats;
  stats.name = "count-stats";
  stats.kind = BackendBuiltin::Kind::Statistics;
  stats.doc = "(count-stats) / (count-stats :total): the operations :count ran in the last call (or every call)";
  stats.replCommand = ":count-stats";
  stats.replHelp = "the operations the last :count call ran, a key a line";
  info.builtins = {stats};
  return info;
}

const BackendRegistration registration(countInfo());

} // namespace

} // namespace tsl::compiler::testing
