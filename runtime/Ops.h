// runtime/Ops.h — the one table of operations.
//
// Every primitive of docs/language.md §4 is declared here once, with everything each phase
// needs from it: its TSL name and IR mnemonic, how many tensor operands it takes, its
// typed attributes, its traits (which passes query; they never switch on names), its
// type and shape rule, and its eager kernel. The eager path and the IR use the same rule
// — runOp() checks that the kernel's result has exactly the type the rule predicts.
// Later layers add their entries (derivative rules, layout behaviour, lowering) keyed by
// the same OpKind.
#pragma once

#include "runtime/Creation.h"
#include "runtime/Elementwise.h"
#include "runtime/Layout.h"
#include "runtime/NeuralNet.h"
#include "runtime/OpTraits.h"
#include "runtime/Reduce.h"
#include "runtime/Views.h"

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tsl {

/// The rows of the operation table beyond the elementwise lists of Elementwise.h:
///   X(Enumerator, "tsl-name", "mnemonic", minInputs, maxInputs (-1: any), Attrs,
///     FusionClass, LayoutClass, flags, typeRule, kernel)
/// Attrs is the attribute struct the operation takes (below); the flags, fusion and layout
/// classes are those of runtime/OpTraits.h; the type rule and kernel are functions of
/// runtime/OpTable.cpp (the only place that expands those two columns).
#define TSL_OTHER_OPS(X)                                                                           \
  X(Where, "where", "where", 3, 3, NoAttrs, Elementwise, Agnostic, kZeroAtZero | kBitExact, whereType, whereKernel)      \
  X(Clip, "clip", "clip", 3, 3, NoAttrs, Elementwise, Agnostic, kBitExact, clipType, clipKernel)           \
  X(Cast, "astype", "astype", 1, 1, CastAttrs, Elementwise, Agnostic, kZeroAtZero | kBitExact, castType, castKernel)     \
  X(Sum, "sum", "sum", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction, reduceType<ReduceOp::Sum>,  \
    reduceKernel<ReduceOp::Sum>)                                                                   \
  X(Mean, "mean", "mean", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction, reduceType<ReduceOp::Mean>, \
    reduceKernel<ReduceOp::Mean>)                                                                  \
  X(Prod, "prod", "prod", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction, reduceType<ReduceOp::Prod>, \
    reduceKernel<ReduceOp::Prod>)                                                                  \
  X(Max, "max", "max", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction | kBitExact, reduceType<ReduceOp::Max>,  \
    reduceKernel<ReduceOp::Max>)                                                                   \
  X(Min, "min", "min", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction | kBitExact, reduceType<ReduceOp::Min>,  \
    reduceKernel<ReduceOp::Min>)                                                                   \
  X(ArgMax, "argmax", "argmax", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction | kBitExact,                    \
    reduceType<ReduceOp::ArgMax>, reduceKernel<ReduceOp::ArgMax>)                                  \
  X(ArgMin, "argmin", "argmin", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction | kBitExact,                    \
    reduceType<ReduceOp::ArgMin>, reduceKernel<ReduceOp::ArgMin>)                                  \
  X(LogSumExp, "logsumexp", "logsumexp", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kFloatOnly,  \
    reduceType<ReduceOp::LogSumExp>, reduceKernel<ReduceOp::LogSumExp>)                            \
  X(Reshape, "reshape", "reshape", 1, 1, ShapeAttrs, Injective, LayoutDemanding, kView | kSameOrder | kBitExact, reshapeType,   \
    reshapeKernel)                                                                                 \
  X(Transpose, "transpose", "transpose", 1, 1, PermAttrs, Injective, AxisSensitive, kView | kBitExact,             \
    transposeType, transposeKernel)                                                                \
  X(BroadcastTo, "broadcast-to", "broadcast_to", 1, 1, ShapeAttrs, Injective, AxisSensitive, kView | kBitExact,    \
    broadcastToType, broadcastToKernel)                                                            \
  X(ExpandDims, "expand-dims", "expand_dims", 1, 1, AxisAttrs, Injective, AxisSensitive, kView | kSameOrder | kBitExact,        \
    expandDimsType, expandDimsKernel)                                                              \
  X(Squeeze, "squeeze", "squeeze", 1, 1, AxesAttrs, Injective, AxisSensitive, kView | kSameOrder | kBitExact, squeezeType,      \
    squeezeKernel)                                                                                 \
  X(Slice, "slice", "slice", 1, 1, SliceAttrs, Injective, AxisSensitive, kView | kBitExact, sliceType, sliceKernel) \
  X(Index, "get", "index", 1, 1, IndexAttrs, Injective, AxisSensitive, kView | kBitExact, indexType, indexKernel)  \
  X(Concat, "concat", "concat", 1, -1, AxisAttrs, Injective, AxisSensitive, kBitExact, concatType,         \
    concatKernel)                                                                                  \
  X(Stack, "stack", "stack", 1, -1, AxisAttrs, Injective, AxisSensitive, kBitExact, stackType, stackKernel) \
  X(Pad, "pad", "pad", 1, 1, PadAttrs, Injective, AxisSensitive, kBitExact, padType, padKernel)            \
  X(Take, "take", "take", 2, 2, AxisAttrs, Injective, AxisSensitive, kBitExact, takeType, takeKernel)      \
  X(OneHot, "one-hot", "one_hot", 1, 1, CountAttrs, Injective, AxisSensitive, kBitExact, oneHotType,       \
    oneHotKernel)                                                                                  \
  X(MatMul, "matmul", "matmul", 2, 2, NoAttrs, Contraction, LayoutDemanding, kLayoutFromData | kReadsViews, matmulType, \
    matmulKernel)                                                                                  \
  X(Dot, "dot", "dot", 2, 2, NoAttrs, Contraction, LayoutDemanding, 0, dotType, dotKernel)         \
  X(Einsum, "einsum", "einsum", 1, -1, EinsumAttrs, Contraction, LayoutDemanding, 0, einsumType,   \
    einsumKernel)                                                                                  \
  X(Conv2d, "conv2d", "conv2d", 2, 2, Conv2dAttrs, Contraction, LayoutDemanding, kFloatOnly | kLayoutFromData,       \
    conv2dType, conv2dKernel)                                                                      \
  X(MaxPool2d, "max-pool2d", "max_pool2d", 1, 1, Pool2dAttrs, Opaque, LayoutDemanding, kFloatOnly | kLayoutFromData, \
    poolType, maxPoolKernel)                                                                       \
  X(AvgPool2d, "avg-pool2d", "avg_pool2d", 1, 1, Pool2dAttrs, Opaque, LayoutDemanding, kFloatOnly | kLayoutFromData, \
    poolType, avgPoolKernel)                                                                       \
  X(Softmax, "softmax", "softmax", 1, 1, AxisAttrs, Reduction, AxisSensitive, kFloatOnly,          \
    softmaxType, softmaxKernel)                                                                    \
  X(LogSoftmax, "log-softmax", "log_softmax", 1, 1, AxisAttrs, Reduction, AxisSensitive,           \
    kFloatOnly, softmaxType, logSoftmaxKernel)                                                     \
  X(LayerNorm, "layer-norm", "layer_norm", 1, 1, NormAttrs, Reduction, AxisSensitive, kFloatOnly,  \
    layerNormType, layerNormKernel)                                                                \
  X(CrossEntropy, "cross-entropy", "cross_entropy", 2, 2, NoAttrs, Reduction, AxisSensitive,       \
    kFloatOnly, crossEntropyType, crossEntropyKernel)                                              \
  X(Mse, "mse", "mse", 2, 2, NoAttrs, Reduction, AxisSensitive, 0, mseType, mseKernel)             \
  X(Full, "full", "full", 0, 0, FullAttrs, Opaque, Agnostic, kCreation | kBitExact, fullType, fullKernel)      \
  X(Arange, "arange", "arange", 0, 0, ArangeAttrs, Opaque, Agnostic, kCreation, arangeType,        \
    arangeKernel)                                                                                  \
  X(Linspace, "linspace", "linspace", 0, 0, LinspaceAttrs, Opaque, Agnostic, kCreation,            \
    linspaceType, linspaceKernel)                                                                  \
  X(Eye, "eye", "eye", 0, 0, EyeAttrs, Opaque, Agnostic, kCreation | kBitExact, eyeType, eyeKernel)            \
  X(RngKey, "rng-key", "rng_key", 0, 0, SeedAttrs, Opaque, Agnostic, kCreation, rngKeyType,        \
    rngKeyKernel)                                                                                  \
  X(RngSplit, "rng-split", "rng_split", 1, 1, CountAttrs, Opaque, LayoutDemanding, kRandom,        \
    rngSplitType, rngSplitKernel)                                                                  \
  X(RandUniform, "rand", "rand", 1, 1, RandomAttrs, Opaque, LayoutDemanding, kRandom | kFloatOnly, \
    randomType, randUniformKernel)                                                                 \
  X(RandNormal, "randn", "randn", 1, 1, RandomAttrs, Opaque, LayoutDemanding, kRandom | kFloatOnly, \
    randomType, randNormalKernel)                                                                  \
  X(Dropout, "dropout", "dropout", 2, 2, RateAttrs, Opaque, LayoutDemanding, kRandom | kFloatOnly, \
    dropoutType, dropoutKernel)                                                                    \
  X(StopGradient, "stop-gradient", "stop_gradient", 1, 1, NoAttrs, Elementwise, Agnostic, kSameOrder | kZeroAtZero | kBitExact,       \
    stopGradientType, stopGradientKernel)                                                          \
  X(SliceGrad, "slice-grad", "slice_grad", 1, 1, SliceGradAttrs, Opaque, AxisSensitive, kBitExact,         \
    sliceGradType, sliceGradKernel)                                                                \
  X(TakeGrad, "take-grad", "take_grad", 2, 2, TakeGradAttrs, Opaque, AxisSensitive, kFloatOnly,    \
    takeGradType, takeGradKernel)                                                                  \
  X(Conv2dGradInput, "conv2d-grad-input", "conv2d_grad_input", 2, 2, Conv2dGradAttrs, Contraction, \
    LayoutDemanding, kFloatOnly, conv2dGradInputType, conv2dGradInputKernel)                       \
  X(Conv2dGradWeight, "conv2d-grad-weight", "conv2d_grad_weight", 2, 2, Conv2dGradAttrs,           \
    Contraction, LayoutDemanding, kFloatOnly, conv2dGradWeightType, conv2dGradWeightKernel)        \
  X(MaxPool2dGrad, "max-pool2d-grad", "max_pool2d_grad", 2, 2, Pool2dAttrs, Opaque,                \
    LayoutDemanding, kFloatOnly, maxPoolGradType, maxPoolGradKernel)                               \
  X(AvgPool2dGrad, "avg-pool2d-grad", "avg_pool2d_grad", 1, 1, Pool2dGradAttrs, Opaque,            \
    LayoutDemanding, kFloatOnly, avgPoolGradType, avgPoolGradKernel)                               \
  X(Transdata, "to-layout", "transdata", 1, 1, LayoutAttrs, Opaque, Converting, kBitExact, layoutType,       \
    layoutKernel)

enum class OpKind : uint16_t {
#define TSL_KIND(name, ...) name,
  TSL_BINARY_OPS(TSL_KIND) TSL_UNARY_OPS(TSL_KIND) TSL_OTHER_OPS(TSL_KIND)
#undef TSL_KIND
};

// ---- Typed attributes ----

struct NoAttrs {
  bool operator==(const NoAttrs&) const = default;
};
struct AxisAttrs { ///< softmax, log-softmax, concat, stack, take, expand-dims
  int64_t axis = -1;
  bool operator==(const AxisAttrs&) const = default;
};
struct ShapeAttrs { ///< reshape (one -1 allowed), broadcast-to
  std::vector<int64_t> dims;
  bool operator==(const ShapeAttrs&) const = default;
};
struct PermAttrs { ///< transpose; empty reverses the axes
  std::vector<int64_t> perm;
  bool operator==(const PermAttrs&) const = default;
};
struct AxesAttrs { ///< squeeze; empty removes every size-1 axis (unless noAxes)
  std::vector<int64_t> axes;
  bool noAxes = false; ///< an explicit empty list: remove nothing
  bool operator==(const AxesAttrs&) const = default;
};
struct SliceAttrs {
  std::vector<SliceRange> ranges;
  bool operator==(const SliceAttrs&) const = default;
};
struct IndexAttrs { ///< get: an index per axis, or nullopt for the whole axis
  std::vector<std::optional<int64_t>> indices;
  bool operator==(const IndexAttrs&) const = default;
};
struct PadAttrs {
  std::vector<std::array<int64_t, 2>> widths;
  double value = 0;
  bool operator==(const PadAttrs&) const = default;
};
struct CountAttrs { ///< one-hot classes, rng-split keys
  int64_t count = 0;
  bool operator==(const CountAttrs&) const = default;
};
struct CastAttrs {
  DType dtype = DType::F32;
  bool operator==(const CastAttrs&) const = default;
};
struct FullAttrs {
  std::vector<int64_t> shape;
  Number value;
  DType dtype = DType::F32;
  bool operator==(const FullAttrs&) const = default;
};
struct ArangeAttrs {
  Number start, stop, step;
  DType dtype = DType::I64;
  bool operator==(const ArangeAttrs&) const = default;
};
struct LinspaceAttrs {
  double start = 0, stop = 0;
  int64_t num = 0;
  DType dtype = DType::F32;
  bool operator==(const LinspaceAttrs&) const = default;
};
struct EyeAttrs {
  int64_t n = 0, m = 0;
  DType dtype = DType::F32;
  bool operator==(const EyeAttrs&) const = default;
};
struct RandomAttrs {
  std::vector<int64_t> shape;
  DType dtype = DType::F32;
  bool operator==(const RandomAttrs&) const = default;
};
struct SeedAttrs {
  int64_t seed = 0;
  bool operator==(const SeedAttrs&) const = default;
};
struct RateAttrs {
  double rate = 0;
  bool operator==(const RateAttrs&) const = default;
};
struct NormAttrs {
  int64_t axis = -1;
  double eps = 1e-5;
  bool operator==(const NormAttrs&) const = default;
};
/// The adjoint operations of runtime/Gradients.h: what they scatter back to.
struct SliceGradAttrs {
  std::vector<SliceRange> ranges;
  std::vector<int64_t> shape; ///< the sliced tensor's shape
  bool operator==(const SliceGradAttrs&) const = default;
};
struct TakeGradAttrs {
  int64_t axis = 0;
  int64_t size = 0; ///< the length of that axis in the tensor taken from
  bool operator==(const TakeGradAttrs&) const = default;
};
struct Conv2dGradAttrs {
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::vector<int64_t> shape; ///< the input's (grad_input) or the weights' (grad_weight)
  bool operator==(const Conv2dGradAttrs&) const = default;
};
struct Pool2dGradAttrs {
  std::array<int64_t, 2> kernel{1, 1};
  std::array<int64_t, 2> stride{1, 1};
  std::array<int64_t, 2> padding{0, 0};
  std::vector<int64_t> shape; ///< the pooled input's shape
  bool operator==(const Pool2dGradAttrs&) const = default;
};
struct EinsumAttrs {
  std::string spec;
  bool operator==(const EinsumAttrs&) const = default;
};
struct LayoutAttrs { ///< transdata: to-layout, whether the user wrote it or the compiler placed it
  Layout layout = Layout::RowMajor;
  bool operator==(const LayoutAttrs&) const = default;
};

using OpAttrs = std::variant<NoAttrs, AxisAttrs, ShapeAttrs, PermAttrs, AxesAttrs, SliceAttrs, IndexAttrs,
                             PadAttrs, CountAttrs, CastAttrs, FullAttrs, ArangeAttrs, LinspaceAttrs, EyeAttrs,
                             RandomAttrs, SeedAttrs, RateAttrs, NormAttrs, EinsumAttrs, ReduceAttrs, Conv2dAttrs,
                             Pool2dAttrs, SliceGradAttrs, TakeGradAttrs, Conv2dGradAttrs, Pool2dGradAttrs,
                             LayoutAttrs>;

/// The type of a tensor value: dtype (weak for untyped literals), shape.
struct TensorType {
  DType dtype = DType::F32;
  bool weak = false;
  Shape shape;
  static TensorType of(const Tensor& t) { return {t.dtype(), t.weak(), t.shape()}; }
  bool operator==(const TensorType&) const = default;
  /// "f32[2,3]" ("f32" for a scalar).
  std::string str() const;
};

/// One row of the table: everything each phase needs from an operation. (Derivative
/// rules and backend lowerings are rows of their own layers' tables, keyed by OpKind;
/// tests prove those tables cover every operation.)
struct OpInfo {
  OpKind kind;
  const char* name;     ///< the TSL name ("log-softmax")
  const char* mnemonic; ///< the IR mnemonic ("log_softmax")
  int minInputs;
  int maxInputs;        ///< -1: any number
  size_t attrs;         ///< the index in OpAttrs of the attribute struct it takes
  FusionClass fusion;
  LayoutClass layout;
  uint32_t traits;      ///< OpTrait flags
  /// The type and shape rule: the result type, or a shape, type or value error.
  TensorType (*type)(const OpAttrs&, std::span<const TensorType>);
  /// The eager kernel.
  Tensor (*kernel)(const OpAttrs&, std::span<const Tensor>);

  bool has(OpTrait trait) const { return (traits & trait) != 0; }
  /// The attribute struct it takes, at its defaults.
  OpAttrs defaultAttrs() const;
};

const OpInfo& opInfo(OpKind kind);
/// Every operation, in OpKind order.
std::span<const OpInfo> allOps();
const OpInfo* findOpByMnemonic(std::string_view mnemonic);

/// The OpKind of an elementwise operation, and back.
OpKind opKind(BinaryOp op);
OpKind opKind(UnaryOp op);
std::optional<BinaryOp> binaryOpOf(OpKind kind);
std::optional<UnaryOp> unaryOpOf(OpKind kind);
/// The enumerator's name ("FloorDiv"): how generated code names an operation's functions.
const char* opIdentifier(OpKind kind);

/// An operand as resultLayout sees it: its layout, and whether it has the result's shape.
struct OperandLayout {
  Layout layout = Layout::RowMajor;
  bool sameShape = false;
};

/// The layout an operation's result of rank `resultRank` takes: a conversion's is its
/// attribute's; a layout-agnostic operation adopts the one its operands of the result's
/// shape share (docs/language.md §7: a layout never changes what is computed, and elementwise
/// work keeps it); a kLayoutFromData operation (conv2d, pooling, matmul) stores its
/// result as its first operand is stored, where that layout fits; anything else gives
/// row-major. Eager execution and the IR's type rule both follow it.
Layout resultLayout(OpKind kind, const OpAttrs& attrs, std::span<const OperandLayout> operands, int resultRank);

/// Applies the type rule after checking the operand count.
TensorType inferType(OpKind kind, const OpAttrs& attrs, std::span<const TensorType> inputs);
/// Runs an operation eagerly: checks operands, applies the type rule, runs the kernel
/// and checks that its result has the predicted type.
Tensor runOp(OpKind kind, const OpAttrs& attrs, std::span<const Tensor> inputs);

} // namespace tsl
