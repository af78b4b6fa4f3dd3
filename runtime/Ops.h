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

#include "runtime/CollectiveRows.h"
#include "runtime/AttentionRows.h"
#include "runtime/Creation.h"
#include "runtime/Distributed.h"
#include "runtime/Elementwise.h"
#include "runtime/Layout.h"
#include "runtime/LinalgRows.h"
#include "runtime/NeuralNet.h"
#include "runtime/OpTraits.h"
#include "runtime/OrderRows.h"
#include "runtime/Reduce.h"
#include "runtime/Views.h"

#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace tsl {

struct CallForm; // runtime/CallForms.h

/// The rows of the operation table beyond the elementwise lists of Elementwise.h:
///   X(Enumerator, "tsl-name", "mnemonic", minInputs, maxInputs (-1: any), Attrs,
///     FusionClass, LayoutClass, flags, typeRule, kernel, callForm, "doc", "example")
/// Attrs is the attribute struct the operation takes (below); the flags, fusion and layout
/// classes are those of runtime/OpTraits.h; the type rule and kernel are functions of
/// runtime/OpTable.cpp (the only place that expands those columns); the call form, one of
/// runtime/CallForms.h, says how TSL calls it (kInternal: only compiled programs do); the
/// example's printed result follows "; " (a test runs every example).
#define TSL_OTHER_OPS(X)                                                                                                    \
  X(Where, "where", "where", 3, 3, NoAttrs, Elementwise, Agnostic, kZeroAtZero | kBitExact, whereType, whereKernel, kWhereCall, \
    "a where cond is true, else b, elementwise, broadcasting.",                                                        \
    "(where (> [1 0] 0) [1 2] [10 20]) ; i64[2] [1 20]")                                                              \
  X(Clip, "clip", "clip", 3, 3, NoAttrs, Elementwise, Agnostic, kBitExact, clipType, clipKernel, kClipCall,            \
    "x limited to [lo, hi], elementwise (NaN propagates).",                                                            \
    "(clip [-5 0 5] -1 1) ; i64[3] [-1 0 1]")                                                                          \
  X(Cast, "astype", "astype", 1, 1, CastAttrs, Elementwise, Agnostic, kZeroAtZero | kBitExact, castType, castKernel, kCastCall, \
    "x converted to another dtype (:bool :i32 :i64 :f16 :bf16 :f32 :f64), correctly rounded.",                         \
    "(astype [1.7 -1.7] :i32) ; i32[2] [1 -1]")                                                                        \
  X(Sum, "sum", "sum", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction, reduceType<ReduceOp::Sum>, reduceKernel<ReduceOp::Sum>, kReduceCall, \
    "Sum over the axes (an integer or a vector; all when nil), blocked and pairwise.",                                 \
    "(sum [[1 2] [3 4]] :axis 0) ; i64[2] [4 6]")                                                                      \
  X(Mean, "mean", "mean", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction, reduceType<ReduceOp::Mean>, reduceKernel<ReduceOp::Mean>, kReduceCall, \
    "Mean over the axes (all when nil); integers give f32.",                                                           \
    "(mean [[1 2] [3 4]] :axis 1) ; f32[2] [1.5 3.5]")                                                                 \
  X(Prod, "prod", "prod", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction, reduceType<ReduceOp::Prod>, reduceKernel<ReduceOp::Prod>, kReduceCall, \
    "Product over the axes (all when nil).",                                                                           \
    "(prod [1 2 3 4]) ; 24")                                                                                           \
  X(Max, "max", "max", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction | kBitExact, reduceType<ReduceOp::Max>, reduceKernel<ReduceOp::Max>, kReduceCall, \
    "Largest element over the axes; ties share the gradient evenly.",                                                  \
    "(max [[1 5] [7 2]] :axis 0) ; i64[2] [7 5]")                                                                      \
  X(Min, "min", "min", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction | kBitExact, reduceType<ReduceOp::Min>, reduceKernel<ReduceOp::Min>, kReduceCall, \
    "Smallest element over the axes; ties share the gradient evenly.",                                                 \
    "(min [[1 5] [7 2]] :axis 1) ; i64[2] [1 2]")                                                                      \
  X(ArgMax, "argmax", "argmax", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction | kBitExact, reduceType<ReduceOp::ArgMax>, reduceKernel<ReduceOp::ArgMax>, kReduceCall, \
    "Index (i64) of the first largest element along the axis.",                                                        \
    "(argmax [[1 5] [7 2]] :axis 1) ; i64[2] [1 0]")                                                                   \
  X(ArgMin, "argmin", "argmin", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kLoopReduction | kBitExact, reduceType<ReduceOp::ArgMin>, reduceKernel<ReduceOp::ArgMin>, kReduceCall, \
    "Index (i64) of the first smallest element along the axis.",                                                       \
    "(argmin [3 1 2]) ; 1")                                                                                            \
  X(LogSumExp, "logsumexp", "logsumexp", 1, 1, ReduceAttrs, Reduction, AxisSensitive, kFloatOnly, reduceType<ReduceOp::LogSumExp>, reduceKernel<ReduceOp::LogSumExp>, kReduceCall, \
    "log Σ e^x over the axes, computed without overflow.",                                                             \
    "(logsumexp [1000.0 1000.0]) ; 1000.6932")                                                                         \
  X(Var, "var", "var", 1, 1, MomentAttrs, Reduction, AxisSensitive, kFloatOnly, momentType, momentKernel<false>, kMomentCall, \
    "Variance over the axes (all when nil): Σ (x - mean)² / (n - ddof), ddof 0 by default; integers give f32.",   \
    "(var [1 2 3 4]) ; 1.25")                                                                                          \
  X(Std, "std", "std", 1, 1, MomentAttrs, Reduction, AxisSensitive, kFloatOnly, momentType, momentKernel<true>, kMomentCall, \
    "Standard deviation over the axes: the square root of var, with its :axis, :ddof and :keepdims.",               \
    "(std [[1 3] [2 6]] :axis 1) ; f32[2] [1 2]")                                                                      \
  X(Reshape, "reshape", "reshape", 1, 1, ShapeAttrs, Injective, LayoutDemanding, kView | kSameOrder | kBitExact, reshapeType, reshapeKernel, kReshapeCall, \
    "The elements of x in another shape of the same size; one -1 is inferred.",                                        \
    "(reshape [1 2 3 4 5 6] [2 -1]) ; i64[2,3] [[1 2 3] [4 5 6]]")                                                     \
  X(Transpose, "transpose", "transpose", 1, 1, PermAttrs, Injective, AxisSensitive, kView | kBitExact, transposeType, transposeKernel, kTransposeCall, \
    "Axes permuted by perm (reversed when absent); a view.",                                                           \
    "(transpose [[1 2 3] [4 5 6]]) ; i64[3,2] [[1 4] [2 5] [3 6]]")                                                    \
  X(BroadcastTo, "broadcast-to", "broadcast_to", 1, 1, ShapeAttrs, Injective, AxisSensitive, kView | kBitExact, broadcastToType, broadcastToKernel, kBroadcastCall, \
    "x repeated along axes of size 1 (or new leading axes) to shape; a view.",                                         \
    "(broadcast-to [1 2] [2 2]) ; i64[2,2] [[1 2] [1 2]]")                                                             \
  X(ExpandDims, "expand-dims", "expand_dims", 1, 1, AxisAttrs, Injective, AxisSensitive, kView | kSameOrder | kBitExact, expandDimsType, expandDimsKernel, kExpandDimsCall, \
    "x with a new axis of size 1 at axis; a view.",                                                                    \
    "(shape (expand-dims [1 2] 0)) ; [1 2]")                                                                           \
  X(Squeeze, "squeeze", "squeeze", 1, 1, AxesAttrs, Injective, AxisSensitive, kView | kSameOrder | kBitExact, squeezeType, squeezeKernel, kSqueezeCall, \
    "x without its axes of size 1 (those named, or all); a view.",                                                     \
    "(squeeze [[1 2]]) ; i64[2] [1 2]")                                                                                \
  X(Slice, "slice", "slice", 1, 1, SliceAttrs, Injective, AxisSensitive, kView | kBitExact, sliceType, sliceKernel, kSliceCall, \
    "A range per axis, [start stop] or [start stop step] (nil: open); a view.",                                        \
    "(slice [[1 2 3] [4 5 6]] [nil [1 nil]]) ; i64[2,2] [[2 3] [5 6]]")                                                \
  X(Index, "get", "index", 1, 1, IndexAttrs, Injective, AxisSensitive, kView | kBitExact, indexType, indexKernel, kIndexCall, \
    "The element or sub-tensor at the indices (nil selects a whole axis); on maps and vectors get looks up.",          \
    "(get [[1 2] [3 4]] 1 0) ; 3")                                                                                     \
  X(Concat, "concat", "concat", 1, -1, AxisAttrs, Injective, AxisSensitive, kBitExact, concatType, concatKernel, kJoinCall, \
    "Tensors joined along an existing axis.",                                                                          \
    "(concat [(ones [2]) (zeros [1])] :axis 0) ; f32[3] [1 1 0]")                                                                   \
  X(Stack, "stack", "stack", 1, -1, AxisAttrs, Injective, AxisSensitive, kBitExact, stackType, stackKernel, kJoinCall, \
    "Tensors of one shape joined along a new axis.",                                                                   \
    "(stack [[1 2] [3 4]] :axis 1) ; i64[2,2] [[1 3] [2 4]]")                                                          \
  X(Pad, "pad", "pad", 1, 1, PadAttrs, Injective, AxisSensitive, kBitExact, padType, padKernel, kPadCall,              \
    "x surrounded by value on each axis, [before after] per axis (or one pair for all).",                              \
    "(pad [1 2] [1 1] :value 9) ; i64[4] [9 1 2 9]")                                                                   \
  X(Take, "take", "take", 2, 2, AxisAttrs, Injective, AxisSensitive, kBitExact | kMayFail, takeType, takeKernel, kTakeCall,       \
    "The slices of x at integer indices along an axis (negative from the end).",                                       \
    "(take [10 20 30] [2 0]) ; i64[2] [30 10]")                                                                        \
  X(Tril, "tril", "tril", 1, 1, DiagonalAttrs, Opaque, AxisSensitive, kZeroAtZero | kBitExact, triangleType, triangleKernel<true>, kDiagonalCall, \
    "The lower triangle of the last two axes: elements (i, j) with j - i <= k kept, the rest 0; k defaults to 0.", \
    "(tril [[1 2 3] [4 5 6]]) ; i64[2,3] [[1 0 0] [4 5 0]]")                                                           \
  X(Triu, "triu", "triu", 1, 1, DiagonalAttrs, Opaque, AxisSensitive, kZeroAtZero | kBitExact, triangleType, triangleKernel<false>, kDiagonalCall, \
    "The upper triangle of the last two axes: elements (i, j) with j - i >= k kept, the rest 0; k defaults to 0.", \
    "(triu [[1 2 3] [4 5 6]] 1) ; i64[2,3] [[0 2 3] [0 0 6]]")                                                         \
  X(OneHot, "one-hot", "one_hot", 1, 1, CountAttrs, Injective, AxisSensitive, kBitExact | kMayFail, oneHotType, oneHotKernel, kOneHotCall, \
    "Integer labels as rows of n zeros with a one at the label (f32).",                                                \
    "(one-hot [0 2] 3) ; f32[2,3] [[1 0 0] [0 0 1]]")                                                                  \
  X(MatMul, "matmul", "matmul", 2, 2, NoAttrs, Contraction, LayoutDemanding, kLayoutFromData | kReadsViews, matmulType, matmulKernel, kBinaryCall, \
    "Matrix product, batched over leading axes (broadcasting); 1-D operands as in NumPy. Alias @.",                    \
    "(matmul [[1 2] [3 4]] [[1] [1]]) ; i64[2,1] [[3] [7]]")                                                           \
  X(Dot, "dot", "dot", 2, 2, NoAttrs, Contraction, LayoutDemanding, 0, dotType, dotKernel, kBinaryCall,                \
    "Sum of products over a's last axis and b's second-to-last (NumPy's dot).",                                        \
    "(dot [1 2 3] [4 5 6]) ; 32")                                                                                      \
  X(Einsum, "einsum", "einsum", 1, -1, EinsumAttrs, Contraction, LayoutDemanding, 0, einsumType, einsumKernel, kEinsumCall, \
    "Sums of products over the indices the spec contracts.",                                                           \
    "(einsum \"ij,j->i\" [[1 2] [3 4]] [1 1]) ; i64[2] [3 7]")                                                         \
  X(Conv2d, "conv2d", "conv2d", 2, 2, Conv2dAttrs, Contraction, LayoutDemanding, kFloatOnly | kLayoutFromData, conv2dType, conv2dKernel, kConv2dCall, \
    "2-D convolution of NCHW x by OIHW w (cross-correlation, as PyTorch).",                                            \
    "(shape (conv2d (ones [1 3 8 8]) (ones [4 3 3 3]) :padding 1)) ; [1 4 8 8]")                                       \
  X(MaxPool2d, "max-pool2d", "max_pool2d", 1, 1, Pool2dAttrs, Opaque, LayoutDemanding, kFloatOnly | kLayoutFromData, poolType, maxPoolKernel, kPoolCall, \
    "Largest value of each window of NCHW x; stride defaults to the kernel.",                                          \
    "(max-pool2d (reshape (astype (arange 16) :f32) [1 1 4 4]) :kernel 2) ; f32[1,1,2,2] [[[[5 7] [13 15]]]]")         \
  X(AvgPool2d, "avg-pool2d", "avg_pool2d", 1, 1, Pool2dAttrs, Opaque, LayoutDemanding, kFloatOnly | kLayoutFromData, poolType, avgPoolKernel, kPoolCall, \
    "Mean of each window of NCHW x; stride defaults to the kernel.",                                                   \
    "(avg-pool2d (reshape (astype (arange 16) :f32) [1 1 4 4]) :kernel 2) ; f32[1,1,2,2] [[[[2.5 4.5] [10.5 12.5]]]]") \
  X(CumSum, "cumsum", "cumsum", 1, 1, AxisAttrs, Scan, AxisSensitive, kBitExact, cumsumType, cumsumKernel, kAlongAxisCall,          \
    "Prefix sums along an axis (the last by default): element k is the sum of elements 0..k; integers give i64.",   \
    "(cumsum [[1 2 3] [4 5 6]] :axis 1) ; i64[2,3] [[1 3 6] [4 9 15]]")                                              \
  X(CumProd, "cumprod", "cumprod", 1, 1, AxisAttrs, Scan, AxisSensitive, kBitExact, cumprodType, cumprodKernel, kAlongAxisCall,      \
    "Prefix products along an axis (the last by default): element k is the product of elements 0..k; integers give i64.", \
    "(cumprod [[1 2 3] [4 5 6]] :axis 1) ; i64[2,3] [[1 2 6] [4 20 120]]")                                           \
  X(Softmax, "softmax", "softmax", 1, 1, AxisAttrs, Reduction, AxisSensitive, kFloatOnly, softmaxType, softmaxKernel, kAlongAxisCall, \
    "e^x / Σ e^x along an axis (the last by default).",                                                                \
    "(softmax [0.0 0.0]) ; f32[2] [0.5 0.5]")                                                                          \
  X(LogSoftmax, "log-softmax", "log_softmax", 1, 1, AxisAttrs, Reduction, AxisSensitive, kFloatOnly, softmaxType, logSoftmaxKernel, kAlongAxisCall, \
    "x - logsumexp(x) along an axis (the last by default).",                                                           \
    "(log-softmax [0.0 0.0]) ; f32[2] [-0.6931472 -0.6931472]")                                                        \
  X(LayerNorm, "layer-norm", "layer_norm", 1, 1, NormAttrs, Reduction, AxisSensitive, kFloatOnly, layerNormType, layerNormKernel, kLayerNormCall, \
    "(x - mean) / sqrt(var + eps) along an axis; no affine parameters.",                                               \
    "(layer-norm [1.0 3.0] :eps 0.0) ; f32[2] [-1 1]")                                                                 \
  X(CrossEntropy, "cross-entropy", "cross_entropy", 2, 2, NoAttrs, Reduction, AxisSensitive, kFloatOnly | kMayFail, crossEntropyType, crossEntropyKernel, kCrossEntropyCall, \
    "Mean over the batch of -log softmax(logits)[label] (integer labels).",                                            \
    "(cross-entropy [[0.0 0.0]] [1]) ; 0.6931472")                                                                     \
  X(Mse, "mse", "mse", 2, 2, NoAttrs, Reduction, AxisSensitive, 0, mseType, mseKernel, kBinaryCall,                    \
    "Mean of (a - b)², a scalar.",                                                                                     \
    "(mse [1.0 2.0] [1.0 4.0]) ; 2.0")                                                                                 \
  X(Full, "full", "full", 0, 0, FullAttrs, Opaque, Agnostic, kCreation | kBitExact, fullType, fullKernel, kFullCall,   \
    "A tensor of shape filled with value, of value's dtype unless :dtype names one.",                                  \
    "(full [2 2] 7) ; i64[2,2] [[7 7] [7 7]]")                                                                         \
  X(Arange, "arange", "arange", 0, 0, ArangeAttrs, Opaque, Agnostic, kCreation, arangeType, arangeKernel, kArangeCall, \
    "Evenly spaced values in [start, stop): i64 for integers, f32 for floats.",                                        \
    "(arange 1 7 2) ; i64[3] [1 3 5]")                                                                                 \
  X(Linspace, "linspace", "linspace", 0, 0, LinspaceAttrs, Opaque, Agnostic, kCreation, linspaceType, linspaceKernel, kLinspaceCall, \
    "num evenly spaced values from start to stop, both included.",                                                     \
    "(linspace 0 1 5) ; f32[5] [0 0.25 0.5 0.75 1]")                                                                   \
  X(Eye, "eye", "eye", 0, 0, EyeAttrs, Opaque, Agnostic, kCreation | kBitExact, eyeType, eyeKernel, kEyeCall,          \
    "The n×m identity matrix (n×n when m is absent).",                                                                 \
    "(eye 2) ; f32[2,2] [[1 0] [0 1]]")                                                                                \
  X(RngKey, "rng-key", "rng_key", 0, 0, SeedAttrs, Opaque, Agnostic, kCreation, rngKeyType, rngKeyKernel, kRngKeyCall, \
    "A key of the functional random generator: the same key gives the same numbers.",                                  \
    "(rng-key 7) ; i64[2] [7 0]")                                                                                      \
  X(RngSplit, "rng-split", "rng_split", 1, 1, CountAttrs, Opaque, LayoutDemanding, kRandom | kMayFail, rngSplitType, rngSplitKernel, kRngSplitCall, \
    "n independent keys derived from key.",                                                                            \
    "(shape (rng-split (rng-key 0) 3)) ; [3 2]")                                                                       \
  X(RandUniform, "rand", "rand", 1, 1, RandomAttrs, Opaque, LayoutDemanding, kRandom | kFloatOnly | kMayFail, randomType, randUniformKernel, kRandomCall, \
    "Uniform values in [0, 1) from key.",                                                                              \
    "(shape (rand (rng-key 0) [2 3])) ; [2 3]")                                                                        \
  X(RandNormal, "randn", "randn", 1, 1, RandomAttrs, Opaque, LayoutDemanding, kRandom | kFloatOnly | kMayFail, randomType, randNormalKernel, kRandomCall, \
    "Standard normal values from key.",                                                                                \
    "(dtype (randn (rng-key 0) [4] :dtype :f64)) ; :f64")                                                              \
  X(Dropout, "dropout", "dropout", 2, 2, RateAttrs, Opaque, LayoutDemanding, kRandom | kFloatOnly | kMayFail, dropoutType, dropoutKernel, kDropoutCall, \
    "Each element zeroed with probability rate, the rest scaled by 1/(1 - rate).",                                     \
    "(dropout (rng-key 0) [1.0 1.0] 0.0) ; f32[2] [1 1]")                                                              \
  X(RandInt, "randint", "randint", 1, 1, RandIntAttrs, Opaque, LayoutDemanding, kRandom | kMayFail, randIntType, randIntKernel, kRandIntCall, \
    "Uniform integers in [lo, hi) from key (i64).",                                                                    \
    "(shape (randint (rng-key 0) [2 3] 0 10)) ; [2 3]")                                                               \
  X(Categorical, "categorical", "categorical", 2, 2, NoAttrs, Opaque, LayoutDemanding, kRandom | kMayFail, categoricalType, categoricalKernel, kCategoricalCall, \
    "An index (i64) per row of logits over the last axis, drawn with probabilities softmax(logits).",                  \
    "(categorical (rng-key 0) [[0.0 -1e30] [-1e30 0.0]]) ; i64[2] [0 1]")                                              \
  X(Permutation, "permutation", "permutation", 1, 1, CountAttrs, Opaque, LayoutDemanding, kRandom | kMayFail, permutationType, permutationKernel, kPermutationCall, \
    "A random ordering of 0..n-1 (i64), every ordering equally likely.",                                               \
    "(sum (permutation (rng-key 0) 4)) ; 6")                                                                          \
  X(Shuffle, "shuffle", "shuffle", 2, 2, NoAttrs, Opaque, LayoutDemanding, kRandom | kMayFail, shuffleType, shuffleKernel, kShuffleCall, \
    "The rows (axis 0) of x in a random order: (take x (permutation key n)).",                                         \
    "(sum (shuffle (rng-key 0) [1 2 3])) ; 6")                                                                         \
  X(Bernoulli, "bernoulli", "bernoulli", 2, 2, ShapeAttrs, Opaque, LayoutDemanding, kRandom | kMayFail, bernoulliType, bernoulliKernel, kBernoulliCall, \
    "A :bool tensor of shape, each element true with probability p (p broadcast to shape).",                          \
    "(bernoulli (rng-key 0) 1.0 [2]) ; bool[2] [true true]")                                                          \
  X(StopGradient, "stop-gradient", "stop_gradient", 1, 1, NoAttrs, Elementwise, Agnostic, kSameOrder | kZeroAtZero | kBitExact, stopGradientType, stopGradientKernel, kUnaryCall, \
    "x, through which no derivative flows.",                                                                           \
    "((grad (fn [x] (* x (stop-gradient x)))) 3.0) ; 3.0")                                                             \
  X(SliceGrad, "slice-grad", "slice_grad", 1, 1, SliceGradAttrs, Opaque, AxisSensitive, kBitExact, sliceGradType, sliceGradKernel, kInternal, \
    "The cotangent of slice: g placed in zeros of x's shape (derivative programs).",                                   \
    "")                                                                                                                \
  X(TakeGrad, "take-grad", "take_grad", 2, 2, TakeGradAttrs, Opaque, AxisSensitive, kFloatOnly | kMayFail, takeGradType, takeGradKernel, kInternal, \
    "The cotangent of take: g summed into zeros at the indices (derivative programs).",                                \
    "")                                                                                                                \
  X(Conv2dGradInput, "conv2d-grad-input", "conv2d_grad_input", 2, 2, Conv2dGradAttrs, Contraction, LayoutDemanding, kFloatOnly, conv2dGradInputType, conv2dGradInputKernel, kInternal, \
    "The cotangent of conv2d's input (derivative programs).",                                                          \
    "")                                                                                                                \
  X(Conv2dGradWeight, "conv2d-grad-weight", "conv2d_grad_weight", 2, 2, Conv2dGradAttrs, Contraction, LayoutDemanding, kFloatOnly, conv2dGradWeightType, conv2dGradWeightKernel, kInternal, \
    "The cotangent of conv2d's weights (derivative programs).",                                                        \
    "")                                                                                                                \
  X(MaxPool2dGrad, "max-pool2d-grad", "max_pool2d_grad", 2, 2, Pool2dAttrs, Opaque, LayoutDemanding, kFloatOnly, maxPoolGradType, maxPoolGradKernel, kInternal, \
    "The cotangent of max-pool2d: g to each window's largest element (derivative programs).",                          \
    "")                                                                                                                \
  X(AvgPool2dGrad, "avg-pool2d-grad", "avg_pool2d_grad", 1, 1, Pool2dGradAttrs, Opaque, LayoutDemanding, kFloatOnly, avgPoolGradType, avgPoolGradKernel, kInternal, \
    "The cotangent of avg-pool2d: g spread evenly over each window (derivative programs).",                            \
    "")                                                                                                                \
  X(LinearScan, "linear-scan", "linear_scan", 2, 2, ScanAttrs, Scan, AxisSensitive, kFloatOnly, linearScanType, linearScanKernel, kInternal, \
    "h_k = a_k·h_(k-1) + b_k along an axis from h_(-1) = 0; reversed, h_k = a_(k+1)·h_(k+1) + b_k (derivatives of scans).", \
    "")                                                                                                                \
  X(Transdata, "to-layout", "transdata", 1, 1, LayoutAttrs, Opaque, Converting, kBitExact, layoutType, layoutKernel, kLayoutCall, \
    "The same logical tensor stored in another physical layout (:nhwc :nc1hwc0 :fractal-z :fractal-nz ...); in the IR a transdata.", \
    "(layout (to-layout (ones [1 2 2 2]) :nhwc)) ; :nhwc")

/// Other names that call rows, with their own call forms:
///   X("name", Enumerator, callForm, "doc", "example")
#define TSL_ALIASES(X)                                                                                                       \
  X("@", MatMul, kBinaryCall, "Matrix product: matmul.", "(@ [[1 2]] [[3] [4]]) ; i64[1,1] [[11]]")                          \
  X("flatten", Reshape, kFlattenCall, "The elements as one axis, in row-major order.", "(flatten [[1 2] [3 4]]) ; i64[4] [1 2 3 4]") \
  X("zeros", Full, kZerosCall, "A tensor of zeros (f32 unless :dtype names another).", "(zeros [2]) ; f32[2] [0 0]")         \
  X("ones", Full, kOnesCall, "A tensor of ones (f32 unless :dtype names another).", "(ones [2] :dtype :i32) ; i32[2] [1 1]") \
  X("zeros-like", Full, kZerosLikeCall, "Zeros of x's shape and dtype (or :dtype).", "(zeros-like [1 2]) ; i64[2] [0 0]")    \
  X("ones-like", Full, kOnesLikeCall, "Ones of x's shape and dtype (or :dtype).", "(ones-like [1.5 2.5]) ; f32[2] [1 1]")

enum class OpKind : uint16_t {
#define TSL_KIND(name, ...) name,
  TSL_BINARY_OPS(TSL_KIND) TSL_UNARY_OPS(TSL_KIND) TSL_OTHER_OPS(TSL_KIND) TSL_LINALG_OPS(TSL_KIND) TSL_ORDER_OPS(TSL_KIND)
      TSL_COLLECTIVE_OPS(TSL_KIND)
      TSL_ATTENTION_OPS(TSL_KIND)
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
struct DiagonalAttrs { ///< tril, triu: the diagonal k (0 the main one, k > 0 above it, k < 0 below)
  int64_t k = 0;
  bool operator==(const DiagonalAttrs&) const = default;
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
struct RandIntAttrs { ///< randint: shape and the range [lo, hi)
  std::vector<int64_t> shape;
  int64_t lo = 0, hi = 0;
  bool operator==(const RandIntAttrs&) const = default;
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
struct PartAttrs { ///< slogdet, qr, svd, eigh: which result of the decomposition (runtime/LinalgRows.h)
  int64_t part = 0;
  bool operator==(const PartAttrs&) const = default;
};
struct TopKAttrs { ///< top-k: how many, and which result (0 the values, 1 their indices)
  int64_t k = 0;
  int64_t part = 0;
  bool operator==(const TopKAttrs&) const = default;
};
struct ScanAttrs { ///< linear-scan: the axis, and whether it runs from the end
  int64_t axis = -1;
  bool reverse = false;
  bool operator==(const ScanAttrs&) const = default;
};
struct AttentionAttrs { ///< attention and its derivatives: the causal triangle, and which result
  bool causal = false;
  int64_t part = 0;
  bool operator==(const AttentionAttrs&) const = default;
};
struct LayoutAttrs { ///< transdata: to-layout, whether the user wrote it or the compiler placed it
  Layout layout = Layout::RowMajor;
  bool operator==(const LayoutAttrs&) const = default;
};

using OpAttrs = std::variant<NoAttrs, AxisAttrs, ShapeAttrs, PermAttrs, AxesAttrs, SliceAttrs, IndexAttrs,
                             PadAttrs, CountAttrs, CastAttrs, FullAttrs, ArangeAttrs, LinspaceAttrs, EyeAttrs,
                             RandomAttrs, SeedAttrs, RateAttrs, NormAttrs, EinsumAttrs, ReduceAttrs, MomentAttrs, DiagonalAttrs, Conv2dAttrs,
                             Pool2dAttrs, SliceGradAttrs, TakeGradAttrs, Conv2dGradAttrs, Pool2dGradAttrs,
                             LayoutAttrs, RandIntAttrs, PartAttrs, TopKAttrs, ScanAttrs, CollectiveAttrs, AttentionAttrs>;

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
  /// How TSL calls it (runtime/CallForms.h); kInternal for the compiler's own operations.
  const CallForm* call;
  const char* doc;     ///< what it computes, a sentence or two
  const char* example; ///< a call and, after "; ", what it prints ("" for internal ones)

  bool has(OpTrait trait) const { return (traits & trait) != 0; }
  /// The attribute struct it takes, at its defaults.
  OpAttrs defaultAttrs() const;
};

/// Whether TSL programs call the operation (compiled programs alone use an internal one).
bool callable(const OpInfo& op);

/// A name TSL calls an operation by: a row's own name, or an alias (TSL_ALIASES).
struct CallName {
  const char* name;
  OpKind kind;
  const CallForm* form;
  const char* doc;
  const char* example;
};
/// Every such name: each callable row's, then the aliases.
std::span<const CallName> callNames();

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
/// Runs an operation straight into `out` (contiguous, row-major, of the type the rule
/// gives), for the rows whose kernel can write into a caller's buffer — the collectives,
/// whose large results compiled code would otherwise copy once more. False (nothing
/// done) for any other row or case: call runOp.
bool runOpInto(OpKind kind, const OpAttrs& attrs, std::span<const Tensor> inputs, Tensor& out);

} // namespace tsl
