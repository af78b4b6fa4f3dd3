// compiler/cpu/Aot.h — :cpu code for people and for other programs: LLVM IR, assembly,
// object files, shared libraries and their C headers (internal to compiler/cpu).
//
// A library holds one entry: a C function named after the TSL function (non-alphanumeric
// characters become '_'), taking a pointer per parameter and then a pointer per result,
// each to row-major contiguous elements of the types in the signature:
//
//   int32_t predict(const float* x, float* result0);   /* 0: done */
//   const char* predict_error(void);                    /* why the last call failed */
//
// The caller owns every buffer: inputs are only read, outputs are written whole. The
// entry allocates its scratch memory per call and frees it before returning, is safe to
// call from several threads at once, and reports a failure (an index out of range, an
// assert) by a nonzero status, with the message of the error eager TSL would raise —
// "model.tsl:7:3: value error: take: index 9 is out of range for axis 0 of size 4" —
// from the _error function, kept per thread until its next failure. The library links
// only libc, libm, libpthread and the static runtime of compiler/cpu/abi (embedded in
// the compiler); the header declares the entry with its signature in a comment.
#pragma once

#include "compiler/Backend.h"

namespace tsl::compiler::cpu {

/// `entry` of `module` (planned) as `artifact`: text, or the bytes of an object file or
/// a shared library. Object files, libraries and headers are ahead-of-time code (the
/// options' cpu defaults to x86-64-v3 for them); LLVM IR and assembly show the code the
/// JIT would run unless options.aot is set.
std::string emitArtifact(const ir::Module& module, const ir::Function& entry, Artifact artifact,
                         const CompileOptions& options);

/// The C name of a TSL function ("mlp-predict" -> "mlp_predict").
std::string cName(std::string_view name);

} // namespace tsl::compiler::cpu
