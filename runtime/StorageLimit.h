// runtime/StorageLimit.h — a process-wide cap on tensor buffers, for fuzzing.
#pragma once

#include <cstddef>

namespace tsl {

/// Caps every tensor buffer this process allocates from now on at `bytes` (0: only
/// physical memory caps them): a larger one is a value error, as one larger than memory
/// is. For the evaluator's fuzz targets, which must not let a four-byte program ask for
/// gigabytes; process-wide.
void setStorageByteLimit(size_t bytes);

} // namespace tsl
