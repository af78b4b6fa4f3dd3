// eval/BuiltinsLinalg.cpp — slogdet, qr, svd and eigh: the decompositions with several
// results.
//
// Each is one row of the operation table giving one result at a time (PartAttrs; see
// runtime/LinalgRows.h: the row slogdet-part and so on). The builtin applies the row once per part and returns the vector
// of results: eagerly each part runs the row's kernel, under jit each is one IR
// operation (the compiled program computes the decomposition once per part it uses).
#include "eval/Builtins.h"
#include "eval/Staging.h"

namespace tsl::builtins {

namespace {

Value parts(CallContext& cx, Args args, OpKind kind, int64_t count) {
  std::vector<Value> out;
  const Value* x = &args[0];
  for (int64_t part = 0; part < count; ++part) {
    const PartAttrs attrs{part};
    if (std::optional<Value> staged =
            staging::primitive(cx.evaluator, kind, attrs, std::span<const Value* const>(&x, 1), cx.span))
      out.push_back(std::move(*staged));
    else
      out.emplace_back(runOp(kind, attrs, std::array{tensorArg(cx, args, 0)}));
  }
  return makeVector(std::move(out));
}

struct Decomposition {
  const char* name;
  OpKind kind;
  int64_t parts;
  const char* doc;
};

const Decomposition kDecompositions[] = {
    {"slogdet", OpKind::Slogdet, 2,
     "(slogdet a): [sign logabsdet] of the determinants of square a [..., n, n]; a singular matrix gives sign 0 "
     "and logabsdet -inf.\n  e.g. (slogdet [[2.0 1.0] [1.0 3.0]])  ; [1.0 1.609438]"},
    {"qr", OpKind::Qr, 2,
     "(qr a): [q r], the reduced QR decomposition of a [..., m, n]: q [..., m, k] with orthonormal columns, r [..., k, n] "
     "upper triangular, k = min(m, n).\n  e.g. (qr [[3.0] [4.0]])  ; [f32[2,1] [[-0.6] [-0.8]] f32[1,1] [[-5]]]"},
    {"svd", OpKind::Svd, 3,
     "(svd a): [u s vh], the reduced singular value decomposition of a [..., m, n]: a = u·diag(s)·vh, s descending.\n"
     "  e.g. (get (svd [[3.0 0.0] [0.0 4.0]]) 1)  ; f32[2] [4 3]"},
    {"eigh", OpKind::Eigh, 2,
     "(eigh a): [w v], the eigenvalues (ascending) and eigenvectors (columns) of symmetric a [..., n, n], read from "
     "its lower triangle.\n  e.g. (get (eigh [[2.0 0.0] [0.0 3.0]]) 0)  ; f32[2] [2 3]"},
};

} // namespace

void registerLinalgBuiltins(Evaluator& evaluator) {
  for (const Decomposition& d : kDecompositions) {
    const OpKind kind = d.kind;
    const int64_t count = d.parts;
    evaluator.defineBuiltin(d.name, 1, 1, [kind, count](CallContext& cx, Args args) { return parts(cx, args, kind, count); });
    document(evaluator, d.name, d.doc);
  }
}

} // namespace tsl::builtins
