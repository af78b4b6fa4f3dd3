// runtime/OpTraits.h — the classes and flags a row of the operation table states.
//
// Passes and backends ask about these, never about operation names: the fusion pass
// groups by FusionClass, the layout passes place conversions by LayoutClass, the
// runtime's elementwise kernels instantiate only the element types an operation's flags
// allow. Every row of runtime/Ops.h (and the elementwise rows of runtime/Elementwise.h)
// fills them in.
#pragma once

#include <cstdint>

namespace tsl {

/// Flags of an operation (a bit set).
enum OpTrait : uint32_t {
  kCommutative = 1u << 0,   ///< operands may be swapped
  kFloatOnly = 1u << 1,     ///< computes in floating point only: integer operands are
                            ///< promoted to a float type, or refused, by its type rule
  kBoolResult = 1u << 2,    ///< a predicate: its result is :bool, for operands of any dtype
  kCreation = 1u << 3,      ///< makes a tensor from its attributes alone
  kRandom = 1u << 4,        ///< a pure function of a key
  kSideEffecting = 1u << 5, ///< must not be removed, merged or reordered
  kView = 1u << 6,          ///< each result element is the operand's element at an affine
                            ///< index (a strided view: transpose, slice, broadcast-to...),
                            ///< so a loop can read through it without a copy
  kSameOrder = 1u << 7,     ///< the result is the operand's elements in the same order
                            ///< (reshape, squeeze...): it can share the operand's memory
  kLoopReduction = 1u << 8, ///< a reduction along axes that a generated loop accumulates
                            ///< element by element (sum, max, argmax...)
  // What an elementwise operation does to the zero padding of a blocked layout
  // (docs/layouts.md, "The passes"): the layout passes move it onto blocked data only where
  // the padding stays what the consumers need.
  kZeroAtZero = 1u << 9,    ///< f(0) = 0 (f(0, 0) = 0): zero padding stays zero (relu, mul)
  kFiniteAtZero = 1u << 10, ///< f(0) is finite but not 0 (exp, cos): padding stays finite
  kLayoutFromData = 1u << 11, ///< layout-demanding, its result stored as its first operand
                              ///< (conv2d and pooling: NC1HWC0 in and out; matmul: NZ)
  kReadsViews = 1u << 12,     ///< a contraction whose generated code reads a matrix operand
                              ///< through a view (a transpose, a slice) in place, for the
                              ///< dtypes it has kernels for: the fuse pass moves such views
                              ///< into its group instead of copying them first
  kBitExact = 1u << 13,       ///< every engine computes the same bits: exact (moves,
                              ///< comparisons, extrema, integer arithmetic) or IEEE operations,
                              ///< each correctly rounded (+ - * / sqrt, conversions); what the
                              ///< differential tests compare bit for bit (docs/numerics.md)
  kMayFail = 1u << 14,        ///< its kernel may raise a value error that depends on the
                              ///< operands' values, not only their types (a singular matrix,
                              ///< an index out of range, a malformed key): dce keeps it when
                              ///< nothing reads its result, so compiled code fails where eager
                              ///< code does; cse may still merge two, and fold-constants folds
                              ///< one that succeeds
};

/// How an operation may be fused with its neighbours (the fuse pass's rules).
enum class FusionClass : uint8_t {
  Elementwise, ///< output element i depends on input elements i only (after broadcasting)
  Injective,   ///< rearranges elements without arithmetic: each output element is one
               ///< input element (reshape, transpose, broadcast-to, slice, concat...)
  Reduction,   ///< combines elements along axes (sum, max, softmax's normalisation...)
  Contraction, ///< a sum of products (matmul, conv2d, einsum): takes an elementwise epilogue
  Scan,        ///< element k along an axis combines elements 0..k (cumsum): runs as it is
  Opaque,      ///< none of these: runs as it is
};

/// How an operation relates to the physical layout of its operands (docs/language.md §7).
enum class LayoutClass : uint8_t {
  Agnostic,        ///< works on any layout unchanged (elementwise, creation)
  AxisSensitive,   ///< its attributes name axes: works on a layout once they are mapped
  LayoutDemanding, ///< its kernel wants particular layouts (matmul, conv2d, reshape)
  Converting,      ///< makes its result's layout: to-layout, transdata
};

const char* fusionClassName(FusionClass c);
const char* layoutClassName(LayoutClass c);

} // namespace tsl
