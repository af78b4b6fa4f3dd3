// compiler/interp/IrRunner.cpp — walking IR blocks over tensors.
#include "compiler/interp/IrRunner.h"

#include "runtime/Layout.h"

#include "ir/MemoryPlan.h"
#include "runtime/Interrupt.h"
#include "tsl/StackGuard.h"

#include <map>
#include <unordered_map>
#include <unordered_set>

namespace tsl::compiler {

namespace {

using ir::Block;
using ir::Operation;
using ir::Structural;

class Machine {
public:
  Machine(const ir::Module& module, const RunOptions& options) : module_(module), options_(options) {}

  std::vector<Tensor> call(const ir::Function& f, std::span<const Tensor> args) {
    checkStack();
    const auto& params = f.body().arguments();
    if (args.size() != params.size())
      fail(ErrorKind::Type, "@", f.name(), " takes ", params.size(), " arguments, got ", args.size());
    std::map<std::string, int64_t> symbols;
    Env env;
    for (size_t i = 0; i < args.size(); ++i) {
      const ir::Type& type = params[i]->type();
      checkArgument(f, i, type, args[i], symbols);
      // A parameter's type names its layout: the caller's tensor is stored so first.
      env[params[i].get()] = type.rank() > 0 && args[i].layout() != type.layout ? toLayout(args[i], type.layout) : args[i];
    }
    return block(f.body(), env, f.plan().get());
  }

private:
  using Env = std::unordered_map<const ir::Value*, Tensor>;

  static void checkArgument(const ir::Function& f, size_t i, const ir::Type& type, const Tensor& arg,
                            std::map<std::string, int64_t>& symbols) {
    bool ok = arg.dtype() == type.dtype && arg.rank() == type.rank();
    for (int d = 0; ok && d < type.rank(); ++d) {
      const ir::Dim& dim = type.dims[static_cast<size_t>(d)];
      if (!dim.symbolic()) {
        ok = dim.size == arg.shape()[d];
      } else {
        auto [it, inserted] = symbols.emplace(dim.symbol, arg.shape()[d]);
        ok = it->second == arg.shape()[d];
      }
    }
    if (!ok)
      fail(ErrorKind::Type, "@", f.name(), " expects ", type.str(), " for argument ", i + 1, ", got ",
           TensorType::of(arg).str());
  }

  /// Runs a block; returns the operands of its terminator.
  std::vector<Tensor> block(const Block& b, Env& env, const ir::MemoryPlan* plan) {
    // Without a plan (IR straight from the parser), the last use of each value of this
    // block is found here (an operation with regions counts as using everything its
    // regions use). Only values this block defines are released: an enclosing block's
    // values may be needed again (the next iteration of a while runs this block again).
    std::unordered_map<const Operation*, std::vector<const ir::Value*>> computed;
    const auto* releases = plan ? &plan->releasedAfter : &computed;
    if (!plan) {
      std::unordered_map<const ir::Value*, const Operation*> lastUse;
      std::unordered_set<const ir::Value*> local;
      for (const auto& arg : b.arguments()) local.insert(arg.get());
      for (const auto& op : b.ops()) {
        for (size_t i = 0; i < op->resultCount(); ++i) local.insert(op->result(i));
        for (const ir::Value* v : op->operands()) lastUse[v] = op.get();
        for (const auto& region : op->regions())
          ir::walk(region->block(), [&](Operation& inner) {
            for (const ir::Value* v : inner.operands()) lastUse[v] = op.get();
          });
      }
      for (const auto& [v, op] : lastUse)
        if (local.count(v)) computed[op].push_back(v);
    }
    for (const auto& op : b.ops()) {
      if (op->code().isTerminator()) {
        std::vector<Tensor> out;
        for (const ir::Value* v : op->operands()) out.push_back(lookup(env, v, *op));
        return out;
      }
      operation(*op, env, plan);
      // Release what this operation used for the last time.
      if (auto found = releases->find(op.get()); found != releases->end())
        for (const ir::Value* v : found->second) env.erase(v);
    }
    fail(ErrorKind::Internal, "a block without a terminator");
  }

  static const Tensor& lookup(const Env& env, const ir::Value* v, const Operation& at) {
    auto it = env.find(v);
    if (it == env.end())
      throw Error(ErrorKind::Internal, cat("interp: ", at.code().name(), " uses a value that has no tensor"), at.span());
    return it->second;
  }

  void operation(const Operation& op, Env& env, const ir::MemoryPlan* plan) {
    const ir::OpCode code = op.code();
    std::vector<Tensor> inputs;
    inputs.reserve(op.operands().size());
    for (const ir::Value* v : op.operands()) inputs.push_back(lookup(env, v, op));
    try {
      if (code.primitive) {
        primitive(op, env, inputs);
        return;
      }
      switch (code.structural) {
      case Structural::Constant: env[op.result()] = op.constant(); return;
      case Structural::Call: {
        const ir::Function* callee = module_.find(op.callee());
        if (!callee) fail(ErrorKind::Internal, "call of the unknown function @", op.callee());
        const std::vector<Tensor> results = call(*callee, inputs);
        for (size_t i = 0; i < op.resultCount(); ++i) env[op.result(i)] = results[i];
        return;
      }
      case Structural::If: {
        const Block& branch = op.region(inputs[0].isNonZero() ? 0 : 1).block();
        const std::vector<Tensor> results = block(branch, env, plan);
        for (size_t i = 0; i < op.resultCount(); ++i) env[op.result(i)] = results[i];
        return;
      }
      case Structural::While: {
        const Block& before = op.region(0).block();
        const Block& after = op.region(1).block();
        std::vector<Tensor> carried = std::move(inputs);
        for (;;) {
          if (options_.poll) options_.poll();
          checkInterrupt();
          for (size_t i = 0; i < carried.size(); ++i) env[before.argument(i)] = carried[i];
          std::vector<Tensor> forwarded = block(before, env, plan);
          const bool more = forwarded[0].isNonZero();
          forwarded.erase(forwarded.begin());
          if (!more) {
            for (size_t i = 0; i < op.resultCount(); ++i) env[op.result(i)] = forwarded[i];
            return;
          }
          for (size_t i = 0; i < forwarded.size(); ++i) env[after.argument(i)] = forwarded[i];
          carried = block(after, env, plan);
        }
      }
      case Structural::Fused: {
        const Block& body = op.region(0).block();
        for (size_t i = 0; i < inputs.size(); ++i) env[body.argument(i)] = inputs[i];
        const std::vector<Tensor> results = block(body, env, plan);
        for (size_t i = 0; i < op.resultCount(); ++i) env[op.result(i)] = results[i];
        for (const auto& arg : body.arguments()) env.erase(arg.get());
        return;
      }
      case Structural::Raise: throw Error(op.raiseKind(), op.message(), op.span());
      case Structural::TapeNew:
        tapes_.emplace_back();
        env[op.result()] = Tensor::ofInt(static_cast<int64_t>(tapes_.size() - 1));
        return;
      case Structural::TapePush: {
        // The tuple shares the tensors' storage: recording costs a reference per value.
        auto& tape = tapeOf(inputs[0]);
        tape.emplace_back(inputs.begin() + 1, inputs.end());
        env[op.result()] = inputs[0];
        return;
      }
      case Structural::TapePop: {
        auto& tape = tapeOf(inputs[0]);
        if (tape.empty()) fail(ErrorKind::Internal, "interp: tape_pop of an empty tape");
        std::vector<Tensor> tuple = std::move(tape.back());
        tape.pop_back();
        if (tuple.size() + 1 != op.resultCount()) fail(ErrorKind::Internal, "interp: tape_pop of a tuple of another size");
        env[op.result(0)] = inputs[0];
        for (size_t i = 0; i < tuple.size(); ++i) env[op.result(i + 1)] = std::move(tuple[i]);
        return;
      }
      default: fail(ErrorKind::Internal, "interp: unexpected ", code.name());
      }
    } catch (Error& e) {
      e.setSpanIfUnknown(op.span());
      throw;
    }
  }

  /// A primitive: the backend's hook first, else its eager kernel. Out of line, so that
  /// its locals do not enlarge the frames of operation() that recursion stacks up.
  [[gnu::noinline]] void primitive(const Operation& op, Env& env, std::span<const Tensor> inputs) {
    const ir::OpCode code = op.code();
    if (options_.primitive) {
      Tensor result;
      const auto valueOf = [&](const ir::Value* v) -> const Tensor& { return lookup(env, v, op); };
      if (options_.primitive(op, inputs, result, valueOf)) {
        env[op.result()] = std::move(result);
        return;
      }
    }
    env[op.result()] = runOp(code.kind, op.attrs(), inputs);
  }

  std::vector<std::vector<Tensor>>& tapeOf(const Tensor& handle) {
    const int64_t id = handle.toInt();
    if (id < 0 || id >= static_cast<int64_t>(tapes_.size())) fail(ErrorKind::Internal, "interp: no tape ", id);
    return tapes_[static_cast<size_t>(id)];
  }

  const ir::Module& module_;
  const RunOptions& options_;
  std::vector<std::vector<std::vector<Tensor>>> tapes_; ///< tape_new's stacks, by handle
};

} // namespace

std::vector<Tensor> runIr(const ir::Module& module, const ir::Function& function, std::span<const Tensor> args,
                          const RunOptions& options) {
  return Machine(module, options).call(function, args);
}

} // namespace tsl::compiler
