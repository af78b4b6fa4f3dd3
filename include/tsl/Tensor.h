// tsl/Tensor.h — the one value type for numbers: a dtype, a shape and storage.
//
// A Tensor is 16 bytes. A rank-0 tensor (every number in a TSL program) keeps its value
// inline and never touches the heap. A tensor of rank >= 1 points at a shared, immutable
// TensorImpl holding its shape, strides (in elements), offset and a reference to its
// Storage, so transpose, slice, broadcast-to, reshape of contiguous data and get are views:
// a new TensorImpl over the same Storage. Values are immutable once a kernel has written
// them; nothing in TSL mutates a tensor that another value can see.
#pragma once

#include "tsl/DType.h"
#include "tsl/Ref.h"
#include "tsl/Shape.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <span>
#include <type_traits>

namespace tsl {

/// Raw memory for tensor elements: 64-byte aligned; buffers of 2 MiB and more sit on
/// transparent huge pages. Zero-initialised unless allocated with `uninitialized`.
class Storage final : public RefCounted<Storage> {
public:
  /// Allocates `bytes` bytes (zeroed unless `zeroed` is false). Out of memory is a
  /// runtime error, never an abort.
  static Ref<Storage> allocate(size_t bytes, bool zeroed = true);
  /// Wraps memory owned by the caller; `release` runs when the last tensor lets go.
  static Ref<Storage> wrap(void* data, size_t bytes, std::function<void(void*)> release);

  char* data() const { return data_; }
  size_t bytes() const { return bytes_; }
  /// Whether TSL allocated the memory (not a host's wrapped array, which the host reads).
  bool ownsMemory() const { return origin_ != Origin::External; }

private:
  friend class RefCounted<Storage>;
  Storage() = default;
  ~Storage();

  char* data_ = nullptr;
  size_t bytes_ = 0;
  enum class Origin : uint8_t { Heap, Mapped, External } origin_ = Origin::Heap;
  std::function<void(void*)> release_;
};

/// How a tensor's elements sit in memory (runtime/Layout.h). Row-major (NCHW at rank 4)
/// and NHWC are strided views of their memory; the blocked layouts are not.
enum class Layout : uint8_t { RowMajor, NHWC, NC1HWC0, FractalZ, FractalNZ };

/// Shape, strides and storage of a tensor of rank >= 1. Shared between tensors that are
/// copies of each other; never modified after construction.
struct TensorImpl final : RefCounted<TensorImpl> {
  Shape shape;
  std::array<int64_t, Shape::kMaxRank> strides{}; ///< in elements; 0 on broadcast axes
  int64_t offset = 0;                             ///< in elements, into storage
  Ref<Storage> storage;
  Layout layout = Layout::RowMajor;               ///< the format the memory was laid out in
  Shape physical;                                 ///< a blocked layout's physical shape
};

class Tensor {
public:
  /// The f32 scalar 0.
  Tensor() noexcept : dtype_(DType::F32), flags_(0), bits_(0) {}
  Tensor(const Tensor& other) noexcept : dtype_(other.dtype_), flags_(other.flags_), bits_(other.bits_) {
    if (ranked()) impl_->retain();
  }
  Tensor(Tensor&& other) noexcept : dtype_(other.dtype_), flags_(other.flags_), bits_(other.bits_) {
    other.flags_ = 0;
  }
  Tensor& operator=(const Tensor& other) noexcept {
    Tensor copy(other);
    swap(copy);
    return *this;
  }
  Tensor& operator=(Tensor&& other) noexcept {
    Tensor moved(std::move(other));
    swap(moved);
    return *this;
  }
  ~Tensor() {
    if (ranked()) impl_->release();
  }
  void swap(Tensor& other) noexcept {
    std::swap(dtype_, other.dtype_);
    std::swap(flags_, other.flags_);
    std::swap(bits_, other.bits_);
  }

  // ---- Scalars (rank 0, inline) ----
  /// An integer converted to `dtype`.
  static Tensor ofInt(int64_t value, DType dtype = DType::I64);
  /// A float converted to `dtype` (rounded to nearest even for f32, f16, bf16).
  static Tensor ofFloat(double value, DType dtype = DType::F32);
  static Tensor ofBool(bool value) { return ofInt(value ? 1 : 0, DType::Bool); }
  /// Weakly typed literals (§3): held exactly as i64 or f64.
  static Tensor weakInt(int64_t value);
  static Tensor weakFloat(double value);
  /// A scalar holding `value`, whose C++ type must be the element type of `dtype`.
  template <typename T>
  static Tensor scalarOf(T value, DType dtype, bool weak = false) {
    static_assert(sizeof(T) <= sizeof(uint64_t));
    Tensor t;
    t.dtype_ = dtype;
    t.flags_ = weak ? kWeak : 0;
    std::memcpy(&t.bits_, &value, sizeof(T));
    return t;
  }
  /// The inline value of a scalar whose element type is T.
  template <typename T>
  T scalarValue() const {
    T value;
    std::memcpy(&value, &bits_, sizeof(T));
    return value;
  }
  /// A scalar of `dtype` whose bytes are copied from `element` (one element of that dtype).
  static Tensor scalarFromBytes(DType dtype, const void* element);

  // ---- Tensors of any rank ----
  /// A contiguous tensor; its elements are zero unless `zeroed` is false.
  static Tensor empty(DType dtype, const Shape& shape, bool zeroed = false);
  static Tensor zeros(DType dtype, const Shape& shape) { return empty(dtype, shape, true); }
  /// A view: the given shape and strides over `storage`. Rank 0 reads the element.
  static Tensor view(DType dtype, const Shape& shape, std::span<const int64_t> strides,
                     int64_t offset, Ref<Storage> storage);
  /// Wraps host memory without copying (row-major, contiguous). `release` runs when the
  /// last tensor using it is gone.
  static Tensor wrap(void* data, DType dtype, const Shape& shape,
                     std::function<void(void*)> release = {});
  /// A host's row-major array seen as a tensor, not copied. The memory must stay valid
  /// and unchanged while any tensor or value derived from it lives — results of views
  /// (reshape, slice, transpose) included, and globals an engine keeps; a value error for
  /// null or misaligned memory. The owning alternatives: empty, zeros, ofInt/scalarOf.
  static Tensor view(void* data, const Shape& shape, DType dtype) { return wrap(data, dtype, shape); }

  DType dtype() const { return dtype_; }
  bool weak() const { return flags_ & kWeak; }
  TypeKey typeKey() const { return {dtype_, weak()}; }
  int rank() const { return ranked() ? impl_->shape.rank() : 0; }
  bool isScalar() const { return !ranked(); }
  const Shape& shape() const;
  int64_t numel() const { return ranked() ? impl_->shape.numel() : 1; }
  size_t elementSize() const { return dtypeSize(dtype_); }

  /// Strides in elements (nullptr-free for every rank; rank 0 has none). Not for a
  /// blocked tensor, whose elements strides cannot reach (runtime/Layout.h: plain()).
  const int64_t* strides() const {
    if (!ranked()) return nullptr;
    if (blocked()) blockedAccess();
    return impl_->strides.data();
  }
  int64_t offset() const { return ranked() ? impl_->offset : 0; }
  const Ref<Storage>* storage() const { return ranked() ? &impl_->storage : nullptr; }
  /// Address of the first element (for a scalar, of the inline value), as raw bytes: the
  /// elements sit at `strides()` from it. A value error for a blocked tensor, whose
  /// elements strides cannot reach (physicalData is its buffer). Hosts read elements with
  /// elements<T>().
  const char* data() const {
    if (!ranked()) return reinterpret_cast<const char*>(&bits_);
    if (blocked()) blockedAccess();
    return impl_->storage->data() + impl_->offset * elementSize();
  }

  /// The physical layout (runtime/Layout.h); a scalar's is row-major.
  Layout layout() const { return ranked() ? impl_->layout : Layout::RowMajor; }
  /// Whether the layout is blocked (NC1HWC0, FRACTAL_Z, FRACTAL_NZ).
  bool blocked() const {
    return ranked() && (impl_->layout == Layout::NC1HWC0 || impl_->layout == Layout::FractalZ ||
                        impl_->layout == Layout::FractalNZ);
  }
  /// The shape of the memory: the layout's physical shape ([N,H,W,C] for NHWC), else the
  /// shape.
  const Shape& physicalShape() const { return layout() != Layout::RowMajor ? impl_->physical : shape(); }
  /// The start of the physical buffer of a blocked (or any contiguous) tensor.
  const char* physicalData() const {
    return ranked() ? impl_->storage->data() + impl_->offset * elementSize() : reinterpret_cast<const char*>(&bits_);
  }
  /// A tensor like this one but tagged with `layout`: only for the layout functions
  /// (runtime/Layout.cpp), which make the memory match.
  static Tensor withLayout(DType dtype, const Shape& logical, Layout layout, const Shape& physical,
                           std::span<const int64_t> strides, Ref<Storage> storage);
  /// Writable address of the first element; only for a tensor this code just created.
  char* mutableData() { return const_cast<char*>(data()); }
  /// Whether the elements are laid out row-major without gaps.
  bool isContiguous() const;
  /// The elements of a contiguous row-major tensor (a scalar is one element), typed: T is
  /// bool, int32_t, int64_t, float or double for those dtypes, uint16_t for the bits of f16
  /// and bf16. A type error if T is not the dtype's element type; a value error if the
  /// elements are not contiguous and row-major (a transposed or broadcast view, a blocked
  /// layout: rowMajor() gives them so). Valid while this tensor lives.
  template <typename T>
  std::span<const T> elements() const {
    static_assert(std::is_same_v<T, bool> || std::is_same_v<T, int32_t> || std::is_same_v<T, int64_t> ||
                      std::is_same_v<T, uint16_t> || std::is_same_v<T, float> || std::is_same_v<T, double>,
                  "elements<T>: T is bool, int32_t, int64_t, uint16_t (f16, bf16), float or double");
    const bool matches = std::is_same_v<T, bool>      ? dtype_ == DType::Bool
                         : std::is_same_v<T, int32_t> ? dtype_ == DType::I32
                         : std::is_same_v<T, int64_t> ? dtype_ == DType::I64
                         : std::is_same_v<T, float>   ? dtype_ == DType::F32
                         : std::is_same_v<T, double>  ? dtype_ == DType::F64
                                                      : dtype_ == DType::F16 || dtype_ == DType::BF16;
    checkElements(matches, sizeof(T));
    return {reinterpret_cast<const T*>(data()), static_cast<size_t>(numel())};
  }
  /// The same tensor with its elements contiguous and row-major: itself if they are,
  /// else a copy (of a strided view, a broadcast, a blocked or NHWC layout).
  Tensor rowMajor() const;
  /// Whether two tensors share storage (one may be a view of the other).
  bool sharesStorageWith(const Tensor& other) const;
  /// Whether this handle alone reaches its elements: the only handle on its tensor, the
  /// only tensor on its storage, memory TSL allocated. (jit :donate writes a result over
  /// an argument only then: nothing else could see the change.)
  bool heldAlone() const;

  // ---- Scalar values ----
  /// The value of a rank-0 tensor as a double / int64 (converting); a type error for a
  /// tensor of rank >= 1.
  double toDouble() const;
  int64_t toInt() const;
  /// Truth of a rank-0 tensor: nonzero (NaN is true); a type error for rank >= 1.
  bool isNonZero() const;
  /// The element at `index` (one coordinate per axis; negative counts from the end) as a
  /// double, converting from any dtype and following strides, so views and blocked
  /// layouts read right. A value error for an index out of range or of the wrong length.
  double at(std::initializer_list<int64_t> index) const;
  /// The same value as a strong tensor of its concrete dtype (weak i64 → i64, weak → f32).
  Tensor strengthened() const;
  /// A rank-0 tensor converted to `dtype`, strong.
  Tensor castScalar(DType dtype) const;

private:
  enum : uint8_t { kWeak = 1, kRanked = 2 };
  [[noreturn]] void blockedAccess() const;
  /// elements<T>()'s checks: the element type matches, the elements are contiguous.
  void checkElements(bool dtypeMatches, size_t elementBytes) const;
  /// A type error for scalar access (`what`: toDouble...) to a tensor of rank >= 1.
  [[noreturn]] void notScalar(const char* what) const;
  bool ranked() const { return flags_ & kRanked; }
  static Tensor fromImpl(DType dtype, TensorImpl* impl);

  DType dtype_;
  uint8_t flags_;
  union {
    uint64_t bits_;     ///< rank 0: the value in its dtype's representation
    TensorImpl* impl_;  ///< rank >= 1
  };
};

static_assert(sizeof(Tensor) == 16, "Tensor is two words");

/// Row-major strides (in elements) for `shape`.
std::array<int64_t, Shape::kMaxRank> contiguousStrides(const Shape& shape);

} // namespace tsl
