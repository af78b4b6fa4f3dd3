// runtime/Elementwise.cpp — type rules, broadcasting and kernels of elementwise operations.
//
// Every operation runs in three steps: the type rule picks the storage dtype S of the
// operands and the result dtype R; operands of another dtype are converted to S; then one
// loop template, instantiated per S, applies the operation's functor. Half types compute
// in float and round once on store.
#include "runtime/Elementwise.h"
#include "runtime/Ops.h"

#include "runtime/ElementwiseFunctors.h"
#include "runtime/ScalarFastPath.h"
#include "runtime/Loops.h"

#include <optional>

namespace tsl {

namespace {

const char* const kBinaryNames[] = {
#define TSL_NAME(name, text, mnemonic, ...) text,
    TSL_BINARY_OPS(TSL_NAME)
#undef TSL_NAME
};
const char* const kUnaryNames[] = {
#define TSL_NAME(name, text, mnemonic, ...) text,
    TSL_UNARY_OPS(TSL_NAME)
#undef TSL_NAME
};

/// Each operation's flags, from its row (runtime/Elementwise.h).
constexpr uint32_t kBinaryFlags[] = {
#define TSL_FLAGS(name, text, mnemonic, flags, ...) flags,
    TSL_BINARY_OPS(TSL_FLAGS)
#undef TSL_FLAGS
};
constexpr uint32_t kUnaryFlags[] = {
#define TSL_FLAGS(name, text, mnemonic, flags, ...) flags,
    TSL_UNARY_OPS(TSL_FLAGS)
#undef TSL_FLAGS
};

bool isPredicate(BinaryOp op) { return (kBinaryFlags[static_cast<int>(op)] & kBoolResult) != 0; }
bool isFloatFunction(UnaryOp op) { return (kUnaryFlags[static_cast<int>(op)] & kFloatOnly) != 0; }

} // namespace

TypeKey operandType(BinaryOp op, TypeKey a, TypeKey b) {
  const TypeKey promoted = promoteTypes(a, b);
  if (isPredicate(op)) return promoted;
  return resultType(op, a, b);
}

TypeKey operandType(UnaryOp op, TypeKey a) {
  if ((kUnaryFlags[static_cast<int>(op)] & kBoolResult) != 0) return a;
  return resultType(op, a);
}

namespace {

/// Compute type for elements stored as S: half types compute in float.
template <typename S>
using ComputeOf = std::conditional_t<std::is_same_v<S, f16> || std::is_same_v<S, bf16>, float, S>;

/// Calls fn(functor) for the functor of `op`.
template <typename Fn>
decltype(auto) withFunctor(BinaryOp op, Fn&& fn) {
  switch (op) {
#define TSL_CASE(name, text, mnemonic, ...)                                                                       \
  case BinaryOp::name: return fn(detail::name##Fn{});
    TSL_BINARY_OPS(TSL_CASE)
#undef TSL_CASE
  }
  fail(ErrorKind::Internal, "bad binary op");
}

template <typename Fn>
decltype(auto) withFunctor(UnaryOp op, Fn&& fn) {
  switch (op) {
#define TSL_CASE(name, text, mnemonic, ...)                                                                       \
  case UnaryOp::name: return fn(detail::name##Fn{});
    TSL_UNARY_OPS(TSL_CASE)
#undef TSL_CASE
  }
  fail(ErrorKind::Internal, "bad unary op");
}

/// The element type a functor stores: bool for predicates, else the operand type S.
template <typename F, typename S>
using ResultOf = std::conditional_t<
    std::is_same_v<decltype(std::declval<F>()(std::declval<ComputeOf<S>>())), bool> ||
        std::is_same_v<S, bool>,
    bool, S>;

template <typename F, typename S>
using BinaryResultOf = std::conditional_t<
    std::is_same_v<decltype(std::declval<F>()(std::declval<ComputeOf<S>>(),
                                              std::declval<ComputeOf<S>>())),
                   bool>,
    bool, S>;

template <typename T>
T loadScalar(const Tensor& t) {
  const T value = loadElement<T>(t.data());
  return value;
}

/// A rank-0 result of dtype `type`, weak when the type says so.
template <typename V>
Tensor makeScalar(TypeKey type, V value) {
  if (type.weak) {
    if constexpr (std::is_floating_point_v<V>) return Tensor::weakFloat(static_cast<double>(value));
    else return Tensor::weakInt(static_cast<int64_t>(value));
  }
  return dispatchDType(type.dtype, [&](auto tag) {
    using R = decltype(tag);
    const R converted = convertElement<R>(value);
    return Tensor::scalarFromBytes(type.dtype, &converted);
  });
}

/// Converts an operand to storage dtype `dtype` (scalars inline, tensors by a copy). The
/// result is strong: a weak scalar already of that dtype is strengthened too, so a kernel
/// that returns an operand as it is (where of scalars) never hands back a weak number
/// where the promotion made the result strong.
Tensor toOperand(const Tensor& t, DType dtype) {
  if (t.dtype() == dtype && !t.weak()) return t;
  return t.isScalar() ? t.castScalar(dtype) : astype(t, dtype);
}

} // namespace

const char* opName(BinaryOp op) { return kBinaryNames[static_cast<int>(op)]; }
const char* opName(UnaryOp op) { return kUnaryNames[static_cast<int>(op)]; }

TypeKey resultType(BinaryOp op, TypeKey a, TypeKey b) {
  if (isPredicate(op)) return {DType::Bool, false};
  const TypeKey promoted = promoteTypes(a, b);
  if ((kBinaryFlags[static_cast<int>(op)] & kFloatOnly) != 0) return floatResultType(promoted);
  if (isBool(promoted.dtype)) return {DType::I64, false};
  return promoted;
}

TypeKey resultType(UnaryOp op, TypeKey a) {
  if ((kUnaryFlags[static_cast<int>(op)] & kBoolResult) != 0) return {DType::Bool, false};
  if (isFloatFunction(op)) return floatResultType(a);
  if (isBool(a.dtype)) return {DType::I64, false};
  return a;
}

Shape broadcastShapes(const Shape& a, const Shape& b, const char* opName) {
  const int rank = std::max(a.rank(), b.rank());
  std::array<int64_t, Shape::kMaxRank> dims{};
  for (int i = 0; i < rank; ++i) {
    const int ia = a.rank() - rank + i, ib = b.rank() - rank + i;
    const int64_t da = ia >= 0 ? a[ia] : 1, db = ib >= 0 ? b[ib] : 1;
    if (da != db && da != 1 && db != 1)
      fail(ErrorKind::Shape, opName, " cannot broadcast shapes ", a.str(), " and ", b.str(),
           " (", da, " vs ", db, " at axis ", i - rank, ")");
    dims[i] = da == 1 ? db : da;
  }
  return Shape(std::span<const int64_t>(dims.data(), rank));
}

Tensor applyBinary(BinaryOp op, const Tensor& a, const Tensor& b) {
  // Operands in a layout other than row-major: through runOp, which keeps layouts.
  if (a.layout() != Layout::RowMajor || b.layout() != Layout::RowMajor) {
    const Tensor operands[] = {a, b};
    return runOp(opKind(op), NoAttrs{}, operands);
  }
  if (a.isScalar() && b.isScalar() && a.dtype() == b.dtype()) {
    std::optional<Tensor> out =
        withFunctor(op, [&](auto fn) { return detail::sameTypeScalar<decltype(fn)>(a, b); });
    if (out) return std::move(*out);
  }
  const TypeKey result = resultType(op, a.typeKey(), b.typeKey());
  const TypeKey operand = operandType(op, a.typeKey(), b.typeKey());
  const DType storage = operand.dtype;

  if (a.isScalar() && b.isScalar()) {
    const Tensor x = toOperand(a, storage), y = toOperand(b, storage);
    return dispatchDType(storage, [&](auto tag) -> Tensor {
      using S = decltype(tag);
      using C = ComputeOf<S>;
      return withFunctor(op, [&](auto fn) -> Tensor {
        if constexpr (detail::applies<decltype(fn), C>()) {
          const C lhs = static_cast<C>(loadScalar<S>(x)), rhs = static_cast<C>(loadScalar<S>(y));
          return makeScalar(result, fn(lhs, rhs));
        } else {
          fail(ErrorKind::Internal, opName(op), " has no kernel for ", dtypeName(storage));
        }
      });
    });
  }

  const Shape shape = broadcastShapes(a.shape(), b.shape(), opName(op));
  const Tensor x = toOperand(a, storage), y = toOperand(b, storage);
  Tensor out = Tensor::empty(result.dtype, shape);
  dispatchDType(storage, [&](auto tag) {
    using S = decltype(tag);
    using C = ComputeOf<S>;
    withFunctor(op, [&](auto fn) {
      if constexpr (detail::applies<decltype(fn), C>()) {
        using R = BinaryResultOf<decltype(fn), S>;
        TSL_ASSERT(dtypeOf<R>() == result.dtype);
        detail::binaryLoop<S, R>(x, y, out, [fn](S lhs, S rhs) {
          return convertElement<R>(fn(static_cast<C>(lhs), static_cast<C>(rhs)));
        });
      } else {
        fail(ErrorKind::Internal, opName(op), " has no kernel for ", dtypeName(storage));
      }
    });
  });
  return out;
}

Tensor applyUnary(UnaryOp op, const Tensor& a) {
  if (a.layout() != Layout::RowMajor) {
    const Tensor operands[] = {a};
    return runOp(opKind(op), NoAttrs{}, operands);
  }
  const TypeKey result = resultType(op, a.typeKey());
  const DType storage = operandType(op, a.typeKey()).dtype;
  const Tensor x = toOperand(a, storage);
  if (x.isScalar()) {
    return dispatchDType(storage, [&](auto tag) -> Tensor {
      using S = decltype(tag);
      using C = ComputeOf<S>;
      return withFunctor(op, [&](auto fn) -> Tensor {
        if constexpr (detail::applies<decltype(fn), C>()) {
          return makeScalar(result, fn(static_cast<C>(loadScalar<S>(x))));
        } else {
          fail(ErrorKind::Internal, opName(op), " has no kernel for ", dtypeName(storage));
        }
      });
    });
  }
  Tensor out = Tensor::empty(result.dtype, x.shape());
  dispatchDType(storage, [&](auto tag) {
    using S = decltype(tag);
    using C = ComputeOf<S>;
    withFunctor(op, [&](auto fn) {
      if constexpr (detail::applies<decltype(fn), C>()) {
        using R = ResultOf<decltype(fn), S>;
        TSL_ASSERT(dtypeOf<R>() == result.dtype);
        detail::unaryLoop<S, R, decltype(fn)>(x, out, [fn](S value) {
          return convertElement<R>(fn(static_cast<C>(value)));
        });
      } else {
        fail(ErrorKind::Internal, opName(op), " has no kernel for ", dtypeName(storage));
      }
    });
  });
  return out;
}

Shape broadcastShapes(const Shape& a, const Shape& b, const Shape& c, const char* opName) {
  return broadcastShapes(broadcastShapes(a, b, opName), c, opName);
}

Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  TypeKey type = promoteTypes(a.typeKey(), b.typeKey());
  const Shape shape = broadcastShapes(cond.shape(), a.shape(), b.shape(), "where");
  if (shape.rank() > 0) type = {concreteDType(type), false}; // only scalars stay weak
  const Tensor c = toOperand(cond, DType::Bool), x = toOperand(a, type.dtype), y = toOperand(b, type.dtype);
  if (shape.rank() == 0) {
    const Tensor& chosen = c.isNonZero() ? x : y;
    if (!type.weak) return chosen;
    return isFloat(type.dtype) ? Tensor::weakFloat(chosen.toDouble()) : Tensor::weakInt(chosen.toInt());
  }
  Tensor out = Tensor::empty(type.dtype, shape);
  dispatchDType(type.dtype, [&](auto tag) {
    using T = decltype(tag);
    detail::ternaryLoop<bool, T, T, T>(c, x, y, out, [](bool p, T u, T v) { return p ? u : v; });
  });
  return out;
}

Tensor clip(const Tensor& x, const Tensor& lo, const Tensor& hi) {
  TypeKey type = promoteTypes(promoteTypes(x.typeKey(), lo.typeKey()), hi.typeKey());
  const Shape shape = broadcastShapes(x.shape(), lo.shape(), hi.shape(), "clip");
  if (shape.rank() > 0) type = {concreteDType(type), false}; // only scalars stay weak
  const DType storage = isBool(type.dtype) ? DType::I64 : type.dtype;
  const Tensor v = toOperand(x, storage), l = toOperand(lo, storage), h = toOperand(hi, storage);
  Tensor out = Tensor::empty(storage, shape);
  dispatchDType(storage, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (!std::is_same_v<T, bool>) {
      using C = ComputeOf<T>;
      const detail::MaximumFn maximum;
      const detail::MinimumFn minimum;
      detail::ternaryLoop<T, T, T, T>(v, l, h, out, [&](T a, T b, T c) {
        return convertElement<T>(minimum(maximum(static_cast<C>(a), static_cast<C>(b)), static_cast<C>(c)));
      });
    }
  });
  if (shape.rank() == 0 && type.weak)
    return isFloat(storage) ? Tensor::weakFloat(out.toDouble()) : Tensor::weakInt(out.toInt());
  return out;
}

Tensor astype(const Tensor& x, DType dtype) {
  if (x.layout() != Layout::RowMajor) {
    const Tensor operands[] = {x};
    return runOp(OpKind::Cast, CastAttrs{dtype}, operands);
  }
  if (x.isScalar()) return x.castScalar(dtype);
  if (x.dtype() == dtype) return x;
  Tensor out = Tensor::empty(dtype, x.shape());
  dispatchDType(x.dtype(), [&](auto fromTag) {
    using From = decltype(fromTag);
    dispatchDType(dtype, [&](auto toTag) {
      using To = decltype(toTag);
      detail::unaryLoop<From, To, void>(x, out, [](From v) { return convertElement<To>(v); });
    });
  });
  return out;
}

} // namespace tsl
