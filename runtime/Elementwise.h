// runtime/Elementwise.h — elementwise operations: their type rules and eager kernels.
//
// Each operation is one functor in ElementwiseFunctors.h, written once over the element
// type; the same functor computes a scalar (rank-0, inline, no allocation) and the loop of
// a tensor kernel. Operands are promoted (§3) and broadcast (NumPy's rules) here.
#pragma once

#include "runtime/OpTraits.h"
#include "runtime/Tensor.h"

namespace tsl {

/// Each operation's row: its enumerator, its TSL name, its IR mnemonic, its flags
/// (runtime/OpTraits.h), its call form (runtime/CallForms.h), what it computes and an
/// example (its printed result after "; ", checked by a test). Every elementwise operation
/// takes no attributes, fuses as Elementwise and is layout Agnostic (runtime/Ops.h
/// completes its row); its arithmetic is one functor of ElementwiseFunctors.h.
#define TSL_BINARY_OPS(X)                                                                                                   \
  X(Add, "+", "add", kCommutative | kZeroAtZero | kBitExact, kAddCall,                                                      \
    "Sum, elementwise, broadcasting; variadic; leaf by leaf between two trees of one structure.",                           \
    "(+ [1 2] 10) ; i64[2] [11 12]")                                                                                        \
  X(Sub, "-", "sub", kZeroAtZero | kBitExact, kSubCall, "Difference, elementwise, broadcasting; (- a) negates.",             \
    "(- [5 7] [1 2]) ; i64[2] [4 5]")                                                                                       \
  X(Mul, "*", "mul", kCommutative | kZeroAtZero | kBitExact, kMulCall, "Product, elementwise, broadcasting; variadic.",      \
    "(* [1 2] [3 4]) ; i64[2] [3 8]")                                                                                       \
  X(Div, "/", "div", kFloatOnly | kBitExact, kDivCall,                                                                      \
    "Quotient, elementwise, broadcasting; integers are promoted to floats; (/ a) inverts.", "(/ [1 2] 4) ; f32[2] [0.25 0.5]") \
  X(FloorDiv, "floordiv", "floordiv", kBitExact, kBinaryCall,                                                               \
    "Quotient rounded toward -inf; integer division by zero gives 0.", "(floordiv [7 -7] 2) ; i64[2] [3 -4]")              \
  X(Mod, "mod", "mod", kBitExact, kBinaryCall, "Remainder with the sign of b (a - b·floordiv(a, b)); by zero gives 0.",      \
    "(mod [7 -7] 3) ; i64[2] [1 2]")                                                                                        \
  X(Pow, "pow", "pow", kFiniteAtZero, kBinaryCall, "a raised to the power b, elementwise.", "(pow [2.0 3.0] 2) ; f32[2] [4 9]") \
  X(Atan2, "atan2", "atan2", kFloatOnly, kBinaryCall,                                                       \
    "The angle in (-π, π] of the point (b, a): (atan2 y x), as C's atan2, elementwise (floats).", "(atan2 [1.0 0.0] [0.0 -1.0]) ; f32[2] [1.5707964 3.1415927]") \
  X(Maximum, "maximum", "maximum", kCommutative | kZeroAtZero | kBitExact, kBinaryCall,                                     \
    "The larger of a and b, elementwise (NaN propagates).", "(maximum [1 5] [3 2]) ; i64[2] [3 5]")                         \
  X(Minimum, "minimum", "minimum", kCommutative | kZeroAtZero | kBitExact, kBinaryCall,                                     \
    "The smaller of a and b, elementwise (NaN propagates).", "(minimum [1 5] [3 2]) ; i64[2] [1 2]")                        \
  X(Less, "<", "less", kBoolResult | kZeroAtZero | kBitExact, kChainCall,                                                   \
    "a < b elementwise: a :bool tensor; more operands compare scalars pairwise.", "(< [1 2 3] 2) ; bool[3] [true false false]") \
  X(LessEqual, "<=", "less_equal", kBoolResult | kFiniteAtZero | kBitExact, kChainCall,                                     \
    "a <= b elementwise: a :bool tensor; more operands compare scalars pairwise.", "(<= 1 2 2) ; true")                     \
  X(Greater, ">", "greater", kBoolResult | kZeroAtZero | kBitExact, kChainCall,                                             \
    "a > b elementwise: a :bool tensor; more operands compare scalars pairwise.", "(> [1 2 3] 2) ; bool[3] [false false true]") \
  X(GreaterEqual, ">=", "greater_equal", kBoolResult | kFiniteAtZero | kBitExact, kChainCall,                               \
    "a >= b elementwise: a :bool tensor; more operands compare scalars pairwise.", "(>= 3 2 2) ; true")                     \
  X(Equal, "==", "equal", kCommutative | kBoolResult | kFiniteAtZero | kBitExact, kBinaryCall,                              \
    "Elementwise equality: a :bool tensor (= compares whole values).", "(== [1 2] [1 3]) ; bool[2] [true false]")           \
  X(NotEqual, "!=", "not_equal", kCommutative | kBoolResult | kZeroAtZero | kBitExact, kBinaryCall,                         \
    "Elementwise inequality: a :bool tensor.", "(!= [1 2] [1 3]) ; bool[2] [false true]")                                   \
  X(LogicalAnd, "logical-and", "logical_and", kCommutative | kBoolResult | kZeroAtZero | kBitExact, kBinaryCall,            \
    "Elementwise and of truth values: a :bool tensor.", "(logical-and (> [1 0] 0) true) ; bool[2] [true false]")            \
  X(LogicalOr, "logical-or", "logical_or", kCommutative | kBoolResult | kZeroAtZero | kBitExact, kBinaryCall,               \
    "Elementwise or of truth values: a :bool tensor.", "(logical-or (> [1 0] 0) false) ; bool[2] [true false]")

#define TSL_UNARY_OPS(X)                                                                                                    \
  X(Neg, "neg", "neg", kZeroAtZero | kBitExact, kUnaryCall, "-x, elementwise.", "(neg [1 -2]) ; i64[2] [-1 2]")             \
  X(Abs, "abs", "abs", kZeroAtZero | kBitExact, kUnaryCall, "|x|, elementwise.", "(abs [-1.5 2.0]) ; f32[2] [1.5 2]")       \
  X(Sign, "sign", "sign", kZeroAtZero | kBitExact, kUnaryCall, "-1, 0 or 1 by the sign of x, elementwise.",                \
    "(sign [-3 0 5]) ; i64[3] [-1 0 1]")                                                                                    \
  X(Exp, "exp", "exp", kFloatOnly | kFiniteAtZero, kUnaryCall, "e^x, elementwise (floats).", "(exp [0.0 1.0]) ; f32[2] [1 2.7182817]") \
  X(Log, "log", "log", kFloatOnly, kUnaryCall, "Natural logarithm, elementwise (floats).", "(log [1.0 4.0]) ; f32[2] [0 1.3862944]") \
  X(Expm1, "expm1", "expm1", kFloatOnly | kZeroAtZero, kUnaryCall, "e^x - 1, accurate near 0 (floats).",                  \
    "(expm1 [0.0 1e-10]) ; f32[2] [0 1e-10]")                                                                               \
  X(Log1p, "log1p", "log1p", kFloatOnly | kZeroAtZero, kUnaryCall, "log(1 + x), accurate near 0 (floats).",                \
    "(log1p [0.0 1e-10]) ; f32[2] [0 1e-10]")                                                                               \
  X(Sqrt, "sqrt", "sqrt", kFloatOnly | kZeroAtZero | kBitExact, kUnaryCall, "Square root, correctly rounded (floats).",      \
    "(sqrt [4.0 2.0]) ; f32[2] [2 1.4142135]")                                                                              \
  X(Rsqrt, "rsqrt", "rsqrt", kFloatOnly | kBitExact, kUnaryCall, "1 / sqrt(x), elementwise (floats).", "(rsqrt [4.0 16.0]) ; f32[2] [0.5 0.25]") \
  X(Square, "square", "square", kZeroAtZero | kBitExact, kUnaryCall, "x·x, elementwise.", "(square [2 -3]) ; i64[2] [4 9]")  \
  X(Floor, "floor", "floor", kZeroAtZero | kBitExact, kUnaryCall,                                                       \
    "The largest integer not above x, elementwise; integers are unchanged.", "(floor [-1.5 2.5]) ; f32[2] [-2 2]")           \
  X(Ceil, "ceil", "ceil", kZeroAtZero | kBitExact, kUnaryCall,                                                          \
    "The smallest integer not below x, elementwise; integers are unchanged.", "(ceil [-1.5 2.5]) ; f32[2] [-1 3]")         \
  X(Round, "round", "round", kZeroAtZero | kBitExact, kUnaryCall,                                                       \
    "The nearest integer, ties to even (as NumPy), elementwise; integers are unchanged.",                                 \
    "(round [0.5 1.5 2.5 -0.5]) ; f32[4] [0 2 2 -0]")                                                                        \
  X(Trunc, "trunc", "trunc", kZeroAtZero | kBitExact, kUnaryCall,                                                       \
    "x rounded toward zero, elementwise; integers are unchanged.", "(trunc [-1.5 2.5]) ; f32[2] [-1 2]")                  \
  X(IsNan, "isnan", "isnan", kBoolResult | kZeroAtZero | kBitExact, kUnaryCall,                                          \
    "Whether x is NaN, elementwise: a :bool tensor (false for integers).", "(isnan (stack [1.0 (/ 0.0 0.0)])) ; bool[2] [false true]") \
  X(IsInf, "isinf", "isinf", kBoolResult | kZeroAtZero | kBitExact, kUnaryCall,                                          \
    "Whether x is +inf or -inf, elementwise: a :bool tensor (false for integers).",                                       \
    "(isinf (stack [1.0 (/ -1.0 0.0)])) ; bool[2] [false true]")                                                               \
  X(IsFinite, "isfinite", "isfinite", kBoolResult | kFiniteAtZero | kBitExact, kUnaryCall,                              \
    "Whether x is neither infinite nor NaN, elementwise: a :bool tensor (true for integers).",                           \
    "(isfinite (stack [1.0 (/ 1.0 0.0)])) ; bool[2] [true false]")                                                             \
  X(Sin, "sin", "sin", kFloatOnly | kZeroAtZero, kUnaryCall, "Sine, elementwise (floats).", "(sin [0.0]) ; f32[1] [0]")     \
  X(Cos, "cos", "cos", kFloatOnly | kFiniteAtZero, kUnaryCall, "Cosine, elementwise (floats).", "(cos [0.0]) ; f32[1] [1]")  \
  X(Tanh, "tanh", "tanh", kFloatOnly | kZeroAtZero, kUnaryCall, "Hyperbolic tangent, elementwise (floats).",               \
    "(tanh [0.0 100.0]) ; f32[2] [0 1]")                                                                                    \
  X(Erf, "erf", "erf", kFloatOnly | kZeroAtZero, kUnaryCall, "The error function 2/√π ∫₀ˣ e^-t² dt, elementwise (floats).", \
    "(erf [0.0 10.0]) ; f32[2] [0 1]")                                                                                      \
  X(Sigmoid, "sigmoid", "sigmoid", kFloatOnly | kFiniteAtZero, kUnaryCall, "1 / (1 + e^-x), elementwise (floats).",         \
    "(sigmoid [0.0]) ; f32[1] [0.5]")                                                                                       \
  X(Relu, "relu", "relu", kZeroAtZero | kBitExact, kUnaryCall, "max(x, 0), elementwise (NaN propagates); its derivative at 0 is 0.",         \
    "(relu [-1.0 2.0]) ; f32[2] [0 2]")                                                                                     \
  X(Gelu, "gelu", "gelu", kFloatOnly | kZeroAtZero, kGeluCall,                                                              \
    "x·Φ(x) with the exact normal CDF (erf), or its tanh approximation with :approximate :tanh.", "(gelu [0.0 10.0]) ; f32[2] [0 10]") \
  X(GeluTanh, "gelu-tanh", "gelu_tanh", kFloatOnly | kZeroAtZero, kInternal,                                                \
    "GELU by its tanh approximation: what (gelu x :approximate :tanh) computes.", "")                                      \
  X(LogicalNot, "logical-not", "logical_not", kBoolResult | kFiniteAtZero | kBitExact, kUnaryCall,                          \
    "Elementwise negation of truth values: a :bool tensor.", "(logical-not (> [1 0] 0)) ; bool[2] [false true]")

enum class BinaryOp : uint8_t {
#define TSL_ENUM(name, ...) name,
  TSL_BINARY_OPS(TSL_ENUM)
#undef TSL_ENUM
};

enum class UnaryOp : uint8_t {
#define TSL_ENUM(name, ...) name,
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
