// runtime/Elementwise.h — elementwise operations: their type rules and eager kernels.
//
// Each operation is one functor in ElementwiseFunctors.h, written once over the element
// type; the same functor computes a scalar (rank-0, inline, no allocation) and the loop of
// a tensor kernel. Operands are promoted (§3) and broadcast (NumPy's rules) here.
#pragma once

#include "runtime/OpTraits.h"
#include "runtime/Tensor.h"

namespace tsl {

/// Each operation: its enumerator, its TSL name, its IR mnemonic, its flags
/// (runtime/OpTraits.h). Every elementwise operation takes no attributes, fuses as
/// Elementwise and is layout Agnostic (runtime/Ops.h completes its row).
#define TSL_BINARY_OPS(X)                                                                          \
  X(Add, "+", "add", kCommutative | kZeroAtZero | kBitExact)                                       \
  X(Sub, "-", "sub", kZeroAtZero | kBitExact)                                                      \
  X(Mul, "*", "mul", kCommutative | kZeroAtZero | kBitExact)                                       \
  X(Div, "/", "div", kFloatOnly | kBitExact)                                                       \
  X(FloorDiv, "floordiv", "floordiv", kBitExact)                                                   \
  X(Mod, "mod", "mod", kBitExact)                                                                  \
  X(Pow, "pow", "pow", kFiniteAtZero)                                                              \
  X(Maximum, "maximum", "maximum", kCommutative | kZeroAtZero | kBitExact)                         \
  X(Minimum, "minimum", "minimum", kCommutative | kZeroAtZero | kBitExact)                         \
  X(Less, "<", "less", kBoolResult | kZeroAtZero | kBitExact)                                      \
  X(LessEqual, "<=", "less_equal", kBoolResult | kFiniteAtZero | kBitExact)                        \
  X(Greater, ">", "greater", kBoolResult | kZeroAtZero | kBitExact)                                \
  X(GreaterEqual, ">=", "greater_equal", kBoolResult | kFiniteAtZero | kBitExact)                  \
  X(Equal, "==", "equal", kCommutative | kBoolResult | kFiniteAtZero | kBitExact)                  \
  X(NotEqual, "!=", "not_equal", kCommutative | kBoolResult | kZeroAtZero | kBitExact)             \
  X(LogicalAnd, "logical-and", "logical_and", kCommutative | kBoolResult | kZeroAtZero | kBitExact) \
  X(LogicalOr, "logical-or", "logical_or", kCommutative | kBoolResult | kZeroAtZero | kBitExact)

#define TSL_UNARY_OPS(X)                                                                           \
  X(Neg, "neg", "neg", kZeroAtZero | kBitExact)                                                    \
  X(Abs, "abs", "abs", kZeroAtZero | kBitExact)                                                    \
  X(Sign, "sign", "sign", kZeroAtZero | kBitExact)                                                 \
  X(Exp, "exp", "exp", kFloatOnly | kFiniteAtZero)                                                 \
  X(Log, "log", "log", kFloatOnly)                                                                 \
  X(Log1p, "log1p", "log1p", kFloatOnly | kZeroAtZero)                                             \
  X(Sqrt, "sqrt", "sqrt", kFloatOnly | kZeroAtZero | kBitExact)                                    \
  X(Rsqrt, "rsqrt", "rsqrt", kFloatOnly | kBitExact)                                               \
  X(Square, "square", "square", kZeroAtZero | kBitExact)                                           \
  X(Sin, "sin", "sin", kFloatOnly | kZeroAtZero)                                                   \
  X(Cos, "cos", "cos", kFloatOnly | kFiniteAtZero)                                                 \
  X(Tanh, "tanh", "tanh", kFloatOnly | kZeroAtZero)                                                \
  X(Sigmoid, "sigmoid", "sigmoid", kFloatOnly | kFiniteAtZero)                                     \
  X(Relu, "relu", "relu", kZeroAtZero | kBitExact)                                                 \
  X(Gelu, "gelu", "gelu", kFloatOnly | kZeroAtZero)                                                \
  X(GeluTanh, "gelu-tanh", "gelu_tanh", kFloatOnly | kZeroAtZero)                                  \
  X(LogicalNot, "logical-not", "logical_not", kBoolResult | kFiniteAtZero | kBitExact)

enum class BinaryOp : uint8_t {
#define TSL_ENUM(name, text, mnemonic, flags) name,
  TSL_BINARY_OPS(TSL_ENUM)
#undef TSL_ENUM
};

enum class UnaryOp : uint8_t {
#define TSL_ENUM(name, text, mnemonic, flags) name,
  TSL_UNARY_OPS(TSL_ENUM)
#undef TSL_ENUM
};

/// The TSL name of an operation ("+", "logical-and"), used in messages.
const char* opName(BinaryOp op);
const char* opName(UnaryOp op);

/// Type rules. Arithmetic promotes (bool operands count as i64); `/` of integers and the
/// transcendental functions give floats; comparisons and logical operations give bool.
TypeKey resultType(BinaryOp op, TypeKey a, TypeKey b);
TypeKey resultType(UnaryOp op, TypeKey a);

/// The dtype operands are converted to before an operation computes: the promoted type
/// for predicates (and the operand's own for logical-not), the result type otherwise.
/// Half types then compute in float. Compiled code follows the same rule.
TypeKey operandType(BinaryOp op, TypeKey a, TypeKey b);
TypeKey operandType(UnaryOp op, TypeKey a);

/// NumPy broadcasting of two shapes; a shape error naming `opName` if they do not fit.
Shape broadcastShapes(const Shape& a, const Shape& b, const char* opName);

/// Runs an operation eagerly. Two rank-0 operands are computed inline without allocating.
Tensor applyBinary(BinaryOp op, const Tensor& a, const Tensor& b);

Tensor applyUnary(UnaryOp op, const Tensor& a);

/// Converts to `dtype` (a copy unless the dtype already matches and the result is strong).
Tensor astype(const Tensor& x, DType dtype);

/// (where cond a b): a where cond is true, else b, broadcasting all three; cond of any
/// dtype counts nonzero as true. The result has a and b's promoted type.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);
/// (clip x lo hi): x limited to [lo, hi] elementwise (NaN propagates), broadcasting;
/// the promoted type of the three (weak bounds keep x's dtype).
Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi);
/// The broadcast shape of three operands.
Shape broadcastShapes(const Shape& a, const Shape& b, const Shape& c, const char* opName);

} // namespace tsl
