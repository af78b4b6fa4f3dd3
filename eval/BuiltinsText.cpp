// eval/BuiltinsText.cpp — formatted text and text files: format, spit, slurp-lines.
#include "eval/Builtins.h"
#include "eval/Printer.h"
#include "runtime/Io.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

namespace tsl::builtins {

namespace {

constexpr size_t kMaxTextFileBytes = size_t{1} << 31; // as slurp

/// A number argument of format: a rank-0 tensor, and for %d %i %x an integer one.
const Tensor& formatNumber(const CallContext& cx, const Value& v, char directive, bool integral) {
  const bool scalar = v.isTensor() && v.tensor().isScalar() && !isBool(v.tensor().dtype());
  if (!scalar || (integral && !isInteger(v.tensor().dtype())))
    fail(ErrorKind::Type, cx.self.name(), ": %", directive, " expects ", integral ? "an integer" : "a number", ", got ",
         v.isTensor() ? printValue(v, true) : describeKind(v));
  return v.tensor();
}

/// printf's directives %d %i %s %f %e %g %x %% (and %E %G %X), with flags "-+ 0#", a
/// width and a precision, applied to TSL values.
std::string format(const CallContext& cx, const std::string& fmt, Args values) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < fmt.size(); ++i) {
    if (fmt[i] != '%') {
      out += fmt[i];
      continue;
    }
    const size_t start = i++;
    std::string spec = "%";
    while (i < fmt.size() && std::string_view("-+ 0#").find(fmt[i]) != std::string_view::npos) spec += fmt[i++];
    size_t digits = 0;
    while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9' && ++digits <= 4) spec += fmt[i++];
    if (i < fmt.size() && fmt[i] == '.') {
      spec += fmt[i++];
      digits = 0;
      while (i < fmt.size() && fmt[i] >= '0' && fmt[i] <= '9' && ++digits <= 4) spec += fmt[i++];
    }
    if (i >= fmt.size())
      fail(ErrorKind::Value, cx.self.name(), ": the directive at position ", start + 1, " has no conversion letter");
    const char c = fmt[i];
    if (c == '%' && spec == "%") {
      out += '%';
      continue;
    }
    if (std::string_view("disfeEgGxX").find(c) == std::string_view::npos)
      fail(ErrorKind::Value, cx.self.name(), ": unknown directive '", fmt.substr(start, i - start + 1), "' at position ",
           start + 1, " (directives: %d %i %s %f %e %g %x %%)");
    if (next >= values.size())
      fail(ErrorKind::Type, cx.self.name(), ": the directive '", fmt.substr(start, i - start + 1), "' at position ",
           start + 1, " has no argument (", values.size(), " given)");
    const Value& v = values[next++];
    std::string text;
    auto print = [&](auto value) {
      const int n = std::snprintf(nullptr, 0, spec.c_str(), value);
      text.resize(static_cast<size_t>(n) + 1);
      std::snprintf(text.data(), text.size(), spec.c_str(), value);
      text.resize(static_cast<size_t>(n));
    };
    switch (c) {
    case 'd':
    case 'i':
      spec += "lld";
      print(static_cast<long long>(formatNumber(cx, v, c, true).toInt()));
      break;
    case 'x':
    case 'X':
      spec += c == 'x' ? "llx" : "llX";
      print(static_cast<unsigned long long>(formatNumber(cx, v, c, true).toInt()));
      break;
    case 's': {
      spec += 's';
      const std::string s = v.isString() ? v.string().text() : printValue(v, true);
      print(s.c_str());
      break;
    }
    default:
      spec += c;
      print(formatNumber(cx, v, c, false).toDouble());
    }
    out += text;
  }
  return out;
}

} // namespace

void registerTextBuiltins(Evaluator& evaluator) {
  evaluator.defineBuiltin("format", 1, -1, [](CallContext& cx, Args args) {
    return makeString(format(cx, stringArg(cx, args, 0), args.subspan(1)));
  });

  // (spit path string :append false): the file holds string afterwards (written
  // atomically, as save-npy), or string is added at its end.
  evaluator.defineBuiltin("spit", 2, 4, [](CallContext& cx, Args args) {
    KeywordArgs kw(cx, args, 2, {"append"});
    if (kw.positional().size() != 2) fail(ErrorKind::Type, "spit: expected (spit path string :append false)");
    const std::string& path = stringArg(cx, args, 0);
    const Value& text = args[1];
    const std::string contents = text.isString() ? text.string().text() : printValue(text, true);
    const Value* append = kw.find("append");
    if (append && append->truthy()) {
      std::error_code ec;
      const auto status = std::filesystem::status(path, ec);
      if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
        fail(ErrorKind::Io, "spit: cannot append to ", path, ": not a regular file");
      std::ofstream out(path, std::ios::binary | std::ios::app);
      if (!out) fail(ErrorKind::Io, "spit: cannot open ", path, " to append to it");
      out << contents;
      out.flush();
      if (!out) fail(ErrorKind::Io, "spit: writing to ", path, " failed");
    } else {
      writeFileAtomically(path, contents);
    }
    return Value();
  });

  // (slurp-lines path): the file's lines as a vector of strings, without their "\n" (or
  // "\r\n"); a last line without a newline counts.
  evaluator.defineBuiltin("slurp-lines", 1, 1, [](CallContext& cx, Args args) {
    const std::string text = readTextFile(stringArg(cx, args, 0), kMaxTextFileBytes);
    std::vector<Value> lines;
    size_t from = 0;
    while (from < text.size()) {
      size_t end = text.find('\n', from);
      if (end == std::string::npos) end = text.size();
      size_t stop = end;
      if (stop > from && text[stop - 1] == '\r') --stop;
      lines.push_back(makeString(text.substr(from, stop - from)));
      from = end + 1;
    }
    return makeVector(std::move(lines));
  });

  document(evaluator, "format", "(format fmt args...): printf-style text: %d %i %x take integers, %f %e %g numbers, %s anything, %% a percent sign; flags -+ 0#, width and precision.\n  e.g. (format \"step %4d loss %.4f\" 10 0.25)  ; \"step   10 loss 0.2500\"");
  document(evaluator, "spit", "(spit path string :append false): writes string to the file (atomically), or adds it at the end with :append true.\n  e.g. (spit \"loss.csv\" (format \"%d,%f\\n\" 1 0.5) :append true)");
  document(evaluator, "slurp-lines", "(slurp-lines path): the lines of a text file as a vector of strings, without their line ends.\n  e.g. (count (slurp-lines \"data.csv\"))");
}

} // namespace tsl::builtins
