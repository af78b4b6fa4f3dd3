// runtime/TransportNone.cpp — the world of a build without MPI: always one rank.
//
// Collectives never reach the transport in a world of one rank (runtime/Collectives.cpp
// gives the identity), so its functions only assert. A process a launcher started as one
// of several ranks cannot take part without MPI: joining says so instead of letting each
// rank run alone as if it were the whole world.
#include "runtime/Transport.h"
#include "tsl/Error.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace tsl {

bool worldHasMpi() { return false; }

void joinWorld() {
  if (const int size = transport::launchedSize(); worldLaunched() && size > 1)
    fail(ErrorKind::Runtime, "this build of TSL has no MPI, so it cannot run as one of ", size,
         " ranks (install Debian's libopenmpi-dev and rebuild)");
}

int worldRank() {
  joinWorld();
  return 0;
}

int worldSize() {
  joinWorld();
  return 1;
}

void abortWorld(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::exit(status);
}

namespace transport {

namespace {
[[noreturn]] void unreachable() { fail(ErrorKind::Internal, "a collective reached the transport of a one-rank world"); }
} // namespace

bool agree(uint64_t) { unreachable(); }
void allReduce(const void*, void*, int64_t, DType, CollectiveOp) { unreachable(); }
void broadcast(void*, int64_t, DType, int) { unreachable(); }
void allGather(const void*, void*, int64_t, DType) { unreachable(); }
void reduceScatter(const void*, void*, int64_t, DType) { unreachable(); }
void reduceToRoot(const void*, void*, int64_t, DType, int) { unreachable(); }
void barrier() { unreachable(); }
int64_t startAllReduce(void*, int64_t, DType, CollectiveOp) { unreachable(); }
void waitAllReduce(int64_t) { unreachable(); }

} // namespace transport

} // namespace tsl
