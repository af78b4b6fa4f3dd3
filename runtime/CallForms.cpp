// runtime/CallForms.cpp — the call forms of the operation table's rows, and their builders.
//
// Each form lists its arguments (what eval/OpArgs.cpp reads and what docs print) and
// builds the row's attributes from the values read. Defaults written in an ArgSpec are
// read like a value the user wrote, so a builder sees them filled in; a builder supplies a
// default only where it depends on other arguments (full's dtype, pooling's stride).
#include "runtime/CallForms.h"

namespace tsl {

namespace {

using K = ArgKind;
using U = ArgUse;

constexpr ArgSpec tensor(const char* name) { return {name, K::Tensor}; }
constexpr ArgSpec required(const char* name, ArgKind kind) { return {name, kind}; }
constexpr ArgSpec optional(const char* name, ArgKind kind) { return {name, kind, U::Optional}; }
constexpr ArgSpec keyword(const char* name, ArgKind kind, const char* fallback) { return {name, kind, U::Keyword, fallback}; }
constexpr ArgSpec traced(ArgSpec spec) {
  spec.traced = true;
  return spec;
}

BuiltCall plain(OpKind self, const ArgValues&) { return {self, NoAttrs{}}; }

// ---- Elementwise ----

constexpr ArgSpec kX[] = {tensor("x")};
constexpr ArgSpec kAB[] = {tensor("a"), tensor("b")};

constexpr ArgSpec kGeluArgs[] = {tensor("x"), {"approximate", K::Choice, U::Keyword, ":none", "none tanh"}};
BuiltCall buildGelu(OpKind, const ArgValues& v) {
  return {v.get<std::string>(1) == "tanh" ? OpKind::GeluTanh : OpKind::Gelu, NoAttrs{}};
}

constexpr ArgSpec kWhereArgs[] = {tensor("cond"), tensor("a"), tensor("b")};
constexpr ArgSpec kClipArgs[] = {tensor("x"), tensor("lo"), tensor("hi")};

constexpr ArgSpec kCastArgs[] = {tensor("x"), required("dtype", K::DType)};
BuiltCall buildCast(OpKind self, const ArgValues& v) { return {self, CastAttrs{v.get<DType>(1)}}; }

constexpr ArgSpec kLayoutArgs[] = {tensor("x"), required("layout", K::Layout)};
BuiltCall buildLayout(OpKind self, const ArgValues& v) { return {self, LayoutAttrs{v.get<Layout>(1)}}; }

// ---- Reductions and rows ----

constexpr ArgSpec kReduceArgs[] = {tensor("x"), keyword("axis", K::Ints, "nil"), keyword("keepdims", K::Bool, "false")};
BuiltCall buildReduce(OpKind self, const ArgValues& v) {
  ReduceAttrs attrs;
  if (v.has(1)) {
    attrs.axes = v.get<std::vector<int64_t>>(1);
    attrs.noAxes = attrs.axes.empty(); // :axis [] reduces nothing, as NumPy's axis=()
  }
  attrs.keepDims = v.get<bool>(2);
  return {self, attrs};
}

constexpr ArgSpec kMomentArgs[] = {tensor("x"), keyword("axis", K::Ints, "nil"), keyword("ddof", K::Int, "0"),
                                   keyword("keepdims", K::Bool, "false")};
BuiltCall buildMoment(OpKind self, const ArgValues& v) {
  MomentAttrs attrs;
  if (v.has(1)) {
    attrs.axes = v.get<std::vector<int64_t>>(1);
    attrs.noAxes = attrs.axes.empty();
  }
  attrs.ddof = v.get<int64_t>(2);
  attrs.keepDims = v.get<bool>(3);
  return {self, attrs};
}

constexpr ArgSpec kSoftmaxArgs[] = {tensor("x"), keyword("axis", K::Int, "-1")};
BuiltCall buildAxis1(OpKind self, const ArgValues& v) { return {self, AxisAttrs{v.get<int64_t>(1)}}; }

constexpr ArgSpec kTopKArgs[] = {tensor("x"), required("k", K::Int)};
BuiltCall buildTopK(OpKind self, const ArgValues& v) { return {self, TopKAttrs{v.get<int64_t>(1), 0}}; }
OpAttrs topKPart(const OpAttrs& built, int64_t part) {
  TopKAttrs attrs = std::get<TopKAttrs>(built);
  attrs.part = part;
  return attrs;
}

constexpr ArgSpec kGatherArgs[] = {tensor("x"), tensor("idx"), keyword("axis", K::Int, "-1")};
constexpr ArgSpec kScatterAddArgs[] = {tensor("x"), tensor("idx"), tensor("src"), keyword("axis", K::Int, "-1")};
BuiltCall buildAxis3(OpKind self, const ArgValues& v) { return {self, AxisAttrs{v.get<int64_t>(3)}}; }

// attention's mask is a tensor given as a keyword option: when given, the last operand.
constexpr ArgSpec kAttentionArgs[] = {tensor("q"), tensor("k"), tensor("v"), {"mask", K::Tensor, U::Keyword, "nil"},
                                      keyword("causal", K::Bool, "false")};
BuiltCall buildAttention(OpKind self, const ArgValues& v) { return {self, AttentionAttrs{v.get<bool>(4), 0}}; }

constexpr ArgSpec kLayerNormArgs[] = {tensor("x"), keyword("axis", K::Int, "-1"), keyword("eps", K::Number, "1e-5")};
BuiltCall buildLayerNorm(OpKind self, const ArgValues& v) {
  return {self, NormAttrs{v.get<int64_t>(1), v.get<Number>(2).asDouble()}};
}

// ---- Shapes ----

constexpr ArgSpec kReshapeArgs[] = {tensor("x"), required("shape", K::Ints)};
BuiltCall buildShape1(OpKind self, const ArgValues& v) { return {self, ShapeAttrs{v.get<std::vector<int64_t>>(1)}}; }
BuiltCall buildFlatten(OpKind self, const ArgValues&) { return {self, ShapeAttrs{{-1}}}; }

constexpr ArgSpec kTransposeArgs[] = {tensor("x"), optional("perm", K::Ints)};
BuiltCall buildTranspose(OpKind self, const ArgValues& v) {
  return {self, PermAttrs{v.getOr<std::vector<int64_t>>(1, {})}};
}

constexpr ArgSpec kExpandDimsArgs[] = {tensor("x"), required("axis", K::Int)};

constexpr ArgSpec kSqueezeArgs[] = {tensor("x"), optional("axis", K::Ints)};
BuiltCall buildSqueeze(OpKind self, const ArgValues& v) {
  AxesAttrs attrs;
  if (v.has(1)) {
    attrs.axes = v.get<std::vector<int64_t>>(1);
    attrs.noAxes = attrs.axes.empty();
  }
  return {self, attrs};
}

constexpr ArgSpec kSliceArgs[] = {tensor("x"), required("ranges", K::Ranges)};
BuiltCall buildSlice(OpKind self, const ArgValues& v) { return {self, SliceAttrs{v.get<std::vector<SliceRange>>(1)}}; }

constexpr ArgSpec kIndexArgs[] = {tensor("x"), traced(required("i", K::Indices))};
BuiltCall buildIndex(OpKind self, const ArgValues& v) {
  return {self, IndexAttrs{v.get<std::vector<std::optional<int64_t>>>(1)}};
}

constexpr ArgSpec kJoinArgs[] = {{"tensors", K::Tensors}, keyword("axis", K::Int, "0")};

constexpr ArgSpec kPadArgs[] = {tensor("x"), required("widths", K::Widths), traced(keyword("value", K::Number, "0"))};
BuiltCall buildPad(OpKind self, const ArgValues& v) {
  return {self, PadAttrs{v.get<std::vector<std::array<int64_t, 2>>>(1), v.get<Number>(2).asDouble()}};
}

constexpr ArgSpec kTakeArgs[] = {tensor("x"), tensor("indices"), keyword("axis", K::Int, "0")};
BuiltCall buildAxis2(OpKind self, const ArgValues& v) { return {self, AxisAttrs{v.get<int64_t>(2)}}; }

constexpr ArgSpec kDiagonalArgs[] = {tensor("x"), optional("k", K::Int)};
BuiltCall buildDiagonal(OpKind self, const ArgValues& v) { return {self, DiagonalAttrs{v.has(1) ? v.get<int64_t>(1) : 0}}; }

constexpr ArgSpec kOneHotArgs[] = {tensor("labels"), required("n", K::Int)};
BuiltCall buildCount1(OpKind self, const ArgValues& v) { return {self, CountAttrs{v.get<int64_t>(1)}}; }

// ---- Contractions and neural networks ----

constexpr ArgSpec kEinsumArgs[] = {required("spec", K::String), {"operands", K::MoreTensors}};
BuiltCall buildEinsum(OpKind self, const ArgValues& v) { return {self, EinsumAttrs{v.get<std::string>(0)}}; }

constexpr ArgSpec kConv2dArgs[] = {tensor("x"), tensor("w"), keyword("stride", K::Pair, "1"), keyword("padding", K::Pair, "0")};
BuiltCall buildConv2d(OpKind self, const ArgValues& v) {
  return {self, Conv2dAttrs{v.get<std::array<int64_t, 2>>(2), v.get<std::array<int64_t, 2>>(3)}};
}

constexpr ArgSpec kPoolArgs[] = {tensor("x"), {"kernel", K::Pair, U::RequiredKeyword}, keyword("stride", K::Pair, nullptr),
                                 keyword("padding", K::Pair, "0")};
BuiltCall buildPool(OpKind self, const ArgValues& v) {
  Pool2dAttrs attrs;
  attrs.kernel = v.get<std::array<int64_t, 2>>(1);
  attrs.stride = v.getOr(2, attrs.kernel); // PyTorch's default: windows do not overlap
  attrs.padding = v.get<std::array<int64_t, 2>>(3);
  return {self, attrs};
}

constexpr ArgSpec kCrossEntropyArgs[] = {tensor("logits"), tensor("labels")};

// ---- Creation ----

constexpr ArgSpec kFullArgs[] = {required("shape", K::Ints), traced(required("value", K::Number)),
                                 keyword("dtype", K::DType, nullptr)};
BuiltCall buildFull(OpKind self, const ArgValues& v) {
  // The dtype of the value, unless given: i64 for an integer, f32 for a float literal.
  return {self, FullAttrs{v.get<std::vector<int64_t>>(0), v.get<Number>(1), v.getOr(2, v.sourceDType())}};
}

constexpr ArgSpec kFilledArgs[] = {required("shape", K::Ints), keyword("dtype", K::DType, ":f32")};
template <int64_t value>
BuiltCall buildFilled(OpKind self, const ArgValues& v) {
  return {self, FullAttrs{v.get<std::vector<int64_t>>(0), Number{true, value, 0}, v.get<DType>(1)}};
}

constexpr ArgSpec kFilledLikeArgs[] = {required("x", K::ShapeOf), keyword("dtype", K::DType, nullptr)};
template <int64_t value>
BuiltCall buildFilledLike(OpKind self, const ArgValues& v) {
  return {self, FullAttrs{v.get<std::vector<int64_t>>(0), Number{true, value, 0}, v.getOr(1, v.sourceDType())}};
}

constexpr ArgSpec kArangeArgs[] = {required("start", K::Number), optional("stop", K::Number), optional("step", K::Number),
                                   keyword("dtype", K::DType, nullptr)};
BuiltCall buildArange(OpKind self, const ArgValues& v) {
  ArangeAttrs attrs;
  // (arange n) counts to n; (arange start stop step?) as Python's range.
  attrs.start = v.has(1) ? v.get<Number>(0) : Number{true, 0, 0};
  attrs.stop = v.has(1) ? v.get<Number>(1) : v.get<Number>(0);
  attrs.step = v.getOr(2, Number{true, 1, 0});
  const bool integral = attrs.start.isInt && attrs.stop.isInt && attrs.step.isInt;
  attrs.dtype = v.getOr(3, integral ? DType::I64 : DType::F32);
  return {self, attrs};
}

constexpr ArgSpec kLinspaceArgs[] = {required("start", K::Number), required("stop", K::Number), required("num", K::Int),
                                     keyword("dtype", K::DType, ":f32")};
BuiltCall buildLinspace(OpKind self, const ArgValues& v) {
  return {self, LinspaceAttrs{v.get<Number>(0).asDouble(), v.get<Number>(1).asDouble(), v.get<int64_t>(2), v.get<DType>(3)}};
}

constexpr ArgSpec kEyeArgs[] = {required("n", K::Int), optional("m", K::Int), keyword("dtype", K::DType, ":f32")};
BuiltCall buildEye(OpKind self, const ArgValues& v) {
  const int64_t n = v.get<int64_t>(0);
  return {self, EyeAttrs{n, v.getOr<int64_t>(1, n), v.get<DType>(2)}};
}

// ---- Randomness ----

constexpr ArgSpec kRngKeyArgs[] = {traced(required("seed", K::Int))};
BuiltCall buildRngKey(OpKind self, const ArgValues& v) { return {self, SeedAttrs{v.get<int64_t>(0)}}; }

constexpr ArgSpec kRngSplitArgs[] = {tensor("key"), required("n", K::Int)};

constexpr ArgSpec kRandomArgs[] = {tensor("key"), required("shape", K::Ints), keyword("dtype", K::DType, ":f32")};
BuiltCall buildRandom(OpKind self, const ArgValues& v) {
  return {self, RandomAttrs{v.get<std::vector<int64_t>>(1), v.get<DType>(2)}};
}

constexpr ArgSpec kDropoutArgs[] = {tensor("key"), tensor("x"), required("rate", K::Number)};
BuiltCall buildDropout(OpKind self, const ArgValues& v) { return {self, RateAttrs{v.get<Number>(2).asDouble()}}; }

constexpr ArgSpec kRandIntArgs[] = {tensor("key"), required("shape", K::Ints), required("lo", K::Int), required("hi", K::Int)};
BuiltCall buildRandInt(OpKind self, const ArgValues& v) {
  return {self, RandIntAttrs{v.get<std::vector<int64_t>>(1), v.get<int64_t>(2), v.get<int64_t>(3)}};
}
constexpr ArgSpec kCategoricalArgs[] = {tensor("key"), tensor("logits")};
constexpr ArgSpec kShuffleArgs[] = {tensor("key"), tensor("x")};
constexpr ArgSpec kBernoulliArgs[] = {tensor("key"), tensor("p"), required("shape", K::Ints)};
BuiltCall buildBernoulli(OpKind self, const ArgValues& v) { return {self, ShapeAttrs{v.get<std::vector<int64_t>>(2)}}; }

// ---- Collectives ----
// Each records the world's size when called (CollectiveAttrs::ranks): all-gather's and
// reduce-scatter's shapes depend on it.

constexpr ArgSpec kAllReduceArgs[] = {tensor("x"), {"op", K::Choice, U::Keyword, ":sum", "sum mean max min"}};
BuiltCall buildAllReduce(OpKind self, const ArgValues& v) {
  CollectiveAttrs attrs;
  attrs.op = *collectiveOpFromName(v.get<std::string>(1));
  attrs.ranks = worldSize();
  return {self, attrs};
}
constexpr ArgSpec kRootArgs[] = {tensor("x"), keyword("root", K::Int, "0")};
BuiltCall buildRoot(OpKind self, const ArgValues& v) {
  CollectiveAttrs attrs;
  attrs.root = v.get<int64_t>(1);
  attrs.ranks = worldSize();
  return {self, attrs};
}
constexpr ArgSpec kCollectiveAxisArgs[] = {tensor("x"), keyword("axis", K::Int, "0")};
BuiltCall buildCollectiveAxis(OpKind self, const ArgValues& v) {
  CollectiveAttrs attrs;
  attrs.axis = v.get<int64_t>(1);
  attrs.ranks = worldSize();
  return {self, attrs};
}
BuiltCall buildBarrier(OpKind self, const ArgValues&) {
  CollectiveAttrs attrs;
  attrs.ranks = worldSize();
  return {self, attrs};
}

} // namespace

const CallForm kUnaryCall{kX, plain};
const CallForm kBinaryCall{kAB, plain};
const CallForm kAddCall{kAB, plain, Variadic::Fold, 0, "(+ a b ...)"};
const CallForm kMulCall{kAB, plain, Variadic::Fold, 1, "(* a b ...)"};
const CallForm kSubCall{kAB, plain, Variadic::FoldInverse, 0, "(- a b ...)"};
const CallForm kDivCall{kAB, plain, Variadic::FoldInverse, 1, "(/ a b ...)"};
const CallForm kChainCall{kAB, plain, Variadic::Chain};
const CallForm kGeluCall{kGeluArgs, buildGelu};
const CallForm kWhereCall{kWhereArgs, plain};
const CallForm kClipCall{kClipArgs, plain};
const CallForm kCastCall{kCastArgs, buildCast};
const CallForm kLayoutCall{kLayoutArgs, buildLayout};
const CallForm kReduceCall{kReduceArgs, buildReduce};
const CallForm kMomentCall{kMomentArgs, buildMoment};
const CallForm kAlongAxisCall{kSoftmaxArgs, buildAxis1};
const CallForm kLayerNormCall{kLayerNormArgs, buildLayerNorm};
const CallForm kSortCall{kSoftmaxArgs, buildAxis1};
const CallForm kArgsortCall{kSoftmaxArgs, buildAxis1};
const CallForm kTopKCall{kTopKArgs, buildTopK, Variadic::None, 0, nullptr, 2, topKPart};
const CallForm kGatherCall{kGatherArgs, buildAxis2};
const CallForm kScatterAddCall{kScatterAddArgs, buildAxis3};
const CallForm kAttentionCall{kAttentionArgs, buildAttention};
const CallForm kCrossEntropyCall{kCrossEntropyArgs, plain};
const CallForm kReshapeCall{kReshapeArgs, buildShape1};
const CallForm kFlattenCall{kX, buildFlatten};
const CallForm kTransposeCall{kTransposeArgs, buildTranspose};
const CallForm kBroadcastCall{kReshapeArgs, buildShape1};
const CallForm kExpandDimsCall{kExpandDimsArgs, buildAxis1};
const CallForm kSqueezeCall{kSqueezeArgs, buildSqueeze};
const CallForm kSliceCall{kSliceArgs, buildSlice};
const CallForm kIndexCall{kIndexArgs, buildIndex, Variadic::None, 0, "(get x i ...)"};
const CallForm kJoinCall{kJoinArgs, [](OpKind self, const ArgValues& v) { return BuiltCall{self, AxisAttrs{v.get<int64_t>(1)}}; }};
const CallForm kPadCall{kPadArgs, buildPad};
const CallForm kTakeCall{kTakeArgs, buildAxis2};
const CallForm kOneHotCall{kOneHotArgs, buildCount1};
const CallForm kDiagonalCall{kDiagonalArgs, buildDiagonal};
const CallForm kEinsumCall{kEinsumArgs, buildEinsum, Variadic::None, 0, "(einsum spec a b ...)"};
const CallForm kConv2dCall{kConv2dArgs, buildConv2d};
const CallForm kPoolCall{kPoolArgs, buildPool};
const CallForm kFullCall{kFullArgs, buildFull};
const CallForm kZerosCall{kFilledArgs, buildFilled<0>};
const CallForm kOnesCall{kFilledArgs, buildFilled<1>};
const CallForm kZerosLikeCall{kFilledLikeArgs, buildFilledLike<0>};
const CallForm kOnesLikeCall{kFilledLikeArgs, buildFilledLike<1>};
const CallForm kArangeCall{kArangeArgs, buildArange, Variadic::None, 0, "(arange n), (arange start stop step?)"};
const CallForm kLinspaceCall{kLinspaceArgs, buildLinspace};
const CallForm kEyeCall{kEyeArgs, buildEye};
const CallForm kRngKeyCall{kRngKeyArgs, buildRngKey};
const CallForm kRngSplitCall{kRngSplitArgs, buildCount1};
const CallForm kRandomCall{kRandomArgs, buildRandom};
const CallForm kDropoutCall{kDropoutArgs, buildDropout};
const CallForm kRandIntCall{kRandIntArgs, buildRandInt};
const CallForm kCategoricalCall{kCategoricalArgs, plain};
const CallForm kPermutationCall{kRngSplitArgs, buildCount1};
const CallForm kShuffleCall{kShuffleArgs, plain};
const CallForm kBernoulliCall{kBernoulliArgs, buildBernoulli};
const CallForm kAllReduceCall{kAllReduceArgs, buildAllReduce, Variadic::None, 0, nullptr, 1, nullptr, true};
const CallForm kBroadcastRootCall{kRootArgs, buildRoot, Variadic::None, 0, nullptr, 1, nullptr, true};
const CallForm kCollectiveAxisCall{kCollectiveAxisArgs, buildCollectiveAxis, Variadic::None, 0, nullptr, 1, nullptr, true};
const CallForm kBarrierCall{{}, buildBarrier};
const CallForm kInternal{{}, nullptr};

std::string usageOf(std::string_view name, const CallForm& form) {
  if (form.usage) return form.usage;
  std::string out = "(" + std::string(name);
  for (const ArgSpec& a : form.args) {
    switch (a.use) {
    case ArgUse::Required:
      out += " ";
      out += a.kind == ArgKind::Tensors ? "[" + std::string(a.name) + " ...]" : std::string(a.name);
      if (a.kind == ArgKind::MoreTensors || a.kind == ArgKind::Indices) out += " ...";
      break;
    case ArgUse::Optional: out += cat(" ", a.name, "?"); break;
    case ArgUse::Keyword:
    case ArgUse::RequiredKeyword: out += cat(" :", a.name, " ", a.fallback ? a.fallback : a.name); break;
    }
  }
  if (form.variadic == Variadic::Chain) out += " ...";
  return out + ")";
}

} // namespace tsl
