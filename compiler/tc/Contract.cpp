// compiler/tc/Contract.cpp — matmul, dot and conv2d tensors as GM buffers of cube programs.
#include "compiler/tc/Contract.h"

#include "runtime/Elementwise.h"
#include "runtime/Layout.h"
#include "runtime/Ops.h"
#include "runtime/Views.h"

namespace tsl::compiler::tc {

namespace {

std::optional<Ty> gmTy(DType d) {
  switch (d) {
  case DType::F16: return Ty::F16;
  case DType::BF16: return Ty::BF16;
  case DType::F32: return Ty::F32;
  case DType::F64: return Ty::F64;
  default: return std::nullopt;
  }
}

/// A tensor's physical buffer as a GM tensor (the tensor kept alive by the caller).
GmView view(const Tensor& t) {
  return GmView{reinterpret_cast<uint8_t*>(const_cast<char*>(t.physicalData())), t.physicalShape().numel()};
}

/// A blocked operand the program reads as it is: its C0 must be the cube's 16.
bool blockedAs(const Tensor& t, Layout layout) {
  return t.layout() == layout && t.physicalShape()[t.physicalShape().rank() - 1] == 16;
}

/// The program `key` names, made with `make` the first time.
const Program& program(const std::string& key, const std::function<Program(std::string&)>& make, const CubeContext& cx) {
  auto& slot = cx.cache.programs[key];
  if (!slot) {
    std::string report;
    Program p = make(report);
    p.notes.push_back(report);
    slot = std::make_shared<const Program>(std::move(p));
  }
  return *slot;
}

/// Runs `p` on `gm`, adding its statistics (and trace) to the context's.
void run(const Program& p, const std::vector<GmView>& gm, const CubeContext& cx) {
  Emulator emulator(cx.device);
  Emulator::Options o;
  o.trace = cx.trace;
  o.traceOffset = cx.clock ? *cx.clock : 0;
  TcStats stats = emulator.run(p, gm, o);
  if (cx.clock) *cx.clock += stats.cycles;
  if (!p.notes.empty()) stats.tilings.push_back(p.notes.back());
  cx.stats.add(stats);
  if (cx.used) cx.used->push_back(&p);
}

/// A tensor's physical buffer from element `offset` on.
GmView viewFrom(const Tensor& t, int64_t offset) {
  const GmView whole = view(t);
  const auto size = static_cast<int64_t>(dtypeSize(t.dtype()));
  return GmView{whole.data + offset * size, whole.elements - offset};
}

/// Most K steps one program takes: a larger matmul runs as programs over slabs of its
/// rows (and one per batch), each the same program over other GM addresses — as a kernel
/// is launched once per block — so no program grows with the problem.
constexpr int64_t kMaxSteps = 4096;

/// Converts `t` to `layout` for the cube, counting the conversion as executed transdata.
Tensor converted(const Tensor& t, Layout layout, const CubeContext& cx) {
  if (blockedAs(t, layout)) return t;
  Tensor out = denseInLayout(t, layout);
  ++cx.stats.transdata;
  cx.stats.transdataBytes += static_cast<int64_t>(t.physicalShape().numel() + out.physicalShape().numel()) *
                             static_cast<int64_t>(dtypeSize(t.dtype()));
  return out;
}

/// What the drain writes when the contraction sums nothing (K, or a convolution's channels
/// or window, is 0): zeros with the epilogue the program would apply — the bias, ReLU —
/// computed as the absorbed operations compute it, in `layout`. No program runs: a tiling
/// of an empty axis has no steps.
Tensor emptySum(DType dtype, const Shape& shape, Layout layout, const CubeContext& cx) {
  Tensor out = Tensor::zeros(dtype, shape);
  if (cx.bias) out = applyBinary(BinaryOp::Add, out, plain(*cx.bias));
  if (cx.epilogue.relu) out = applyUnary(UnaryOp::Relu, out);
  return toLayout(out, layout);
}

/// C = A·B with A [..., M, K] and B [..., K, N] (batch axes broadcast), written in
/// `layout` (row-major or FRACTAL_NZ) as `dtype`.
Tensor matmulOnCube(Tensor a, Tensor b, DType dtype, Layout layout, const CubeContext& cx) {
  const bool aNz = blockedAs(a, Layout::FractalNZ), bNz = blockedAs(b, Layout::FractalNZ);
  if (!aNz) a = denseInLayout(a, Layout::RowMajor);
  if (!bNz) b = denseInLayout(b, Layout::RowMajor);
  const Shape& as = a.shape();
  const Shape& bs = b.shape();
  MatmulSpec s;
  s.m = as[as.rank() - 2], s.k = as[as.rank() - 1], s.n = bs[bs.rank() - 1];
  Shape aBatch, bBatch;
  for (int i = 0; i + 2 < as.rank(); ++i) aBatch.push(as[i]);
  for (int i = 0; i + 2 < bs.rank(); ++i) bBatch.push(bs[i]);
  const Shape batch = broadcastShapes(aBatch, bBatch, "matmul");
  s.aBatches = aBatch.numel(), s.bBatches = bBatch.numel();
  s.aBatch.clear(), s.bBatch.clear();
  // Each result batch's operand batches: its index unravelled, broadcast axes read at 0.
  auto flat = [&](const Shape& operand, const std::vector<int64_t>& index) {
    int64_t at = 0;
    const int skip = batch.rank() - operand.rank();
    for (int i = 0; i < operand.rank(); ++i)
      at = at * operand[i] + (operand[i] == 1 ? 0 : index[static_cast<size_t>(i + skip)]);
    return at;
  };
  std::vector<int64_t> index(static_cast<size_t>(batch.rank()), 0);
  for (int64_t i = 0; i < batch.numel(); ++i) {
    int64_t rest = i;
    for (int d = batch.rank() - 1; d >= 0; --d) index[static_cast<size_t>(d)] = rest % batch[d], rest /= batch[d];
    s.aBatch.push_back(flat(aBatch, index));
    s.bBatch.push_back(flat(bBatch, index));
  }
  s.aTy = *gmTy(a.dtype()), s.bTy = *gmTy(b.dtype()), s.outTy = *gmTy(dtype);
  s.aNz = aNz, s.bNz = bNz, s.outNz = layout == Layout::FractalNZ;
  s.cube = cx.cube;
  s.epilogue = cx.epilogue;
  Tensor bias;
  if (cx.bias) {
    bias = denseInLayout(*cx.bias, Layout::RowMajor);
    s.epilogue.bias = true, s.epilogue.biasTy = *gmTy(bias.dtype());
  }
  Shape outShape = batch;
  outShape.push(s.m);
  outShape.push(s.n);
  Tensor out = emptyInLayout(dtype, outShape, s.outNz ? Layout::FractalNZ : Layout::RowMajor);
  if (out.numel() == 0) return out;
  if (s.k == 0) return emptySum(dtype, outShape, out.layout(), cx);
  // One program per batch and slab of rows; the tiling is searched on a problem of at
  // most 256 × 1024 × 256 (its steady state is the whole's).
  const std::vector<int64_t> aBatches = s.aBatch, bBatches = s.bBatch;
  const int64_t m = s.m, m1p = (m + 15) / 16 * 16;
  const int64_t aStride = aNz ? (s.k + 15) / 16 * 16 * m1p : m * s.k, bStride = bNz ? (s.n + 15) / 16 * 16 * ((s.k + 15) / 16 * 16) : s.k * s.n;
  const int64_t cStride = s.outNz ? (s.n + 15) / 16 * 16 * m1p : m * s.n;
  s.aBatch = {0}, s.bBatch = {0}, s.aBatches = s.bBatches = 1;
  MatmulSpec probe = s;
  probe.m = std::min<int64_t>(m, 256), probe.n = std::min<int64_t>(s.n, 256), probe.k = std::min<int64_t>(s.k, 1024);
  const std::string tilingKey = cat(m, " ", s.k, " ", s.n, " ", tyName(s.cube), s.aNz, s.bNz, s.outNz, s.epilogue.bias);
  auto [chosen, fresh] = cx.cache.tilings.try_emplace(tilingKey);
  if (fresh) chosen->second.first = chooseMatmulTiling(probe, cx.device, &chosen->second.second);
  const Tiling t = chosen->second.first;
  const bool clipped = probe.m != m || probe.n != s.n || probe.k != s.k;
  const int64_t stepsPerRowTile = ((s.n + 15) / 16 + t.tn - 1) / t.tn * (((s.k + fractalCols(s.cube) - 1) / fractalCols(s.cube) + t.tk - 1) / t.tk);
  const int64_t slab = std::min(m, t.tm * 16 * std::max<int64_t>(1, kMaxSteps / std::max<int64_t>(stepsPerRowTile, 1)));
  s.mPlane = m;
  const std::string report = clipped ? cat("matmul ", m, "x", s.k, "x", s.n, " in slabs of ", slab,
                                           " rows; tiling searched on a part: ", chosen->second.second)
                                     : chosen->second.second;
  auto slabProgram = [&](int64_t rows) -> const Program& {
    MatmulSpec one = s;
    one.m = rows;
    const std::string key = cat("matmul ", rows, " of ", m, " ", s.k, " ", s.n, " ", tyName(s.aTy), tyName(s.bTy),
                                tyName(s.outTy), " ", s.aNz, s.bNz, s.outNz, " ", tyName(s.cube), " epilogue ",
                                s.epilogue.bias ? tyName(s.epilogue.biasTy) : "-", s.epilogue.relu);
    return program(key, [&](std::string& r) {
      r = report;
      Program p = lowerMatmul(one, t, cx.device);
      return p;
    }, cx);
  };
  for (size_t bt = 0; bt < aBatches.size(); ++bt)
    for (int64_t m0 = 0; m0 < m; m0 += slab) {
      const int64_t rows = std::min(slab, m - m0);
      std::vector<GmView> gm{viewFrom(a, aBatches[bt] * aStride + (aNz ? m0 * 16 : m0 * s.k)),
                             viewFrom(b, bBatches[bt] * bStride),
                             viewFrom(out, static_cast<int64_t>(bt) * cStride + (s.outNz ? m0 * 16 : m0 * s.n))};
      if (s.epilogue.bias) gm.push_back(view(bias));
      run(slabProgram(rows), gm, cx);
    }
  return out;
}

std::optional<Tensor> matmulRow(const ir::Operation& op, std::span<const Tensor> in, const CubeContext& cx) {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  const ir::Type& type = op.result()->type();
  if (!gmTy(a.dtype()) || !gmTy(b.dtype()) || !gmTy(type.dtype) || a.rank() == 0 || b.rank() == 0) return std::nullopt;
  const bool vecA = a.rank() == 1, vecB = b.rank() == 1;
  if (!vecA && !vecB) return matmulOnCube(a, b, type.dtype, cx.layout.value_or(type.layout), cx);
  // Vectors as a row [1, K] and a column [K, 1]; the result drops those axes again.
  const Tensor A = vecA ? expandDims(plain(a), 0) : a;
  const Tensor B = vecB ? expandDims(plain(b), 1) : b;
  const Tensor out = matmulOnCube(A, B, type.dtype, Layout::RowMajor, cx);
  return reshape(out, type.shape());
}

std::optional<Tensor> dotRow(const ir::Operation& op, std::span<const Tensor> in, const CubeContext& cx) {
  const Tensor& a = in[0];
  const Tensor& b = in[1];
  if (a.rank() == 0 || b.rank() == 0) return std::nullopt; // a product, not a contraction
  if ((a.rank() <= 2 && b.rank() <= 2) || b.rank() == 1) return matmulRow(op, in, cx);
  if (!gmTy(a.dtype()) || !gmTy(b.dtype()) || !gmTy(op.result()->type().dtype)) return std::nullopt;
  // a's last axis with b's second-to-last: a as [rows, k], b moved to [k, cols] (as eager
  // dot). rows and cols are products of the other axes, not numel / k, which is 0 / 0 when
  // k is 0 (the result is then zeros, not empty).
  const int64_t k = a.shape().dims().back();
  int64_t rows = 1, cols = 1;
  for (int i = 0; i + 1 < a.rank(); ++i) rows *= a.shape()[i];
  std::vector<int64_t> perm{b.rank() - 2};
  for (int i = 0; i < b.rank(); ++i)
    if (i != b.rank() - 2) perm.push_back(i), cols *= b.shape()[i];
  const Tensor A = reshape(plain(a), Shape{rows, k});
  const Tensor B = reshape(contiguous(transpose(plain(b), perm)), Shape{k, cols});
  return reshape(matmulOnCube(A, B, op.result()->type().dtype, Layout::RowMajor, cx), op.result()->type().shape());
}

std::optional<Tensor> conv2dRow(const ir::Operation& op, std::span<const Tensor> in, const CubeContext& cx) {
  const ir::Type& type = op.result()->type();
  if (!gmTy(in[0].dtype()) || !gmTy(in[1].dtype()) || !gmTy(type.dtype) || in[0].rank() != 4 || in[1].rank() != 4 ||
      in[0].shape()[1] != in[1].shape()[1] || type.dtype == DType::F64)
    return std::nullopt; // the eager kernel raises what is wrong
  const auto& attrs = std::get<Conv2dAttrs>(op.attrs());
  const Shape& xs = in[0].shape();
  const Shape& ws = in[1].shape();
  ConvSpec s;
  s.batch = xs[0], s.c = xs[1], s.h = xs[2], s.w = xs[3];
  s.o = ws[0], s.kh = ws[2], s.kw = ws[3];
  s.strideH = attrs.stride[0], s.strideW = attrs.stride[1], s.padH = attrs.padding[0], s.padW = attrs.padding[1];
  if (s.oh() <= 0 || s.ow() <= 0) return std::nullopt; // the eager kernel raises the shape error
  const Shape outShape{s.batch, s.o, s.oh(), s.ow()};
  // Nothing to compute: an empty result, or a sum over nothing — no channels, an empty
  // window, or an empty image, whose windows see only padding. Every tiling of such a
  // problem would have an axis of no fractals (and no step).
  if (outShape.numel() == 0) return emptyInLayout(type.dtype, outShape, type.layout);
  if (s.c == 0 || s.h == 0 || s.w == 0 || s.kh == 0 || s.kw == 0) return emptySum(type.dtype, outShape, type.layout, cx);
  const Tensor x = converted(in[0], Layout::NC1HWC0, cx);
  const Tensor w = converted(in[1], Layout::FractalZ, cx);
  s.dataTy = *gmTy(x.dtype()), s.weightTy = *gmTy(w.dtype()), s.outTy = *gmTy(type.dtype), s.cube = cx.cube;
  s.epilogue.relu = cx.epilogue.relu;
  Tensor out = emptyInLayout(type.dtype, Shape{s.batch, s.o, s.oh(), s.ow()}, Layout::NC1HWC0);
  // One program per image, run over each image's addresses.
  const int64_t images = s.batch;
  s.batch = 1;
  const std::string key =
      cat("conv2d ", s.c, " ", s.h, " ", s.w, " ", s.o, " ", s.kh, " ", s.kw, " ", s.strideH, " ", s.strideW, " ", s.padH,
          " ", s.padW, " ", tyName(s.dataTy), tyName(s.weightTy), tyName(s.outTy), tyName(s.cube), " relu ",
          s.epilogue.relu);
  const Program& p = program(key, [&](std::string& report) {
    return lowerConv(s, chooseConvTiling(s, cx.device, &report), cx.device);
  }, cx);
  const int64_t c1 = (s.c + 15) / 16, o1 = (s.o + 15) / 16;
  for (int64_t img = 0; img < images; ++img)
    run(p, {viewFrom(x, img * c1 * s.h * s.w * 16), view(w), viewFrom(out, img * o1 * s.oh() * s.ow() * 16)}, cx);
  return type.layout == Layout::NC1HWC0 ? out : converted(out, type.layout, cx);
}

using Row = std::optional<Tensor> (*)(const ir::Operation&, std::span<const Tensor>, const CubeContext&);

/// The cube lowering table.
const std::pair<OpKind, Row> kCubeRows[] = {
    {OpKind::MatMul, matmulRow},
    {OpKind::Dot, dotRow},
    {OpKind::Conv2d, conv2dRow},
};

Row rowOf(OpKind kind) {
  for (const auto& [k, row] : kCubeRows)
    if (k == kind) return row;
  return nullptr;
}

} // namespace

bool runsOnCube(OpKind kind) { return rowOf(kind) != nullptr; }

std::optional<Tensor> runOnCube(const ir::Operation& op, std::span<const Tensor> inputs, const CubeContext& cx) {
  const Row row = op.code().primitive ? rowOf(op.code().kind) : nullptr;
  return row ? row(op, inputs, cx) : std::nullopt;
}

} // namespace tsl::compiler::tc
