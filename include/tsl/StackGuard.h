// tsl/StackGuard.h — turns native stack exhaustion into a runtime error.
//
// Every recursive algorithm in TSL (the reader's conversion, the evaluator, printers,
// macro expansion, IR walks) calls checkStack() on entry. When less than a safety margin
// of the current thread's stack is left, it throws `runtime error: stack depth exceeded`
// instead of letting the process crash. The limit is computed once per thread from the
// thread's real stack bounds.
#pragma once

#include "tsl/Error.h"

#include <cstddef>
#include <cstdint>
#include <pthread.h>

namespace tsl {

namespace detail {

/// Lowest address this thread's stack may reach before we refuse to recurse further.
inline uintptr_t computeStackLimit() {
  pthread_attr_t attr;
  void* base = nullptr;
  size_t size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) != 0) return 0;
  pthread_attr_getstack(&attr, &base, &size);
  pthread_attr_destroy(&attr);
  // Keep a margin for the work done between checks and for throwing the error itself
  // (unwinding, building the message); sanitizers make every frame much larger.
#ifdef TSL_SANITIZE
  const size_t wanted = size_t(16) << 20;
#else
  const size_t wanted = size_t(1) << 20;
#endif
  const size_t margin = size / 4 < wanted ? size / 4 : wanted;
  return reinterpret_cast<uintptr_t>(base) + margin;
}

inline uintptr_t& stackLimit() {
  static thread_local uintptr_t limit = computeStackLimit();
  return limit;
}

} // namespace detail

/// Whether the native stack is nearly exhausted.
inline bool nativeStackLow() {
  // The frame address, not a local's: under ASan a local may live on a heap "fake stack".
  return reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) < detail::stackLimit();
}

/// Throws a runtime error if the native stack is nearly exhausted.
inline void checkStack() {
  if (nativeStackLow()) fail(ErrorKind::Runtime, "stack depth exceeded");
}

} // namespace tsl
