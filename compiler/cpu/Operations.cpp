// compiler/cpu/Operations.cpp — the :cpu lowering table: how each operation is emitted.
//
// Operations the table's traits describe completely are generated as loops (Loops.cpp):
// every elementwise operation, every view (kView: transpose, slice, broadcast-to...,
// copied through strides) and every loop reduction (kLoopReduction). The rows below are
// the operations with an emitter of their own, keyed by operation: softmax and its kin,
// matmul, take, concat, attention... — most call a kernel-library function, specialised to the
// shapes once inlined. The remaining operations run their eager kernel through
// tsl_run_kernel, each listed with the reason; --print-fallbacks shows every such call a
// program makes. An emitter may decline a case it does not cover (a dtype, a shape): the
// operation then falls back too.
#include "compiler/cpu/Attention.h"
#include "compiler/cpu/Contractions.h"
#include "compiler/cpu/FunctionCodegen.h"
#include "compiler/cpu/VectorRows.h"

#include "runtime/Creation.h"
#include "runtime/Structure.h"
#include "runtime/Views.h"

namespace tsl::compiler::cpu {

const char* kernelTag(DType d) {
  switch (d) {
  case DType::F32: return "f32";
  case DType::F64: return "f64";
  case DType::I32: return "i32";
  case DType::I64: return "i64";
  default: return nullptr;
  }
}

namespace {

using ir::Home;
using ir::Operation;

bool isFloatKernelType(DType d) { return d == DType::F32 || d == DType::F64; }
bool isIndexType(DType d) { return d == DType::I32 || d == DType::I64; }

/// An emitter: writes `op`'s result at `out`; false declines (the operation falls back).
using Emit = bool (*)(FunctionCodegen&, const Operation&, llvm::Value* out);

/// Calls kernel `name` over the outer rows [0, outer) in parallel: (x, y, begin, end, extra...).
void rowsKernel(FunctionCodegen& g, const std::string& name, llvm::Value* x, llvm::Value* out, int64_t outer,
                int64_t work, std::vector<llvm::Value*> extra) {
  llvm::Function* fn = g.library().get(name);
  g.parallel(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(work, 1)), {x, out},
             [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               std::vector<llvm::Value*> args{got[0], got[1], begin, end};
               args.insert(args.end(), extra.begin(), extra.end());
               b.CreateCall(fn, args);
             });
}

/// softmax, log-softmax, layer-norm: a row function along one axis.
bool alongAxis(FunctionCodegen& g, const Operation& op, llvm::Value* out, int64_t axis, const char* kernel,
               std::vector<llvm::Value*> extra) {
  const ir::Type& x = op.operand(0)->type();
  if (!isFloatKernelType(x.dtype) || op.result()->type().dtype != x.dtype || x.rank() == 0) return false;
  const std::vector<int64_t> dims = dimsOf(x);
  const size_t a = static_cast<size_t>(normalizeAxis(axis, x.rank()));
  const int64_t outer = product(dims, 0, a), n = dims[a], inner = product(dims, a + 1);
  if (outer * n * inner == 0) return true;
  extra.insert(extra.begin(), {g.i64(n), g.i64(inner)});
  rowsKernel(g, cat("tsl_k_", kernel, "_", kernelTag(x.dtype)), g.pointer(op.operand(0)), out, outer, n * inner, extra);
  return true;
}

/// cumsum or cumprod (`kernel`) of f32, f64, i32 and i64 along one axis: runtime/ScanRows.h's rows.
bool prefixScan(FunctionCodegen& g, const Operation& op, llvm::Value* out, const char* kernel) {
  const ir::Type& x = op.operand(0)->type();
  const DType y = op.result()->type().dtype;
  const bool native = (isFloatKernelType(x.dtype) && y == x.dtype) ||
                      ((x.dtype == DType::I32 || x.dtype == DType::I64) && y == DType::I64);
  if (!native || x.rank() == 0) return false;
  const std::vector<int64_t> dims = dimsOf(x);
  const size_t a = static_cast<size_t>(normalizeAxis(std::get<AxisAttrs>(op.attrs()).axis, x.rank()));
  const int64_t outer = product(dims, 0, a), n = dims[a], inner = product(dims, a + 1);
  if (outer * n * inner == 0) return true;
  rowsKernel(g, cat("tsl_k_", kernel, "_", kernelTag(x.dtype), "_", kernelTag(y)), g.pointer(op.operand(0)), out, outer,
             n * inner, {g.i64(n), g.i64(inner)});
  return true;
}
bool cumsum(FunctionCodegen& g, const Operation& op, llvm::Value* out) { return prefixScan(g, op, out, "cumsum"); }
bool cumprod(FunctionCodegen& g, const Operation& op, llvm::Value* out) { return prefixScan(g, op, out, "cumprod"); }

/// The linear recurrences of cumprod's derivatives, f32 and f64: runtime/ScanRows.h's rows.
bool linearScan(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& y = op.result()->type();
  if (!isFloatKernelType(y.dtype) || op.operand(0)->type().dtype != y.dtype || op.operand(1)->type().dtype != y.dtype ||
      y.rank() == 0)
    return false;
  const auto& attrs = std::get<ScanAttrs>(op.attrs());
  const std::vector<int64_t> dims = dimsOf(y);
  const size_t a = static_cast<size_t>(normalizeAxis(attrs.axis, y.rank()));
  const int64_t outer = product(dims, 0, a), n = dims[a], inner = product(dims, a + 1);
  if (outer * n * inner == 0) return true;
  llvm::Function* fn = g.library().get(cat("tsl_k_linearscan_", kernelTag(y.dtype)));
  g.parallel(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(n * inner, 1)),
             {g.pointer(op.operand(0)), g.pointer(op.operand(1)), out},
             [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               b.CreateCall(fn, {got[0], got[1], got[2], begin, end, b.getInt64(static_cast<uint64_t>(n)),
                                 b.getInt64(static_cast<uint64_t>(inner)), b.getInt32(attrs.reverse ? 1 : 0)});
             });
  return true;
}

/// Whether `op` (f32 in and out) works along the last axis of its operand: then the rows
/// are contiguous and a generated vector kernel (VectorRows.h) runs them.
bool f32Rows(const Operation& op, int64_t axis) {
  const ir::Type& x = op.operand(0)->type();
  return x.dtype == DType::F32 && op.result()->type().dtype == DType::F32 && x.rank() > 0 &&
         normalizeAxis(axis, x.rank()) == x.rank() - 1;
}

/// Runs `kernel(x, out, begin, end, n, extra...)` over the rows of op's operand in parallel.
void vectorRows(FunctionCodegen& g, const Operation& op, llvm::Value* out, llvm::Function* kernel,
                const std::vector<llvm::Value*>& extra) {
  const std::vector<int64_t> dims = dimsOf(op.operand(0)->type());
  const int64_t n = dims.back(), rows = product(dims, 0, dims.size() - 1);
  if (rows * n == 0) return;
  g.parallel(rows, std::max<int64_t>(1, 16384 / std::max<int64_t>(n, 1)), {g.pointer(op.operand(0)), out},
             [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               std::vector<llvm::Value*> args{got[0], got[1], begin, end, b.getInt64(static_cast<uint64_t>(n))};
               args.insert(args.end(), extra.begin(), extra.end());
               b.CreateCall(kernel, args);
             });
}

CascadeCalls cascadeCalls(FunctionCodegen& g) {
  return {g.library().get("tsl_cascade_push_f32"), g.library().get("tsl_cascade_total_f32")};
}

bool softmax(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const int64_t axis = std::get<AxisAttrs>(op.attrs()).axis;
  if (f32Rows(op, axis)) {
    vectorRows(g, op, out,
               softmaxRowsF32(g.moduleCodegen().out, g.moduleCodegen().options.cpuFeatures,
                              g.library().get("tsl_k_softmax_f32"), cascadeCalls(g)),
               {});
    return true;
  }
  return alongAxis(g, op, out, axis, "softmax", {g.i32(0)});
}
bool logSoftmax(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  return alongAxis(g, op, out, std::get<AxisAttrs>(op.attrs()).axis, "softmax", {g.i32(1)});
}
bool layerNorm(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const auto& attrs = std::get<NormAttrs>(op.attrs());
  if (f32Rows(op, attrs.axis)) {
    vectorRows(g, op, out, layerNormRowsF32(g.moduleCodegen().out, g.moduleCodegen().options.cpuFeatures, cascadeCalls(g)),
               {llvm::ConstantFP::get(g.builder().getFloatTy(), static_cast<double>(static_cast<float>(attrs.eps)))});
    return true;
  }
  return alongAxis(g, op, out, attrs.axis, "layernorm",
                   {llvm::ConstantFP::get(g.builder().getDoubleTy(), attrs.eps)});
}

/// logsumexp over one run of adjacent axes (all of them, or some).
bool logSumExp(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& x = op.operand(0)->type();
  const auto& attrs = std::get<ReduceAttrs>(op.attrs());
  if (!isFloatKernelType(x.dtype) || op.result()->type().dtype != x.dtype || attrs.noAxes) return false;
  const std::vector<int64_t> dims = dimsOf(x);
  std::vector<bool> reduced(dims.size(), attrs.axes.empty());
  for (int64_t axis : attrs.axes) reduced[static_cast<size_t>(normalizeAxis(axis, x.rank()))] = true;
  size_t first = dims.size(), last = 0;
  for (size_t d = 0; d < dims.size(); ++d)
    if (reduced[d]) first = std::min(first, d), last = d;
  if (first == dims.size()) { first = 0, last = 0; } // a scalar: its own logsumexp
  for (size_t d = first; d <= last && !dims.empty(); ++d)
    if (!reduced[d]) return false; // not one run
  const int64_t outer = product(dims, 0, first), n = dims.empty() ? 1 : product(dims, first, last + 1),
                inner = dims.empty() ? 1 : product(dims, last + 1);
  if (outer * inner == 0) return true;
  rowsKernel(g, cat("tsl_k_logsumexp_", kernelTag(x.dtype)), g.pointer(op.operand(0)), out, outer, n * inner,
             {g.i64(n), g.i64(inner)});
  return true;
}

/// Raises `message` (its {0} the offending element) when `bad`, a kernel's answer, is the
/// position of an element of `data` (of `dtype`) rather than -1.
void checkElements(FunctionCodegen& g, const Operation& op, llvm::Value* bad, llvm::Value* data, DType dtype,
                   std::string message) {
  llvm::IRBuilder<>& b = g.builder();
  llvm::Value* failed = b.CreateICmpSGE(bad, g.i64(0));
  llvm::Type* t = g.storageType(dtype);
  llvm::Value* element = b.CreateLoad(t, b.CreateInBoundsGEP(t, data, b.CreateSelect(failed, bad, g.i64(0))));
  g.check(failed, g.checkSite(ErrorKind::Value, std::move(message), op.span()), element, g.i64(0));
}

bool crossEntropy(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& x = op.operand(0)->type();
  const ir::Type& labels = op.operand(1)->type();
  if (!isFloatKernelType(x.dtype) || op.result()->type().dtype != x.dtype || !isIndexType(labels.dtype)) return false;
  llvm::IRBuilder<>& b = g.builder();
  const int64_t classes = x.dims.back().size, rows = x.rank() == 2 ? x.dims[0].size : 1;
  llvm::Value* labelData = g.pointer(op.operand(1));
  llvm::Value* bad = b.CreateCall(g.library().get(cat("tsl_k_crossentropy_", kernelTag(x.dtype), "_", kernelTag(labels.dtype))),
                                  {g.pointer(op.operand(0)), labelData, out, g.i64(rows), g.i64(classes)});
  checkElements(g, op, bad, labelData, labels.dtype, cat("cross-entropy: label {0} is outside [0, ", classes, ")"));
  return true;
}

/// max-pool2d and avg-pool2d of f32 and f64: runtime/PoolRows.h's planes, in parallel.
bool pool2d(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& x = op.operand(0)->type();
  const ir::Type& y = op.result()->type();
  if (!isFloatKernelType(x.dtype) || y.dtype != x.dtype) return false;
  const std::vector<int64_t> xs = dimsOf(x), ys = dimsOf(y);
  if (product(ys) == 0) return true;
  const auto& a = std::get<Pool2dAttrs>(op.attrs());
  std::vector<llvm::Value*> sizes;
  for (int64_t v : {xs[2], xs[3], a.kernel[0], a.kernel[1], a.stride[0], a.stride[1], a.padding[0], a.padding[1], ys[2],
                    ys[3]})
    sizes.push_back(g.i64(v));
  llvm::Value* sizeArray = g.array(sizes, g.builder().getInt64Ty());
  const char* kind = op.code().is(OpKind::MaxPool2d) ? "maxpool" : "avgpool";
  llvm::Function* kernel = g.library().get(cat("tsl_k_", kind, "_", kernelTag(x.dtype)));
  const int64_t planeWork = std::max<int64_t>(1, ys[2] * ys[3] * a.kernel[0] * a.kernel[1]);
  g.parallel(xs[0] * xs[1], std::max<int64_t>(1, (int64_t(1) << 17) / planeWork), {g.pointer(op.operand(0)), out, sizeArray},
             [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               b.CreateCall(kernel, {got[0], got[1], got[2], begin, end});
             });
  return true;
}

/// take along an axis, after checking every index.
bool take(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& x = op.operand(0)->type();
  const ir::Type& idx = op.operand(1)->type();
  if (!isIndexType(idx.dtype) || x.rank() == 0) return false;
  llvm::IRBuilder<>& b = g.builder();
  const std::vector<int64_t> dims = dimsOf(x);
  const size_t a = static_cast<size_t>(normalizeAxis(std::get<AxisAttrs>(op.attrs()).axis, x.rank()));
  const int64_t outer = product(dims, 0, a), size = dims[a], inner = product(dims, a + 1);
  const int64_t count = product(dimsOf(idx));
  llvm::Value* indices = g.pointer(op.operand(1));
  const char* itag = kernelTag(idx.dtype);
  llvm::Value* bad = b.CreateCall(g.library().get(cat("tsl_k_badindex_", itag)), {indices, g.i64(count), g.i64(size)});
  checkElements(g, op, bad, indices, idx.dtype, cat("take: index {0} is out of range for axis ", a, " of size ", size));
  if (outer * count * inner == 0) return true;
  llvm::Function* fn = g.library().get(cat("tsl_k_take_", dtypeSize(x.dtype), "_", itag));
  g.parallel(outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(count * inner, 1)),
             {g.pointer(op.operand(0)), indices, out},
             [&](llvm::IRBuilder<>& ib, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               ib.CreateCall(fn, {got[0], got[1], got[2], ib.getInt64(static_cast<uint64_t>(count)),
                                  ib.getInt64(static_cast<uint64_t>(size)), ib.getInt64(static_cast<uint64_t>(inner)),
                                  begin, end});
             });
  return true;
}

/// Operands as [outer, axis, inner]: n along the axis for x, m for the indices.
struct AlongAxis {
  int64_t outer, n, m, inner;
};

/// gather where idx has the result's shape and x matches it off the axis (no broadcast),
/// after checking every index: runtime/GatherRows.h's rows.
bool gather(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& x = op.operand(0)->type();
  const ir::Type& idx = op.operand(1)->type();
  const ir::Type& y = op.result()->type();
  if (!isIndexType(idx.dtype) || idx.dims != y.dims) return false;
  const std::vector<int64_t> xs = dimsOf(x), ys = dimsOf(y);
  const size_t a = static_cast<size_t>(normalizeAxis(std::get<AxisAttrs>(op.attrs()).axis, x.rank()));
  for (size_t d = 0; d < xs.size(); ++d)
    if (d != a && xs[d] != ys[d]) return false;
  const AlongAxis s{product(ys, 0, a), xs[a], ys[a], product(ys, a + 1)};
  llvm::Value* indices = g.pointer(op.operand(1));
  const char* itag = kernelTag(idx.dtype);
  llvm::Value* bad = g.builder().CreateCall(g.library().get(cat("tsl_k_badindex_", itag)),
                                            {indices, g.i64(product(ys)), g.i64(s.n)});
  checkElements(g, op, bad, indices, idx.dtype, cat("gather: index {0} is out of range for axis ", a, " of size ", s.n));
  if (s.outer * s.m * s.inner == 0) return true;
  llvm::Function* fn = g.library().get(cat("tsl_k_gather_", dtypeSize(x.dtype), "_", itag));
  g.parallel(s.outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(s.m * s.inner, 1)),
             {g.pointer(op.operand(0)), indices, out},
             [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               b.CreateCall(fn, {got[0], got[1], got[2], b.getInt64(static_cast<uint64_t>(s.n)),
                                 b.getInt64(static_cast<uint64_t>(s.m)), b.getInt64(static_cast<uint64_t>(s.inner)),
                                 begin, end});
             });
  return true;
}

void copyInto(FunctionCodegen& g, const ir::Value* v, llvm::Value* out, DType outType,
              const std::vector<int64_t>& outStrides, int64_t offset);

/// scatter-add of f32, f64, i32 or i64 operands of the result's dtype, where idx has src's
/// shape and x's off the axis: the indices checked, x copied, then runtime/GatherRows.h's rows.
bool scatterAdd(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& x = op.operand(0)->type();
  const ir::Type& idx = op.operand(1)->type();
  const ir::Type& src = op.operand(2)->type();
  const DType t = op.result()->type().dtype;
  if (!isIndexType(idx.dtype) || !kernelTag(t) || x.dtype != t || src.dtype != t || idx.dims != src.dims) return false;
  const std::vector<int64_t> xs = dimsOf(x), is = dimsOf(idx);
  const size_t a = static_cast<size_t>(normalizeAxis(std::get<AxisAttrs>(op.attrs()).axis, x.rank()));
  for (size_t d = 0; d < xs.size(); ++d)
    if (d != a && xs[d] != is[d]) return false;
  const AlongAxis s{product(is, 0, a), xs[a], is[a], product(is, a + 1)};
  llvm::Value* indices = g.pointer(op.operand(1));
  const char* itag = kernelTag(idx.dtype);
  llvm::Value* bad = g.builder().CreateCall(g.library().get(cat("tsl_k_badindex_", itag)),
                                            {indices, g.i64(product(is)), g.i64(s.n)});
  checkElements(g, op, bad, indices, idx.dtype,
                cat("scatter-add: index {0} is out of range for axis ", a, " of size ", s.n));
  if (product(xs) == 0) return true;
  copyInto(g, op.operand(0), out, t, contiguousStrides(xs), 0);
  if (s.outer * s.m * s.inner == 0) return true;
  llvm::Function* fn = g.library().get(cat("tsl_k_scatteradd_", kernelTag(t), "_", itag));
  g.parallel(s.outer, std::max<int64_t>(1, 16384 / std::max<int64_t>(s.m * s.inner, 1)),
             {indices, g.pointer(op.operand(2)), out},
             [&](llvm::IRBuilder<>& b, llvm::Value* begin, llvm::Value* end, const std::vector<llvm::Value*>& got) {
               b.CreateCall(fn, {got[0], got[1], got[2], b.getInt64(static_cast<uint64_t>(s.n)),
                                 b.getInt64(static_cast<uint64_t>(s.m)), b.getInt64(static_cast<uint64_t>(s.inner)),
                                 begin, end});
             });
  return true;
}

bool oneHot(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& labels = op.operand(0)->type();
  if (!isIndexType(labels.dtype) || op.result()->type().dtype != DType::F32) return false;
  llvm::IRBuilder<>& b = g.builder();
  const int64_t n = std::get<CountAttrs>(op.attrs()).count, count = product(dimsOf(labels));
  llvm::Value* data = g.pointer(op.operand(0));
  const char* tag = kernelTag(labels.dtype);
  llvm::Value* bad = b.CreateCall(g.library().get(cat("tsl_k_badlabel_", tag)), {data, g.i64(count), g.i64(n)});
  checkElements(g, op, bad, data, labels.dtype, cat("one-hot: label {0} is outside [0, ", n, ")"));
  b.CreateCall(g.library().get(cat("tsl_k_onehot_", tag)), {data, out, g.i64(count), g.i64(n)});
  return true;
}

/// Copies `v` into the block of `out` (strides `outStrides` over v's shape, at `offset`).
void copyInto(FunctionCodegen& g, const ir::Value* v, llvm::Value* out, DType outType,
              const std::vector<int64_t>& outStrides, int64_t offset) {
  LoopNest nest;
  nest.space = dimsOf(v->type());
  nest.leaves.emplace_back(v, g.access(v));
  nest.result = v;
  Access a;
  a.base = out;
  a.dtype = outType;
  a.strides = outStrides;
  a.offset = offset;
  g.emitLoop(nest, a);
}

/// Fills `shape` at `out` with `value` (a scalar tensor of the output's dtype).
void fillWith(FunctionCodegen& g, llvm::Value* out, const ir::Type& type, const Tensor& value) {
  LoopNest nest;
  nest.space = dimsOf(type);
  nest.fill = g.constantScalar(value);
  Access a;
  a.base = out;
  a.dtype = type.dtype;
  a.strides = contiguousStrides(nest.space);
  g.emitLoop(nest, a);
}

bool concat(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& type = op.result()->type();
  const std::vector<int64_t> dims = dimsOf(type), strides = contiguousStrides(dims);
  const size_t a = static_cast<size_t>(normalizeAxis(std::get<AxisAttrs>(op.attrs()).axis, type.rank()));
  int64_t at = 0;
  for (const ir::Value* part : op.operands()) {
    copyInto(g, part, out, type.dtype, strides, at * strides[a]);
    at += part->type().dims[a].size;
  }
  return true;
}

bool stack(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& type = op.result()->type();
  const std::vector<int64_t> dims = dimsOf(type), strides = contiguousStrides(dims);
  const size_t a = static_cast<size_t>(normalizeAxis(std::get<AxisAttrs>(op.attrs()).axis, type.rank()));
  std::vector<int64_t> partStrides = strides;
  partStrides.erase(partStrides.begin() + static_cast<ptrdiff_t>(a));
  for (size_t i = 0; i < op.operands().size(); ++i)
    copyInto(g, op.operand(i), out, type.dtype, partStrides, static_cast<int64_t>(i) * strides[a]);
  return true;
}

bool pad(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& type = op.result()->type();
  const auto& attrs = std::get<PadAttrs>(op.attrs());
  const std::vector<int64_t> dims = dimsOf(type), strides = contiguousStrides(dims);
  fillWith(g, out, type, Tensor::ofFloat(attrs.value, DType::F64).castScalar(type.dtype));
  int64_t offset = 0;
  const auto widths = padWidths(op.operand(0)->type().shape(), attrs.widths);
  for (size_t d = 0; d < widths.size(); ++d) offset += widths[d][0] * strides[d];
  copyInto(g, op.operand(0), out, type.dtype, strides, offset);
  return true;
}

bool full(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const auto& attrs = std::get<FullAttrs>(op.attrs());
  fillWith(g, out, op.result()->type(), tsl::full(Shape{}, attrs.value, attrs.dtype));
  return true;
}

/// The cotangent of a slice: zeros, with `ct` copied where the slice took its elements.
bool sliceGrad(FunctionCodegen& g, const Operation& op, llvm::Value* out) {
  const ir::Type& type = op.result()->type();
  const auto& attrs = std::get<SliceGradAttrs>(op.attrs());
  fillWith(g, out, type, Tensor::ofInt(0, DType::I64).castScalar(type.dtype));
  // Where the slice reads, as strides and an offset: the runtime's slice of a probe.
  static char nothing = 0;
  const std::vector<int64_t> dims = dimsOf(type);
  const Tensor whole = Tensor::view(type.dtype, Shape(std::span<const int64_t>(dims)), contiguousStrides(dims), 0,
                                    Storage::wrap(&nothing, 0, {}));
  const Tensor part = slice(whole, attrs.ranges);
  copyInto(g, op.operand(0), out, type.dtype, std::vector<int64_t>(part.strides(), part.strides() + part.rank()),
           part.offset());
  return true;
}

struct Row {
  OpKind kind;
  Emit emit;
};

/// Operations with an emitter of their own.
const Row kEmitters[] = {
    {OpKind::Softmax, softmax},
    {OpKind::LogSoftmax, logSoftmax},
    {OpKind::LayerNorm, layerNorm},
    {OpKind::LogSumExp, logSumExp},
    {OpKind::CumSum, cumsum},
    {OpKind::CumProd, cumprod},
    {OpKind::LinearScan, linearScan},
    {OpKind::Gather, gather},
    {OpKind::ScatterAdd, scatterAdd},
    {OpKind::CrossEntropy, crossEntropy},
    {OpKind::MatMul, emitMatmul},
    {OpKind::Dot, emitMatmul},
    {OpKind::Conv2d, emitConv2d},
    {OpKind::Conv2dGradInput, emitConv2dGradInput},
    {OpKind::Conv2dGradWeight, emitConv2dGradWeight},
    {OpKind::MaxPool2d, pool2d},
    {OpKind::AvgPool2d, pool2d},
    {OpKind::Take, take},
    {OpKind::OneHot, oneHot},
    {OpKind::Concat, concat},
    {OpKind::Stack, stack},
    {OpKind::Pad, pad},
    {OpKind::Full, full},
    {OpKind::SliceGrad, sliceGrad},
    {OpKind::Attention, emitAttention},
    {OpKind::AttentionGrad, emitAttention},
    {OpKind::AttentionJvp, emitAttention},
};

struct Fallback {
  OpKind kind;
  const char* why;
};

/// Operations that run their eager kernel, and why (the CPU performance work turns the
/// ones that matter into generated code).
const Fallback kFallbacks[] = {
    {OpKind::Einsum, "an einsum taking a diagonal (a letter repeated within an operand): expand-einsum turns the "
                     "others into matmuls"},
    {OpKind::MaxPool2dGrad, "the cotangents of pooling are not generated yet"},
    {OpKind::AvgPool2dGrad, "the cotangents of pooling are not generated yet"},
    {OpKind::Mse, "mse is not generated yet"},
    {OpKind::Tril, "tril and triu run their eager kernel (a copy with the other triangle zeroed)"},
    {OpKind::Triu, "tril and triu run their eager kernel (a copy with the other triangle zeroed)"},
    {OpKind::Var, "var runs its eager kernel (two passes: the mean, then the squared deviations)"},
    {OpKind::Std, "std runs its eager kernel (two passes: the mean, then the squared deviations)"},
    {OpKind::TakeGrad, "the scatter-add of take's gradient is not generated yet"},
    {OpKind::Sort, "sorting runs the eager kernel (a comparison sort of each row, which the kernel library, built "
                   "without the C++ library's allocating algorithms, does not hold)"},
    {OpKind::ArgSort, "sorting runs the eager kernel (a comparison sort of each row)"},
    {OpKind::TopK, "top-k runs the eager kernel (a partial comparison sort of each row)"},
    {OpKind::Arange, "creation runs on the eager kernel (usually folded to a constant)"},
    {OpKind::Linspace, "creation runs on the eager kernel (usually folded to a constant)"},
    {OpKind::Eye, "creation runs on the eager kernel (usually folded to a constant)"},
    {OpKind::RngKey, "random keys come from the runtime's generator"},
    {OpKind::RngSplit, "random numbers come from the runtime's generator"},
    {OpKind::RandUniform, "random numbers come from the runtime's generator"},
    {OpKind::RandNormal, "random numbers come from the runtime's generator"},
    {OpKind::Dropout, "random numbers come from the runtime's generator"},
    {OpKind::RandInt, "random numbers come from the runtime's generator"},
    {OpKind::Categorical, "random numbers come from the runtime's generator"},
    {OpKind::Permutation, "random numbers come from the runtime's generator"},
    {OpKind::Shuffle, "random numbers come from the runtime's generator"},
    {OpKind::Bernoulli, "random numbers come from the runtime's generator"},
    {OpKind::Transdata, "layout conversions run the runtime's conversion"},
    // Linear algebra (runtime/LinalgRows.h) runs Eigen's factorisations in the eager kernels.
    {OpKind::Solve, "linear algebra runs Eigen's LU in the eager kernel"},
    {OpKind::Inv, "linear algebra runs Eigen's LU in the eager kernel"},
    {OpKind::Det, "linear algebra runs Eigen's LU in the eager kernel"},
    {OpKind::Slogdet, "linear algebra runs Eigen's LU in the eager kernel"},
    {OpKind::Cholesky, "linear algebra runs Eigen's Cholesky factorisation in the eager kernel"},
    {OpKind::Qr, "linear algebra runs Eigen's Householder QR in the eager kernel"},
    {OpKind::Svd, "linear algebra runs Eigen's SVD in the eager kernel"},
    {OpKind::Eigh, "linear algebra runs Eigen's symmetric eigensolver in the eager kernel"},
    {OpKind::Trace, "trace runs the eager kernel (a diagonal and a sum)"},
    {OpKind::Diag, "diag runs the eager kernel (a strided copy)"},
    // Collectives (runtime/CollectiveRows.h) call MPI through the runtime.
    {OpKind::AllReduce, "collectives call MPI through the runtime"},
    {OpKind::Broadcast, "collectives call MPI through the runtime"},
    {OpKind::AllGather, "collectives call MPI through the runtime"},
    {OpKind::ReduceScatter, "collectives call MPI through the runtime"},
    {OpKind::ReduceToRoot, "collectives call MPI through the runtime"},
    {OpKind::Barrier, "collectives call MPI through the runtime"},
    {OpKind::AllReduceStart, "collectives call MPI through the runtime"},
    {OpKind::AllReduceWait, "collectives call MPI through the runtime"},
};

const Row* emitterOf(OpKind kind) {
  for (const Row& row : kEmitters)
    if (row.kind == kind) return &row;
  return nullptr;
}

const char* fallbackReason(OpKind kind) {
  for (const Fallback& f : kFallbacks)
    if (f.kind == kind) return f.why;
  return nullptr;
}

/// Loops generate it from its traits alone.
bool generatedByLoops(const OpInfo& info) {
  return info.fusion == FusionClass::Elementwise || info.has(kView) || info.has(kLoopReduction);
}

std::string typesOf(const Operation& op) {
  std::string out = "(";
  for (size_t i = 0; i < op.operands().size(); ++i) out += cat(i ? ", " : "", op.operand(i)->type().str());
  return out + ") -> " + op.result()->type().str();
}

} // namespace

Lowering cpuLowering(OpKind kind) {
  const OpInfo& info = opInfo(kind);
  if (generatedByLoops(info) || emitterOf(kind)) return Lowering::Native;
  if (fallbackReason(kind)) return Lowering::GenericKernel;
  fail(ErrorKind::Internal, "cpu: the lowering table has no entry for ", info.name);
}

Access FunctionCodegen::outputAccess(const ir::Value* v) {
  Access a;
  a.base = pointer(v);
  a.dtype = v->type().dtype;
  a.strides = contiguousStrides(dimsOf(v->type()));
  return a;
}

void FunctionCodegen::primitive(const Operation& op) {
  const OpInfo& info = opInfo(op.code().kind);
  const ir::Value* result = op.result();
  const bool scalarResult = result->type().rank() == 0;
  // A view the plan placed on its operand's memory (reshape, squeeze...): no code.
  if (const ir::Placement* placed = plan().find(result);
      placed && placed->home == Home::Shared && !placed->inPlace) {
    setValue(result, pointer(placed->shares));
    return;
  }
  // Generated loops index row-major elements; an operation on other layouts (which the
  // layout passes leave only where a user's to-layout asks for them) runs the runtime's
  // kernel, which converts.
  if (ir::touchesLayouts(op)) {
    const char* why = fallbackReason(op.code().kind);
    return fallback(op, destination(result), why ? why : "its operands or result are not row-major");
  }
  if (info.fusion == FusionClass::Elementwise && scalarResult) {
    std::vector<llvm::Value*> operands;
    for (const ir::Value* v : op.operands()) operands.push_back(scalar(v));
    setValue(result, elementwise(builder(), op, operands));
    return;
  }
  if (info.has(kView) && scalarResult) { // one element of a tensor
    const Access a = viewAccess(op, access(op.operand(0)));
    llvm::Type* t = storageType(result->type().dtype);
    setValue(result, a.scalar ? a.base
                              : builder().CreateLoad(t, builder().CreateConstInBoundsGEP1_64(
                                                            t, a.base, static_cast<uint64_t>(a.offset))));
    return;
  }
  if (info.fusion == FusionClass::Elementwise || info.has(kView)) {
    destination(result);
    emitLoop(nestFor(op), outputAccess(result));
    return;
  }
  llvm::Value* out = destination(result);
  if (info.has(kLoopReduction)) emitReduction(nestFor(op), op, out);
  else emitInto(op, out);
  if (scalarResult) finishScalar(result);
}

void FunctionCodegen::emitInto(const Operation& op, llvm::Value* out) {
  const OpKind kind = op.code().kind;
  if (const Row* row = emitterOf(kind)) {
    if (row->emit(*this, op, out)) return;
    return fallback(op, out, cat("no generated code for these types or attributes"));
  }
  const char* why = fallbackReason(kind);
  fallback(op, out, why ? why : "not generated");
}

void FunctionCodegen::fused(const Operation& op) {
  const ir::Value* result = op.result();
  llvm::Value* out = destination(result);
  const ir::Block& body = op.region(0).block();
  // The region's arguments are the fused operation's operands.
  for (size_t i = 0; i < body.arguments().size(); ++i)
    if (body.argument(i)->type().rank() == 0) setValue(body.argument(i), scalar(op.operand(i)));
    else setValue(body.argument(i), pointer(op.operand(i)));
  const Operation* special = nullptr;
  const LoopNest nest = nestForRegion(op, special);
  if (special && opInfo(special->code().kind).fusion == FusionClass::Contraction) {
    TSL_ASSERT(special->result()->type() == result->type(), "cpu: an epilogue that changes the contraction's type");
    // The GEMM applies an affine epilogue and an activation as it stores C; anything else runs
    // as a loop over the contraction's result, in place.
    if (const auto affine = ir::affineEpilogue(op)) {
      // Always taken when the IR has one: the memory plan may have let the result
      // overwrite the accumulator, which only starting the GEMM from it computes right.
      GemmEpilogue e;
      e.activation = affine->activation == OpKind::Relu       ? 1
                     : affine->activation == OpKind::Gelu     ? 2
                     : affine->activation == OpKind::GeluTanh ? 3
                                                              : 0;
      e.biasAxis = affine->biasAxis;
      if (affine->bias >= 0) e.bias = pointer(op.operand(static_cast<size_t>(affine->bias)));
      if (affine->accumulator >= 0) e.accumulator = pointer(op.operand(static_cast<size_t>(affine->accumulator)));
      const DType dtype = result->type().dtype;
      llvm::Value* alpha = llvm::ConstantFP::get(storageType(dtype), affine->alpha);
      if (affine->alphaOperand >= 0) {
        const ir::Value* s = op.operand(static_cast<size_t>(affine->alphaOperand));
        alpha = builder().CreateFMul(alpha, convert(builder(), scalar(s), s->type().dtype, dtype));
      }
      if (affine->alpha != 1 || affine->alphaOperand >= 0) e.alpha = alpha;
      const bool emitted = emitMatmulWithEpilogue(*this, *special, out, e);
      TSL_ASSERT(emitted, "cpu: a matrix product with an affine epilogue had no GEMM");
    } else {
      emitInto(*special, out);
      if (!nest.ops.empty()) emitLoop(nest, outputAccess(result));
    }
  } else if (special) {
    emitReduction(nest, *special, out);
  } else {
    emitLoop(nest, outputAccess(result));
  }
  views_.clear();
  if (result->type().rank() == 0) finishScalar(result);
}

void FunctionCodegen::fallback(const Operation& op, llvm::Value* out, const std::string& why) {
  const OpInfo& info = opInfo(op.code().kind);
  if (m_.options.aot)
    throw Error(ErrorKind::Value,
                cat("cpu: ", info.name, " ", typesOf(op), " has no generated code (", why,
                    "); a library compiled ahead of time cannot call the eager kernels"),
                op.span());
  KernelSite site{op.code().kind, op.attrs(), {}, op.result()->type(), op.span()};
  std::vector<llvm::Value*> inputs;
  for (const ir::Value* v : op.operands()) {
    site.inputs.push_back(v->type());
    inputs.push_back(pointer(v));
  }
  const auto index = static_cast<int32_t>(m_.program.kernels.size());
  m_.program.kernels.push_back(std::move(site));
  const Span& at = op.span();
  m_.program.fallbacks.push_back(cat(at.known() ? cat(at.fileName(), ":", at.line, ":", at.col) : std::string("?"), ": ",
                                     info.mnemonic, " ", typesOf(op), " (", why, ")"));
  llvm::Type* ptr = llvm::PointerType::getUnqual(context());
  propagate(builder().CreateCall(m_.abi("tsl_run_kernel"), {contextPointer(), i32(index), array(inputs, ptr), out}));
}

} // namespace tsl::compiler::cpu
