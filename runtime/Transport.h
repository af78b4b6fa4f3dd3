// runtime/Transport.h — the collectives on raw buffers, as the world's transport runs them.
//
// runtime/Collectives.cpp reduces tensors to contiguous buffers and calls these; one of two
// files implements them: TransportMpi.cpp over MPI when CMake found it, TransportNone.cpp
// (a world of one rank) otherwise. Every function is called only in a world of more than
// one rank, by every rank in the same order (Collectives.cpp checks that first with
// agree()); counts are elements of `dtype`. The functions of runtime/Distributed.h that
// concern the world (worldRank, abortWorld...) are implemented beside them.
#pragma once

#include "runtime/DType.h"
#include "runtime/Distributed.h"

#include <cstdint>

namespace tsl::transport {

/// The number of ranks the launcher says it started (0 when it does not say).
int launchedSize();

/// Whether every rank passed the same fingerprint (every rank learns the answer).
bool agree(uint64_t fingerprint);
/// out = the combination (Sum, Max or Min) of every rank's `in`.
void allReduce(const void* in, void* out, int64_t count, DType dtype, CollectiveOp op);
/// `buffer` of rank `root` copied into every rank's `buffer`.
void broadcast(void* buffer, int64_t count, DType dtype, int root);
/// out = every rank's `count` elements, rank after rank.
void allGather(const void* in, void* out, int64_t count, DType dtype);
/// `in` holds one block of `count` elements per rank; rank r's out is the sum over ranks of
/// their block r.
void reduceScatter(const void* in, void* out, int64_t count, DType dtype);
/// out (on `root` only) = the sum over ranks of `in`.
void reduceToRoot(const void* in, void* out, int64_t count, DType dtype, int root);
void barrier();

/// Starts `buffer` = the combination (Sum, Max or Min) of every rank's `buffer`, in place,
/// without waiting (MPI_Iallreduce): nothing may read or write `buffer` until
/// waitAllReduce(request) returns. Returns the request.
int64_t startAllReduce(void* buffer, int64_t count, DType dtype, CollectiveOp op);
/// Waits until the all-reduce `request` (startAllReduce's) has completed, and forgets it.
void waitAllReduce(int64_t request);

} // namespace tsl::transport
