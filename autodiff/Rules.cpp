// autodiff/Rules.cpp — the derivative table, assembled from its families.
#include "autodiff/Rules.h"

namespace tsl::autodiff {

namespace {

RuleTable build() {
  RuleTable table(allOps().size());
  addElementwiseRules(table);
  addStructureRules(table);
  addNeuralRules(table);
  addLinalgRules(table);
  addOrderRules(table);
  addCollectiveRules(table);
  addAttentionRules(table);
  // Every operation must say how it differentiates: a missing entry is a table bug.
  for (const OpInfo& info : allOps()) {
    const DiffRule& rule = table[static_cast<size_t>(info.kind)];
    TSL_ASSERT(rule.kind != Differentiability::Unsupported || rule.why[0] != '\0', "no derivative entry for ",
               info.mnemonic);
    TSL_ASSERT(rule.kind != Differentiability::Rules || rule.vjp, "no vjp rule for ", info.mnemonic);
  }
  return table;
}

} // namespace

const DiffRule& diffRule(OpKind kind) {
  static const RuleTable table = build();
  return table[static_cast<size_t>(kind)];
}

} // namespace tsl::autodiff
