// runtime/Collectives.cpp — the collectives: type rules, kernels, and their tensors'
// buffers for the transport.
#include "runtime/Collectives.h"

#include "runtime/Transport.h"
#include "runtime/Views.h"

#include <cstring>
#include <mutex>
#include <unordered_map>

namespace tsl {

namespace {

const CollectiveAttrs& attrsOf(const OpAttrs& attrs) {
  const CollectiveAttrs* a = std::get_if<CollectiveAttrs>(&attrs);
  TSL_ASSERT(a, "a collective given the wrong kind of attributes");
  return *a;
}

/// The dtype all-reduce gives (reduce-scatter and reduce-to-root sum: Sum's).
DType reducedDType(DType d, CollectiveOp op) {
  if (op == CollectiveOp::Mean && !isFloat(d)) return DType::F32;
  if (op == CollectiveOp::Sum && d == DType::Bool) return DType::I64;
  return d;
}

/// A collective's result is never weak: it holds what several ranks computed.
DType strong(const TensorType& t) { return t.weak ? concreteDType({t.dtype, true}) : t.dtype; }

void checkWorld(const CollectiveAttrs& a, const char* what) {
  if (a.ranks < 1) fail(ErrorKind::Value, what, ": a world of ", a.ranks, " ranks");
}

void checkRoot(int64_t root, int64_t ranks, const char* what) {
  if (root < 0 || root >= ranks)
    fail(ErrorKind::Value, what, ": root ", root, " is not a rank of a world of ", ranks, ranks == 1 ? " rank" : " ranks");
}

/// The kernel runs in the world its call was made for.
void checkRanks(const CollectiveAttrs& a, const char* what) {
  const int size = worldSize();
  if (a.ranks != size)
    fail(ErrorKind::Value, what, " was made for a world of ", a.ranks, a.ranks == 1 ? " rank" : " ranks",
         " but runs in one of ", size);
}

// ---- Agreement ----

uint64_t mix(uint64_t h, uint64_t v) { // FNV-1a, a word at a time
  for (int i = 0; i < 8; ++i) h = (h ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
  return h;
}

/// Fails on every rank unless every rank makes the same call (collective, dtype, shape,
/// attributes).
void agreeOn(OpKind kind, const Tensor& x, int64_t attribute, const char* what, const std::string& detail) {
  uint64_t h = 0xcbf29ce484222325ull;
  h = mix(h, static_cast<uint64_t>(kind));
  h = mix(h, static_cast<uint64_t>(x.dtype()));
  h = mix(h, static_cast<uint64_t>(x.rank()));
  for (int64_t d : x.shape()) h = mix(h, static_cast<uint64_t>(d));
  h = mix(h, static_cast<uint64_t>(attribute));
  if (transport::agree(h)) return;
  fail(ErrorKind::Runtime, what, " of ", TensorType::of(x).str(), detail, " on rank ", worldRank(),
       ": the ranks disagree (every rank must call the same collectives in the same order, with tensors of the same "
       "dtype and shape; another rank called something else, or its program has ended)");
}

void agreeOn(OpKind kind, const char* what) {
  uint64_t h = mix(0xcbf29ce484222325ull, static_cast<uint64_t>(kind));
  if (transport::agree(h)) return;
  fail(ErrorKind::Runtime, what, " on rank ", worldRank(),
       ": the ranks disagree (every rank must call the same collectives in the same order; another rank called "
       "something else, or its program has ended)");
}

/// x in dtype d, strong (the identity of a one-rank world).
Tensor as(const Tensor& x, DType d) {
  if (x.dtype() != d) return astype(x, d);
  return x.weak() ? x.strengthened() : x;
}

} // namespace

// ---- The collectives ----
// Each has a form that writes into a buffer the caller gives (compiled code's, so that a
// large result is not copied once more), used where no conversion is needed on the way;
// the allocating form makes the buffer and calls it.

namespace {

/// The dtype x travels in: sums of booleans as i64, :mean of integers and booleans in f64
/// (exact to 2^53, then rounded once to f32).
DType wireDType(DType d, CollectiveOp op) {
  if (op == CollectiveOp::Mean && !isFloat(d)) return DType::F64;
  if (op == CollectiveOp::Sum && d == DType::Bool) return DType::I64;
  return d;
}

/// The product of x's dimensions before and after `axis`.
std::pair<int64_t, int64_t> around(const Tensor& x, int axis) {
  int64_t before = 1, after = 1;
  for (int i = 0; i < axis; ++i) before *= x.shape()[i];
  for (int i = axis + 1; i < x.rank(); ++i) after *= x.shape()[i];
  return {before, after};
}

// The writing forms: world of more than one rank, `out` contiguous and of the result's type.

void allReduceInto(const Tensor& x, CollectiveOp op, Tensor& out) {
  agreeOn(OpKind::AllReduce, x, static_cast<int64_t>(op), "all-reduce", cat(" :", collectiveOpName(op)));
  const Tensor in = as(x, out.dtype()).rowMajor();
  transport::allReduce(in.data(), out.mutableData(), x.numel(), out.dtype(), op);
}

void broadcastInto(const Tensor& x, int64_t root, Tensor& out) {
  agreeOn(OpKind::Broadcast, x, root, "broadcast", cat(" from rank ", root));
  if (worldRank() == root) {
    const Tensor in = x.rowMajor();
    std::memcpy(out.mutableData(), in.data(), static_cast<size_t>(x.numel()) * x.elementSize());
  }
  transport::broadcast(out.mutableData(), x.numel(), x.dtype(), static_cast<int>(root));
}

/// Along axis 0 only: the ranks' blocks follow each other in the result.
void allGatherInto(const Tensor& x, Tensor& out) {
  agreeOn(OpKind::AllGather, x, 0, "all-gather", " along axis 0");
  const Tensor in = x.rowMajor();
  transport::allGather(in.data(), out.mutableData(), x.numel(), x.dtype());
}

/// Along axis 0 only: block r of x is rows r·b .. (r+1)·b - 1, contiguous.
void reduceScatterInto(const Tensor& x, Tensor& out) {
  agreeOn(OpKind::ReduceScatter, x, 0, "reduce-scatter", " along axis 0");
  const Tensor in = as(x, out.dtype()).rowMajor();
  transport::reduceScatter(in.data(), out.mutableData(), out.numel(), out.dtype());
}

void reduceToRootInto(const Tensor& x, int64_t root, Tensor& out) {
  agreeOn(OpKind::ReduceToRoot, x, root, "reduce-to-root", cat(" to rank ", root));
  const Tensor in = as(x, out.dtype()).rowMajor();
  if (worldRank() != root) std::memset(out.mutableData(), 0, static_cast<size_t>(out.numel()) * out.elementSize());
  transport::reduceToRoot(in.data(), out.mutableData(), x.numel(), out.dtype(), static_cast<int>(root));
}

} // namespace

Tensor allReduce(const Tensor& x, CollectiveOp op) {
  const DType out = reducedDType(strong(TensorType::of(x)), op);
  if (worldSize() == 1) return as(x, out);
  const DType wire = wireDType(x.dtype(), op);
  Tensor sum = Tensor::empty(wire, x.shape());
  if (op != CollectiveOp::Mean) {
    allReduceInto(x, op, sum);
    return sum;
  }
  agreeOn(OpKind::AllReduce, x, static_cast<int64_t>(op), "all-reduce", cat(" :", collectiveOpName(op)));
  const Tensor in = as(x, wire).rowMajor();
  transport::allReduce(in.data(), sum.mutableData(), x.numel(), wire, CollectiveOp::Sum);
  return as(applyBinary(BinaryOp::Div, sum, Tensor::weakInt(worldSize())), out);
}

Tensor broadcast(const Tensor& x, int64_t root) {
  const int64_t ranks = worldSize();
  checkRoot(root, ranks, "broadcast");
  if (ranks == 1) return as(x, x.dtype());
  Tensor out = Tensor::empty(x.dtype(), x.shape());
  broadcastInto(x, root, out);
  return out;
}

Tensor allGather(const Tensor& x, int64_t axis) {
  if (x.rank() == 0) fail(ErrorKind::Shape, "all-gather concatenates along an axis: x must have rank >= 1, got a scalar");
  const int a = normalizeAxis(axis, x.rank());
  const int64_t ranks = worldSize();
  if (ranks == 1) return as(x, x.dtype());
  std::vector<int64_t> dims(x.shape().begin(), x.shape().end());
  dims[static_cast<size_t>(a)] *= ranks;
  if (a == 0) {
    Tensor out = Tensor::empty(x.dtype(), Shape(dims));
    allGatherInto(x, out);
    return out;
  }
  agreeOn(OpKind::AllGather, x, a, "all-gather", cat(" along axis ", a));
  // Gathered as [ranks, before, axis, after], then moved to [before, ranks, axis, after].
  const auto [before, after] = around(x, a);
  const Tensor in = x.rowMajor();
  Tensor all = Tensor::empty(x.dtype(), Shape{ranks, before, x.shape()[a], after});
  transport::allGather(in.data(), all.mutableData(), x.numel(), x.dtype());
  const int64_t perm[] = {1, 0, 2, 3};
  return reshape(contiguous(transpose(all, perm)), Shape(dims));
}

Tensor reduceScatter(const Tensor& x, int64_t axis) {
  if (x.rank() == 0) fail(ErrorKind::Shape, "reduce-scatter splits along an axis: x must have rank >= 1, got a scalar");
  const int a = normalizeAxis(axis, x.rank());
  const int64_t ranks = worldSize();
  const DType out = reducedDType(x.dtype(), CollectiveOp::Sum);
  if (x.shape()[a] % ranks != 0)
    fail(ErrorKind::Shape, "reduce-scatter: axis ", a, " of ", TensorType::of(x).str(), " does not split into ", ranks,
         " equal blocks");
  if (ranks == 1) return as(x, out);
  std::vector<int64_t> dims(x.shape().begin(), x.shape().end());
  const int64_t block = x.shape()[a] / ranks;
  dims[static_cast<size_t>(a)] = block;
  Tensor mine = Tensor::empty(out, Shape(dims));
  if (a == 0) {
    reduceScatterInto(x, mine);
    return mine;
  }
  agreeOn(OpKind::ReduceScatter, x, a, "reduce-scatter", cat(" along axis ", a));
  // [before, ranks·block, after] → [ranks, before, block, after]: block r contiguous.
  const auto [before, after] = around(x, a);
  const int64_t perm[] = {1, 0, 2, 3};
  const Tensor in = contiguous(transpose(reshape(as(x, out), Shape{before, ranks, block, after}), perm));
  transport::reduceScatter(in.data(), mine.mutableData(), mine.numel(), out);
  return mine;
}

Tensor reduceToRoot(const Tensor& x, int64_t root) {
  const int64_t ranks = worldSize();
  checkRoot(root, ranks, "reduce-to-root");
  const DType out = reducedDType(x.dtype(), CollectiveOp::Sum);
  if (ranks == 1) return as(x, out);
  Tensor sum = Tensor::empty(out, x.shape());
  reduceToRootInto(x, root, sum);
  return sum;
}

void barrier() {
  if (worldSize() == 1) return;
  agreeOn(OpKind::Barrier, "barrier");
  transport::barrier();
}

// ---- Non-blocking all-reduces of buckets ----
// A start packs its operands into one buffer of the wire dtype and starts MPI's
// non-blocking all-reduce on it in place; the runtime keeps the buffer (compiled code sees
// only the handle, so no buffer of compiled code is in flight) until the last of its parts
// has been taken. Each part is then finished exactly as allReduce finishes its tensor (the
// division of :mean, the conversion to the result's dtype), so the bits agree with it.

namespace {

struct Bucket {
  int64_t request = 0;      ///< the transport's
  bool completed = false;
  Tensor buffer;            ///< the operands packed, in the wire dtype
  std::vector<int64_t> offsets; ///< where each part starts in `buffer`
  std::vector<Shape> shapes;
  std::vector<bool> taken;
  size_t left = 0;          ///< parts not yet taken
};

struct Buckets {
  std::mutex mutex;
  std::unordered_map<int64_t, Bucket> inFlight;
  int64_t next = 1;
};

Buckets& buckets() {
  static Buckets* instance = new Buckets; // never destroyed: waits may come at exit
  return *instance;
}

} // namespace

int64_t allReduceStart(std::span<const Tensor> xs, CollectiveOp op) {
  TSL_ASSERT(!xs.empty(), "all-reduce-start of no tensors");
  for (const Tensor& x : xs)
    if (x.dtype() != xs[0].dtype())
      fail(ErrorKind::Type, "all-reduce-start packs tensors of one dtype, got ", dtypeName(xs[0].dtype()), " and ",
           dtypeName(x.dtype()));
  if (worldSize() == 1) return 0;
  const DType wire = wireDType(xs[0].dtype(), op);
  Bucket b;
  int64_t total = 0;
  uint64_t h = mix(mix(0xcbf29ce484222325ull, static_cast<uint64_t>(OpKind::AllReduceStart)), static_cast<uint64_t>(wire));
  h = mix(mix(h, static_cast<uint64_t>(op)), xs.size());
  for (const Tensor& x : xs) {
    b.offsets.push_back(total);
    b.shapes.push_back(x.shape());
    total += x.numel();
    h = mix(h, static_cast<uint64_t>(x.rank()));
    for (int64_t d : x.shape()) h = mix(h, static_cast<uint64_t>(d));
  }
  if (!transport::agree(h))
    fail(ErrorKind::Runtime, "all-reduce-start of ", xs.size(), " tensors of ", dtypeName(xs[0].dtype()), " :",
         collectiveOpName(op), " on rank ", worldRank(),
         ": the ranks disagree (every rank must call the same collectives in the same order, with tensors of the same "
         "dtype and shape, and compile them with the same bucket size; another rank called something else, or its "
         "program has ended)");
  b.buffer = Tensor::empty(wire, Shape{total});
  const size_t bytes = dtypeSize(wire);
  for (size_t i = 0; i < xs.size(); ++i) {
    const Tensor in = as(xs[i], wire).rowMajor();
    std::memcpy(b.buffer.mutableData() + static_cast<size_t>(b.offsets[i]) * bytes, in.data(),
                static_cast<size_t>(xs[i].numel()) * bytes);
  }
  b.taken.assign(xs.size(), false);
  b.left = xs.size();
  b.request = transport::startAllReduce(b.buffer.mutableData(), total, wire,
                                        op == CollectiveOp::Mean ? CollectiveOp::Sum : op);
  Buckets& all = buckets();
  std::lock_guard<std::mutex> lock(all.mutex);
  const int64_t handle = all.next++;
  all.inFlight.emplace(handle, std::move(b));
  return handle;
}

Tensor allReduceWait(int64_t handle, int64_t part, const Tensor& x, CollectiveOp op) {
  const DType out = reducedDType(strong(TensorType::of(x)), op);
  if (worldSize() == 1) return as(x, out);
  Buckets& all = buckets();
  Tensor piece;
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    auto it = all.inFlight.find(handle);
    if (it == all.inFlight.end())
      fail(ErrorKind::Value, "all-reduce-wait: no all-reduce is in flight with handle ", handle);
    Bucket& in = it->second;
    if (part < 0 || part >= static_cast<int64_t>(in.shapes.size()) || in.taken[static_cast<size_t>(part)])
      fail(ErrorKind::Value, "all-reduce-wait: the all-reduce ", handle, " has no part ", part, " left");
    if (in.shapes[static_cast<size_t>(part)] != x.shape())
      fail(ErrorKind::Value, "all-reduce-wait: part ", part, " of the all-reduce ", handle, " is not of x's shape");
    if (!in.completed) {
      transport::waitAllReduce(in.request);
      in.completed = true;
    }
    in.taken[static_cast<size_t>(part)] = true;
    // The part as a view of the bucket's buffer, not a copy: the buffer lives on while
    // any part does, and nothing writes it once the all-reduce has completed.
    const Shape& shape = in.shapes[static_cast<size_t>(part)];
    const auto strides = contiguousStrides(shape);
    piece = Tensor::view(in.buffer.dtype(), shape, std::span<const int64_t>(strides.data(), shape.rank()),
                         in.buffer.offset() + in.offsets[static_cast<size_t>(part)], *in.buffer.storage());
    if (--in.left == 0) all.inFlight.erase(it);
  }
  if (op == CollectiveOp::Mean) return as(applyBinary(BinaryOp::Div, piece, Tensor::weakInt(worldSize())), out);
  return as(piece, out);
}

bool collectiveInto(OpKind kind, const OpAttrs& attrs, const Tensor& x, Tensor& out) {
  const CollectiveAttrs& a = attrsOf(attrs);
  checkRanks(a, opInfo(kind).name);
  if (worldSize() == 1 || x.rank() == 0) return false; // nothing to move, or a scalar: the kernel's copy is free
  switch (kind) {
  case OpKind::AllReduce:
    if (a.op == CollectiveOp::Mean || wireDType(x.dtype(), a.op) != out.dtype()) return false;
    allReduceInto(x, a.op, out);
    return true;
  case OpKind::Broadcast:
    checkRoot(a.root, worldSize(), "broadcast");
    broadcastInto(x, a.root, out);
    return true;
  case OpKind::AllGather:
    if (normalizeAxis(a.axis, x.rank()) != 0) return false;
    allGatherInto(x, out);
    return true;
  case OpKind::ReduceScatter:
    if (normalizeAxis(a.axis, x.rank()) != 0 || x.dtype() != out.dtype()) return false;
    reduceScatterInto(x, out);
    return true;
  case OpKind::ReduceToRoot:
    if (x.dtype() != out.dtype()) return false;
    checkRoot(a.root, worldSize(), "reduce-to-root");
    reduceToRootInto(x, a.root, out);
    return true;
  default: return false;
  }
}

// ---- Type rules and kernels ----

TensorType allReduceType(const OpAttrs& attrs, std::span<const TensorType> in) {
  const CollectiveAttrs& a = attrsOf(attrs);
  checkWorld(a, "all-reduce");
  return {reducedDType(strong(in[0]), a.op), false, in[0].shape};
}
Tensor allReduceKernel(const OpAttrs& attrs, std::span<const Tensor> in) {
  checkRanks(attrsOf(attrs), "all-reduce");
  return allReduce(in[0], attrsOf(attrs).op);
}

TensorType broadcastType(const OpAttrs& attrs, std::span<const TensorType> in) {
  const CollectiveAttrs& a = attrsOf(attrs);
  checkWorld(a, "broadcast");
  checkRoot(a.root, a.ranks, "broadcast");
  return {strong(in[0]), false, in[0].shape};
}
Tensor broadcastKernel(const OpAttrs& attrs, std::span<const Tensor> in) {
  checkRanks(attrsOf(attrs), "broadcast");
  return broadcast(in[0], attrsOf(attrs).root);
}

TensorType allGatherType(const OpAttrs& attrs, std::span<const TensorType> in) {
  const CollectiveAttrs& a = attrsOf(attrs);
  checkWorld(a, "all-gather");
  if (in[0].shape.rank() == 0)
    fail(ErrorKind::Shape, "all-gather concatenates along an axis: x must have rank >= 1, got a scalar");
  std::vector<int64_t> dims(in[0].shape.begin(), in[0].shape.end());
  dims[static_cast<size_t>(normalizeAxis(a.axis, in[0].shape.rank()))] *= a.ranks;
  return {strong(in[0]), false, Shape(dims)};
}
Tensor allGatherKernel(const OpAttrs& attrs, std::span<const Tensor> in) {
  checkRanks(attrsOf(attrs), "all-gather");
  return allGather(in[0], attrsOf(attrs).axis);
}

TensorType reduceScatterType(const OpAttrs& attrs, std::span<const TensorType> in) {
  const CollectiveAttrs& a = attrsOf(attrs);
  checkWorld(a, "reduce-scatter");
  if (in[0].shape.rank() == 0)
    fail(ErrorKind::Shape, "reduce-scatter splits along an axis: x must have rank >= 1, got a scalar");
  const int axis = normalizeAxis(a.axis, in[0].shape.rank());
  std::vector<int64_t> dims(in[0].shape.begin(), in[0].shape.end());
  if (dims[static_cast<size_t>(axis)] % a.ranks != 0)
    fail(ErrorKind::Shape, "reduce-scatter: axis ", axis, " of ", in[0].str(), " does not split into ", a.ranks,
         " equal blocks");
  dims[static_cast<size_t>(axis)] /= a.ranks;
  return {reducedDType(strong(in[0]), CollectiveOp::Sum), false, Shape(dims)};
}
Tensor reduceScatterKernel(const OpAttrs& attrs, std::span<const Tensor> in) {
  checkRanks(attrsOf(attrs), "reduce-scatter");
  return reduceScatter(in[0], attrsOf(attrs).axis);
}

TensorType reduceToRootType(const OpAttrs& attrs, std::span<const TensorType> in) {
  const CollectiveAttrs& a = attrsOf(attrs);
  checkWorld(a, "reduce-to-root");
  checkRoot(a.root, a.ranks, "reduce-to-root");
  return {reducedDType(strong(in[0]), CollectiveOp::Sum), false, in[0].shape};
}
Tensor reduceToRootKernel(const OpAttrs& attrs, std::span<const Tensor> in) {
  checkRanks(attrsOf(attrs), "reduce-to-root");
  return reduceToRoot(in[0], attrsOf(attrs).root);
}

TensorType allReduceStartType(const OpAttrs& attrs, std::span<const TensorType> in) {
  checkWorld(attrsOf(attrs), "all-reduce-start");
  for (const TensorType& t : in)
    if (t.dtype != in[0].dtype)
      fail(ErrorKind::Type, "all-reduce-start packs tensors of one dtype, got ", in[0].str(), " and ", t.str());
  return {DType::I64, false, Shape{}};
}
Tensor allReduceStartKernel(const OpAttrs& attrs, std::span<const Tensor> in) {
  checkRanks(attrsOf(attrs), "all-reduce-start");
  return Tensor::ofInt(allReduceStart(in, attrsOf(attrs).op));
}

TensorType allReduceWaitType(const OpAttrs& attrs, std::span<const TensorType> in) {
  const CollectiveAttrs& a = attrsOf(attrs);
  checkWorld(a, "all-reduce-wait");
  if (in[0].dtype != DType::I64 || in[0].shape.rank() != 0)
    fail(ErrorKind::Type, "all-reduce-wait takes the i64 handle of an all-reduce-start, got ", in[0].str());
  if (a.part < 0) fail(ErrorKind::Value, "all-reduce-wait: part ", a.part, " is negative");
  return {reducedDType(strong(in[1]), a.op), false, in[1].shape};
}
Tensor allReduceWaitKernel(const OpAttrs& attrs, std::span<const Tensor> in) {
  const CollectiveAttrs& a = attrsOf(attrs);
  checkRanks(a, "all-reduce-wait");
  return allReduceWait(in[0].toInt(), a.part, in[1], a.op);
}

TensorType barrierType(const OpAttrs& attrs, std::span<const TensorType>) {
  checkWorld(attrsOf(attrs), "barrier");
  return {DType::I64, false, Shape{}};
}
Tensor barrierKernel(const OpAttrs& attrs, std::span<const Tensor>) {
  checkRanks(attrsOf(attrs), "barrier");
  barrier();
  return Tensor::ofInt(0);
}

} // namespace tsl
