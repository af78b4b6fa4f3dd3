// compiler/passes/Layouts.cpp — targets' layout preferences, padding, conversion bytes.
#include "compiler/passes/Layouts.h"

#include "runtime/Interrupt.h"

#include "runtime/Layout.h"

#include <algorithm>
#include <cmath>

namespace tsl::compiler::layouts {

namespace {

bool allConcrete(const ir::Operation& op) {
  for (const ir::Value* v : op.operands())
    if (!v->type().concrete()) return false;
  return op.resultCount() == 1 && op.result()->type().concrete();
}

/// Row-major operands for an operation that reads any other layout: what every kernel
/// that indexes logical elements wants (reductions, softmax, gathers...).
std::optional<Demand> rowMajor(const ir::Operation& op) {
  bool laidOut = false;
  for (const ir::Value* v : op.operands()) laidOut |= v->type().layout != Layout::RowMajor;
  if (!laidOut) return std::nullopt;
  return Demand{std::vector<Layout>(op.operands().size(), Layout::RowMajor), Layout::RowMajor};
}

/// :cpu — its kernels read row-major memory (an NHWC convolution comes with the CPU
/// performance work), and its elementwise code runs on row-major values only.
std::optional<Demand> cpuDemand(const ir::Operation& op) { return rowMajor(op); }

/// :tc — the cube reads NC1HWC0 data and FRACTAL_Z weights for a convolution (load3d
/// builds the left operand from NC1HWC0) and FRACTAL_NZ matrices for a matmul, and
/// writes its results back in the data layout (docs/layouts.md, "The passes"); every
/// other operation runs as on :cpu, on row-major values, except the elementwise ones,
/// which the vector unit runs in any layout.
std::optional<Demand> tcDemand(const ir::Operation& op) {
  const OpInfo& info = opInfo(op.code().kind);
  if (!info.has(kLayoutFromData) || !allConcrete(op)) return rowMajor(op);
  const int rank = op.operand(0)->type().rank();
  if (info.fusion == FusionClass::Contraction && op.operands().size() == 2) {
    if (rank == 4 && op.operand(1)->type().rank() == 4) // conv2d: data, weights
      return Demand{{Layout::NC1HWC0, Layout::FractalZ}, Layout::NC1HWC0};
    // matmul, whose operands and result FRACTAL_NZ holds (a rank of 7 or more would not
    // fit a shape with its two more axes: those run row-major, as the cube reads too)
    if (layoutFitsRank(Layout::FractalNZ, rank) && layoutFitsRank(Layout::FractalNZ, op.operand(1)->type().rank()) &&
        layoutFitsRank(Layout::FractalNZ, op.result()->type().rank()))
      return Demand{{Layout::FractalNZ, Layout::FractalNZ}, Layout::FractalNZ};
    return rowMajor(op);
  }
  if (op.operands().size() == 1 && rank == 4) return Demand{{Layout::NC1HWC0}, Layout::NC1HWC0}; // pooling
  return rowMajor(op);
}

std::optional<Demand> noDemand(const ir::Operation&) { return std::nullopt; }

const LayoutTarget kTargets[] = {
    {"none", noDemand, true},
    {"cpu", cpuDemand, false},
    {"tc", tcDemand, true},
};

} // namespace

const LayoutTarget* findLayoutTarget(std::string_view name) {
  for (const LayoutTarget& t : kTargets)
    if (name == t.name) return &t;
  return nullptr;
}

const LayoutTarget& targetOf(const ir::PassContext& context) {
  if (context.layoutTarget.empty()) return kTargets[0];
  if (const LayoutTarget* t = findLayoutTarget(context.layoutTarget)) return *t;
  fail(ErrorKind::Value, "no layout target '", context.layoutTarget, "' (none, cpu, tc)");
}

bool isConversion(const ir::Operation& op) {
  return op.code().primitive && opInfo(op.code().kind).layout == LayoutClass::Converting;
}

int64_t conversionBytes(const ir::Type& type, Layout to) {
  if (!type.concrete()) return 0;
  ir::Type out = type;
  out.layout = to;
  return type.bytes() + out.bytes();
}

Padding elementwisePadding(const ir::Operation& op,
                           const std::function<std::optional<Padding>(const ir::Value*)>& laidOut) {
  const OpInfo& info = opInfo(op.code().kind);
  Padding worst = Padding::Zero;
  bool spread = false; // an operand of another shape lands in the padding
  for (const ir::Value* v : op.operands()) {
    if (const std::optional<Padding> p = laidOut(v)) {
      worst = std::max(worst, *p);
      continue;
    }
    spread = true;
    const ir::Operation* def = v->def();
    bool finite = def && def->code().is(ir::Structural::Constant);
    if (finite) {
      const Tensor c = astype(def->constant(), DType::F64);
      const Tensor flat = c.isScalar() ? c : contiguous(plain(c));
      const double* p = reinterpret_cast<const double*>(flat.data());
      for (int64_t i = 0; i < flat.numel() && finite; ++i) finite = std::isfinite(p[i]);
    }
    if (!finite) return Padding::Any;
  }
  if (worst != Padding::Zero) return Padding::Any; // f(finite) may be anything (sqrt(-1))
  if (info.has(kZeroAtZero)) return spread ? Padding::Finite : Padding::Zero;
  if (info.has(kFiniteAtZero)) return Padding::Finite;
  return Padding::Any;
}

PaddingMap paddingOf(const ir::Function& f) {
  PaddingMap padding;
  std::function<void(const ir::Block&)> block = [&](const ir::Block& b) {
    for (const auto& arg : b.arguments()) padding[arg.get()] = Padding::Zero;
    for (const auto& op : b.ops()) {
      checkInterrupt(); // Ctrl-C stops a long compile (ir/Pass.h)
      for (const auto& region : op->regions()) block(region->block());
      for (size_t i = 0; i < op->resultCount(); ++i) {
        const ir::Value* r = op->result(i);
        Padding p = Padding::Zero; // conversions, constants and kernels write zero padding
        if (isBlocked(r->type().layout)) {
          if (op->code().primitive && opInfo(op->code().kind).layout == LayoutClass::Agnostic &&
              opInfo(op->code().kind).fusion == FusionClass::Elementwise)
            p = elementwisePadding(*op, [&](const ir::Value* v) -> std::optional<Padding> {
              if (!(v->type().dims == r->type().dims) || v->type().layout != r->type().layout) return std::nullopt;
              auto it = padding.find(v);
              return it == padding.end() ? Padding::Any : it->second;
            });
          else if (!op->code().primitive && !op->code().is(ir::Structural::Constant))
            p = Padding::Any; // what an if, a while or a call hands back: not followed
        }
        padding[r] = p;
      }
    }
  };
  block(f.body());
  return padding;
}

Padding paddingNeeded(const ir::Operation& user) {
  if (!user.code().primitive) return Padding::Zero;
  const OpInfo& info = opInfo(user.code().kind);
  if (info.layout == LayoutClass::Converting) return Padding::Any;
  if (info.layout == LayoutClass::Agnostic && info.fusion == FusionClass::Elementwise) return Padding::Any;
  if (info.fusion == FusionClass::Contraction) return Padding::Finite;
  return Padding::Zero;
}

Uses usesOf(ir::Function& f) {
  Uses uses;
  ir::walk(f.body(), [&](ir::Operation& op) {
    checkInterrupt();
    for (size_t i = 0; i < op.operands().size(); ++i) uses[op.operand(i)].emplace_back(&op, i);
  });
  return uses;
}

Positions positionsOf(ir::Function& f) {
  Positions positions;
  std::function<void(ir::Block&)> block = [&](ir::Block& b) {
    for (auto it = b.ops().begin(); it != b.ops().end(); ++it) {
      checkInterrupt();
      positions[it->get()] = it;
      for (auto& region : (*it)->regions()) block(region->block());
    }
  };
  block(f.body());
  return positions;
}

ir::Value* insertTransdata(ir::Block& block, std::list<std::unique_ptr<ir::Operation>>::iterator at, ir::Value* v,
                           Layout to, const Span& span) {
  auto op = std::make_unique<ir::Operation>(ir::OpCode::of(OpKind::Transdata), span);
  op->operands() = {v};
  op->setAttrs(LayoutAttrs{to});
  ir::Type type = v->type();
  type.layout = to;
  ir::Value* out = op->addResult(std::move(type));
  block.insertBefore(at, std::move(op));
  return out;
}

} // namespace tsl::compiler::layouts
