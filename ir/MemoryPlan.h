// ir/MemoryPlan.h — where each value of a function lives while the function runs.
//
// The plan-memory pass (compiler/passes/PlanMemory.cpp) computes it; both backends follow
// it: :interp releases each tensor right after its last use, :cpu places every temporary
// at its offset in one arena per executable. It is an annotation of the function, not
// part of its text: `--print-memory-plan` prints it, and any pass that changes the
// function drops it (the pass manager does).
//
// Program points number the operations of the function in pre-order, regions included;
// an operation with regions has a point before them and an end point after them. A value
// lives from its definition to its last use, where a use inside a region of an operation
// counts as a use at that operation's end (so a value a `while` body reads lives across
// all its iterations).
#pragma once

#include "ir/IR.h"

#include <string>
#include <unordered_map>
#include <vector>

namespace tsl::ir {

/// Where a value's elements are.
enum class Home : uint8_t {
  Scalar,    ///< a rank-0 value: in registers, no memory
  Parameter, ///< the caller's argument buffer (read only)
  Constant,  ///< data of the compiled program
  Result,    ///< written straight into the caller's result buffer
  Fused,     ///< inside a fused region: computed element by element, never stored
  Arena,     ///< at an offset of the function's arena, reused once the value is dead
  Shared,    ///< the memory of another value (`shares`): a view of it (reshape, squeeze,
             ///< expand-dims of contiguous data) or an elementwise update in place
};
const char* homeName(Home home);

struct Placement {
  const Value* value = nullptr;
  Home home = Home::Arena;
  int64_t offset = -1;           ///< Arena: bytes from the arena's start
  int64_t bytes = 0;             ///< the value's size (elements × element size)
  int defined = 0;               ///< program point of the definition
  int lastUse = 0;               ///< program point of the last use (definition if unused)
  const Value* shares = nullptr; ///< Shared: whose memory
  bool inPlace = false;          ///< Shared by an update in place (not a view)
  const Value* donor = nullptr;  ///< Result: the donated parameter whose buffer it is
                                 ///< written over (jit :donate), or null
};

struct MemoryPlan {
  std::vector<Placement> values;                        ///< in program order
  std::unordered_map<const Value*, size_t> index;       ///< value -> its entry in `values`
  /// Values of the operation's own block whose last use is that operation (or which are
  /// never used and defined by it): what :interp drops after running it.
  std::unordered_map<const Operation*, std::vector<const Value*>> releasedAfter;
  int64_t arenaBytes = 0;  ///< the arena's size: the peak of temporaries alive at once
  int64_t resultBytes = 0; ///< what the results take in the caller's buffers
  int64_t donatedBytes = 0; ///< of those, what is written over donated parameters

  const Placement* find(const Value* v) const {
    auto it = index.find(v);
    return it == index.end() ? nullptr : &values[it->second];
  }
  /// The value whose memory `v` finally uses (itself unless Shared).
  const Value* root(const Value* v) const;
  /// A table of every buffer: value, type, home, offset, bytes, live range; then the
  /// peak. Value names follow the IR printer's (printFunctionNames).
  std::string str(const Function& function) const;
};

/// Alignment of arena offsets (a cache line, and any vector register).
constexpr int64_t kArenaAlignment = 64;

} // namespace tsl::ir
