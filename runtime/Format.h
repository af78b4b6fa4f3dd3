// runtime/Format.h — how numbers and tensors print (docs/language.md §3, "Printing").
//
// A rank-0 tensor prints as its number alone, in the shortest form that reads back to
// the same value of its dtype; floats always show a '.' or an exponent. A tensor of rank
// >= 1 prints its type, then its elements NumPy-style, eliding the middle of any axis of
// a tensor with more than kElideThreshold elements:
//   f32[2,2] [[1 2] [3 4]]
//   i64[10000] [0 1 2 ... 9997 9998 9999]
#pragma once

#include "runtime/Tensor.h"

#include <string>
#include <string_view>

namespace tsl {

/// Tensors with more elements than this print with the middle elided.
constexpr int64_t kElideThreshold = 1000;
/// Elements kept at each end of an elided axis.
constexpr int64_t kEdgeItems = 3;

/// "3", "0.1", "2.0", "-2.5e-08", "nan", "inf", "true".
std::string formatScalar(const Tensor& scalar);
/// "f32[2,2] [[1 2] [3 4]]"; rank 0 gives formatScalar.
std::string formatTensor(const Tensor& tensor);
/// "f32[2,2]" (or "f32" for a scalar).
std::string formatType(const Tensor& tensor);

/// `text` as the text or an attribute value of XML or HTML (SVG pictures, notebook
/// tables): < > & " escaped, control characters other than newline and tab (which XML 1.0
/// does not allow) as spaces. The one escaper of every picture and table TSL writes.
std::string escapeXml(std::string_view text);

} // namespace tsl
