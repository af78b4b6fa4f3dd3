// runtime/DType.cpp — dtype names, sizes and promotion.
#include "runtime/DType.h"
#include "tsl/Error.h"

#include <algorithm>

namespace tsl {

namespace {

struct DTypeInfo {
  DType dtype;
  const char* name;
  size_t size;
};

constexpr DTypeInfo kInfo[kNumDTypes] = {
    {DType::Bool, "bool", 1}, {DType::I32, "i32", 4},  {DType::I64, "i64", 8},
    {DType::F16, "f16", 2},   {DType::BF16, "bf16", 2}, {DType::F32, "f32", 4},
    {DType::F64, "f64", 8},
};

/// Position in the promotion lattice; f16 and bf16 share a rank and meet at f32.
int rankOf(DType d) {
  switch (d) {
  case DType::Bool: return 0;
  case DType::I32: return 1;
  case DType::I64: return 2;
  case DType::F16:
  case DType::BF16: return 3;
  case DType::F32: return 4;
  case DType::F64: return 5;
  }
  return 0;
}

} // namespace

void checkDType(DType dtype) {
  if (!validDType(dtype))
    fail(ErrorKind::Value, "invalid dtype ", static_cast<unsigned>(dtype),
         " (a tsl::DType is one of Bool, I32, I64, F16, BF16, F32, F64)");
}

size_t dtypeSize(DType dtype) {
  checkDType(dtype);
  return kInfo[static_cast<int>(dtype)].size;
}

const char* dtypeName(DType dtype) {
  checkDType(dtype);
  return kInfo[static_cast<int>(dtype)].name;
}

std::optional<DType> dtypeFromName(std::string_view name) {
  for (const DTypeInfo& info : kInfo)
    if (name == info.name) return info.dtype;
  return std::nullopt;
}

TypeKey promoteTypes(TypeKey a, TypeKey b) {
  if (a.weak && b.weak) {
    // Weak with weak stays weak, at i64 or f64 precision.
    const bool anyFloat = isFloat(a.dtype) || isFloat(b.dtype);
    return {anyFloat ? DType::F64 : DType::I64, true};
  }
  if (a.weak || b.weak) {
    const TypeKey strong = a.weak ? b : a;
    const TypeKey weak = a.weak ? a : b;
    if (isFloat(weak.dtype)) return {isFloat(strong.dtype) ? strong.dtype : DType::F32, false};
    // A weak integer: takes an integer or float dtype, makes a bool i64.
    return {isBool(strong.dtype) ? DType::I64 : strong.dtype, false};
  }
  if (a.dtype == b.dtype) return a;
  const bool halfPair = (a.dtype == DType::F16 && b.dtype == DType::BF16) ||
                        (a.dtype == DType::BF16 && b.dtype == DType::F16);
  if (halfPair) return {DType::F32, false};
  return rankOf(a.dtype) >= rankOf(b.dtype) ? a : b;
}

TypeKey floatResultType(TypeKey t) {
  if (isFloat(t.dtype)) return t;
  return t.weak ? TypeKey{DType::F64, true} : TypeKey{DType::F32, false};
}

} // namespace tsl
