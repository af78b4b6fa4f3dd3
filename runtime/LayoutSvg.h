// runtime/LayoutSvg.h — a picture of where a tensor's logical elements sit in memory.
#pragma once

#include "runtime/Tensor.h"

#include <string>

namespace tsl {

/// At most this many physical elements are drawn (a picture is for small tensors).
inline constexpr int64_t kLayoutSvgMaxElements = 4096;

/// An SVG drawing of `x`'s physical buffer (docs/layouts.md): one cell per element in
/// memory order, a row per innermost run (C0 for the blocked layouts), the rows of one
/// outer index grouped in a framed block labelled with it (each C0 block, each fractal);
/// each cell shows the row-major number of the logical element stored there, coloured
/// along the logical order; padding is grey and hatched. A value error for a tensor with
/// more than kLayoutSvgMaxElements physical elements.
std::string layoutSvg(const Tensor& x);

} // namespace tsl
