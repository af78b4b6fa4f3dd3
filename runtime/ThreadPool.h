// runtime/ThreadPool.h — splitting large kernels across the machine's cores.
//
// One pool per process (kernels of every engine share it, as they share the cores),
// with as many workers as hardware threads (TSL_NUM_THREADS overrides; 1 disables
// threading). parallelFor runs small ranges inline: waking a worker costs microseconds,
// so only ranges worth more than that are split.
#pragma once

#include <cstdint>
#include <functional>

namespace tsl {

/// Calls body(begin, end) over disjoint chunks covering [0, n), in parallel when
/// n >= 2 * grain. Returns when every chunk is done. An exception thrown by a chunk is
/// rethrown here (the first one, if several; the chunks not yet started are skipped).
/// The calling thread's interrupt flag (runtime/Interrupt.h) is checked before each
/// chunk, in whichever thread runs it, and is the flag of the kernels the chunk calls.
void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body);

/// Number of threads kernels use (workers plus the calling thread).
int threadCount();

} // namespace tsl
