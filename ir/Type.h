// ir/Type.h — the type of an IR value: dtype, shape (symbolic dimensions allowed), layout.
//
// Concrete dimensions are sizes; a symbolic dimension has a name ("n") and stands for a
// size fixed only when the function is called. Types print as `f32[128,64]`, `f32` for a
// scalar, `f32[n,64]` with a symbolic dimension and `f32[1,2,8,8,16]{nc1hwc0}` when the
// physical layout is not the default (docs/language.md §7).
#pragma once

#include "runtime/Layout.h"
#include "runtime/Ops.h"

#include <string>
#include <string_view>
#include <vector>

namespace tsl::ir {

/// Physical layouts (docs/language.md §7, runtime/Layout.h). Row-major is the default and
/// prints nothing; the IR text names the others in braces after the shape.
using Layout = tsl::Layout;
/// The layout an IR type names ("nhwc"; "row-major", "default" and "nchw" for row-major).
std::optional<Layout> layoutFromName(std::string_view name);

struct Dim {
  int64_t size = 0;
  std::string symbol; ///< non-empty for a symbolic dimension
  bool symbolic() const { return !symbol.empty(); }
  bool operator==(const Dim&) const = default;
};

struct Type {
  DType dtype = DType::F32;
  std::vector<Dim> dims;
  Layout layout = Layout::RowMajor;

  static Type of(const TensorType& t);
  static Type of(DType dtype, const Shape& shape);
  /// A tensor's type: its concrete dtype, its shape and its layout.
  static Type of(const Tensor& t);
  int rank() const { return static_cast<int>(dims.size()); }
  bool concrete() const;
  /// The concrete shape; an internal error if a dimension is symbolic.
  Shape shape() const;
  /// The runtime's view of this type (symbolic dimensions must have been substituted).
  TensorType tensorType() const;
  /// Bytes of a buffer holding a value of this type in its layout (padding included);
  /// the type must be concrete.
  int64_t bytes() const;
  bool operator==(const Type&) const = default;
  /// "f32[128,n]", "f32", "f16[1,19,8,8]{nc1hwc0}".
  std::string str() const;
};

/// Parses a type written as Type::str prints it; nullopt if malformed.
std::optional<Type> parseType(std::string_view text);

} // namespace tsl::ir
