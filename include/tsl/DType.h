// tsl/DType.h — element types and the promotion rules of docs/language.md §3.
//
// The dtypes are listed once, here. Code that needs the C++ type of a dtype goes through
// dispatchDType() in runtime/Dispatch.h, never through a switch of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tsl {

enum class DType : uint8_t { Bool, I32, I64, F16, BF16, F32, F64 };
constexpr int kNumDTypes = 7;

/// Whether `dtype` is one of the enumerators above: a host can cast any byte to a DType.
inline bool validDType(DType dtype) { return static_cast<unsigned>(dtype) < kNumDTypes; }
/// Throws a value error naming the dtypes unless validDType(dtype). Everything that takes
/// a dtype from a host checks it (dtypeSize and dtypeName too, so no table is read past
/// its end).
void checkDType(DType dtype);

/// Bytes per element.
size_t dtypeSize(DType dtype);
/// "f32", as written after ':' in TSL.
const char* dtypeName(DType dtype);
/// Parses "f32" (without ':'); nullopt for anything else.
std::optional<DType> dtypeFromName(std::string_view name);

inline bool isFloat(DType d) { return d >= DType::F16; }
inline bool isInteger(DType d) { return d == DType::I32 || d == DType::I64; }
inline bool isBool(DType d) { return d == DType::Bool; }

/// A dtype together with the weak-typing flag of number literals (§3). Weak values are
/// held as I64 or F64 and give way to the dtype of any strong operand of the same kind.
struct TypeKey {
  DType dtype;
  bool weak = false;
  bool operator==(const TypeKey&) const = default;
};

/// The result type of combining two operands (NumPy's lattice bool < i32 < i64 < f16, bf16
/// < f32 < f64; f16 with bf16 gives f32; weak literals as in §3).
TypeKey promoteTypes(TypeKey a, TypeKey b);

/// The dtype a weak value takes when it is stored, printed or used on its own:
/// weak integers are i64, weak floats f32.
inline DType concreteDType(TypeKey t) {
  if (t.weak && isFloat(t.dtype)) return DType::F32;
  return t.dtype;
}

/// The float type an integer or bool operand becomes in a float-only operation
/// (sqrt of an integer, integer division): f32, kept weak for weak operands.
TypeKey floatResultType(TypeKey t);

} // namespace tsl
