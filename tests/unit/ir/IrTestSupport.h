// tests/unit/ir/IrTestSupport.h — helpers shared by the IR unit tests.
//
// Structural comparison of two modules (operations, attributes, types, constant bytes,
// spans, and which value each operand refers to), capturing errors as values, and
// tensors made from and read back into plain doubles so expectations are computed by
// the tests themselves, never by the code under test.
#pragma once

#include "ir/Builder.h"
#include "ir/IR.h"
#include "ir/Parser.h"
#include "ir/Printer.h"
#include "ir/Verifier.h"
#include "runtime/Elementwise.h"
#include "runtime/Views.h"

#include <doctest/doctest.h>

#include <cstring>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tsl::ir::test {

/// The error `fn` throws, or nullopt if it returns normally.
template <typename Fn>
std::optional<Error> errorFrom(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  return std::nullopt;
}

/// A span in `file` from line:col to endLine:endCol.
inline Span spanAt(std::string_view file, uint32_t line, uint32_t col, uint32_t endLine, uint32_t endCol) {
  return Span{internFileName(file), line, col, endLine, endCol};
}

/// A tensor of `dtype` holding `values` (row-major) in `shape`.
inline Tensor tensorOf(const std::vector<double>& values, const Shape& shape, DType dtype = DType::F64) {
  Tensor t = Tensor::empty(DType::F64, shape);
  REQUIRE(static_cast<int64_t>(values.size()) == t.numel());
  if (!values.empty()) std::memcpy(t.mutableData(), values.data(), values.size() * sizeof(double));
  return dtype == DType::F64 ? t : astype(t, dtype);
}

/// The elements of any tensor as doubles, row-major.
inline std::vector<double> valuesOf(const Tensor& t) {
  const Tensor c = t.isScalar() ? astype(t, DType::F64) : contiguous(astype(t, DType::F64));
  if (c.isScalar()) return {c.toDouble()};
  const double* p = reinterpret_cast<const double*>(c.data());
  return std::vector<double>(p, p + c.numel());
}

/// The raw bytes of a tensor's elements, row-major.
inline std::string bytesOf(const Tensor& t) {
  const Tensor c = t.isScalar() ? t : contiguous(t);
  return std::string(c.data(), static_cast<size_t>(c.numel()) * c.elementSize());
}

inline std::string spanText(const Span& s) {
  return cat(s.fileName(), ":", s.line, ":", s.col, "-", s.endLine, ":", s.endCol);
}

/// Compares two modules operation by operation; returns "" when they are equal, else a
/// description of the first difference.
class StructuralDiff {
public:
  std::string modules(const Module& a, const Module& b) {
    if (a.functions().size() != b.functions().size())
      return cat("function count ", a.functions().size(), " vs ", b.functions().size());
    for (size_t i = 0; i < a.functions().size(); ++i) {
      const Function& fa = *a.functions()[i];
      const Function& fb = *b.functions()[i];
      if (fa.name() != fb.name()) return cat("function name ", fa.name(), " vs ", fb.name());
      if (std::string d = span(fa.span(), fb.span(), "@" + fa.name()); !d.empty()) return d;
      if (std::string d = block(fa.body(), fb.body(), "@" + fa.name()); !d.empty()) return d;
    }
    return "";
  }

private:
  static std::string span(const Span& a, const Span& b, const std::string& where) {
    if (a.known() != b.known() || (a.known() && (a.fileName() != b.fileName() || a.line != b.line ||
                                                 a.col != b.col || a.endLine != b.endLine || a.endCol != b.endCol)))
      return cat(where, ": span ", spanText(a), " vs ", spanText(b));
    return "";
  }

  std::string block(const Block& a, const Block& b, const std::string& where) {
    if (a.arguments().size() != b.arguments().size()) return cat(where, ": argument count differs");
    for (size_t i = 0; i < a.arguments().size(); ++i) {
      if (!(a.argument(i)->type() == b.argument(i)->type()))
        return cat(where, ": argument ", i, " type ", a.argument(i)->type().str(), " vs ", b.argument(i)->type().str());
      map_[a.argument(i)] = b.argument(i);
    }
    if (a.ops().size() != b.ops().size()) return cat(where, ": op count ", a.ops().size(), " vs ", b.ops().size());
    auto ib = b.ops().begin();
    int index = 0;
    for (auto ia = a.ops().begin(); ia != a.ops().end(); ++ia, ++ib, ++index) {
      if (std::string d = operation(**ia, **ib, cat(where, " op ", index, " (", (*ia)->code().name(), ")")); !d.empty())
        return d;
    }
    return "";
  }

  std::string operation(const Operation& a, const Operation& b, const std::string& where) {
    if (!(a.code() == b.code())) return cat(where, ": op ", a.code().name(), " vs ", b.code().name());
    if (std::string d = span(a.span(), b.span(), where); !d.empty()) return d;
    if (a.operands().size() != b.operands().size()) return cat(where, ": operand count differs");
    for (size_t i = 0; i < a.operands().size(); ++i) {
      auto it = map_.find(a.operand(i));
      if (it == map_.end() || it->second != b.operand(i)) return cat(where, ": operand ", i, " refers to another value");
    }
    if (!(a.attrs() == b.attrs())) return cat(where, ": attributes differ");
    if (a.callee() != b.callee()) return cat(where, ": callee @", a.callee(), " vs @", b.callee());
    if (a.code().is(Structural::Constant)) {
      const Tensor& ca = a.constant();
      const Tensor& cb = b.constant();
      if (ca.dtype() != cb.dtype() || ca.weak() != cb.weak() || ca.isScalar() != cb.isScalar() ||
          !(ca.shape() == cb.shape()))
        return cat(where, ": constant type differs");
      if (bytesOf(ca) != bytesOf(cb)) return cat(where, ": constant bytes differ");
    }
    if (a.resultCount() != b.resultCount()) return cat(where, ": result count differs");
    for (size_t i = 0; i < a.resultCount(); ++i) {
      if (!(a.result(i)->type() == b.result(i)->type()))
        return cat(where, ": result ", i, " type ", a.result(i)->type().str(), " vs ", b.result(i)->type().str());
      map_[a.result(i)] = b.result(i);
    }
    if (a.regions().size() != b.regions().size()) return cat(where, ": region count differs");
    for (size_t r = 0; r < a.regions().size(); ++r)
      if (std::string d = block(a.region(r).block(), b.region(r).block(), cat(where, " region ", r)); !d.empty())
        return d;
    return "";
  }

  std::unordered_map<const Value*, const Value*> map_;
};

inline std::string structuralDiff(const Module& a, const Module& b) { return StructuralDiff().modules(a, b); }

/// Prints `module` with locations, parses the text back, and checks that printing the
/// result gives the same text and that the two modules are structurally equal. Returns
/// the parsed module (nullptr if parsing failed).
inline std::unique_ptr<Module> checkRoundTrip(const Module& module) {
  const std::string first = printModule(module);
  CAPTURE(first);
  std::unique_ptr<Module> parsed;
  const auto error = errorFrom([&] { parsed = parseModule(first, "roundtrip.ir"); });
  if (error) {
    FAIL_CHECK("the printed module does not parse: " << std::string(error->what()) << " at " << spanText(error->span()));
    return nullptr;
  }
  const std::string second = printModule(*parsed);
  CHECK(second == first);
  CHECK(structuralDiff(module, *parsed) == "");
  return parsed;
}

/// Counts the operations of a function (nested ones included).
inline int countOps(const Function& f) {
  int n = 0;
  walk(f.body(), [&](Operation&) { ++n; });
  return n;
}

} // namespace tsl::ir::test
