// tsl/FormatFloat.h — the shortest decimal of a float, laid out the way Python's repr does.
//
// The digits are the fewest that read back to the same value (std::to_chars); the layout
// is fixed-point for decimal exponents from -4 to 15 ("100000.0", "0.0001") and
// scientific otherwise ("1e+20", "-2.5e-08"), as Python and NumPy print floats. Shared by
// the syntax printer and the runtime's tensor formatting so both print numbers alike.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

namespace tsl {

/// Lays out a number given as significant digits (no sign, no dot) and the decimal
/// exponent of the first digit. `forceDot` adds ".0" to an integral fixed-point result.
inline std::string layoutDecimal(bool negative, const std::string& digits, int exponent, bool forceDot) {
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits[0];
    if (digits.size() > 1) out += "." + digits.substr(1);
    char buffer[8];
    const int magnitude = std::abs(exponent);
    out += exponent < 0 ? "e-" : "e+";
    if (magnitude < 10) out += '0';
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, magnitude);
    out.append(buffer, end);
    return out;
  }
  if (exponent < 0) {
    out += "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
    return out;
  }
  const auto intDigits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= intDigits) {
    out += digits + std::string(intDigits - digits.size(), '0');
    if (forceDot) out += ".0";
  } else {
    out += digits.substr(0, intDigits) + "." + digits.substr(intDigits);
  }
  return out;
}

/// Lays out scientific text "-d.ddde±XX" (as std::to_chars writes it) the Python way.
inline std::string layoutScientific(std::string text, bool forceDot) {
  const bool negative = text[0] == '-';
  if (negative) text.erase(0, 1);
  const size_t e = text.find('e');
  std::string digits = text.substr(0, e);
  if (digits.size() > 1) digits.erase(1, 1); // the '.'
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  const int exponent = std::atoi(text.c_str() + e + 1);
  return layoutDecimal(negative, digits, exponent, forceDot);
}

/// Shortest round-trip text of a float or double (nan, inf and -inf by name).
template <typename F>
inline std::string formatShortest(F value, bool forceDot) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  return layoutScientific(std::string(buffer, end), forceDot);
}

} // namespace tsl
