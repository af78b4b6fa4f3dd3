// tests/unit/runtime/OpTableTest.cpp — the operation table is complete and consistent.
#include "Reference.h"
#include "runtime/CallForms.h"

#include <algorithm>
#include "runtime/Ops.h"

#include <set>

using namespace tsl;
using namespace tsl::test;

TEST_CASE("every operation has a unique name and mnemonic, and a rule and a kernel") {
  std::set<std::string> names, mnemonics;
  for (const OpInfo& op : allOps()) {
    CAPTURE(op.name);
    CHECK(names.insert(op.name).second);
    CHECK(mnemonics.insert(op.mnemonic).second);
    CHECK(static_cast<bool>(op.type));
    CHECK(static_cast<bool>(op.kernel));
    CHECK(findOpByMnemonic(op.mnemonic) == &op);
    for (char c : std::string(op.mnemonic)) CHECK(((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'));
  }
  CHECK(opInfo(OpKind::LogSoftmax).mnemonic == std::string("log_softmax"));
  CHECK(opInfo(OpKind::Add).has(kCommutative));
  CHECK(opInfo(OpKind::Sum).fusion == FusionClass::Reduction);
  CHECK(opInfo(OpKind::Conv2d).fusion == FusionClass::Contraction);
}

TEST_CASE("each row's classes and flags agree with its type rule") {
  for (const OpInfo& op : allOps()) {
    CAPTURE(op.name);
    CHECK(op.defaultAttrs().index() == op.attrs);
    if (op.fusion == FusionClass::Elementwise && op.kind != OpKind::Where && op.kind != OpKind::Clip &&
        op.kind != OpKind::Cast) {
      // Elementwise: the broadcast shape; a predicate gives bool, float-only arithmetic a float.
      std::vector<TensorType> ints(static_cast<size_t>(op.minInputs), TensorType{DType::I32, false, Shape{3}});
      ints[0].shape = Shape{2, 3};
      const TensorType t = inferType(op.kind, op.defaultAttrs(), ints);
      CHECK(t.shape == Shape{2, 3});
      if (op.has(kBoolResult)) CHECK(t.dtype == DType::Bool);
      else if (op.has(kFloatOnly)) CHECK(isFloat(t.dtype));
      else CHECK(t.dtype == DType::I32);
      CHECK(op.layout == LayoutClass::Agnostic);
    }
    if (op.has(kCreation)) CHECK(op.maxInputs == 0);
    if (op.fusion == FusionClass::Contraction) CHECK(op.layout == LayoutClass::LayoutDemanding);
  }
}

TEST_CASE("runOp gives kernels' results exactly the type their rule predicts") {
  const Tensor m = tensorOf(randomValues(12, 1), Shape{3, 4}, DType::F32);
  const Tensor key = runOp(OpKind::RngKey, SeedAttrs{5}, {});
  struct Call {
    OpKind kind;
    OpAttrs attrs;
    std::vector<Tensor> inputs;
  };
  const std::vector<Call> calls = {
      {OpKind::Add, NoAttrs{}, {m, Tensor::weakFloat(1)}},
      {OpKind::Less, NoAttrs{}, {m, m}},
      {OpKind::Tanh, NoAttrs{}, {m}},
      {OpKind::Sum, ReduceAttrs{{1}, true}, {m}},
      {OpKind::ArgMax, ReduceAttrs{{0}, false}, {m}},
      {OpKind::Reshape, ShapeAttrs{{2, -1}}, {m}},
      {OpKind::Transpose, PermAttrs{}, {m}},
      {OpKind::MatMul, NoAttrs{}, {m, transpose(m, {})}},
      {OpKind::Softmax, AxisAttrs{-1}, {m}},
      {OpKind::Full, FullAttrs{{2, 2}, Number{false, 0, 1.5}, DType::F16}, {}},
      {OpKind::RandNormal, RandomAttrs{{3}, DType::F32}, {key}},
      {OpKind::RandInt, RandIntAttrs{{2, 2}, -1, 4}, {key}},
      {OpKind::Categorical, NoAttrs{}, {key, m}},
      {OpKind::Permutation, CountAttrs{5}, {key}},
      {OpKind::Shuffle, NoAttrs{}, {key, m}},
      {OpKind::Bernoulli, ShapeAttrs{{3, 4}}, {key, m}},
      {OpKind::Where, NoAttrs{}, {runOp(OpKind::Greater, NoAttrs{}, std::vector<Tensor>{m, Tensor::weakInt(0)}), m, Tensor::weakInt(0)}},
      {OpKind::Concat, AxisAttrs{0}, {m, m}},
      {OpKind::Einsum, EinsumAttrs{"ij->j"}, {m}},
  };
  for (const Call& c : calls) {
    CAPTURE(opInfo(c.kind).name);
    std::vector<TensorType> types;
    for (const Tensor& t : c.inputs) types.push_back(TensorType::of(t));
    const TensorType predicted = inferType(c.kind, c.attrs, types);
    const Tensor result = runOp(c.kind, c.attrs, c.inputs);
    CHECK(TensorType::of(result) == predicted);
  }
  CHECK_THROWS_WITH_AS(runOp(OpKind::Add, NoAttrs{}, std::vector<Tensor>{m}), doctest::Contains("+ takes 2 tensors, got 1"),
                       Error);
}

TEST_CASE("every operation has its row: a call form or internal, a sentence, an example when TSL calls it") {
  size_t internal = 0;
  for (const OpInfo& op : allOps()) {
    const std::string name = op.name;
    CAPTURE(name);
    REQUIRE(op.call != nullptr);
    CHECK(std::string_view(op.doc).size() > 10);
    if (!callable(op)) {
      ++internal;
      CHECK(std::string_view(op.example).empty());
      continue;
    }
    // The usage names the primitive, and the example calls it.
    CHECK(usageOf(op.name, *op.call).find(op.name) != std::string::npos);
    CHECK(std::string_view(op.example).find(cat("(", op.name)) != std::string_view::npos);
    CHECK(std::string_view(op.example).find(" ; ") != std::string_view::npos);
    // Defaults are written for every keyword option a builder does not choose itself.
    for (const ArgSpec& a : op.call->args)
      if (a.use == ArgUse::Keyword && a.fallback) CHECK(std::string_view(a.fallback).size() > 0);
  }
  // The compiler's own operations: the six adjoints, gelu's tanh variant, the four
  // one-result-per-part decompositions (slogdet, qr, svd, eigh; runtime/LinalgRows.h), the
  // linear scan of cumprod's derivatives, reduce-to-root and broadcast's transpose
  // (runtime/CollectiveRows.h) and attention's two derivative rows.
  CHECK(internal == 17); // and all-reduce-start and all-reduce-wait (the bucket-all-reduce pass)
  // Every callable row is called by its own name, once; aliases call rows too.
  std::vector<std::string> names;
  for (const CallName& n : callNames()) names.push_back(n.name);
  std::sort(names.begin(), names.end());
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  for (const OpInfo& op : allOps())
    if (callable(op)) CHECK(std::binary_search(names.begin(), names.end(), std::string(op.name)));
}
