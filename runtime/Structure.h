// runtime/Structure.h — operations that rearrange elements into new tensors:
// concat, stack, split, pad, take, one-hot, and indexing with get.
#pragma once

#include "runtime/Tensor.h"
#include "runtime/Views.h"

#include <optional>
#include <vector>

namespace tsl {

/// Joins tensors of equal shape except along `axis` (dtypes promote).
Tensor concat(std::span<const Tensor> parts, int64_t axis);
Shape concatShape(std::span<const Shape> parts, int64_t axis);
/// Joins tensors of equal shape along a new axis.
Tensor stack(std::span<const Tensor> parts, int64_t axis);
Shape stackShape(std::span<const Shape> parts, int64_t axis);
/// n equal views along `axis`; a shape error if the axis does not divide evenly.
/// The slice ranges of split's n equal parts of a tensor of shape x along axis.
std::vector<std::vector<SliceRange>> splitRanges(const Shape& x, int64_t n, int64_t axis);
std::vector<Tensor> split(const Tensor& x, int64_t n, int64_t axis);

/// x with widths[i] = {before, after} elements of `value` added on axis i; one pair
/// pads every axis alike (NumPy's rule); otherwise there must be one pair per axis.
Tensor pad(const Tensor& x, std::span<const std::array<int64_t, 2>> widths, double value);
/// The pair of widths for every axis of x: `widths` has one pair per axis, or one for all.
std::vector<std::array<int64_t, 2>> padWidths(const Shape& x, std::span<const std::array<int64_t, 2>> widths);
Shape padShape(const Shape& x, std::span<const std::array<int64_t, 2>> widths);

/// Elements of x at `indices` (integers, negative counting from the end) along `axis`:
/// the result's shape is x's with that axis replaced by indices' shape.
Tensor take(const Tensor& x, const Tensor& indices, int64_t axis);
Shape takeShape(const Shape& x, const Shape& indices, int64_t axis);

/// f32 one-hot rows: labels [...] of integers in [0, n) -> [..., n].
Tensor oneHot(const Tensor& labels, int64_t n);

/// (tril x k) with lower, (triu x k) without: x (rank >= 2) with the elements (i, j) of its
/// last two axes outside the triangle j - i <= k (lower) or j - i >= k (upper) set to 0.
Tensor triangle(const Tensor& x, int64_t k, bool lower);

/// (get x i j ...): an integer selects (and removes) an axis, nullopt keeps it whole;
/// axes after the given ones are kept. Always a view.
Tensor index(const Tensor& x, std::span<const std::optional<int64_t>> indices);
Shape indexShape(const Shape& x, std::span<const std::optional<int64_t>> indices);

/// Copies src into dst, a view of the same shape over storage this code owns (a region
/// of a tensor being built).
void copyInto(const Tensor& src, Tensor& dst);

} // namespace tsl
