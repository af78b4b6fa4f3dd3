// runtime/Interrupt.cpp — the calling thread's interrupt flag.
#include "runtime/Interrupt.h"

#include "tsl/Error.h"

namespace tsl {

namespace {
thread_local const InterruptFlag* currentFlag = nullptr;
} // namespace

InterruptScope::InterruptScope(const InterruptFlag* flag) : previous_(currentFlag) { currentFlag = flag; }

InterruptScope::~InterruptScope() { currentFlag = previous_; }

const InterruptFlag* currentInterruptFlag() { return currentFlag; }

void checkInterrupt() {
  if (interruptRequested()) fail(ErrorKind::Runtime, "interrupted");
}

} // namespace tsl
