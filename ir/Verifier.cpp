// ir/Verifier.cpp — well-formedness of modules and functions.
#include "ir/Verifier.h"

#include "ir/TypeRules.h"
#include "tsl/StackGuard.h"

#include <unordered_set>

namespace tsl::ir {

namespace {

class Verifier {
public:
  Verifier(const Module* module, ErrorKind kind) : module_(module), kind_(kind) {}

  void function(const Function& f) {
    visible_.clear();
    for (const auto& arg : f.body().arguments()) visible_.insert(arg.get());
    block(f.body(), Structural::Return, nullptr, f);
  }

private:
  [[noreturn]] void fail(const Operation& op, const std::string& message) const {
    Span at = op.span();
    if (!at.known() && module_)
      if (const Span* text = module_->textPosition(&op)) at = *text;
    throw Error(kind_, cat("verify: ", op.code().name(), ": ", message), at);
  }

  static std::string typeList(const std::vector<Type>& types) {
    std::string out;
    for (size_t i = 0; i < types.size(); ++i) out += cat(i ? ", " : "", types[i].str());
    return out.empty() ? "nothing" : out;
  }

  static std::vector<Type> typesOf(const std::vector<Value*>& values) {
    std::vector<Type> out;
    for (const Value* v : values) out.push_back(v->type());
    return out;
  }

  /// Checks a block whose terminator must be `terminator` with operand types
  /// `expected` (when given); values defined inside stop being visible after it.
  void block(const Block& b, Structural terminator, const std::vector<Type>* expected, const Function& f) {
    checkStack();
    std::vector<const Value*> defined;
    for (const auto& arg : b.arguments()) {
      visible_.insert(arg.get());
      defined.push_back(arg.get());
    }
    const Operation* last = b.ops().empty() ? nullptr : b.ops().back().get();
    for (const auto& op : b.ops()) {
      if (op->code().isTerminator() && op.get() != last) fail(*op, "a terminator must end its block");
      operation(*op, f);
      for (size_t i = 0; i < op->resultCount(); ++i) {
        visible_.insert(op->result(i));
        defined.push_back(op->result(i));
      }
    }
    if (!last || !last->code().is(terminator))
      throw Error(kind_, cat("verify: a block of @", f.name(), " must end with ", OpCode::of(terminator).name()),
                  last ? last->span() : f.span());
    if (expected && typesOf(last->operands()) != *expected)
      fail(*last, cat("gives ", typeList(typesOf(last->operands())), " where ", typeList(*expected), " is expected"));
    for (const Value* v : defined) visible_.erase(v);
  }

  void operation(const Operation& op, const Function& f) {
    for (const Value* v : op.operands())
      if (!visible_.count(v)) fail(op, "uses a value that is not defined before it in scope");
    for (size_t i = 0; i < op.resultCount(); ++i)
      if (const Type& t = op.result(i)->type(); !layoutFitsRank(t.layout, t.rank()))
        fail(op, cat("gives ", t.str(), ": ", layoutName(t.layout), " is not a layout of rank-", t.rank(), " values"));
    const OpCode code = op.code();
    if (code.primitive) {
      if (!op.regions().empty()) fail(op, "a primitive has no regions");
      if (op.resultCount() != 1) fail(op, "a primitive has one result");
      const std::vector<Type> operands = typesOf(op.operands());
      Type expected;
      try {
        expected = inferPrimitiveType(code.kind, op.attrs(), operands);
      } catch (const Error& e) {
        fail(op, e.message());
      }
      const Type& actual = op.result()->type();
      if (expected.dtype == actual.dtype && expected.dims == actual.dims && expected.layout != actual.layout)
        fail(op, cat("is ", layoutClassName(opInfo(code.kind).layout), ": its operands give ", expected.str(),
                     ", so its result cannot be ", layoutName(actual.layout)));
      if (!(expected == actual)) fail(op, cat("has type ", actual.str(), " but its operands give ", expected.str()));
      return;
    }
    switch (code.structural) {
    case Structural::Constant: {
      if (!op.operands().empty() || op.resultCount() != 1) fail(op, "takes no operands and has one result");
      const Tensor& value = op.constant();
      if (!(Type::of(value) == op.result()->type()) || value.weak())
        fail(op, cat("holds a ", dtypeName(value.dtype()), value.shape().str(), " value but has type ",
                     op.result()->type().str()));
      return;
    }
    case Structural::Call: {
      const Function* callee = module_ ? module_->find(op.callee()) : nullptr;
      if (!callee) fail(op, cat("calls @", op.callee(), ", which the module does not define"));
      std::vector<Type> params;
      for (const auto& arg : callee->body().arguments()) params.push_back(arg->type());
      if (typesOf(op.operands()) != params)
        fail(op, cat("passes ", typeList(typesOf(op.operands())), " to @", callee->name(), ", which takes ", typeList(params)));
      std::vector<Type> results;
      for (size_t i = 0; i < op.resultCount(); ++i) results.push_back(op.result(i)->type());
      if (results != callee->resultTypes())
        fail(op, cat("expects ", typeList(results), " from @", callee->name(), ", which returns ",
                     typeList(callee->resultTypes())));
      return;
    }
    case Structural::If: {
      if (op.operands().size() != 1 || op.regions().size() != 2) fail(op, "takes one condition and two regions");
      const Type& cond = op.operand(0)->type();
      if (cond.dtype != DType::Bool || cond.rank() != 0) fail(op, cat("its condition must be a bool scalar, got ", cond.str()));
      std::vector<Type> results;
      for (size_t i = 0; i < op.resultCount(); ++i) results.push_back(op.result(i)->type());
      for (const auto& region : op.regions()) {
        if (!region->block().arguments().empty()) fail(op, "its regions take no arguments");
        block(region->block(), Structural::Yield, &results, f);
      }
      return;
    }
    case Structural::While: {
      if (op.regions().size() != 2) fail(op, "has a before and an after region");
      const Block& before = op.region(0).block();
      const Block& after = op.region(1).block();
      const std::vector<Type> carried = typesOf(op.operands());
      std::vector<Type> beforeArgs, afterArgs, results;
      for (const auto& a : before.arguments()) beforeArgs.push_back(a->type());
      for (const auto& a : after.arguments()) afterArgs.push_back(a->type());
      for (size_t i = 0; i < op.resultCount(); ++i) results.push_back(op.result(i)->type());
      if (beforeArgs != carried) fail(op, "the before region's arguments must have the carried values' types");
      if (afterArgs != results) fail(op, "the after region's arguments must have the result types");
      std::vector<Type> condition{Type{DType::Bool, {}, Layout::RowMajor}};
      condition.insert(condition.end(), results.begin(), results.end());
      block(before, Structural::Condition, &condition, f);
      block(after, Structural::Yield, &carried, f);
      return;
    }
    case Structural::Raise:
      if (!op.operands().empty() || op.resultCount() || !op.regions().empty())
        fail(op, "takes no operands, has no results and no regions");
      if (op.raiseKind() == ErrorKind::Internal) fail(op, "raises only user errors");
      return;
    case Structural::Fused: {
      if (op.regions().size() != 1) fail(op, "has one region");
      const Block& body = op.region(0).block();
      std::vector<Type> args, results;
      for (const auto& a : body.arguments()) args.push_back(a->type());
      for (size_t i = 0; i < op.resultCount(); ++i) results.push_back(op.result(i)->type());
      if (args != typesOf(op.operands())) fail(op, "its region's arguments must have its inputs' types");
      if (op.resultCount() == 0) fail(op, "has at least one result");
      for (const auto& inner : body.ops())
        if (!inner->code().primitive && !inner->code().is(Structural::Constant) && !inner->code().is(Structural::Yield))
          fail(*inner, "a fused region holds only primitives and constants");
      // Isolated: the region sees its arguments and nothing of the enclosing function.
      std::unordered_set<const Value*> outer;
      std::swap(outer, visible_);
      try {
        block(body, Structural::Yield, &results, f);
      } catch (...) {
        std::swap(outer, visible_);
        throw;
      }
      std::swap(outer, visible_);
      return;
    }
    case Structural::TapeNew:
    case Structural::TapePush:
    case Structural::TapePop: {
      const Type handle{DType::I64, {}, Layout::RowMajor};
      if (!op.regions().empty()) fail(op, "has no regions");
      if (op.resultCount() < 1 || !(op.result(0)->type() == handle)) fail(op, "gives the tape (i64) first");
      if (code.structural == Structural::TapeNew && !op.operands().empty()) fail(op, "takes no operands");
      if (code.structural != Structural::TapeNew && (op.operands().empty() || !(op.operand(0)->type() == handle)))
        fail(op, "takes the tape (i64) first");
      if (code.structural != Structural::TapePop && op.resultCount() != 1) fail(op, "has one result, the tape");
      if (code.structural == Structural::TapePop && op.operands().size() != 1) fail(op, "takes only the tape");
      return;
    }
    case Structural::Yield:
    case Structural::Condition:
    case Structural::Return:
      if (op.resultCount()) fail(op, "a terminator has no results");
      if (code.structural == Structural::Return && op.parent() != &f.body()) fail(op, "return ends only a function body");
      return;
    }
  }

  const Module* module_;
  ErrorKind kind_;
  std::unordered_set<const Value*> visible_;
};

} // namespace

void verify(const Function& function, const Module* module, ErrorKind kind) {
  Verifier(module, kind).function(function);
}

void verify(const Module& module, ErrorKind kind) {
  std::unordered_set<std::string> names;
  for (const auto& f : module.functions()) {
    if (!names.insert(f->name()).second) throw Error(kind, cat("verify: @", f->name(), " is defined twice"), f->span());
    verify(*f, &module, kind);
  }
}

} // namespace tsl::ir
