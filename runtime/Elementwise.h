// runtime/Elementwise.h — elementwise operations: their type rules and eager kernels.
//
// Each operation is one functor in ElementwiseFunctors.h, written once over the element
// type; the same functor computes a scalar (rank-0, inline, no allocation) and the loop of
// a tensor kernel. Operands are promoted (§3) and broadcast (NumPy's rules) here.
#pragma once

#include "runtime/Tensor.h"

namespace tsl {

/// Each operation: its enumerator, its TSL name, its IR mnemonic.
#define TSL_BINARY_OPS(X)                                                                          \
  X(Add, "+", "add")                                                                               \
  X(Sub, "-", "sub")                                                                               \
  X(Mul, "*", "mul")                                                                               \
  X(Div, "/", "div")                                                                               \
  X(FloorDiv, "floordiv", "floordiv")                                                              \
  X(Mod, "mod", "mod")                                                                             \
  X(Pow, "pow", "pow")                                                                             \
  X(Maximum, "maximum", "maximum")                                                                 \
  X(Minimum, "minimum", "minimum")                                                                 \
  X(Less, "<", "less")                                                                             \
  X(LessEqual, "<=", "less_equal")                                                                 \
  X(Greater, ">", "greater")                                                                       \
  X(GreaterEqual, ">=", "greater_equal")                                                           \
  X(Equal, "==", "equal")                                                                          \
  X(NotEqual, "!=", "not_equal")                                                                   \
  X(LogicalAnd, "logical-and", "logical_and")                                                      \
  X(LogicalOr, "logical-or", "logical_or")

#define TSL_UNARY_OPS(X)                                                                           \
  X(Neg, "neg", "neg")                                                                             \
  X(Abs, "abs", "abs")                                                                             \
  X(Sign, "sign", "sign")                                                                          \
  X(Exp, "exp", "exp")                                                                             \
  X(Log, "log", "log")                                                                             \
  X(Log1p, "log1p", "log1p")                                                                       \
  X(Sqrt, "sqrt", "sqrt")                                                                          \
  X(Rsqrt, "rsqrt", "rsqrt")                                                                       \
  X(Square, "square", "square")                                                                    \
  X(Sin, "sin", "sin")                                                                             \
  X(Cos, "cos", "cos")                                                                             \
  X(Tanh, "tanh", "tanh")                                                                          \
  X(Sigmoid, "sigmoid", "sigmoid")                                                                 \
  X(Relu, "relu", "relu")                                                                          \
  X(Gelu, "gelu", "gelu")                                                                          \
  X(GeluTanh, "gelu-tanh", "gelu_tanh")                                                            \
  X(LogicalNot, "logical-not", "logical_not")

enum class BinaryOp : uint8_t {
#define TSL_ENUM(name, text, mnemonic) name,
  TSL_BINARY_OPS(TSL_ENUM)
#undef TSL_ENUM
};

enum class UnaryOp : uint8_t {
#define TSL_ENUM(name, text, mnemonic) name,
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
