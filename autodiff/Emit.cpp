// autodiff/Emit.cpp — the patterns derivative rules share.
#include "autodiff/Emit.h"

namespace tsl::autodiff {

std::vector<int64_t> concreteDims(const ir::Type& type, const char* what) {
  std::vector<int64_t> dims;
  for (const ir::Dim& d : type.dims) {
    if (d.symbolic())
      fail(ErrorKind::Type, "autodiff: the derivative of ", what, " needs concrete sizes, got ", type.str());
    dims.push_back(d.size);
  }
  return dims;
}

ir::Value* Emit::op(OpKind kind, OpAttrs attrs, std::vector<ir::Value*> operands) {
  return b_.primitive(kind, std::move(attrs), std::move(operands), span_);
}

ir::Value* Emit::scalar(double value, DType dtype) {
  const Tensor t = isFloat(dtype) ? Tensor::ofFloat(value, dtype)
                   : isBool(dtype) ? Tensor::ofBool(value != 0)
                                   : Tensor::ofInt(static_cast<int64_t>(value), dtype);
  return b_.constant(t, span_);
}

ir::Value* Emit::cast(ir::Value* v, DType dtype) {
  if (v->type().dtype == dtype) return v;
  return op(OpKind::Cast, CastAttrs{dtype}, {v});
}

ir::Value* Emit::mulNoNan(ir::Value* ct, ir::Value* d) {
  ir::Value* product = mul(ct, d);
  ir::Value* zero = scalar(0, product->type().dtype);
  return where(op(OpKind::Equal, {ct, scalar(0, ct->type().dtype)}), zero, product);
}

ir::Value* Emit::divNoNan(ir::Value* ct, ir::Value* d) {
  ir::Value* quotient = div(ct, d);
  ir::Value* zero = scalar(0, quotient->type().dtype);
  return where(op(OpKind::Equal, {ct, scalar(0, ct->type().dtype)}), zero, quotient);
}

ir::Value* Emit::zeros(const ir::Type& type, ir::Value* like) {
  if (type.concrete()) {
    std::vector<int64_t> dims;
    for (const ir::Dim& d : type.dims) dims.push_back(d.size);
    return op(OpKind::Full, FullAttrs{dims, Number{}, type.dtype}, {});
  }
  // A symbolic shape: zeros shaped like a value of that type.
  return where(scalar(0, DType::Bool), like, scalar(0, type.dtype));
}

ir::Value* Emit::zerosLike(ir::Value* v) { return zeros(v->type(), v); }

ir::Value* Emit::sumTo(ir::Value* v, const ir::Type& target) {
  const ir::Type& from = v->type();
  if (from.dims == target.dims) return v;
  const int lead = from.rank() - target.rank();
  if (lead < 0) fail(ErrorKind::Internal, "autodiff: cannot sum ", from.str(), " to ", target.str());
  // The axes a broadcast added (leading: summed away) and stretched (size 1: kept).
  std::vector<int64_t> leading, stretched;
  for (int i = 0; i < lead; ++i) leading.push_back(i);
  for (int i = lead; i < from.rank(); ++i) {
    const ir::Dim& t = target.dims[static_cast<size_t>(i - lead)];
    if (!t.symbolic() && t.size == 1 && !(from.dims[static_cast<size_t>(i)] == t)) stretched.push_back(i - lead);
  }
  ir::Value* out = leading.empty() ? v : sum(v, leading, false);
  if (!stretched.empty()) out = sum(out, stretched, true);
  if (out->type().dims == target.dims) return out;
  return reshape(out, target);
}

ir::Value* Emit::broadcastTo(ir::Value* v, const ir::Type& target, ir::Value* like) {
  if (v->type().dims == target.dims) return v;
  if (!target.concrete() && like) // where(true, v, like): v's values in like's shape
    return cast(where(scalar(1, DType::Bool), v, cast(like, v->type().dtype)), v->type().dtype);
  return op(OpKind::BroadcastTo, ShapeAttrs{concreteDims(target, "a broadcast")}, {v});
}

ir::Value* Emit::reshape(ir::Value* v, const ir::Type& target) {
  if (v->type().dims == target.dims) return v;
  return op(OpKind::Reshape, ShapeAttrs{concreteDims(target, "a reshape")}, {v});
}

ir::Value* Emit::sum(ir::Value* v, std::vector<int64_t> axes, bool keepDims) {
  ReduceAttrs attrs;
  attrs.axes = std::move(axes);
  attrs.keepDims = keepDims;
  return op(OpKind::Sum, attrs, {v});
}

ir::Value* Emit::mean(ir::Value* v, std::vector<int64_t> axes, bool keepDims) {
  ReduceAttrs attrs;
  attrs.axes = std::move(axes);
  attrs.keepDims = keepDims;
  return op(OpKind::Mean, attrs, {v});
}

} // namespace tsl::autodiff
