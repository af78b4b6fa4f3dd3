// tests/lang/Differential.h — every top-level call of a user function, also under jit.
//
// While a language test runs, each call of a closure made from top level that returns is
// lowered for its arguments, optimised and run on the :interp and :cpu backends, and each
// result is compared with the eager one: the same structure and static values, tensors of
// the same dtype and shape, integers and booleans bit for bit, floats within 1e-6
// relative on :interp (its kernels are eager's) and 2e-5 of the element or of the
// tensor's largest element on :cpu (polynomial math, other summation orders; f64 within
// 1e-12; f16 and bf16 within their machine epsilon), NaN matching NaN. A call whose lowering fails
// with a `jit: ` error (a construct compiled code cannot express, like a recursion on a
// traced value) is counted as not jittable; one that runs an effectful builtin (printing,
// files) while lowering is counted as impure and not compared, and so is one whose
// arguments hold more than 1000 tensors and other leaves (lowering flattens them, so
// comparing every call of a loop over a growing map would be quadratic). Anything else — a
// different result, or another error where eager code succeeded — is a failure.
#pragma once

#include "eval/Evaluator.h"

#include <sstream>
#include <string>
#include <vector>

namespace tsl::testing {

struct DifferentialStats {
  int compared = 0;
  int notJittable = 0;
  int impure = 0;
  int tooLarge = 0; ///< calls not compared: more than 1000 leaves in their arguments
  int bitExact = 0; ///< comparisons made bit for bit
  std::vector<std::string> failures; ///< "LINE:COL: what differed"
};

/// Installs the observer on `interp`; `output` is the engine's print stream, whose
/// contents are restored after each lowering (which may print).
void installDifferential(Evaluator& evaluator, std::ostringstream& output, DifferentialStats& stats);

/// Why two results differ, or empty if they match (`native`: :cpu's float tolerance;
/// `exact`: floats bit for bit).
std::string compareResults(const Value& eager, const Value& jit, bool native = false, bool exact = false);

} // namespace tsl::testing
