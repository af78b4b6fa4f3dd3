// runtime/Tensor.h — the public header include/tsl/Tensor.h (part of the embedding API).
#pragma once

#include "tsl/Tensor.h"

#include <cstddef>

namespace tsl {

/// Caps every tensor buffer this process allocates from now on at `bytes` (0: only
/// physical memory caps them): a larger one is a value error, as one larger than memory
/// is. For the evaluator's fuzz target, which must not let a four-byte program ask for
/// gigabytes; process-wide.
void setStorageByteLimit(size_t bytes);

} // namespace tsl
