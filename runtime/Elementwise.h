// runtime/Elementwise.h — elementwise operations: their type rules and eager kernels.
//
// Each operation is one functor in ElementwiseFunctors.h, written once over the element
// type; the same functor computes a scalar (rank-0, inline, no allocation) and the loop of
// a tensor kernel. Operands are promoted (§3) and broadcast (NumPy's rules) here.
#pragma once

#include "runtime/Tensor.h"

namespace tsl {

#define TSL_BINARY_OPS(X)                                                                          \
  X(Add, "+")                                                                                      \
  X(Sub, "-")                                                                                      \
  X(Mul, "*")                                                                                      \
  X(Div, "/")                                                                                      \
  X(FloorDiv, "floordiv")                                                                          \
  X(Mod, "mod")                                                                                    \
  X(Pow, "pow")                                                                                    \
  X(Maximum, "maximum")                                                                            \
  X(Minimum, "minimum")                                                                            \
  X(Less, "<")                                                                                     \
  X(LessEqual, "<=")                                                                               \
  X(Greater, ">")                                                                                  \
  X(GreaterEqual, ">=")                                                                            \
  X(Equal, "==")                                                                                   \
  X(NotEqual, "!=")                                                                                \
  X(LogicalAnd, "logical-and")                                                                     \
  X(LogicalOr, "logical-or")

#define TSL_UNARY_OPS(X)                                                                           \
  X(Neg, "neg")                                                                                    \
  X(Abs, "abs")                                                                                    \
  X(Sign, "sign")                                                                                  \
  X(Exp, "exp")                                                                                    \
  X(Log, "log")                                                                                    \
  X(Log1p, "log1p")                                                                                \
  X(Sqrt, "sqrt")                                                                                  \
  X(Rsqrt, "rsqrt")                                                                                \
  X(Square, "square")                                                                              \
  X(Sin, "sin")                                                                                    \
  X(Cos, "cos")                                                                                    \
  X(Tanh, "tanh")                                                                                  \
  X(Sigmoid, "sigmoid")                                                                            \
  X(Relu, "relu")                                                                                  \
  X(Gelu, "gelu")                                                                                  \
  X(GeluTanh, "gelu-tanh")                                                                         \
  X(LogicalNot, "logical-not")

enum class BinaryOp : uint8_t {
#define TSL_ENUM(name, text) name,
  TSL_BINARY_OPS(TSL_ENUM)
#undef TSL_ENUM
};

enum class UnaryOp : uint8_t {
#define TSL_ENUM(name, text) name,
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

} // namespace tsl
