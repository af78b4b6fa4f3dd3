// ir/Printer.h — the IR's text form (parsed back by ir/Parser.h).
//
//   func @f(%x: f32[128,64], %y: f32[64]) -> (f32[128]) loc("model.tsl":3:1-5:20) {
//     %0 = matmul %x, %y : f32[128] loc("model.tsl":4:3-4:14)
//     %1 = sum %0 {axes = [0]} : f32
//     %2:2 = if %c : f32, i64 {
//       yield %a, %b
//     } else {
//       yield %c, %d
//     }
//     %3:2 = while (%i = %i0, %acc = %acc0) : (i64, f32) -> (i64, f32) {
//       ...
//       condition %more, %i, %acc
//     } do (%j, %s) {
//       ...
//       yield %j1, %s1
//     }
//     return %1
//   }
//
// Values keep their source names where unique (%x), others are numbered. Small constants
// print their elements (`constant dense<[1, 2]> : i64[2]`), large ones their bytes in hex,
// so the text always parses back to the same module.
#pragma once

#include "ir/IR.h"

#include <string>
#include <unordered_map>

namespace tsl::ir {

struct PrintOptions {
  bool locations = true; ///< print loc(...) for every operation with a known span
};

std::string printModule(const Module& module, const PrintOptions& options = {});
std::string printFunction(const Function& function, const PrintOptions& options = {});

/// The names the printer gives a function's values ("%x", "%3", "%4#1" for the second
/// result of a multi-result operation, whose group is "%4").
struct ValueNames {
  std::unordered_map<const Value*, std::string> names;
  std::unordered_map<const Operation*, std::string> groups;
};
ValueNames valueNames(const Function& function);

/// A name the text form accepts for a value or function: other characters become `_`
/// (log-softmax -> log_softmax) and a leading digit gets a `v` in front.
std::string irName(std::string_view name);

/// A constant's literal as printed after `constant` (`1.5`, `dense<[1, 2]>`, `dense<"0x...">`).
std::string printConstant(const Tensor& value);

} // namespace tsl::ir
