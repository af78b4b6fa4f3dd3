// autodiff/Autodiff.h — differentiation as a transformation of IR functions.
//
//   vjp(f):  f(x...) -> (y...)   becomes   f_vjp(x..., ct_y...) -> (y..., ct_x...)
//   jvp(f):  f(x...) -> (y...)   becomes   f_jvp(x..., dx...)   -> (y..., dy...)
//
// The derivative is an ordinary function added to the module, built from the rules of
// autodiff/Rules.h; each of its operations carries the span of the primal operation it
// derives from. Cotangents and tangents of non-float values are zeros of their type.
//
// Reverse mode runs the primal forward, then sweeps back over its operations. Structured
// control flow: an `if` differentiates into an `if` on the same condition whose branches
// recompute their primal branch and sweep back over it; a `while` records its loop-carried
// values on a tape (tape_push per iteration, a reference to each value: the memory is
// that of every iteration's carried values, which the primal would otherwise free) and a
// reverse `while` pops them, recomputes each iteration and sweeps back over it, carrying
// the cotangents of the loop variables and of the values the loop reads from outside. A
// `call` differentiates by calling the callee's own vjp function, built once per callee.
// Forward mode carries tangents beside the primal values through every construct.
#pragma once

#include "ir/IR.h"

namespace tsl::autodiff {

/// Adds f's reverse-mode derivative to the module (once; later calls return it).
ir::Function& vjp(ir::Module& module, const ir::Function& f);
/// Adds f's forward-mode derivative to the module (once; later calls return it).
ir::Function& jvp(ir::Module& module, const ir::Function& f);

} // namespace tsl::autodiff
