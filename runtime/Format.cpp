// runtime/Format.cpp — shortest round-trip number formatting and tensor printing.
#include "runtime/Layout.h"
#include "runtime/Format.h"

#include "runtime/Dispatch.h"
#include "tsl/FormatFloat.h"

#include <charconv>
#include <cmath>
#include <vector>

namespace tsl {

namespace {

/// Shortest decimal for a value of element type T; `forceFloat` adds ".0" to an
/// integral-looking float.
template <typename T>
std::string formatElement(T value, bool forceFloat) {
  char buffer[64];
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "true" : "false";
  } else if constexpr (std::is_integral_v<T>) {
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
    return std::string(buffer, end);
  } else {
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      return formatShortest(value, forceFloat);
    } else {
      // Half types: the fewest significant digits that read back to the same value.
      const double d = toDouble(value);
      if (std::isnan(d) || std::isinf(d)) return formatShortest(d, forceFloat);
      for (int digits = 1;; ++digits) {
        auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, d, std::chars_format::scientific,
                                       digits - 1);
        double parsed = 0;
        std::from_chars(buffer, end, parsed);
        if (convertElement<T>(parsed) == value || digits == 9)
          return layoutScientific(std::string(buffer, end), forceFloat);
      }
    }
  }
}

/// Formats every element that will be shown, in order, with elision markers as nullopt.
struct Printer {
  const Tensor& t;
  bool elide;
  std::vector<std::string> cells; ///< formatted elements in print order
  size_t width = 0;

  void gather(int axis, int64_t offset) {
    const int64_t n = t.shape()[axis];
    const int64_t stride = t.strides()[axis];
    for (int64_t i = 0; i < n; ++i) {
      if (elide && n > 2 * kEdgeItems && i == kEdgeItems) i = n - kEdgeItems;
      const int64_t at = offset + i * stride;
      if (axis + 1 == t.rank()) {
        dispatchDType(t.dtype(), [&](auto tag) {
          using T = decltype(tag);
          const T value = loadElement<T>((*t.storage())->data() + at * static_cast<int64_t>(sizeof(T)));
          cells.push_back(formatElement(value, false));
          width = std::max(width, cells.back().size());
        });
      } else {
        gather(axis + 1, at);
      }
    }
  }

  /// Emits axis `axis` starting at cell `next`; `indent` is the column of its '['.
  void emit(std::string& out, int axis, size_t& next, size_t indent, bool multiline, bool pad) {
    const int64_t n = t.shape()[axis];
    out += '[';
    for (int64_t i = 0; i < n; ++i) {
      if (elide && n > 2 * kEdgeItems && i == kEdgeItems) {
        out += axis + 1 == t.rank() || !multiline ? "... " : cat("...\n", std::string(indent + 1, ' '));
        i = n - kEdgeItems;
      }
      if (axis + 1 == t.rank()) {
        const std::string& cell = cells[next++];
        if (pad) out += std::string(width - cell.size(), ' ');
        out += cell;
      } else {
        emit(out, axis + 1, next, indent + 1, multiline, pad);
      }
      if (i + 1 < n) {
        if (axis + 1 < t.rank() && multiline) {
          out += '\n';
          out += std::string(indent + 1, ' ');
        } else {
          out += ' ';
        }
      }
    }
    out += ']';
  }
};

} // namespace

std::string formatScalar(const Tensor& scalar) {
  TSL_ASSERT(scalar.isScalar());
  // A weak float prints as the f32 it becomes when used on its own.
  const Tensor shown = scalar.weak() && isFloat(scalar.dtype()) ? scalar.strengthened() : scalar;
  return dispatchDType(shown.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T value = loadElement<T>(shown.data());
    return formatElement(value, true);
  });
}

std::string formatType(const Tensor& tensor) {
  const DType dtype = tensor.isScalar() ? concreteDType(tensor.typeKey()) : tensor.dtype();
  if (tensor.isScalar()) return dtypeName(dtype);
  return cat(dtypeName(dtype), tensor.shape().str());
}

std::string formatTensor(const Tensor& tensor) {
  if (tensor.blocked()) return formatTensor(plain(tensor));
  if (tensor.isScalar()) return formatScalar(tensor);
  const std::string prefix = formatType(tensor) + " ";
  if (tensor.numel() == 0) return prefix + "[]"; // as NumPy: the shape says the rest
  Printer printer{tensor, tensor.numel() > kElideThreshold, {}, 0};
  printer.gather(0, tensor.offset());
  std::string line;
  size_t next = 0;
  printer.emit(line, 0, next, prefix.size(), false, false);
  if (tensor.rank() == 1 || prefix.size() + line.size() <= 80) return prefix + line;
  std::string block;
  next = 0;
  printer.emit(block, 0, next, prefix.size(), true, true);
  return prefix + block;
}

std::string escapeXml(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '&': out += "&amp;"; break;
    case '"': out += "&quot;"; break;
    default: out += static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' ? ' ' : c;
    }
  }
  return out;
}

} // namespace tsl
