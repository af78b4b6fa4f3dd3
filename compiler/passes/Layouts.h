// compiler/passes/Layouts.h — what the three layout passes share.
//
// The passes (docs/layouts.md): layout-insert puts each layout-demanding operation in the
// layouts its target's kernels want, converting around it; layout-assign then gives every
// group of layout-agnostic operations the layout that costs the fewest conversion bytes;
// layout-eliminate composes, cancels, merges and folds the conversions left over. They
// classify operations by the operation table's LayoutClass and flags, never by name;
// what a target wants is its LayoutTarget below (PassContext::layoutTarget names it).
//
// Padding: a blocked layout's padding is zero when a conversion writes it, but an
// elementwise operation run on blocked memory computes on the padding too (exp makes it
// 1, log makes it -inf). A consumer needs it zero (a reduction, a returned value), or
// finite (a convolution or matmul: 0·inf is NaN), or nothing (a conversion reads only the
// logical elements). The passes keep a value in a blocked layout only where its padding
// is what every consumer needs.
#pragma once

#include "ir/IR.h"
#include "ir/Pass.h"

#include <optional>
#include <string_view>
#include <unordered_map>

namespace tsl::compiler::layouts {

/// The layouts a target's kernel wants for one operation: one per operand, and the
/// layout the result comes out in.
struct Demand {
  std::vector<Layout> operands;
  Layout result = Layout::RowMajor;
};

/// A target's layout preferences.
struct LayoutTarget {
  const char* name;
  /// What the target's kernel for `op` (a layout-demanding or axis-sensitive primitive)
  /// wants; nullopt: the operation as written.
  std::optional<Demand> (*demand)(const ir::Operation& op);
  /// Whether layout-agnostic operations run on blocked memory (a vector unit working in
  /// any layout); else they compute on row-major values only.
  bool agnosticOnBlocked;
};

/// The target named `name` ("cpu", "tc", "none"), or nullptr.
const LayoutTarget* findLayoutTarget(std::string_view name);
/// The target a pass context names ("none" when it names none); a value error for an
/// unknown name.
const LayoutTarget& targetOf(const ir::PassContext& context);

/// What a blocked value's padding holds, from best to worst.
enum class Padding : uint8_t { Zero, Finite, Any };
/// Whether padding `have` serves a consumer needing `need`.
inline bool serves(Padding have, Padding need) { return have <= need; }

/// The padding every value of a function holds (values not in a blocked layout: Zero).
using PaddingMap = std::unordered_map<const ir::Value*, Padding>;
PaddingMap paddingOf(const ir::Function& f);
/// What padding an elementwise operation's result holds in a blocked layout, given
/// `laidOut(v)`: the padding of operand v if it sits in that layout with the result's
/// shape, nullopt for an operand of another shape (spread into the padding: a finite
/// constant leaves it finite, anything else may put anything there).
Padding elementwisePadding(const ir::Operation& op,
                           const std::function<std::optional<Padding>(const ir::Value*)>& laidOut);
/// What padding `user` needs of the blocked value it reads as operand `index`; a
/// conversion needs none, an elementwise operation passes its result's need on (Any
/// here: paddingOf follows it), a contraction needs it finite, anything else zero.
Padding paddingNeeded(const ir::Operation& user);

/// Every use of every value of a function: (user, operand index), in pre-order.
using Uses = std::unordered_map<const ir::Value*, std::vector<std::pair<ir::Operation*, size_t>>>;
Uses usesOf(ir::Function& f);

/// Whether `op` is a layout conversion (to_layout or transdata).
bool isConversion(const ir::Operation& op);
/// Bytes a conversion of a `type` value into `to` reads and writes.
int64_t conversionBytes(const ir::Type& type, Layout to);

/// Inserts `transdata v {layout = to}` before `at` in `block`; returns its result.
ir::Value* insertTransdata(ir::Block& block, std::list<std::unique_ptr<ir::Operation>>::iterator at, ir::Value* v,
                           Layout to, const Span& span);
/// Where every operation of a function sits in its block (list iterators stay valid
/// while operations are inserted around them).
using Positions = std::unordered_map<const ir::Operation*, std::list<std::unique_ptr<ir::Operation>>::iterator>;
Positions positionsOf(ir::Function& f);

} // namespace tsl::compiler::layouts
