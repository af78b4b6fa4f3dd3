// runtime/EinsumPlan.h — how einsum is computed, written once for every evaluator.
//
// einsum is parsed (parseEinsum), each operand's repeated letters are reduced to a
// diagonal, and the operands are folded left: before each step the letters no later
// operand and no output needs are summed out, and each pair is contracted as one batched
// matrix product — the letters both share and the output keeps are the batch, the ones
// they share and drop are k, the rest are each side's m and n — with transposes and
// reshapes around it; the result is finally arranged in the output's order. The eager
// kernel (runtime/LinearAlgebra.cpp) runs the plan on tensors, and the compiler's
// expand-einsum pass (compiler/passes/ExpandEinsum.cpp) on IR values, so einsum's
// contractions run on the GEMM everywhere. `Ops` supplies the operations on its values:
//   V diagonal(V, const std::string& letters, std::string& unique) — or fail
//   V sum(V, std::vector<int64_t> axes); V transpose(V, std::vector<int64_t> perm)
//   V reshape(V, std::vector<int64_t> dims); V matmul(V, V); int64_t size(V, int axis);
//   int rank(V)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tsl::einsumplan {

struct Spec {
  std::vector<std::string> inputs; ///< each operand's letters
  std::string output;              ///< the result's letters
};

/// Parses "ij,jk->ik" for `operands` operands (without "->": the letters used once, in
/// alphabetical order). Value errors name what is wrong.
Spec parse(const std::string& spec, size_t operands);

template <typename Ops>
struct Plan {
  using V = typename Ops::Value;
  struct Term {
    V value;
    std::string letters;
  };
  Ops& ops;

  /// Sums away the letters of `term` not in `keep`.
  Term sumOut(const Term& term, const std::string& keep) {
    std::vector<int64_t> axes;
    std::string remaining;
    for (size_t i = 0; i < term.letters.size(); ++i) {
      if (keep.find(term.letters[i]) == std::string::npos) axes.push_back(static_cast<int64_t>(i));
      else remaining += term.letters[i];
    }
    if (axes.empty()) return term;
    return {ops.sum(term.value, axes), remaining};
  }

  /// `term` with its letters in the order `order` (a permutation of them).
  V arrange(const Term& term, const std::string& order) {
    std::vector<int64_t> perm;
    bool identity = true;
    for (size_t i = 0; i < order.size(); ++i) {
      perm.push_back(static_cast<int64_t>(term.letters.find(order[i])));
      identity &= perm.back() == static_cast<int64_t>(i);
    }
    return identity ? term.value : ops.transpose(term.value, perm);
  }

  int64_t sizeOf(const Term& t, char c) { return ops.size(t.value, static_cast<int>(t.letters.find(c))); }

  /// Contracts two terms, keeping the letters in `needed`.
  Term contract(const Term& a, const Term& b, const std::string& needed) {
    std::string batch, summed, freeA, freeB;
    for (char c : a.letters) {
      const bool inB = b.letters.find(c) != std::string::npos;
      if (inB) (needed.find(c) != std::string::npos ? batch : summed) += c;
      else freeA += c;
    }
    for (char c : b.letters)
      if (a.letters.find(c) == std::string::npos) freeB += c;
    auto product = [&](const Term& t, const std::string& letters) {
      int64_t p = 1;
      for (char c : letters) p *= sizeOf(t, c);
      return p;
    };
    const int64_t nb = product(a, batch), na = product(a, freeA), nk = product(a, summed), nf = product(b, freeB);
    // Without batch letters the product is one matrix (so a transposed operand stays a
    // transpose of a matrix, which a GEMM reads in place).
    const V A = reshape(arrange(a, batch + freeA + summed), batch.empty() ? std::vector<int64_t>{na, nk}
                                                                           : std::vector<int64_t>{nb, na, nk});
    const V B = reshape(arrange(b, batch + summed + freeB), batch.empty() ? std::vector<int64_t>{nk, nf}
                                                                           : std::vector<int64_t>{nb, nk, nf});
    std::vector<int64_t> shape;
    for (char c : batch) shape.push_back(sizeOf(a, c));
    for (char c : freeA) shape.push_back(sizeOf(a, c));
    for (char c : freeB) shape.push_back(sizeOf(b, c));
    return {reshape(ops.matmul(A, B), shape), batch + freeA + freeB};
  }

  /// `v` reshaped to `dims`, unless it has them already.
  V reshape(const V& v, const std::vector<int64_t>& dims) {
    bool same = ops.rank(v) == static_cast<int>(dims.size());
    for (size_t d = 0; same && d < dims.size(); ++d) same = ops.size(v, static_cast<int>(d)) == dims[d];
    return same ? v : ops.reshape(v, dims);
  }

  /// The einsum of `operands` (of the spec's letters).
  V run(const Spec& spec, const std::vector<V>& operands) {
    std::vector<Term> terms;
    for (size_t i = 0; i < operands.size(); ++i) {
      std::string unique;
      const V v = ops.diagonal(operands[i], spec.inputs[i], unique);
      terms.push_back({v, unique});
    }
    // Fold left, each step keeping the letters the output or a later operand needs.
    auto neededAfter = [&](size_t i) {
      std::string needed = spec.output;
      for (size_t j = i; j < terms.size(); ++j) needed += terms[j].letters;
      return needed;
    };
    Term acc = sumOut(terms[0], neededAfter(1));
    for (size_t i = 1; i < terms.size(); ++i) {
      const std::string needed = neededAfter(i + 1);
      acc = contract(acc, sumOut(terms[i], needed + acc.letters), needed);
    }
    acc = sumOut(acc, spec.output);
    return arrange(acc, spec.output);
  }
};

} // namespace tsl::einsumplan
