// runtime/Interrupt.h — letting Ctrl-C stop a long kernel.
//
// An engine has a flag that Ctrl-C sets (from a signal handler: an atomic store). The
// evaluator polls it between calls and loop iterations; kernels cannot see the engine,
// so while an engine runs code it points the calling thread at its flag (InterruptScope)
// and kernels poll that: parallelFor before every chunk (in whichever worker runs it) and
// long kernels between tiles of work, so a stop takes effect within about 100 ms. A stop
// is `runtime error: interrupted`, raised where it is noticed; the evaluator clears the
// flag before it runs the next form.
#pragma once

#include <atomic>

namespace tsl {

using InterruptFlag = std::atomic<bool>;

/// Points this thread's kernels at `flag` (nullptr: nothing can interrupt them) until the
/// scope ends, then restores the previous flag.
class InterruptScope {
public:
  explicit InterruptScope(const InterruptFlag* flag);
  ~InterruptScope();
  InterruptScope(const InterruptScope&) = delete;
  InterruptScope& operator=(const InterruptScope&) = delete;

private:
  const InterruptFlag* previous_;
};

/// The flag this thread's kernels obey, or nullptr.
const InterruptFlag* currentInterruptFlag();

/// Whether a stop was requested for this thread's work.
inline bool interruptRequested() {
  const InterruptFlag* flag = currentInterruptFlag();
  return flag && flag->load(std::memory_order_relaxed);
}

/// Throws `runtime error: interrupted` if a stop was requested.
void checkInterrupt();

} // namespace tsl
