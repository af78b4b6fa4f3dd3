// runtime/Tensor.cpp — storage allocation, tensor construction and scalar access.
#include "runtime/Tensor.h"
#include "runtime/StorageLimit.h"

#include "runtime/Dispatch.h"
#include "runtime/Layout.h"
#include "runtime/Views.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

namespace tsl {

namespace {

constexpr size_t kAlignment = 64;
/// Buffers this large go on their own mapping with transparent huge pages requested.
constexpr size_t kHugePageThreshold = size_t(2) << 20;
constexpr size_t kHugePage = size_t(2) << 20;

} // namespace

// ---- Storage ----

namespace {

/// Bytes of physical memory; a buffer larger than this can never be used.
size_t physicalMemory() {
  static const size_t bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<size_t>(pages) * static_cast<size_t>(page) : SIZE_MAX;
  }();
  return bytes;
}

std::string gibibytes(size_t bytes) { return cat(static_cast<double>(bytes) / double(1 << 30), " GiB"); }

/// Large freed buffers kept for reuse. A fresh mapping costs a page fault and the
/// kernel's zeroing per page on first touch — as much as the kernel writing it — so
/// eager code that makes a same-sized temporary every step reuses the last one instead.
/// Holds at most an eighth of physical memory (and 2 GiB); anything beyond is unmapped.
class BlockCache {
public:
  void* take(size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(bytes);
    if (it == free_.end()) return nullptr;
    void* p = it->second;
    free_.erase(it);
    held_ -= bytes;
    return p;
  }
  bool give(void* p, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    const size_t limit = std::min(physicalMemory() / 8, size_t(2) << 30);
    if (held_ + bytes > limit) return false;
    free_.emplace(bytes, p);
    held_ += bytes;
    return true;
  }

private:
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  size_t held_ = 0;
};

BlockCache& blockCache() {
  static auto* cache = new BlockCache(); // never destroyed: tensors may outlive statics
  return *cache;
}

} // namespace

namespace {
std::atomic<size_t> storageByteLimit{0};
} // namespace

void setStorageByteLimit(size_t bytes) { storageByteLimit.store(bytes, std::memory_order_relaxed); }

Ref<Storage> Storage::allocate(size_t bytes, bool zeroed) {
  if (bytes > physicalMemory())
    fail(ErrorKind::Value, "a tensor of ", gibibytes(bytes), " is larger than this machine's ",
         gibibytes(physicalMemory()), " of memory");
  if (const size_t limit = storageByteLimit.load(std::memory_order_relaxed); limit != 0 && bytes > limit)
    fail(ErrorKind::Value, "a tensor of ", gibibytes(bytes), " is larger than the limit of ", gibibytes(limit));
  Ref<Storage> storage(new Storage());
  storage->bytes_ = bytes;
  if (bytes >= kHugePageThreshold) {
    const size_t mapped = (bytes + kHugePage - 1) / kHugePage * kHugePage;
    if (void* reused = blockCache().take(mapped)) {
      if (zeroed) std::memset(reused, 0, mapped);
      storage->data_ = static_cast<char*>(reused);
    } else {
      // A private anonymous mapping is zero-filled by the kernel: no memset needed.
      void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (p == MAP_FAILED) fail(ErrorKind::Runtime, "out of memory allocating ", bytes, " bytes");
      madvise(p, mapped, MADV_HUGEPAGE);
      storage->data_ = static_cast<char*>(p);
    }
    storage->origin_ = Origin::Mapped;
    return storage;
  }
  const size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* p = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (!p) fail(ErrorKind::Runtime, "out of memory allocating ", bytes, " bytes");
  if (zeroed) std::memset(p, 0, rounded);
  storage->data_ = static_cast<char*>(p);
  return storage;
}

Ref<Storage> Storage::wrap(void* data, size_t bytes, std::function<void(void*)> release) {
  Ref<Storage> storage(new Storage());
  storage->data_ = static_cast<char*>(data);
  storage->bytes_ = bytes;
  storage->origin_ = Origin::External;
  storage->release_ = std::move(release);
  return storage;
}

Storage::~Storage() {
  switch (origin_) {
  case Origin::Heap: std::free(data_); break;
  case Origin::Mapped: {
    const size_t mapped = (bytes_ + kHugePage - 1) / kHugePage * kHugePage;
    if (!blockCache().give(data_, mapped)) munmap(data_, mapped);
    break;
  }
  case Origin::External:
    if (release_) release_(data_);
    break;
  }
}

// ---- Construction ----

std::array<int64_t, Shape::kMaxRank> contiguousStrides(const Shape& shape) {
  std::array<int64_t, Shape::kMaxRank> strides{};
  int64_t stride = 1;
  for (int i = shape.rank() - 1; i >= 0; --i) {
    strides[i] = stride;
    // An empty tensor's other axes may be huge ([10^12, 10^12, 0]): its strides are never
    // used to reach an element, so they saturate instead of overflowing.
    const int64_t size = shape[i] == 0 ? 1 : shape[i];
    stride = stride > INT64_MAX / size ? INT64_MAX : stride * size;
  }
  return strides;
}

Tensor Tensor::ofInt(int64_t value, DType dtype) {
  Tensor t;
  t.dtype_ = dtype;
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T converted = convertElement<T>(value);
    storeElement(&t.bits_, converted);
  });
  return t;
}

Tensor Tensor::ofFloat(double value, DType dtype) {
  Tensor t;
  t.dtype_ = dtype;
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T converted = convertElement<T>(value);
    storeElement(&t.bits_, converted);
  });
  return t;
}

Tensor Tensor::weakInt(int64_t value) {
  Tensor t = ofInt(value, DType::I64);
  t.flags_ = kWeak;
  return t;
}

Tensor Tensor::weakFloat(double value) {
  Tensor t = ofFloat(value, DType::F64);
  t.flags_ = kWeak;
  return t;
}

Tensor Tensor::scalarFromBytes(DType dtype, const void* element) {
  Tensor t;
  t.dtype_ = dtype;
  std::memcpy(&t.bits_, element, dtypeSize(dtype));
  return t;
}

Tensor Tensor::fromImpl(DType dtype, TensorImpl* impl) {
  Tensor t;
  t.dtype_ = dtype;
  t.flags_ = kRanked;
  t.impl_ = impl;
  impl->retain();
  return t;
}

Tensor Tensor::empty(DType dtype, const Shape& shape, bool zeroed) {
  checkDType(dtype);
  if (shape.rank() == 0) {
    Tensor t;
    t.dtype_ = dtype;
    return t;
  }
  const int64_t n = shape.numel(); // checks the size limit first
  auto* impl = new TensorImpl();
  impl->shape = shape;
  impl->strides = contiguousStrides(shape);
  try {
    impl->storage = Storage::allocate(static_cast<size_t>(n) * dtypeSize(dtype), zeroed);
  } catch (...) {
    delete impl;
    throw;
  }
  return fromImpl(dtype, impl);
}

Tensor Tensor::view(DType dtype, const Shape& shape, std::span<const int64_t> strides,
                    int64_t offset, Ref<Storage> storage) {
  TSL_ASSERT(static_cast<int>(strides.size()) >= shape.rank());
  if (shape.rank() == 0)
    return scalarFromBytes(dtype, storage->data() + offset * static_cast<int64_t>(dtypeSize(dtype)));
  auto* impl = new TensorImpl();
  impl->shape = shape;
  for (int i = 0; i < shape.rank(); ++i) impl->strides[i] = strides[i];
  impl->offset = offset;
  impl->storage = std::move(storage);
  return fromImpl(dtype, impl);
}

Tensor Tensor::wrap(void* data, DType dtype, const Shape& shape, std::function<void(void*)> release) {
  checkDType(dtype); // before any table is indexed by it
  const int64_t n = shape.numel();
  // A host's memory: null is refused (unless there is nothing to read), as is memory
  // not aligned for its elements.
  if (!data && n > 0) fail(ErrorKind::Value, "a tensor of ", n, " elements over a null pointer");
  if (reinterpret_cast<uintptr_t>(data) % dtypeSize(dtype) != 0)
    fail(ErrorKind::Value, "host memory at ", data, " is not aligned for ", dtypeName(dtype), " elements");
  auto storage = Storage::wrap(data, static_cast<size_t>(n) * dtypeSize(dtype), std::move(release));
  const auto strides = contiguousStrides(shape);
  return view(dtype, shape, std::span<const int64_t>(strides.data(), shape.rank()), 0,
              std::move(storage));
}

const Shape& Tensor::shape() const {
  static const Shape scalarShape;
  return ranked() ? impl_->shape : scalarShape;
}

void Tensor::blockedAccess() const {
  fail(ErrorKind::Value, "a ", dtypeName(dtype_), shape().str(), " tensor in the ", layoutName(layout()),
       " layout has no row-major address: its elements sit in padded blocks (rowMajor() copies them row-major; "
       "in TSL, (to-layout x :row-major))");
}

void Tensor::checkElements(bool dtypeMatches, size_t elementBytes) const {
  if (!dtypeMatches)
    fail(ErrorKind::Type, "Tensor::elements: the tensor holds ", dtypeName(dtype_), " elements, not ", elementBytes,
         "-byte ones of the C++ type asked for (bool, int32_t, int64_t, uint16_t for f16 and bf16, float, double)");
  if (blocked()) blockedAccess();
  if (!isContiguous())
    fail(ErrorKind::Value, "Tensor::elements: the elements of this ", dtypeName(dtype_), shape().str(),
         " tensor are not contiguous and row-major (a transposed, sliced or broadcast view, or the ",
         layoutName(layout()), " layout); rowMajor() copies them so");
}

Tensor Tensor::rowMajor() const {
  if (layout() == Layout::RowMajor && isContiguous()) return *this;
  return contiguous(untagged(*this));
}

void Tensor::notScalar(const char* what) const {
  fail(ErrorKind::Type, "Tensor::", what, ": a ", dtypeName(dtype_), shape().str(),
       " tensor is not a number (only a rank-0 tensor is; read elements with at() or elements<T>())");
}

Tensor Tensor::withLayout(DType dtype, const Shape& logical, Layout layout, const Shape& physical,
                          std::span<const int64_t> strides, Ref<Storage> storage) {
  TSL_ASSERT(logical.rank() > 0, "a layout of a scalar");
  auto* impl = new TensorImpl();
  impl->shape = logical;
  for (size_t i = 0; i < strides.size() && i < impl->strides.size(); ++i) impl->strides[i] = strides[i];
  impl->storage = std::move(storage);
  impl->layout = layout;
  impl->physical = physical;
  return fromImpl(dtype, impl);
}

bool Tensor::isContiguous() const {
  if (!ranked()) return true;
  if (blocked()) return false;
  // No elements, nothing out of order (and contiguousStrides gives an empty tensor
  // strides that the product of its dimensions, 0, would not match).
  if (impl_->shape.hasZero()) return true;
  int64_t expected = 1;
  for (int i = impl_->shape.rank() - 1; i >= 0; --i) {
    const int64_t dim = impl_->shape[i];
    if (dim == 1) continue;
    if (impl_->strides[i] != expected) return false;
    expected *= dim;
  }
  return true;
}

bool Tensor::heldAlone() const {
  return ranked() && impl_->unique() && impl_->storage && impl_->storage->unique() && impl_->storage->ownsMemory();
}

bool Tensor::sharesStorageWith(const Tensor& other) const {
  return ranked() && other.ranked() && impl_->storage == other.impl_->storage;
}

// ---- Scalar access ----

double Tensor::toDouble() const {
  if (ranked()) notScalar("toDouble");
  return dispatchDType(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T value = loadElement<T>(&bits_);
    return tsl::toDouble(value);
  });
}

int64_t Tensor::toInt() const {
  if (ranked()) notScalar("toInt");
  return dispatchDType(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T value = loadElement<T>(&bits_);
    return convertElement<int64_t>(value);
  });
}

bool Tensor::isNonZero() const {
  if (ranked()) notScalar("isNonZero");
  return dispatchDType(dtype_, [&](auto tag) {
    using T = decltype(tag);
    const T value = loadElement<T>(&bits_);
    return convertElement<bool>(value);
  });
}

Tensor Tensor::castScalar(DType dtype) const {
  if (ranked()) notScalar("castScalar");
  return dispatchDType(dtype_, [&](auto fromTag) {
    using From = decltype(fromTag);
    const From value = loadElement<From>(&bits_);
    return dispatchDType(dtype, [&](auto toTag) {
      using To = decltype(toTag);
      const To converted = convertElement<To>(value);
      return scalarFromBytes(dtype, &converted);
    });
  });
}

Tensor Tensor::strengthened() const {
  if (!weak()) return *this;
  return castScalar(concreteDType(typeKey()));
}

double Tensor::at(std::initializer_list<int64_t> index) const {
  if (static_cast<int>(index.size()) != rank())
    fail(ErrorKind::Value, "Tensor::at: ", index.size(), " coordinates for a tensor of rank ", rank());
  if (rank() == 0) return toDouble();
  if (blocked()) return toLayout(*this, Layout::RowMajor).at(index);
  int64_t offset = 0;
  int axis = 0;
  for (int64_t i : index) {
    const int64_t n = shape()[axis];
    const int64_t j = i < 0 ? i + n : i;
    if (j < 0 || j >= n) fail(ErrorKind::Value, "Tensor::at: index ", i, " is out of range for axis ", axis, " of size ", n);
    offset += j * strides()[axis];
    ++axis;
  }
  const char* p = data() + offset * static_cast<int64_t>(elementSize());
  double out = 0;
  dispatchDType(dtype(), [&](auto tag) {
    decltype(tag) v;
    std::memcpy(&v, p, sizeof v);
    out = static_cast<double>(v);
  });
  return out;
}

} // namespace tsl
