// runtime/LinearAlgebra.cpp — matmul on Eigen's GEMM; dot and einsum reduce to it.
#include "runtime/LinearAlgebra.h"

#include "runtime/EinsumPlan.h"

#include "runtime/Dispatch.h"
#include "runtime/Elementwise.h"
#include "runtime/Interrupt.h"
#include "runtime/Reduce.h"
#include "runtime/ThreadPool.h"
#include "runtime/Views.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <map>
#include <type_traits>

namespace tsl {

namespace {

std::atomic<GemmProvider> gemmProvider{nullptr};

/// The dtype a GEMM runs in for a result dtype: halves in f32, bool in i64.
DType computeDType(DType result) {
  if (result == DType::F16 || result == DType::BF16) return DType::F32;
  if (result == DType::Bool) return DType::I64;
  return result;
}

/// Row-major matrix [rows, cols] at `data` with row stride `ld`.
template <typename S>
using MatrixMap = Eigen::Map<const Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                             Eigen::OuterStride<>>;
template <typename S>
using MutableMatrixMap = Eigen::Map<Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>, 0,
                                    Eigen::OuterStride<>>;

/// C[m,n] = A[m,k] * B[k,n], all row-major with unit column stride; rows of C split over
/// threads when the product is large.
template <typename S>
void gemm(const S* a, int64_t lda, const S* b, int64_t ldb, S* c, int64_t ldc, int64_t m, int64_t k, int64_t n,
          bool parallel) {
  auto block = [&](int64_t begin, int64_t end) {
    MutableMatrixMap<S>(c + begin * ldc, end - begin, n, Eigen::OuterStride<>(ldc)).noalias() =
        MatrixMap<S>(a + begin * lda, end - begin, k, Eigen::OuterStride<>(lda)) *
        MatrixMap<S>(b, k, n, Eigen::OuterStride<>(ldb));
  };
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, S(0));
    return;
  }
  if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double>) {
    const DType dtype = std::is_same_v<S, float> ? DType::F32 : DType::F64;
    if (GemmProvider provider = gemmProvider.load(std::memory_order_acquire);
        provider && provider(dtype, a, lda, b, ldb, c, ldc, m, k, n))
      return;
  }
  const int64_t work = m * k * n;
  if (work >= (int64_t(1) << 32)) {
    // A long product (a second or more): tiles of C of about 2^27 multiply-adds each (tens
    // of milliseconds), so that an interrupt is noticed between them. Packing a tile's
    // operands costs 1/256 of its arithmetic or less.
    const int64_t side = std::max<int64_t>(256, static_cast<int64_t>(std::sqrt(double(int64_t(1) << 27) / double(k))));
    const int64_t mb = std::min(m, side), nb = std::min(n, side);
    const int64_t rowTiles = (m + mb - 1) / mb, colTiles = (n + nb - 1) / nb;
    auto tiles = [&](int64_t begin, int64_t end) {
      for (int64_t t = begin; t < end; ++t) {
        checkInterrupt();
        const int64_t i = (t / colTiles) * mb, j = (t % colTiles) * nb;
        const int64_t rows = std::min(mb, m - i), cols = std::min(nb, n - j);
        MutableMatrixMap<S>(c + i * ldc + j, rows, cols, Eigen::OuterStride<>(ldc)).noalias() =
            MatrixMap<S>(a + i * lda, rows, k, Eigen::OuterStride<>(lda)) *
            MatrixMap<S>(b + j, k, cols, Eigen::OuterStride<>(ldb));
      }
    };
    if (parallel) parallelFor(rowTiles * colTiles, 1, tiles);
    else tiles(0, rowTiles * colTiles);
    return;
  }
  if (parallel && work >= (int64_t(1) << 18) && m >= 16) {
    // Row blocks of at least 16 rows, enough work each to pay for a thread.
    const int64_t grain = std::max<int64_t>(16, (int64_t(1) << 17) / std::max<int64_t>(k * n, 1));
    parallelFor(m, grain, block);
  } else {
    block(0, m);
  }
}

} // namespace

void setGemmProvider(GemmProvider provider) { gemmProvider.store(provider, std::memory_order_release); }

namespace {

/// Whether the last axis has unit stride (the matrix can be read row-major in place).
bool rowMajorReadable(const Tensor& t) {
  return t.rank() >= 2 && t.strides()[t.rank() - 1] == 1 && t.strides()[t.rank() - 2] >= t.shape()[t.rank() - 1];
}

} // namespace

TypeKey contractionType(TypeKey a, TypeKey b) {
  const TypeKey t = promoteTypes(a, b);
  return {concreteDType(t), false};
}

Shape matmulShape(const Shape& a, const Shape& b) {
  if (a.rank() == 0 || b.rank() == 0)
    fail(ErrorKind::Shape, "matmul: operands must have at least one axis, got ", a.str(), " and ", b.str());
  const bool vecA = a.rank() == 1, vecB = b.rank() == 1;
  const int64_t k = a[a.rank() - 1];
  const int64_t kb = vecB ? b[0] : b[b.rank() - 2];
  if (k != kb)
    fail(ErrorKind::Shape, "matmul cannot contract ", a.str(), " with ", b.str(), " (", k, " != ", kb, ")");
  // Batch axes broadcast like elementwise operands.
  Shape batchA, batchB;
  for (int i = 0; i + 2 < a.rank(); ++i) batchA.push(a[i]);
  for (int i = 0; i + 2 < b.rank(); ++i) batchB.push(b[i]);
  Shape out = broadcastShapes(batchA, batchB, "matmul");
  if (!vecA) out.push(a[a.rank() - 2]);
  if (!vecB) out.push(b[b.rank() - 1]);
  (void)out.numel();
  return out;
}

Tensor matmul(const Tensor& a, const Tensor& b) {
  const Shape outShape = matmulShape(a.shape(), b.shape());
  const TypeKey type = contractionType(a.typeKey(), b.typeKey());
  const DType compute = computeDType(type.dtype);
  // Work on rank >= 2 operands: a row vector [1,k] and a column vector [k,1].
  Tensor A = a.rank() == 1 ? expandDims(a, 0) : a;
  Tensor B = b.rank() == 1 ? expandDims(b, 1) : b;
  if (A.dtype() != compute) A = astype(A, compute);
  if (B.dtype() != compute) B = astype(B, compute);
  if (!rowMajorReadable(A)) A = contiguous(A);
  if (!rowMajorReadable(B)) B = contiguous(B);
  const int64_t m = A.shape()[A.rank() - 2], k = A.shape()[A.rank() - 1], n = B.shape()[B.rank() - 1];

  // Broadcast batch axes: full-rank batch shapes of both operands.
  Shape batchA, batchB;
  for (int i = 0; i + 2 < A.rank(); ++i) batchA.push(A.shape()[i]);
  for (int i = 0; i + 2 < B.rank(); ++i) batchB.push(B.shape()[i]);
  const Shape batch = broadcastShapes(batchA, batchB, "matmul");
  Shape full = batch;
  full.push(m);
  full.push(n);
  Tensor out = Tensor::empty(compute, full);
  Shape fullA = batch, fullB = batch;
  fullA.push(m);
  fullA.push(k);
  fullB.push(k);
  fullB.push(n);
  const Tensor viewA = broadcastTo(A, fullA), viewB = broadcastTo(B, fullB);
  const int64_t batches = batch.numel();
  dispatchDType(compute, [&](auto tag) {
    using S = decltype(tag);
    if constexpr (std::is_same_v<S, float> || std::is_same_v<S, double> || std::is_same_v<S, int32_t> ||
                  std::is_same_v<S, int64_t>) {
      const S* pa = reinterpret_cast<const S*>(viewA.data());
      const S* pb = reinterpret_cast<const S*>(viewB.data());
      S* pc = reinterpret_cast<S*>(out.mutableData());
      const int r = batch.rank();
      auto offsetOf = [&](const Tensor& t, int64_t flat) {
        int64_t offset = 0;
        for (int d = r - 1; d >= 0; --d) {
          offset += (flat % batch[d]) * t.strides()[d];
          flat /= batch[d];
        }
        return offset;
      };
      const int64_t lda = viewA.strides()[r], ldb = viewB.strides()[r];
      auto run = [&](int64_t begin, int64_t end, bool parallel) {
        for (int64_t i = begin; i < end; ++i)
          gemm<S>(pa + offsetOf(viewA, i), lda, pb + offsetOf(viewB, i), ldb, pc + i * m * n, n, m, k, n, parallel);
      };
      if (batches > 1 && m * k * n < (int64_t(1) << 20))
        parallelFor(batches, std::max<int64_t>(1, (int64_t(1) << 18) / std::max<int64_t>(m * k * n, 1)),
                    [&](int64_t begin, int64_t end) { run(begin, end, false); });
      else
        run(0, batches, true);
    } else {
      fail(ErrorKind::Internal, "matmul: no GEMM for ", dtypeName(compute));
    }
  });
  Tensor result = reshape(out, outShape);
  return result.dtype() == type.dtype ? result : astype(result, type.dtype);
}

Shape dotShape(const Shape& a, const Shape& b) {
  if (a.rank() <= 2 && b.rank() <= 2) {
    if (a.rank() == 0 || b.rank() == 0) return broadcastShapes(a, b, "dot");
    return matmulShape(a, b);
  }
  if (b.rank() == 1) return matmulShape(a, b);
  const int64_t k = a[a.rank() - 1], kb = b[b.rank() - 2];
  if (k != kb) fail(ErrorKind::Shape, "dot cannot contract ", a.str(), " with ", b.str(), " (", k, " != ", kb, ")");
  Shape out;
  for (int i = 0; i + 1 < a.rank(); ++i) out.push(a[i]);
  for (int i = 0; i < b.rank(); ++i)
    if (i != b.rank() - 2) out.push(b[i]);
  return out;
}

Tensor dot(const Tensor& a, const Tensor& b) {
  const Shape shape = dotShape(a.shape(), b.shape());
  if (a.isScalar() || b.isScalar()) return applyBinary(BinaryOp::Mul, a, b);
  if ((a.rank() <= 2 && b.rank() <= 2) || b.rank() == 1) return matmul(a, b);
  // Sum over a's last axis and b's second-to-last: a as [-1, k], b moved to [k, -1].
  // The other sizes are products of the other axes, not numel / k: k may be 0.
  const int64_t k = a.shape().dims().back(); // rank >= 1 here: scalars returned above
  int64_t rows = 1, cols = 1;
  for (int i = 0; i + 1 < a.rank(); ++i) rows *= a.shape()[i];
  std::vector<int64_t> perm{b.rank() - 2};
  for (int i = 0; i < b.rank(); ++i)
    if (i != b.rank() - 2) {
      perm.push_back(i);
      cols *= b.shape()[i];
    }
  const Tensor A = reshape(a, Shape{rows, k});
  const Tensor B = reshape(contiguous(transpose(b, perm)), Shape{k, cols});
  return reshape(matmul(A, B), shape);
}

// ---- einsum ----

namespace einsumplan {

Spec parse(const std::string& spec, size_t operands) {
  Spec parsed;
  const size_t arrow = spec.find("->");
  const std::string lhs = spec.substr(0, arrow);
  std::string current;
  for (char c : lhs) {
    if (c == ',') {
      parsed.inputs.push_back(current);
      current.clear();
    } else if (std::isalpha(static_cast<unsigned char>(c))) {
      current += c;
    } else if (c != ' ') {
      fail(ErrorKind::Value, "einsum: unexpected '", c, "' in \"", spec, "\" (letters, ',' and '->' only)");
    }
  }
  parsed.inputs.push_back(current);
  if (parsed.inputs.size() != operands)
    fail(ErrorKind::Value, "einsum: \"", spec, "\" names ", parsed.inputs.size(), " operands, got ", operands);
  std::map<char, int> uses;
  for (const std::string& in : parsed.inputs)
    for (char c : in) ++uses[c];
  if (arrow == std::string::npos) {
    for (const auto& [letter, count] : uses)
      if (count == 1) parsed.output += letter;
  } else {
    for (char c : spec.substr(arrow + 2)) {
      if (c == ' ') continue;
      if (!std::isalpha(static_cast<unsigned char>(c)))
        fail(ErrorKind::Value, "einsum: unexpected '", c, "' in the output of \"", spec, "\"");
      if (!uses.count(c)) fail(ErrorKind::Value, "einsum: output letter '", c, "' appears in no operand");
      if (parsed.output.find(c) != std::string::npos)
        fail(ErrorKind::Value, "einsum: output letter '", c, "' is repeated");
      parsed.output += c;
    }
  }
  return parsed;
}

} // namespace einsumplan

namespace {

/// einsum's plan (runtime/EinsumPlan.h) on tensors.
struct TensorOps {
  using Value = Tensor;
  /// Takes the diagonal for letters repeated within one operand (a strided view).
  Tensor diagonal(const Tensor& t, const std::string& letters, std::string& unique) {
    unique.clear();
    std::array<int64_t, Shape::kMaxRank> dims{}, strides{};
    int rank = 0;
    for (size_t i = 0; i < letters.size(); ++i) {
      const size_t at = unique.find(letters[i]);
      if (at == std::string::npos) {
        unique += letters[i];
        dims[rank] = t.shape()[static_cast<int>(i)];
        strides[rank] = t.strides()[i];
        ++rank;
      } else {
        if (dims[at] != t.shape()[static_cast<int>(i)])
          fail(ErrorKind::Shape, "einsum: letter '", letters[i], "' has sizes ", dims[at], " and ",
               t.shape()[static_cast<int>(i)], " within one operand");
        strides[at] += t.strides()[i];
      }
    }
    if (rank == t.rank()) return t;
    return Tensor::view(t.dtype(), Shape(std::span<const int64_t>(dims.data(), rank)),
                        std::span<const int64_t>(strides.data(), rank), t.offset(), *t.storage());
  }

  Tensor sum(const Tensor& t, const std::vector<int64_t>& axes) {
    ReduceAttrs attrs;
    attrs.axes = axes;
    return reduce(ReduceOp::Sum, t, attrs);
  }
  Tensor transpose(const Tensor& t, const std::vector<int64_t>& perm) { return tsl::transpose(t, perm); }
  Tensor reshape(const Tensor& t, const std::vector<int64_t>& dims) { return tsl::reshape(t, Shape(dims)); }
  Tensor matmul(const Tensor& a, const Tensor& b) { return tsl::matmul(a, b); }
  int64_t size(const Tensor& t, int axis) { return t.shape()[axis]; }
  int rank(const Tensor& t) { return t.rank(); }
};

} // namespace

Shape einsumShape(const std::string& spec, std::span<const Shape> operands) {
  const einsumplan::Spec parsed = einsumplan::parse(spec, operands.size());
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (static_cast<int>(parsed.inputs[i].size()) != operands[i].rank())
      fail(ErrorKind::Shape, "einsum: \"", parsed.inputs[i], "\" names ", parsed.inputs[i].size(),
           " axes but operand ", i, " has shape ", operands[i].str());
    for (size_t d = 0; d < parsed.inputs[i].size(); ++d) {
      const char c = parsed.inputs[i][d];
      const int64_t size = operands[i][static_cast<int>(d)];
      auto [it, inserted] = sizes.emplace(c, size);
      if (!inserted && it->second != size)
        fail(ErrorKind::Shape, "einsum: letter '", c, "' has sizes ", it->second, " and ", size);
    }
  }
  Shape out;
  for (char c : parsed.output) out.push(sizes[c]);
  return out;
}

Tensor einsum(const std::string& spec, std::span<const Tensor> operands) {
  std::vector<Shape> shapes;
  for (const Tensor& t : operands) shapes.push_back(t.shape());
  const Shape outShape = einsumShape(spec, shapes);
  const einsumplan::Spec parsed = einsumplan::parse(spec, operands.size());
  std::vector<Tensor> values;
  for (const Tensor& t : operands) values.push_back(t.isScalar() ? t.strengthened() : t);
  TensorOps ops;
  const Tensor result = einsumplan::Plan<TensorOps>{ops}.run(parsed, values);
  TSL_ASSERT(result.shape() == outShape);
  return result.isScalar() ? result.strengthened() : contiguous(result);
}

} // namespace tsl
