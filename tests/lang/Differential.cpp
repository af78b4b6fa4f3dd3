// tests/lang/Differential.cpp — comparing eager calls with their jit :interp and :cpu versions.
#include "tests/lang/Differential.h"

#include "eval/Compile.h"
#include "eval/Printer.h"
#include "runtime/Views.h"

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <iostream>

namespace tsl::testing {

namespace {

/// Relative tolerance for a float dtype. :interp runs the eager kernels themselves; :cpu
/// computes exp, log, tanh, sigmoid and erf with polynomials (within 8 ulp of the true
/// value, runtime/FastMath.h) and sums in another order, so its floats may differ from
/// eager's by a few ulp per operation, compounded along a program.
double tolerance(DType dtype, bool native) {
  if (dtype == DType::F16) return 1.0 / 1024;
  if (dtype == DType::BF16) return 1.0 / 128;
  if (native) return dtype == DType::F64 ? 1e-12 : 2e-5;
  return 1e-6;
}

/// Whether every operation of the lowered module computes the same bits on every engine
/// (kBitExact: IEEE operations correctly rounded, moves, comparisons, extrema...): then
/// its floats are compared bit for bit, not within a tolerance. Calls of the module's
/// own functions and control flow keep it exact; anything else does not.
bool bitExact(const ir::Module& module) {
  bool exact = true;
  for (const auto& f : module.functions())
    ir::walk(f->body(), [&](ir::Operation& op) {
      if (op.code().primitive) exact &= opInfo(op.code().kind).has(kBitExact);
      else exact &= !op.code().is(ir::Structural::Fused) && !op.code().is(ir::Structural::Raise);
    });
  return exact;
}

std::string compareTensors(const Tensor& a, const Tensor& b, bool native, bool exact) {
  const DType da = concreteDType(a.typeKey()), db = concreteDType(b.typeKey());
  // A bare number is of no dtype in particular: in compiled code it may have taken the
  // dtype of the branch it was merged with, as long as it is of the same kind.
  const bool weak = a.weak() || b.weak();
  const bool sameKind = isFloat(da) == isFloat(db) && isBool(da) == isBool(db);
  if (da != db && !(weak && sameKind)) return cat("dtype ", dtypeName(da), " (eager) vs ", dtypeName(db), " (jit)");
  if (a.shape() != b.shape()) return cat("shape ", a.shape().str(), " (eager) vs ", b.shape().str(), " (jit)");
  const int64_t n = a.numel();
  if (isFloat(da)) {
    const Tensor x = contiguous(astype(a, DType::F64)), y = contiguous(astype(b, DType::F64));
    const auto* p = reinterpret_cast<const double*>(x.data());
    const auto* q = reinterpret_cast<const double*>(y.data());
    // Natively compiled code: an absolute error relative to the tensor's largest element
    // too (an element that is the small difference of large ones keeps their error).
    double scale = 0;
    if (native)
      for (int64_t i = 0; i < n; ++i)
        if (std::isfinite(p[i])) scale = std::max(scale, std::abs(p[i]));
    const double rtol = tolerance(da, native);
    for (int64_t i = 0; i < n; ++i) {
      if (exact) { // the same bits (f64 holds every narrower float exactly), or both NaN
        if ((std::isnan(p[i]) && std::isnan(q[i])) || std::memcmp(&p[i], &q[i], sizeof(double)) == 0) continue;
        return cat("element ", i, ": ", p[i], " (eager) vs ", q[i], " (jit), which must be bit for bit equal");
      }
      if (p[i] == q[i] || (std::isnan(p[i]) && std::isnan(q[i]))) continue;
      if (std::abs(p[i] - q[i]) <= rtol * (std::max(std::abs(p[i]), std::abs(q[i])) + scale)) continue;
      return cat("element ", i, ": ", p[i], " (eager) vs ", q[i], " (jit)");
    }
    return "";
  }
  const Tensor x = contiguous(astype(a, DType::I64)), y = contiguous(astype(b, DType::I64));
  const auto* p = reinterpret_cast<const int64_t*>(x.data());
  const auto* q = reinterpret_cast<const int64_t*>(y.data());
  for (int64_t i = 0; i < n; ++i)
    if (p[i] != q[i]) return cat("element ", i, ": ", p[i], " (eager) vs ", q[i], " (jit)");
  return "";
}

/// Whether the trees in `values` have more than `limit` leaves (walking at most that many).
bool moreLeavesThan(Args values, size_t limit) {
  size_t seen = 0;
  std::vector<Value> work(values.begin(), values.end());
  while (!work.empty()) {
    Value v = std::move(work.back());
    work.pop_back();
    if (v.isMap()) {
      for (const auto& [key, value] : v.map().entries()) {
        work.push_back(value);
        if (work.size() + seen > limit) return true;
      }
    } else if (v.isVector()) {
      for (const Value& item : v.vector().items()) {
        work.push_back(item);
        if (work.size() + seen > limit) return true;
      }
    } else if (++seen > limit) {
      return true;
    }
  }
  return false;
}

/// Calls with bigger arguments are not compared: lowering flattens every argument, so
/// checking each of a loop's calls on a growing collection would cost its size each time.
constexpr size_t kMaxComparedLeaves = 1000;

} // namespace

std::string compareResults(const Value& eager, const Value& jit, bool native, bool exact) {
  std::vector<Value> leavesA, leavesB;
  const TreeShape a = TreeShape::flatten(eager, leavesA), b = TreeShape::flatten(jit, leavesB);
  if (!a.sameAs(b) || leavesA.size() != leavesB.size())
    return cat("structure: ", printValue(eager, true).substr(0, 80), " (eager) vs ", printValue(jit, true).substr(0, 80),
               " (jit)");
  for (size_t i = 0; i < leavesA.size(); ++i) {
    const std::string why = compareTensors(leavesA[i].tensor(), leavesB[i].tensor(), native, exact);
    if (!why.empty()) return cat("leaf ", i, ": ", why);
  }
  return "";
}

void installDifferential(Evaluator& evaluator, std::ostringstream& output, DifferentialStats& stats) {
  evaluator.setCallObserver([&evaluator, &output, &stats](const Value& fn, Args args, const Value& result, const Span& span) {
    const std::string saved = output.str();
    auto restore = [&] {
      output.str(saved);
      output.seekp(0, std::ios::end);
    };
    const std::string where = cat(span.line, ":", span.col, ": ");
    if (moreLeavesThan(args, kMaxComparedLeaves)) {
      ++stats.tooLarge;
      return;
    }
    for (const char* target : {"interp", "cpu"}) {
      try {
        LowerOptions options;
        options.optimize = false;
        Lowered lowered = lowerFunction(evaluator, fn, args, span, options);
        if (!lowered.effect.empty()) {
          ++stats.impure;
          break;
        }
        const bool exact = bitExact(*lowered.module);
        compileLowered(evaluator, lowered, target);
        const Value compiled = lowered.run(evaluator, args, span);
        if (exact) ++stats.bitExact;
        const std::string why = compareResults(result, compiled, target == std::string("cpu"), exact);
        if (!why.empty()) stats.failures.push_back(cat(where, "jit :", target, " differs from eager: ", why));
        ++stats.compared;
      } catch (const ExitRequest&) {
        ++stats.impure; // (exit) ran while lowering
        break;
      } catch (const Error& e) {
        if (e.message().starts_with("jit: ")) {
          ++stats.notJittable;
          if (std::getenv("TSL_DIFFERENTIAL_VERBOSE")) std::cerr << where << "not jittable: " << e.message() << "\n";
          break;
        }
        stats.failures.push_back(cat(where, "jit :", target, " failed where eager code succeeded: ", e.what()));
      }
      restore();
    }
    restore();
  });
}

} // namespace tsl::testing
