// runtime/Creation.cpp — full, arange, linspace, eye.
#include "runtime/Creation.h"

#include "runtime/Dispatch.h"
#include "runtime/ThreadPool.h"

#include <cmath>

namespace tsl {

Tensor full(const Shape& shape, Number value, DType dtype) {
  Tensor out = Tensor::empty(dtype, shape, !value.isInt || value.i != 0 ? false : true);
  if (value.isInt && value.i == 0) return out; // zero-filled by the allocator
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    const T element = value.isInt ? convertElement<T>(value.i) : convertElement<T>(value.f);
    T* o = reinterpret_cast<T*>(out.mutableData());
    parallelFor(out.numel(), int64_t(1) << 16, [&](int64_t begin, int64_t end) {
      std::fill(o + begin, o + end, element);
    });
  });
  return out;
}

int64_t arangeLength(Number start, Number stop, Number step) {
  if (step.isInt ? step.i == 0 : step.f == 0) fail(ErrorKind::Value, "arange: step must not be zero");
  double n;
  if (start.isInt && stop.isInt && step.isInt) {
    const long double span = static_cast<long double>(stop.i) - static_cast<long double>(start.i);
    n = static_cast<double>(std::ceil(span / static_cast<long double>(step.i)));
  } else {
    n = std::ceil((stop.asDouble() - start.asDouble()) / step.asDouble());
  }
  if (!(n == n) || std::isinf(n)) fail(ErrorKind::Value, "arange: bounds and step must be finite");
  if (n > static_cast<double>(Shape::kMaxElements))
    fail(ErrorKind::Value, "arange: ", n, " elements is more than a tensor may hold");
  return n < 0 ? 0 : static_cast<int64_t>(n);
}

Tensor arange(Number start, Number stop, Number step, DType dtype) {
  const int64_t n = arangeLength(start, stop, step);
  Tensor out = Tensor::empty(dtype, Shape{n});
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* o = reinterpret_cast<T*>(out.mutableData());
    const bool integral = start.isInt && step.isInt;
    for (int64_t k = 0; k < n; ++k) {
      o[k] = integral ? convertElement<T>(start.i + k * step.i)
                      : convertElement<T>(start.asDouble() + static_cast<double>(k) * step.asDouble());
    }
  });
  return out;
}

Tensor linspace(double start, double stop, int64_t num, DType dtype) {
  if (num < 0) fail(ErrorKind::Value, "linspace: num must not be negative, got ", num);
  Tensor out = Tensor::empty(dtype, Shape{num});
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* o = reinterpret_cast<T*>(out.mutableData());
    const double step = num > 1 ? (stop - start) / static_cast<double>(num - 1) : 0.0;
    for (int64_t k = 0; k < num; ++k)
      o[k] = convertElement<T>(k + 1 == num && num > 1 ? stop : start + static_cast<double>(k) * step);
  });
  return out;
}

Tensor eye(int64_t n, int64_t m, DType dtype) {
  if (n < 0 || m < 0) fail(ErrorKind::Value, "eye: sizes must not be negative");
  Tensor out = Tensor::zeros(dtype, Shape{n, m});
  dispatchDType(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* o = reinterpret_cast<T*>(out.mutableData());
    for (int64_t k = 0; k < std::min(n, m); ++k) o[k * m + k] = convertElement<T>(int64_t(1));
  });
  return out;
}

} // namespace tsl
