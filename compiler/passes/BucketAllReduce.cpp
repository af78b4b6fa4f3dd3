// compiler/passes/BucketAllReduce.cpp — bucket-all-reduce: the all-reduces of a block in
// buckets, each started as soon as its operands exist and waited for where read.
//
// A data-parallel training step computes every gradient, then all-reduces each (a tree's
// leaves, one all-reduce per leaf), then updates the parameters. Run as written, the
// all-reduces begin only after the whole backward pass, one at a time. This pass does
// what PyTorch's DistributedDataParallel does at run time: it packs the all-reduces of one
// reduction and dtype into buckets of at most PassContext::bucketBytes bytes (one
// all-reduce larger than that is a bucket of its own), filled in the order their operands
// are computed (a backward pass computes the last layer's gradient first), and replaces
// them by
//
//   %h = all_reduce_start %g3, %g2 {op = mean, ranks = 2}   // right after %g2 is computed
//   ...                                                      // the rest of the backward pass
//   %r2 = all_reduce_wait %h, %g2 {op = mean, ranks = 2, part = 1}   // before %r2's first use
//
// so each bucket's communication runs while the operations between its start and its
// first wait compute. Each part's value is bit for bit what the all-reduce gave
// (runtime/Collectives.h: the same reduction of the same elements).
//
// Expects: verified IR, after differentiation (the start and wait have no derivative
// rules) and inlining, before any pass that simplifies: every rank must make the same
// buckets in the same order, and the traced programs of all ranks have the same
// operations in the same order (a constant that depends on the rank differs in value
// only), where folding could remove on one rank an operation another keeps. Guarantees: every all-reduce of a concrete, row-major operand in a block of a
// world of more than one rank is replaced, except one alone in its bucket whose result is
// read by the next operation (nothing to overlap it with); within a block each start comes after the definitions of its operands and
// before every wait of its handle; each wait comes before the first operation (of the
// block) that reads its result, or before the terminator if none does; nothing else moves.
// A bucket never holds an all-reduce whose result is read (directly or not) before another
// member's operand is computed: such a member closes the bucket and opens the next. Every
// rank compiles the same program with the same bucket size, so every rank starts the same
// buckets in the same order (a rank compiled otherwise fails at its first start, as any
// disagreement does). A bucket size of 0 turns the pass off.
#include "compiler/passes/Passes.h"

#include "ir/Builder.h"
#include "runtime/Interrupt.h"

#include <algorithm>
#include <list>
#include <map>
#include <tuple>
#include <unordered_map>

namespace tsl::compiler {

namespace {

using ir::Operation;

/// One all-reduce that may go into a bucket.
struct Candidate {
  size_t index = 0;   ///< its position in the block
  int64_t defined = -1; ///< where its operand is defined (-1: before the block)
  size_t firstUse = 0;  ///< the first operation reading its result (the terminator at worst)
  int64_t bytes = 0;
};

bool bucketable(const Operation& op) {
  if (!op.code().is(OpKind::AllReduce)) return false;
  // In a world of one rank an all-reduce is the identity: nothing to overlap.
  if (std::get<CollectiveAttrs>(op.attrs()).ranks <= 1) return false;
  const ir::Type& in = op.operand(0)->type();
  const ir::Type& out = op.result()->type();
  return in.concrete() && out.concrete() && in.layout == Layout::RowMajor && out.layout == Layout::RowMajor;
}

/// The key of the all-reduces one bucket may hold: the reduction, the world, the dtype.
std::tuple<int, int64_t, int> groupOf(const Operation& op) {
  const CollectiveAttrs& a = std::get<CollectiveAttrs>(op.attrs());
  return {static_cast<int>(a.op), a.ranks, static_cast<int>(op.operand(0)->type().dtype)};
}

bool bucketBlock(ir::Block& block, int64_t limit);

bool bucketRegions(Operation& op, int64_t limit) {
  bool changed = false;
  if (op.code().is(ir::Structural::Fused)) return false; // a loop nest: no collectives
  for (auto& region : op.regions()) changed |= bucketBlock(region->block(), limit);
  return changed;
}

bool bucketBlock(ir::Block& block, int64_t limit) {
  bool changed = false;
  std::vector<Operation*> ops;
  for (auto& op : block.ops()) {
    changed |= bucketRegions(*op, limit);
    ops.push_back(op.get());
  }
  // Where each value is defined in this block, and where it is first read (by an
  // operation of the block or one nested in it).
  std::unordered_map<const ir::Value*, int64_t> definedAt;
  std::unordered_map<const ir::Value*, size_t> firstRead;
  for (size_t i = 0; i < ops.size(); ++i) {
    checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
    for (size_t r = 0; r < ops[i]->resultCount(); ++r) definedAt[ops[i]->result(r)] = static_cast<int64_t>(i);
    auto reads = [&](Operation& user) {
      for (const ir::Value* v : user.operands()) firstRead.try_emplace(v, i);
    };
    reads(*ops[i]);
    for (auto& region : ops[i]->regions()) ir::walk(region->block(), reads);
  }
  std::map<std::tuple<int, int64_t, int>, std::vector<Candidate>> groups;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!bucketable(*ops[i])) continue;
    // An all-reduce of an all-reduce stays as it is: its operand, replaced by a wait,
    // would be defined later than where its start would go.
    if (const Operation* def = ops[i]->operand(0)->def(); def && def->parent() == &block && bucketable(*def)) continue;
    Candidate c;
    c.index = i;
    if (auto it = definedAt.find(ops[i]->operand(0)); it != definedAt.end()) c.defined = it->second;
    auto use = firstRead.find(ops[i]->result());
    c.firstUse = use != firstRead.end() ? use->second : ops.size() - 1; // else before the terminator
    c.bytes = ops[i]->operand(0)->type().bytes();
    groups[groupOf(*ops[i])].push_back(c);
  }
  if (groups.empty()) return changed;
  // Whether an operation other than an all-reduce lies strictly between positions a and b
  // (all-reduces, bucketed or not, are communication: nothing to overlap with).
  std::vector<size_t> others(ops.size() + 1, 0); // others[k]: such operations before k
  for (size_t k = 0; k < ops.size(); ++k) others[k + 1] = others[k] + (ops[k]->code().is(OpKind::AllReduce) ? 0 : 1);
  auto workBetween = [&](int64_t a, size_t b) { return others[b] > others[static_cast<size_t>(a + 1)]; };
  bool rewrote = false;

  // What goes before each operation of the block: starts, then waits.
  std::vector<std::vector<std::unique_ptr<Operation>>> starts(ops.size()), waits(ops.size());
  std::vector<bool> replaced(ops.size(), false);
  std::vector<std::pair<ir::Value*, ir::Value*>> renamed; // an all-reduce's result, its wait's
  ir::Block scratch;
  ir::Builder builder(scratch);
  auto take = [&](ir::Value* made) {
    std::unique_ptr<Operation> op = std::move(scratch.ops().back());
    scratch.ops().pop_back();
    TSL_ASSERT(op.get() == made->def(), "bucket-all-reduce: the builder made another operation");
    return op;
  };

  for (auto& [key, members] : groups) {
    std::stable_sort(members.begin(), members.end(),
                     [](const Candidate& a, const Candidate& b) { return a.defined < b.defined; });
    std::vector<std::vector<Candidate>> buckets;
    int64_t bytes = 0;
    size_t earliestUse = 0;
    for (const Candidate& c : members) {
      // Sorted by definition, c's operand is the bucket's last: the start would follow it,
      // so every member's first read must come after it.
      const bool fits = !buckets.empty() && bytes + c.bytes <= limit &&
                        static_cast<int64_t>(std::min(earliestUse, c.firstUse)) > c.defined;
      if (!fits) {
        buckets.emplace_back();
        bytes = 0;
        earliestUse = c.firstUse;
      }
      buckets.back().push_back(c);
      bytes += c.bytes;
      earliestUse = std::min(earliestUse, c.firstUse);
    }
    for (const std::vector<Candidate>& bucket : buckets) {
      // One all-reduce read right after its operand is computed has nothing to overlap
      // with: it stays as it is.
      if (bucket.size() == 1 && !workBetween(bucket.front().defined, bucket.front().firstUse)) continue;
      const Operation& first = *ops[bucket.front().index];
      CollectiveAttrs attrs = std::get<CollectiveAttrs>(first.attrs());
      attrs.part = 0;
      std::vector<ir::Value*> operands;
      for (const Candidate& c : bucket) operands.push_back(ops[c.index]->operand(0));
      ir::Value* handle = builder.primitive(OpKind::AllReduceStart, attrs, operands, first.span());
      handle->setName("bucket");
      starts[static_cast<size_t>(bucket.back().defined + 1)].push_back(take(handle));
      for (size_t k = 0; k < bucket.size(); ++k) {
        Operation& original = *ops[bucket[k].index];
        CollectiveAttrs part = std::get<CollectiveAttrs>(original.attrs());
        part.part = static_cast<int64_t>(k);
        ir::Value* result = builder.primitive(OpKind::AllReduceWait, part, {handle, original.operand(0)}, original.span());
        result->setName(original.result()->name());
        TSL_ASSERT(result->type() == original.result()->type(), "bucket-all-reduce: a wait of another type");
        waits[bucket[k].firstUse].push_back(take(result));
        renamed.emplace_back(original.result(), result);
        replaced[bucket[k].index] = true;
      }
      rewrote = true;
    }
  }
  if (!rewrote) return changed;

  // The block again: each operation after what goes before it, the all-reduces left out.
  std::list<std::unique_ptr<Operation>> old;
  old.swap(block.ops());
  size_t i = 0;
  std::vector<std::unique_ptr<Operation>> retired;
  for (auto& op : old) {
    for (auto* list : {&starts[i], &waits[i]})
      for (auto& made : *list) block.append(std::move(made));
    if (replaced[i]) retired.push_back(std::move(op));
    else block.append(std::move(op));
    ++i;
  }
  ir::Replacements uses;
  for (const auto& [from, to] : renamed) uses.replace(from, to);
  ir::walk(block, [&](Operation& op) { uses.apply(op); });
  return true;
}

class BucketAllReduce final : public ir::Pass {
public:
  const char* name() const override { return "bucket-all-reduce"; }
  bool run(ir::Module& module, ir::PassContext& context) override {
    if (context.bucketBytes <= 0) return false;
    bool changed = false;
    for (const auto& f : module.functions()) changed |= bucketBlock(f->body(), context.bucketBytes);
    return changed;
  }
};

} // namespace

std::unique_ptr<ir::Pass> createBucketAllReducePass() { return std::make_unique<BucketAllReduce>(); }

} // namespace tsl::compiler
