// tsl/Ref.h — intrusive reference counting for runtime objects.
//
// Tensors share storage and views share shape records; both are counted with an atomic
// count so a tensor may be handed to another thread (an embedding host's, or the thread
// pool's). Ref<T> is the owning pointer.
#pragma once

#include <atomic>
#include <cstdint>
#include <utility>

namespace tsl {

/// Base for reference-counted runtime objects; `Derived` is deleted when the count drops
/// to zero.
template <typename Derived>
class RefCounted {
public:
  void retain() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  void release() const {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1)
      delete static_cast<const Derived*>(this);
  }
  /// Whether this is the only reference (the object may then be reused in place).
  bool unique() const { return refs_.load(std::memory_order_acquire) == 1; }

protected:
  RefCounted() = default;
  RefCounted(const RefCounted&) : refs_(0) {}
  RefCounted& operator=(const RefCounted&) { return *this; }
  ~RefCounted() = default;

private:
  mutable std::atomic<int32_t> refs_{0};
};

template <typename T>
class Ref {
public:
  Ref() = default;
  Ref(T* p) : p_(p) { // NOLINT: implicit from a fresh object is the point
    if (p_) p_->retain();
  }
  Ref(const Ref& other) : p_(other.p_) {
    if (p_) p_->retain();
  }
  Ref(Ref&& other) noexcept : p_(std::exchange(other.p_, nullptr)) {}
  ~Ref() {
    if (p_) p_->release();
  }
  Ref& operator=(Ref other) noexcept {
    std::swap(p_, other.p_);
    return *this;
  }

  T* get() const { return p_; }
  T* operator->() const { return p_; }
  T& operator*() const { return *p_; }
  explicit operator bool() const { return p_ != nullptr; }
  bool operator==(const Ref& other) const { return p_ == other.p_; }

private:
  T* p_ = nullptr;
};

} // namespace tsl
