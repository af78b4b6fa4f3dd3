// tsl/Shape.h — tensor shapes: up to kMaxRank dimensions, held inline.
#pragma once

#include "tsl/Error.h"

#include <array>
#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>

namespace tsl {

class Shape {
public:
  /// Highest rank a tensor may have; a larger one is a value error.
  static constexpr int kMaxRank = 8;
  /// Largest number of elements a tensor may hold (2^40, about a trillion); a larger
  /// shape is a value error, before any allocation is attempted.
  static constexpr int64_t kMaxElements = int64_t(1) << 40;

  Shape() = default;
  Shape(std::initializer_list<int64_t> dims) : Shape(std::span<const int64_t>(dims.begin(), dims.size())) {}
  /// Checks rank and that every dimension is non-negative.
  explicit Shape(std::span<const int64_t> dims) {
    if (dims.size() > kMaxRank)
      fail(ErrorKind::Value, "rank ", dims.size(), " exceeds the maximum of ", kMaxRank);
    rank_ = static_cast<uint8_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] < 0) fail(ErrorKind::Value, "negative dimension ", dims[i], " in a shape");
      dims_[i] = dims[i];
    }
  }

  int rank() const { return rank_; }
  int64_t operator[](int axis) const { return dims_[axis]; }
  int64_t& operator[](int axis) { return dims_[axis]; }
  const int64_t* begin() const { return dims_.data(); }
  const int64_t* end() const { return dims_.data() + rank_; }
  std::span<const int64_t> dims() const { return {dims_.data(), rank_}; }

  /// Number of elements; a value error past kMaxElements (2^62 inside a StandInSizes).
  /// The limit holds for the product of the non-zero dimensions too: an empty shape such
  /// as [0, 2^62] would otherwise pass, and a reduction or a transpose of it would then
  /// describe a tensor of 2^62 elements.
  int64_t numel() const {
    const int64_t limit = standIns() ? int64_t(1) << 62 : kMaxElements;
    int64_t n = 1;
    bool empty = false;
    for (int i = 0; i < rank_; ++i) {
      if (dims_[i] == 0) {
        empty = true;
        continue;
      }
      if (n > limit / dims_[i])
        fail(ErrorKind::Value, "shape ", str(), " has more than 2^", standIns() ? 62 : 40,
             empty || hasZero() ? " elements in its non-zero dimensions" : " elements");
      n *= dims_[i];
    }
    return empty ? 0 : n;
  }

  /// While one is alive on this thread, shapes may hold up to 2^62 elements: the IR runs
  /// the type rules on large stand-in sizes for symbolic dimensions (ir/TypeRules.cpp);
  /// nothing is allocated for them.
  class StandInSizes {
  public:
    StandInSizes() : saved_(standIns()) { standIns() = true; }
    ~StandInSizes() { standIns() = saved_; }
    StandInSizes(const StandInSizes&) = delete;
    StandInSizes& operator=(const StandInSizes&) = delete;

  private:
    bool saved_;
  };

  bool hasZero() const {
    for (int i = 0; i < rank_; ++i)
      if (dims_[i] == 0) return true;
    return false;
  }

  void push(int64_t dim) {
    if (rank_ == kMaxRank) fail(ErrorKind::Value, "rank exceeds the maximum of ", kMaxRank);
    dims_[rank_++] = dim;
  }

  static bool& standIns() {
    static thread_local bool active = false;
    return active;
  }

  bool operator==(const Shape& other) const {
    if (rank_ != other.rank_) return false;
    for (int i = 0; i < rank_; ++i)
      if (dims_[i] != other.dims_[i]) return false;
    return true;
  }

  /// "[2,3]"
  std::string str() const {
    std::string out = "[";
    for (int i = 0; i < rank_; ++i) {
      if (i) out += ',';
      out += std::to_string(dims_[i]);
    }
    return out + "]";
  }

private:
  std::array<int64_t, kMaxRank> dims_{};
  uint8_t rank_ = 0;
};

/// Normalises a possibly negative axis against `rank`; a value error if out of range.
inline int normalizeAxis(int64_t axis, int rank) {
  if (axis < -rank || axis >= rank)
    fail(ErrorKind::Value, "axis ", axis, " is out of range for rank ", rank);
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

} // namespace tsl
