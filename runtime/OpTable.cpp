// runtime/OpTable.cpp — the entries of the operation table: type rules and kernels.
//
// Each entry names the module functions that implement it; the type rules call the same
// shape functions the kernels check with (matmulShape, reduceShape, conv2dShape, ...), so
// there is one definition of every rule.
#include "runtime/Ops.h"
#include "runtime/CallForms.h"

#include "runtime/Attention.h"
#include "runtime/Layout.h"
#include "runtime/Collectives.h"
#include "runtime/Decompositions.h"
#include "runtime/GatherScatter.h"
#include "runtime/Gradients.h"
#include "runtime/LinearAlgebra.h"
#include "runtime/Order.h"
#include "runtime/Random.h"
#include "runtime/Scan.h"
#include "runtime/Softmax.h"
#include "runtime/Structure.h"

#include <algorithm>
#include <array>
#include <utility>

namespace tsl {

namespace {

template <typename A>
const A& get(const OpAttrs& attrs) {
  const A* a = std::get_if<A>(&attrs);
  TSL_ASSERT(a, "operation given the wrong kind of attributes");
  return *a;
}

TypeKey keyOf(const TensorType& t) { return {t.dtype, t.weak}; }
/// A result type; only a scalar can be weak (a weak type over a shape is its concrete dtype).
TensorType typeOf(TypeKey key, Shape shape) {
  if (key.weak && shape.rank() > 0) return {concreteDType(key), false, std::move(shape)};
  return {key.dtype, key.weak, std::move(shape)};
}
Shape shapeOf(std::span<const int64_t> dims) { return Shape(dims); }

// ---- Elementwise ----

template <BinaryOp op>
TensorType binaryType(const OpAttrs&, std::span<const TensorType> in) {
  return typeOf(resultType(op, keyOf(in[0]), keyOf(in[1])), broadcastShapes(in[0].shape, in[1].shape, opName(op)));
}
template <BinaryOp op>
Tensor binaryKernel(const OpAttrs&, std::span<const Tensor> in) { return applyBinary(op, in[0], in[1]); }

template <UnaryOp op>
TensorType unaryType(const OpAttrs&, std::span<const TensorType> in) {
  return typeOf(resultType(op, keyOf(in[0])), in[0].shape);
}
template <UnaryOp op>
Tensor unaryKernel(const OpAttrs&, std::span<const Tensor> in) { return applyUnary(op, in[0]); }

TensorType whereType(const OpAttrs&, std::span<const TensorType> in) {
  return typeOf(promoteTypes(keyOf(in[1]), keyOf(in[2])), broadcastShapes(in[0].shape, in[1].shape, in[2].shape, "where"));
}
Tensor whereKernel(const OpAttrs&, std::span<const Tensor> in) { return where(in[0], in[1], in[2]); }

TensorType clipType(const OpAttrs&, std::span<const TensorType> in) {
  TypeKey t = promoteTypes(promoteTypes(keyOf(in[0]), keyOf(in[1])), keyOf(in[2]));
  if (isBool(t.dtype)) t = {DType::I64, false};
  return typeOf(t, broadcastShapes(in[0].shape, in[1].shape, in[2].shape, "clip"));
}
Tensor clipKernel(const OpAttrs&, std::span<const Tensor> in) { return clip(in[0], in[1], in[2]); }

TensorType castType(const OpAttrs& a, std::span<const TensorType> in) {
  return {get<CastAttrs>(a).dtype, false, in[0].shape};
}
Tensor castKernel(const OpAttrs& a, std::span<const Tensor> in) { return astype(in[0], get<CastAttrs>(a).dtype); }

// ---- Reductions ----

template <ReduceOp op>
TensorType reduceType(const OpAttrs& a, std::span<const TensorType> in) {
  return typeOf(reduceResultType(op, keyOf(in[0])), reduceShape(op, in[0].shape, get<ReduceAttrs>(a)));
}
template <ReduceOp op>
Tensor reduceKernel(const OpAttrs& a, std::span<const Tensor> in) { return reduce(op, in[0], get<ReduceAttrs>(a)); }

TensorType momentType(const OpAttrs& a, std::span<const TensorType> in) {
  const ReduceAttrs r = get<MomentAttrs>(a).reduction();
  return typeOf(reduceResultType(ReduceOp::Mean, keyOf(in[0])), reduceShape(ReduceOp::Sum, in[0].shape, r));
}
template <bool root>
Tensor momentKernel(const OpAttrs& a, std::span<const Tensor> in) { return moment(root, in[0], get<MomentAttrs>(a)); }

// ---- Movement ----

/// Moving elements keeps their dtype; a bare number (weak) moved becomes its concrete
/// dtype, as it would in any tensor (runOp strengthens it before the kernel).
DType movedDType(const TensorType& t) { return t.weak ? concreteDType({t.dtype, true}) : t.dtype; }

TensorType reshapeType(const OpAttrs& a, std::span<const TensorType> in) {
  return {movedDType(in[0]), false, resolveReshape(in[0].shape, get<ShapeAttrs>(a).dims)};
}
Tensor reshapeKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return reshape(in[0], resolveReshape(in[0].shape(), get<ShapeAttrs>(a).dims));
}

TensorType transposeType(const OpAttrs& a, std::span<const TensorType> in) {
  const std::vector<int64_t> order = resolvePermutation(in[0].shape.rank(), get<PermAttrs>(a).perm);
  Shape out;
  for (int64_t axis : order) out.push(in[0].shape[static_cast<int>(axis)]);
  return {movedDType(in[0]), false, out};
}
Tensor transposeKernel(const OpAttrs& a, std::span<const Tensor> in) { return transpose(in[0], get<PermAttrs>(a).perm); }

TensorType broadcastToType(const OpAttrs& a, std::span<const TensorType> in) {
  const Shape to = shapeOf(get<ShapeAttrs>(a).dims);
  checkBroadcastTo(in[0].shape, to);
  return {movedDType(in[0]), false, to};
}
Tensor broadcastToKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return broadcastTo(in[0], shapeOf(get<ShapeAttrs>(a).dims));
}

TensorType expandDimsType(const OpAttrs& a, std::span<const TensorType> in) {
  return {movedDType(in[0]), false, expandDimsShape(in[0].shape, get<AxisAttrs>(a).axis)};
}
Tensor expandDimsKernel(const OpAttrs& a, std::span<const Tensor> in) { return expandDims(in[0], get<AxisAttrs>(a).axis); }

TensorType squeezeType(const OpAttrs& a, std::span<const TensorType> in) {
  if (get<AxesAttrs>(a).noAxes) return {movedDType(in[0]), false, in[0].shape};
  return {movedDType(in[0]), false, squeezeShape(in[0].shape, get<AxesAttrs>(a).axes)};
}
Tensor squeezeKernel(const OpAttrs& a, std::span<const Tensor> in) {
  if (get<AxesAttrs>(a).noAxes) return in[0].isScalar() ? in[0].strengthened() : in[0];
  return squeeze(in[0], get<AxesAttrs>(a).axes);
}

TensorType sliceType(const OpAttrs& a, std::span<const TensorType> in) {
  return {movedDType(in[0]), false, sliceShape(in[0].shape, get<SliceAttrs>(a).ranges)};
}
Tensor sliceKernel(const OpAttrs& a, std::span<const Tensor> in) { return slice(in[0], get<SliceAttrs>(a).ranges); }

TensorType indexType(const OpAttrs& a, std::span<const TensorType> in) {
  return {movedDType(in[0]), false, indexShape(in[0].shape, get<IndexAttrs>(a).indices)};
}
Tensor indexKernel(const OpAttrs& a, std::span<const Tensor> in) { return index(in[0], get<IndexAttrs>(a).indices); }

TypeKey promoteAll(std::span<const TensorType> in) {
  TypeKey t = keyOf(in[0]);
  for (const TensorType& x : in) t = promoteTypes(t, keyOf(x));
  return {concreteDType(t), false};
}
std::vector<Shape> shapesOf(std::span<const TensorType> in) {
  std::vector<Shape> shapes;
  for (const TensorType& x : in) shapes.push_back(x.shape);
  return shapes;
}

TensorType concatType(const OpAttrs& a, std::span<const TensorType> in) {
  return typeOf(promoteAll(in), concatShape(shapesOf(in), get<AxisAttrs>(a).axis));
}
Tensor concatKernel(const OpAttrs& a, std::span<const Tensor> in) { return concat(in, get<AxisAttrs>(a).axis); }

TensorType stackType(const OpAttrs& a, std::span<const TensorType> in) {
  return typeOf(promoteAll(in), stackShape(shapesOf(in), get<AxisAttrs>(a).axis));
}
Tensor stackKernel(const OpAttrs& a, std::span<const Tensor> in) { return stack(in, get<AxisAttrs>(a).axis); }

TensorType padType(const OpAttrs& a, std::span<const TensorType> in) {
  return {movedDType(in[0]), false, padShape(in[0].shape, get<PadAttrs>(a).widths)};
}
Tensor padKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return pad(in[0], get<PadAttrs>(a).widths, get<PadAttrs>(a).value);
}

TensorType takeType(const OpAttrs& a, std::span<const TensorType> in) {
  if (!isInteger(in[1].dtype)) fail(ErrorKind::Type, "take: indices must be integers, got ", dtypeName(in[1].dtype));
  return {movedDType(in[0]), false, takeShape(in[0].shape, in[1].shape, get<AxisAttrs>(a).axis)};
}
Tensor takeKernel(const OpAttrs& a, std::span<const Tensor> in) { return take(in[0], in[1], get<AxisAttrs>(a).axis); }

TensorType oneHotType(const OpAttrs& a, std::span<const TensorType> in) {
  if (!isInteger(in[0].dtype) && !isBool(in[0].dtype))
    fail(ErrorKind::Type, "one-hot: labels must be integers, got ", dtypeName(in[0].dtype));
  const int64_t n = get<CountAttrs>(a).count;
  if (n <= 0) fail(ErrorKind::Value, "one-hot: the number of classes must be positive, got ", n);
  Shape out = in[0].shape;
  out.push(n);
  return {DType::F32, false, out};
}
TensorType triangleType(const OpAttrs&, std::span<const TensorType> in) {
  if (in[0].shape.rank() < 2)
    fail(ErrorKind::Shape, "tril/triu: x must have at least two axes, got shape ", in[0].shape.str());
  return {in[0].dtype, false, in[0].shape};
}
template <bool lower>
Tensor triangleKernel(const OpAttrs& a, std::span<const Tensor> in) { return triangle(in[0], get<DiagonalAttrs>(a).k, lower); }

Tensor oneHotKernel(const OpAttrs& a, std::span<const Tensor> in) { return oneHot(in[0], get<CountAttrs>(a).count); }

// ---- Contractions ----

/// Runs a shape rule, naming the operands' full types (not just shapes) in its errors.
template <typename Rule>
Shape withTypesInErrors(const char* op, std::span<const TensorType> in, Rule rule) {
  try {
    return rule();
  } catch (const Error& e) {
    // Each operand's shape, in order of appearance, gains its dtype ([4,3] -> f32[4,3]).
    std::string message = e.message();
    size_t from = 0;
    for (const TensorType& t : in) {
      const std::string plain = t.shape.str(), full = t.str();
      const size_t at = message.find(plain, from);
      if (at == std::string::npos) continue;
      const size_t prefix = full.size() - plain.size();
      const bool typed = at >= prefix && message.compare(at - prefix, full.size(), full) == 0;
      if (!typed) message.replace(at, plain.size(), full);
      from = at + (typed ? plain.size() : full.size());
    }
    (void)op;
    throw Error(e.kind(), message, e.span());
  }
}

TensorType matmulType(const OpAttrs&, std::span<const TensorType> in) {
  const Shape shape = withTypesInErrors("matmul", in, [&] { return matmulShape(in[0].shape, in[1].shape); });
  return typeOf(contractionType(keyOf(in[0]), keyOf(in[1])), shape);
}
Tensor matmulKernel(const OpAttrs&, std::span<const Tensor> in) { return matmul(in[0], in[1]); }

TensorType dotType(const OpAttrs& a, std::span<const TensorType> in) {
  if (in[0].shape.rank() == 0 || in[1].shape.rank() == 0) return binaryType<BinaryOp::Mul>(a, in);
  return typeOf(contractionType(keyOf(in[0]), keyOf(in[1])), dotShape(in[0].shape, in[1].shape));
}
Tensor dotKernel(const OpAttrs&, std::span<const Tensor> in) { return dot(in[0], in[1]); }

TensorType einsumType(const OpAttrs& a, std::span<const TensorType> in) {
  return typeOf(promoteAll(in), einsumShape(get<EinsumAttrs>(a).spec, shapesOf(in)));
}
Tensor einsumKernel(const OpAttrs& a, std::span<const Tensor> in) {
  std::vector<TensorType> types;
  for (const Tensor& t : in) types.push_back(TensorType::of(t));
  const DType dtype = promoteAll(types).dtype;
  const Tensor out = einsum(get<EinsumAttrs>(a).spec, in);
  return out.dtype() == dtype ? out : astype(out, dtype);
}

/// conv2d and pooling take floats of one dtype: the operands' promoted float type.
DType floatOperandType(std::span<const TensorType> in, const char* who) {
  const DType dtype = promoteAll(in).dtype;
  if (!isFloat(dtype))
    fail(ErrorKind::Type, who, ": expects floating-point tensors, got ", dtypeName(in[0].dtype),
         in.size() > 1 ? cat(" and ", dtypeName(in[1].dtype)) : std::string());
  return dtype;
}

TensorType conv2dType(const OpAttrs& a, std::span<const TensorType> in) {
  return {floatOperandType(in, "conv2d"), false, conv2dShape(in[0].shape, in[1].shape, get<Conv2dAttrs>(a))};
}
Tensor conv2dKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const DType dtype = floatOperandType(std::array{TensorType::of(in[0]), TensorType::of(in[1])}, "conv2d");
  return conv2d(astype(in[0], dtype), astype(in[1], dtype), get<Conv2dAttrs>(a));
}

TensorType poolType(const OpAttrs& a, std::span<const TensorType> in) {
  return {floatOperandType(in, "pooling"), false, pool2dShape(in[0].shape, get<Pool2dAttrs>(a))};
}
Tensor maxPoolKernel(const OpAttrs& a, std::span<const Tensor> in) { return maxPool2d(in[0], get<Pool2dAttrs>(a)); }
Tensor avgPoolKernel(const OpAttrs& a, std::span<const Tensor> in) { return avgPool2d(in[0], get<Pool2dAttrs>(a)); }

// ---- Normalisation and losses ----

TensorType floatSameShapeType(std::span<const TensorType> in, int64_t axis, const char* who) {
  if (in[0].shape.rank() == 0) fail(ErrorKind::Shape, who, ": needs a tensor with at least one axis, got a scalar");
  normalizeAxis(axis, in[0].shape.rank());
  return {floatComputeType(in[0].dtype), false, in[0].shape};
}

TensorType cumsumType(const OpAttrs& a, std::span<const TensorType> in) {
  if (in[0].shape.rank() > 0) (void)normalizeAxis(get<AxisAttrs>(a).axis, in[0].shape.rank());
  const TypeKey t = cumsumResultType({in[0].dtype, in[0].weak});
  return {t.dtype, t.weak, in[0].shape};
}
Tensor cumsumKernel(const OpAttrs& a, std::span<const Tensor> in) { return cumsum(in[0], get<AxisAttrs>(a).axis); }
TensorType cumprodType(const OpAttrs& a, std::span<const TensorType> in) { return cumsumType(a, in); }
Tensor cumprodKernel(const OpAttrs& a, std::span<const Tensor> in) { return cumprod(in[0], get<AxisAttrs>(a).axis); }

TensorType linearScanType(const OpAttrs& a, std::span<const TensorType> in) {
  if (in[0].shape != in[1].shape)
    fail(ErrorKind::Shape, "linear_scan: a ", in[0].str(), " and b ", in[1].str(), " must have one shape");
  if (in[0].shape.rank() > 0) (void)normalizeAxis(get<ScanAttrs>(a).axis, in[0].shape.rank());
  return {linearScanResultType(keyOf(in[0]), keyOf(in[1])).dtype, false, in[0].shape};
}
Tensor linearScanKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return linearScan(in[0], in[1], get<ScanAttrs>(a).axis, get<ScanAttrs>(a).reverse);
}

TensorType softmaxType(const OpAttrs& a, std::span<const TensorType> in) {
  return floatSameShapeType(in, get<AxisAttrs>(a).axis, "softmax");
}
Tensor softmaxKernel(const OpAttrs& a, std::span<const Tensor> in) { return softmax(in[0], get<AxisAttrs>(a).axis); }
Tensor logSoftmaxKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return logSoftmax(in[0], get<AxisAttrs>(a).axis);
}

TensorType layerNormType(const OpAttrs& a, std::span<const TensorType> in) {
  return floatSameShapeType(in, get<NormAttrs>(a).axis, "layer-norm");
}
Tensor layerNormKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return layerNorm(in[0], get<NormAttrs>(a).axis, get<NormAttrs>(a).eps);
}

TensorType crossEntropyType(const OpAttrs&, std::span<const TensorType> in) {
  crossEntropyShape(in[0].shape, in[1].shape);
  if (!isInteger(in[1].dtype))
    fail(ErrorKind::Type, "cross-entropy: labels must be integers, got ", dtypeName(in[1].dtype));
  return {floatComputeType(in[0].dtype), false, Shape{}};
}
Tensor crossEntropyKernel(const OpAttrs&, std::span<const Tensor> in) { return crossEntropy(in[0], in[1]); }

TensorType mseType(const OpAttrs&, std::span<const TensorType> in) {
  const TypeKey diff = resultType(BinaryOp::Sub, keyOf(in[0]), keyOf(in[1]));
  broadcastShapes(in[0].shape, in[1].shape, "mse");
  return isFloat(diff.dtype) ? TensorType{diff.dtype, diff.weak, Shape{}} : TensorType{DType::F32, false, Shape{}};
}
Tensor mseKernel(const OpAttrs&, std::span<const Tensor> in) { return mse(in[0], in[1]); }

// ---- Creation and randomness ----

TensorType fullType(const OpAttrs& a, std::span<const TensorType>) {
  const FullAttrs& f = get<FullAttrs>(a);
  const Shape shape = shapeOf(f.shape);
  (void)shape.numel();
  return {f.dtype, false, shape};
}
Tensor fullKernel(const OpAttrs& a, std::span<const Tensor>) {
  const FullAttrs& f = get<FullAttrs>(a);
  return full(shapeOf(f.shape), f.value, f.dtype);
}

TensorType arangeType(const OpAttrs& a, std::span<const TensorType>) {
  const ArangeAttrs& r = get<ArangeAttrs>(a);
  return {r.dtype, false, Shape{arangeLength(r.start, r.stop, r.step)}};
}
Tensor arangeKernel(const OpAttrs& a, std::span<const Tensor>) {
  const ArangeAttrs& r = get<ArangeAttrs>(a);
  return arange(r.start, r.stop, r.step, r.dtype);
}

TensorType linspaceType(const OpAttrs& a, std::span<const TensorType>) {
  const LinspaceAttrs& l = get<LinspaceAttrs>(a);
  if (l.num < 0) fail(ErrorKind::Value, "linspace: num must not be negative, got ", l.num);
  return {l.dtype, false, Shape{l.num}};
}
Tensor linspaceKernel(const OpAttrs& a, std::span<const Tensor>) {
  const LinspaceAttrs& l = get<LinspaceAttrs>(a);
  return linspace(l.start, l.stop, l.num, l.dtype);
}

TensorType eyeType(const OpAttrs& a, std::span<const TensorType>) {
  const EyeAttrs& e = get<EyeAttrs>(a);
  if (e.n < 0 || e.m < 0) fail(ErrorKind::Value, "eye: sizes must not be negative");
  return {e.dtype, false, Shape{e.n, e.m}};
}
Tensor eyeKernel(const OpAttrs& a, std::span<const Tensor>) {
  const EyeAttrs& e = get<EyeAttrs>(a);
  return eye(e.n, e.m, e.dtype);
}

void checkKeyType(const TensorType& key, const char* who) {
  if (key.dtype != DType::I64 || !(key.shape == Shape{2}))
    fail(ErrorKind::Type, who, ": expects a key (an i64[2] from rng-key or rng-split), got ", key.str());
}

TensorType rngKeyType(const OpAttrs&, std::span<const TensorType>) { return {DType::I64, false, Shape{2}}; }
Tensor rngKeyKernel(const OpAttrs& a, std::span<const Tensor>) { return rngKey(get<SeedAttrs>(a).seed); }

TensorType rngSplitType(const OpAttrs& a, std::span<const TensorType> in) {
  checkKeyType(in[0], "rng-split");
  const int64_t n = get<CountAttrs>(a).count;
  if (n < 0) fail(ErrorKind::Value, "rng-split: the number of keys must not be negative, got ", n);
  return {DType::I64, false, Shape{n, 2}};
}
Tensor rngSplitKernel(const OpAttrs& a, std::span<const Tensor> in) { return rngSplit(in[0], get<CountAttrs>(a).count); }

TensorType randomType(const OpAttrs& a, std::span<const TensorType> in) {
  checkKeyType(in[0], "rand");
  const RandomAttrs& r = get<RandomAttrs>(a);
  if (!isFloat(r.dtype)) fail(ErrorKind::Type, "rand: dtype must be a float type, got ", dtypeName(r.dtype));
  const Shape shape = shapeOf(r.shape);
  (void)shape.numel();
  return {r.dtype, false, shape};
}
Tensor randUniformKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const RandomAttrs& r = get<RandomAttrs>(a);
  return randUniform(in[0], shapeOf(r.shape), r.dtype);
}
Tensor randNormalKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const RandomAttrs& r = get<RandomAttrs>(a);
  return randNormal(in[0], shapeOf(r.shape), r.dtype);
}

TensorType dropoutType(const OpAttrs& a, std::span<const TensorType> in) {
  checkKeyType(in[0], "dropout");
  const double rate = get<RateAttrs>(a).rate;
  if (!(rate >= 0.0 && rate <= 1.0)) fail(ErrorKind::Value, "dropout: rate must be in [0, 1], got ", rate);
  // A bare number is made strong (f32, as printing it would), at every rate: the kernel's rule.
  return {in[1].weak ? DType::F32 : floatComputeType(in[1].dtype), false, in[1].shape};
}
Tensor dropoutKernel(const OpAttrs& a, std::span<const Tensor> in) { return dropout(in[0], in[1], get<RateAttrs>(a).rate); }

TensorType randIntType(const OpAttrs& a, std::span<const TensorType> in) {
  checkKeyType(in[0], "randint");
  const RandIntAttrs& r = get<RandIntAttrs>(a);
  if (r.hi <= r.lo) fail(ErrorKind::Value, "randint: hi must exceed lo, got [", r.lo, ", ", r.hi, ")");
  const Shape shape = shapeOf(r.shape);
  (void)shape.numel();
  return {DType::I64, false, shape};
}
Tensor randIntKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const RandIntAttrs& r = get<RandIntAttrs>(a);
  return randInt(in[0], shapeOf(r.shape), r.lo, r.hi);
}

TensorType categoricalType(const OpAttrs&, std::span<const TensorType> in) {
  checkKeyType(in[0], "categorical");
  const Shape& logits = in[1].shape;
  if (logits.rank() == 0) fail(ErrorKind::Shape, "categorical: logits need an axis of categories, got a scalar");
  if (logits[logits.rank() - 1] == 0) fail(ErrorKind::Shape, "categorical: logits have no categories (last axis of size 0)");
  if (isBool(in[1].dtype)) fail(ErrorKind::Type, "categorical: logits must be numbers, got bool");
  return {DType::I64, false, Shape(logits.dims().first(static_cast<size_t>(logits.rank() - 1)))};
}
Tensor categoricalKernel(const OpAttrs&, std::span<const Tensor> in) { return categorical(in[0], in[1]); }

TensorType permutationType(const OpAttrs& a, std::span<const TensorType> in) {
  checkKeyType(in[0], "permutation");
  const int64_t n = get<CountAttrs>(a).count;
  if (n < 0) fail(ErrorKind::Value, "permutation: n must not be negative, got ", n);
  return {DType::I64, false, Shape{n}};
}
Tensor permutationKernel(const OpAttrs& a, std::span<const Tensor> in) { return permutation(in[0], get<CountAttrs>(a).count); }

TensorType shuffleType(const OpAttrs&, std::span<const TensorType> in) {
  checkKeyType(in[0], "shuffle");
  if (in[1].shape.rank() == 0) fail(ErrorKind::Shape, "shuffle: x needs an axis 0 to shuffle, got a scalar");
  return {movedDType(in[1]), false, in[1].shape};
}
Tensor shuffleKernel(const OpAttrs&, std::span<const Tensor> in) { return shuffle(in[0], in[1]); }

TensorType bernoulliType(const OpAttrs& a, std::span<const TensorType> in) {
  checkKeyType(in[0], "bernoulli");
  if (isBool(in[1].dtype)) fail(ErrorKind::Type, "bernoulli: p must be a probability (a number), got bool");
  const Shape shape = shapeOf(get<ShapeAttrs>(a).dims);
  (void)shape.numel();
  checkBroadcastTo(in[1].shape, shape);
  return {DType::Bool, false, shape};
}
Tensor bernoulliKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return bernoulli(in[0], in[1], shapeOf(get<ShapeAttrs>(a).dims));
}

// ---- Adjoints (runtime/Gradients.h) ----

TensorType stopGradientType(const OpAttrs&, std::span<const TensorType> in) { return in[0]; }

// ---- Layouts: the same logical tensor, stored another way ----

TensorType layoutType(const OpAttrs& a, std::span<const TensorType> in) {
  checkLayout(get<LayoutAttrs>(a).layout, in[0].shape, "to-layout");
  return {movedDType(in[0]), false, in[0].shape};
}
Tensor layoutKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const Tensor x = in[0].weak() ? in[0].strengthened() : in[0];
  return toLayout(x, get<LayoutAttrs>(a).layout);
}
Tensor stopGradientKernel(const OpAttrs&, std::span<const Tensor> in) { return in[0]; }

TensorType requireFloatType(const TensorType& t, const char* op) {
  if (!isFloat(t.dtype)) fail(ErrorKind::Type, op, ": expects a float tensor, got ", t.str());
  return t;
}

TensorType sliceGradType(const OpAttrs& a, std::span<const TensorType> in) {
  const SliceGradAttrs& s = get<SliceGradAttrs>(a);
  return {in[0].dtype, false, sliceGradShape(in[0].shape, s.ranges, shapeOf(s.shape))};
}
Tensor sliceGradKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const SliceGradAttrs& s = get<SliceGradAttrs>(a);
  return sliceGrad(in[0], s.ranges, shapeOf(s.shape));
}

TensorType takeGradType(const OpAttrs& a, std::span<const TensorType> in) {
  requireFloatType(in[0], "take_grad");
  if (!isInteger(in[1].dtype)) fail(ErrorKind::Type, "take_grad: indices must be integers, got ", in[1].str());
  const TakeGradAttrs& t = get<TakeGradAttrs>(a);
  return {in[0].dtype, false, takeGradShape(in[0].shape, in[1].shape, t.axis, t.size)};
}
Tensor takeGradKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const TakeGradAttrs& t = get<TakeGradAttrs>(a);
  return takeGrad(in[0], in[1], t.axis, t.size);
}

Conv2dAttrs convOf(const Conv2dGradAttrs& g) { return {g.stride, g.padding}; }

TensorType conv2dGradInputType(const OpAttrs& a, std::span<const TensorType> in) {
  const Conv2dGradAttrs& g = get<Conv2dGradAttrs>(a);
  requireFloatType(in[0], "conv2d_grad_input");
  if (in[0].dtype != in[1].dtype) fail(ErrorKind::Type, "conv2d_grad_input: operands must have one dtype");
  checkConv2dGrad(shapeOf(g.shape), in[1].shape, in[0].shape, convOf(g), "conv2d_grad_input");
  return {in[0].dtype, false, shapeOf(g.shape)};
}
Tensor conv2dGradInputKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const Conv2dGradAttrs& g = get<Conv2dGradAttrs>(a);
  return conv2dGradInput(in[0], in[1], convOf(g), shapeOf(g.shape));
}

TensorType conv2dGradWeightType(const OpAttrs& a, std::span<const TensorType> in) {
  const Conv2dGradAttrs& g = get<Conv2dGradAttrs>(a);
  requireFloatType(in[1], "conv2d_grad_weight");
  if (in[0].dtype != in[1].dtype) fail(ErrorKind::Type, "conv2d_grad_weight: operands must have one dtype");
  checkConv2dGrad(in[0].shape, shapeOf(g.shape), in[1].shape, convOf(g), "conv2d_grad_weight");
  return {in[1].dtype, false, shapeOf(g.shape)};
}
Tensor conv2dGradWeightKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const Conv2dGradAttrs& g = get<Conv2dGradAttrs>(a);
  return conv2dGradWeight(in[0], in[1], convOf(g), shapeOf(g.shape));
}

TensorType maxPoolGradType(const OpAttrs& a, std::span<const TensorType> in) {
  requireFloatType(in[0], "max_pool2d_grad");
  if (in[0].dtype != in[1].dtype) fail(ErrorKind::Type, "max_pool2d_grad: operands must have one dtype");
  checkPool2dGrad(in[0].shape, in[1].shape, get<Pool2dAttrs>(a), "max_pool2d_grad");
  return {in[0].dtype, false, in[0].shape};
}
Tensor maxPoolGradKernel(const OpAttrs& a, std::span<const Tensor> in) {
  return maxPool2dGrad(in[0], in[1], get<Pool2dAttrs>(a));
}

Pool2dAttrs poolOf(const Pool2dGradAttrs& g) { return {g.kernel, g.stride, g.padding}; }

TensorType avgPoolGradType(const OpAttrs& a, std::span<const TensorType> in) {
  const Pool2dGradAttrs& g = get<Pool2dGradAttrs>(a);
  requireFloatType(in[0], "avg_pool2d_grad");
  checkPool2dGrad(shapeOf(g.shape), in[0].shape, poolOf(g), "avg_pool2d_grad");
  return {in[0].dtype, false, shapeOf(g.shape)};
}
Tensor avgPoolGradKernel(const OpAttrs& a, std::span<const Tensor> in) {
  const Pool2dGradAttrs& g = get<Pool2dGradAttrs>(a);
  return avgPool2dGrad(in[0], poolOf(g), shapeOf(g.shape));
}

// ---- The table ----

/// The attribute struct at `index` of OpAttrs, default-constructed.
template <size_t... I>
OpAttrs defaultAlternative(size_t index, std::index_sequence<I...>) {
  OpAttrs out;
  (void)((index == I ? (out = std::variant_alternative_t<I, OpAttrs>{}, true) : false) || ...);
  return out;
}

template <typename A>
size_t attrIndex() {
  return OpAttrs(A{}).index();
}

std::vector<OpInfo> buildTable() {
  std::vector<OpInfo> table;
#define TSL_ADD_BINARY(name, text, mnemonic, flags, call, doc, example)                            \
  table.push_back({OpKind::name, text, mnemonic, 2, 2, attrIndex<NoAttrs>(), FusionClass::Elementwise, \
                   LayoutClass::Agnostic, flags, binaryType<BinaryOp::name>, binaryKernel<BinaryOp::name>, &call, doc, example});
  TSL_BINARY_OPS(TSL_ADD_BINARY)
#undef TSL_ADD_BINARY
#define TSL_ADD_UNARY(name, text, mnemonic, flags, call, doc, example)                             \
  table.push_back({OpKind::name, text, mnemonic, 1, 1, attrIndex<NoAttrs>(), FusionClass::Elementwise, \
                   LayoutClass::Agnostic, flags, unaryType<UnaryOp::name>, unaryKernel<UnaryOp::name>, &call, doc, example});
  TSL_UNARY_OPS(TSL_ADD_UNARY)
#undef TSL_ADD_UNARY
#define TSL_ADD_OTHER(name, text, mnemonic, minIn, maxIn, Attrs, fusion, layout, flags, type, kernel, call, doc, example) \
  table.push_back({OpKind::name, text, mnemonic, minIn, maxIn, attrIndex<Attrs>(), FusionClass::fusion,  \
                   LayoutClass::layout, flags, type, kernel, &call, doc, example});
  TSL_OTHER_OPS(TSL_ADD_OTHER)
  TSL_LINALG_OPS(TSL_ADD_OTHER)
  TSL_ORDER_OPS(TSL_ADD_OTHER)
  TSL_COLLECTIVE_OPS(TSL_ADD_OTHER)
  TSL_ATTENTION_OPS(TSL_ADD_OTHER)
#undef TSL_ADD_OTHER
  for (size_t i = 0; i < table.size(); ++i) TSL_ASSERT(static_cast<size_t>(table[i].kind) == i);
  return table;
}

const std::vector<OpInfo>& table() {
  static const std::vector<OpInfo> instance = buildTable();
  return instance;
}

} // namespace

std::string TensorType::str() const {
  const char* name = dtypeName(weak ? concreteDType({dtype, true}) : dtype);
  return shape.rank() == 0 ? std::string(name) : cat(name, shape.str());
}

const OpInfo& opInfo(OpKind kind) { return table()[static_cast<size_t>(kind)]; }

OpAttrs OpInfo::defaultAttrs() const {
  return defaultAlternative(attrs, std::make_index_sequence<std::variant_size_v<OpAttrs>>{});
}

const char* fusionClassName(FusionClass c) {
  switch (c) {
  case FusionClass::Elementwise: return "elementwise";
  case FusionClass::Injective: return "injective";
  case FusionClass::Reduction: return "reduction";
  case FusionClass::Contraction: return "contraction";
  case FusionClass::Scan: return "scan";
  case FusionClass::Opaque: return "opaque";
  }
  return "?";
}

const char* layoutClassName(LayoutClass c) {
  switch (c) {
  case LayoutClass::Agnostic: return "agnostic";
  case LayoutClass::AxisSensitive: return "axis-sensitive";
  case LayoutClass::LayoutDemanding: return "layout-demanding";
  case LayoutClass::Converting: return "converting";
  }
  return "?";
}

std::span<const OpInfo> allOps() { return table(); }

bool callable(const OpInfo& op) { return op.call->build != nullptr; }

std::span<const CallName> callNames() {
  static const std::vector<CallName> names = [] {
    std::vector<CallName> out;
    for (const OpInfo& op : table())
      if (callable(op)) out.push_back({op.name, op.kind, op.call, op.doc, op.example});
#define TSL_ADD_ALIAS(name, kind, call, doc, example) out.push_back({name, OpKind::kind, &call, doc, example});
    TSL_ALIASES(TSL_ADD_ALIAS)
#undef TSL_ADD_ALIAS
    return out;
  }();
  return names;
}

const OpInfo* findOpByMnemonic(std::string_view mnemonic) {
  for (const OpInfo& info : table())
    if (mnemonic == info.mnemonic) return &info;
  return nullptr;
}

std::optional<BinaryOp> binaryOpOf(OpKind kind) {
  constexpr int count = 0
#define TSL_COUNT(...) +1
      TSL_BINARY_OPS(TSL_COUNT);
#undef TSL_COUNT
  const int k = static_cast<int>(kind);
  if (k < count) return static_cast<BinaryOp>(k);
  return std::nullopt;
}

std::optional<UnaryOp> unaryOpOf(OpKind kind) {
  constexpr int binaries = 0
#define TSL_COUNT(...) +1
      TSL_BINARY_OPS(TSL_COUNT);
  constexpr int unaries = 0 TSL_UNARY_OPS(TSL_COUNT);
#undef TSL_COUNT
  const int k = static_cast<int>(kind) - binaries;
  if (k >= 0 && k < unaries) return static_cast<UnaryOp>(k);
  return std::nullopt;
}

const char* opIdentifier(OpKind kind) {
  static const char* const names[] = {
#define TSL_IDENT(name, ...) #name,
      TSL_BINARY_OPS(TSL_IDENT) TSL_UNARY_OPS(TSL_IDENT) TSL_OTHER_OPS(TSL_IDENT) TSL_LINALG_OPS(TSL_IDENT) TSL_ORDER_OPS(TSL_IDENT)
          TSL_COLLECTIVE_OPS(TSL_IDENT)
          TSL_ATTENTION_OPS(TSL_IDENT)
#undef TSL_IDENT
  };
  return names[static_cast<int>(kind)];
}

OpKind opKind(BinaryOp op) {
  switch (op) {
#define TSL_MAP(name, text, mnemonic, ...)                                                              \
  case BinaryOp::name: return OpKind::name;
    TSL_BINARY_OPS(TSL_MAP)
#undef TSL_MAP
  }
  fail(ErrorKind::Internal, "bad binary op");
}

OpKind opKind(UnaryOp op) {
  switch (op) {
#define TSL_MAP(name, text, mnemonic, ...)                                                              \
  case UnaryOp::name: return OpKind::name;
    TSL_UNARY_OPS(TSL_MAP)
#undef TSL_MAP
  }
  fail(ErrorKind::Internal, "bad unary op");
}

TensorType inferType(OpKind kind, const OpAttrs& attrs, std::span<const TensorType> inputs) {
  const OpInfo& info = opInfo(kind);
  const int n = static_cast<int>(inputs.size());
  if (n < info.minInputs || (info.maxInputs >= 0 && n > info.maxInputs))
    fail(ErrorKind::Type, info.name, " takes ",
         info.maxInputs < 0 ? cat("at least ", info.minInputs)
                            : info.minInputs == info.maxInputs ? cat(info.minInputs) : cat(info.minInputs, " to ", info.maxInputs),
         info.maxInputs == 1 ? " tensor" : " tensors", ", got ", n);
  return info.type(attrs, inputs);
}

namespace {

/// runOp for tensors in no layout but row-major and NHWC (strided, so kernels read them).
Tensor runOpUnlaid(OpKind kind, const OpAttrs& attrs, std::span<const Tensor> inputs) {
  std::array<TensorType, 4> small;
  std::vector<TensorType> large;
  std::span<TensorType> types;
  if (inputs.size() <= small.size()) {
    types = std::span<TensorType>(small.data(), inputs.size());
  } else {
    large.resize(inputs.size());
    types = large;
  }
  for (size_t i = 0; i < inputs.size(); ++i) types[i] = TensorType::of(inputs[i]);
  const TensorType predicted = inferType(kind, attrs, types);
  if (opInfo(kind).fusion == FusionClass::Injective) {
    // Bare numbers moved become their concrete dtype (movedDType).
    bool weak = false;
    for (const Tensor& t : inputs) weak |= t.weak();
    if (weak) {
      std::vector<Tensor> strong(inputs.begin(), inputs.end());
      for (Tensor& t : strong)
        if (t.weak()) t = t.strengthened();
      return runOpUnlaid(kind, attrs, strong);
    }
  }
  Tensor result = opInfo(kind).kernel(attrs, inputs);
  if (!predicted.weak && result.weak()) result = result.strengthened();
  TSL_ASSERT(result.dtype() == predicted.dtype && result.weak() == predicted.weak && result.shape() == predicted.shape,
             opInfo(kind).name, ": the kernel produced ", TensorType::of(result).str(), " where the type rule predicts ",
             predicted.str());
  return result;
}

} // namespace

Layout resultLayout(OpKind kind, const OpAttrs& attrs, std::span<const OperandLayout> operands, int resultRank) {
  const OpInfo& info = opInfo(kind);
  if (resultRank == 0) return Layout::RowMajor;
  if (info.layout == LayoutClass::Converting) return std::get<LayoutAttrs>(attrs).layout;
  if (info.has(kLayoutFromData)) {
    const Layout first = operands.empty() ? Layout::RowMajor : operands[0].layout;
    return first != Layout::FractalZ && layoutFitsRank(first, resultRank) ? first : Layout::RowMajor;
  }
  if (info.layout != LayoutClass::Agnostic) return Layout::RowMajor;
  std::optional<Layout> shared;
  for (const OperandLayout& o : operands) {
    if (!o.sameShape) continue;
    if (shared && *shared != o.layout) return Layout::RowMajor;
    shared = o.layout;
  }
  return shared.value_or(Layout::RowMajor);
}

bool runOpInto(OpKind kind, const OpAttrs& attrs, std::span<const Tensor> inputs, Tensor& out) {
  if (inputs.size() != 1 || inputs[0].layout() != Layout::RowMajor || !out.isContiguous()) return false;
  switch (kind) {
  case OpKind::AllReduce:
  case OpKind::Broadcast:
  case OpKind::AllGather:
  case OpKind::ReduceScatter:
  case OpKind::ReduceToRoot: {
    const TensorType in = TensorType::of(inputs[0]);
    const TensorType predicted = inferType(kind, attrs, std::span<const TensorType>(&in, 1));
    TSL_ASSERT(out.dtype() == predicted.dtype && out.shape() == predicted.shape, opInfo(kind).name,
               ": a buffer of ", TensorType::of(out).str(), " for a result of ", predicted.str());
    return collectiveInto(kind, attrs, inputs[0], out);
  }
  default: return false;
  }
}

Tensor runOp(OpKind kind, const OpAttrs& attrs, std::span<const Tensor> inputs) {
  // Kernels compute on logical elements: a blocked input is converted first (except by
  // the conversions, which read it as it is), and the result is stored in the layout the
  // operation gives (resultLayout).
  const OpInfo& info = opInfo(kind);
  bool laidOut = false;
  for (const Tensor& t : inputs) laidOut |= t.layout() != Layout::RowMajor;
  if (laidOut && info.layout != LayoutClass::Converting) {
    std::vector<TensorType> types;
    for (const Tensor& t : inputs) types.push_back(TensorType::of(t));
    const TensorType predicted = inferType(kind, attrs, types);
    std::vector<OperandLayout> operands;
    for (const Tensor& t : inputs) operands.push_back({t.layout(), t.rank() > 0 && t.shape() == predicted.shape});
    const Layout want = resultLayout(kind, attrs, operands, predicted.shape.rank());
    std::vector<Tensor> logical;
    for (const Tensor& t : inputs) logical.push_back(untagged(t));
    Tensor result = runOpUnlaid(kind, attrs, logical);
    return result.rank() > 0 && result.layout() != want ? toLayout(result, want) : result;
  }
  return runOpUnlaid(kind, attrs, inputs);
}


} // namespace tsl
