// runtime/GatherScatter.h — gather and scatter-add: moving elements by an index tensor
// along one axis.
//
// (gather x idx :axis a) is NumPy's take_along_axis: idx has x's rank, and every axis but
// `a` broadcasts between them; the result has the broadcast shape, idx's size along `a`,
// and element p is x at p with its coordinate along `a` replaced by idx[p].
// (scatter-add x idx src :axis a) is PyTorch's scatter_add: a copy of x to which, for every
// position p of idx, src[p] is added at p with its coordinate along `a` replaced by idx[p];
// idx, src and x have one rank, idx is no larger than src along every axis and no larger
// than x along the others. The two are each other's adjoint (autodiff/RulesOrder.cpp).
// Indices are integers, negative from the end; one outside [-n, n) is a value error, as
// for take. The rows' type rules and kernel adapters are declared here for
// runtime/OpTable.cpp; the loops are runtime/GatherRows.h's.
#pragma once

#include "runtime/Ops.h"

namespace tsl {

/// gather's result shape (shape errors for mismatched ranks or axes that do not broadcast).
Shape gatherShape(const Shape& x, const Shape& idx, int64_t axis);
Tensor gather(const Tensor& x, const Tensor& idx, int64_t axis);

/// scatter-add's result dtype: x's and src's promoted (bool gives i64, as a sum does).
DType scatterAddDType(TypeKey x, TypeKey src);
/// Checks the shapes of a scatter-add (shape errors), and returns x's.
Shape scatterAddShape(const Shape& x, const Shape& idx, const Shape& src, int64_t axis);
Tensor scatterAdd(const Tensor& x, const Tensor& idx, const Tensor& src, int64_t axis);

// ---- The rows' type rules and kernel adapters ----

TensorType gatherType(const OpAttrs&, std::span<const TensorType> in);
Tensor gatherKernel(const OpAttrs&, std::span<const Tensor> in);
TensorType scatterAddType(const OpAttrs&, std::span<const TensorType> in);
Tensor scatterAddKernel(const OpAttrs&, std::span<const Tensor> in);

} // namespace tsl
