// runtime/LinalgRows.h — the operation table's rows for linear algebra on matrices.
//
// Rows in the format of TSL_OTHER_OPS (runtime/Ops.h), kept in their own block. Each works
// on the last two axes and is batched over the rest; the kernels and type rules are
// runtime/Decompositions.cpp's. A decomposition with several results (slogdet, qr, svd,
// eigh) is one row whose PartAttrs select which result it gives: the IR's primitives have
// one result each, so (qr a) stages two operations of one row, `part` 0 and 1, and each
// has its own derivative rule (the derivative of the whole is linear in the cotangents of
// its parts, so the sum of the parts' rules is the whole's). TSL calls those through the
// builtins of eval/BuiltinsLinalg.cpp, which return the vector of parts.
#pragma once

#define TSL_LINALG_OPS(X)                                                                                                   \
  X(Solve, "solve", "solve", 2, 2, NoAttrs, Opaque, LayoutDemanding, kFloatOnly | kMayFail, solveType, solveKernel, kBinaryCall,  \
    "x with a·x = b for square a [..., n, n]; b a vector [n] or matrices [..., n, k]; singular a is a value error.",    \
    "(solve [[2.0 0.0] [0.0 4.0]] [2.0 2.0]) ; f32[2] [1 0.5]")                                                        \
  X(Inv, "inv", "inv", 1, 1, NoAttrs, Opaque, LayoutDemanding, kFloatOnly | kMayFail, invType, invKernel, kUnaryCall,      \
    "The inverse of square matrices [..., n, n]; singular ones are a value error.",                                    \
    "(inv [[2.0 0.0] [0.0 4.0]]) ; f32[2,2] [[0.5 0] [0 0.25]]")                                                       \
  X(Det, "det", "det", 1, 1, NoAttrs, Opaque, LayoutDemanding, kFloatOnly, detType, detKernel, kUnaryCall,     \
    "The determinant of square matrices [..., n, n] (by LU with partial pivoting).",                                   \
    "(det [[2.0 1.0] [1.0 3.0]]) ; 5.0")                                                                              \
  X(Slogdet, "slogdet-part", "slogdet", 1, 1, PartAttrs, Opaque, LayoutDemanding, kFloatOnly, slogdetType, slogdetKernel, kInternal, \
    "Part 0: the sign of the determinant (0 for singular); part 1: log |det| (-inf for singular); (slogdet a) gives both.", \
    "")                                                                                                                \
  X(Cholesky, "cholesky", "cholesky", 1, 1, NoAttrs, Opaque, LayoutDemanding, kFloatOnly | kMayFail, choleskyType, choleskyKernel, kUnaryCall, \
    "The lower-triangular l with l·lᵀ = a, reading a's lower triangle; not positive definite is a value error.",      \
    "(cholesky [[4.0 0.0] [2.0 2.0]]) ; f32[2,2] [[2 0] [1 1]]")                                                       \
  X(Qr, "qr-part", "qr", 1, 1, PartAttrs, Opaque, LayoutDemanding, kFloatOnly, qrType, qrKernel, kInternal,                 \
    "The reduced QR decomposition of [..., m, n]: part 0 q [..., m, k], part 1 r [..., k, n], k = min(m, n).",         \
    "")                                                                                                                \
  X(Svd, "svd-part", "svd", 1, 1, PartAttrs, Opaque, LayoutDemanding, kFloatOnly | kMayFail, svdType, svdKernel, kInternal,            \
    "The reduced SVD of [..., m, n]: part 0 u [..., m, k], 1 s [..., k] (descending), 2 vh [..., k, n].",              \
    "")                                                                                                                \
  X(Eigh, "eigh-part", "eigh", 1, 1, PartAttrs, Opaque, LayoutDemanding, kFloatOnly | kMayFail, eighType, eighKernel, kInternal,       \
    "Eigen-decomposition of symmetric [..., n, n] from its lower triangle: part 0 w ascending, part 1 v (columns).",   \
    "")                                                                                                                \
  X(Trace, "trace", "trace", 1, 1, NoAttrs, Opaque, LayoutDemanding, 0, traceType, traceKernel, kUnaryCall,            \
    "The sum of the diagonal of [..., n, m]; integers give i64.",                                                      \
    "(trace [[1 2] [3 4]]) ; 5")                                                                                       \
  X(Diag, "diag", "diag", 1, 1, NoAttrs, Opaque, LayoutDemanding, kBitExact, diagType, diagKernel, kUnaryCall,         \
    "A vector [n] gives the n×n matrix with it on the diagonal; matrices [..., n, m] give their diagonals.",           \
    "(diag [[1 2] [3 4]]) ; i64[2] [1 4]")
