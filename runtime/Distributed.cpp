// runtime/Distributed.cpp — what the world's two transports share: the names of the
// reductions and how a launcher is recognised.
//
// The rest of runtime/Distributed.h (joining, rank, size, abort) is the transport's:
// runtime/TransportMpi.cpp or runtime/TransportNone.cpp, whichever the build has.
#include "runtime/Distributed.h"
#include "runtime/Transport.h"

#include <cstdlib>
#include <string>

namespace tsl {

const char* collectiveOpName(CollectiveOp op) {
  switch (op) {
  case CollectiveOp::Sum: return "sum";
  case CollectiveOp::Mean: return "mean";
  case CollectiveOp::Max: return "max";
  case CollectiveOp::Min: return "min";
  }
  return "?";
}

std::optional<CollectiveOp> collectiveOpFromName(std::string_view name) {
  for (CollectiveOp op : {CollectiveOp::Sum, CollectiveOp::Mean, CollectiveOp::Max, CollectiveOp::Min})
    if (name == collectiveOpName(op)) return op;
  return std::nullopt;
}

namespace {

const char* env(const char* name) {
  const char* value = std::getenv(name);
  return value && *value ? value : nullptr;
}

} // namespace

// Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE in every rank it starts (documented as
// stable); a PMIx launcher (srun --mpi=pmix, Open MPI 5) sets PMIX_RANK, a PMI-1/2 one
// (srun --mpi=pmi2, MPICH's hydra) PMI_RANK and PMI_SIZE. A plain `tsl run` has none.
bool worldLaunched() { return env("OMPI_COMM_WORLD_SIZE") || env("PMIX_RANK") || env("PMI_RANK"); }

int transport::launchedSize() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_NTASKS"})
    if (const char* value = env(name)) {
      char* end = nullptr;
      const long size = std::strtol(value, &end, 10);
      if (*end == '\0' && size > 0 && size < (1L << 30)) return static_cast<int>(size);
    }
  return 0;
}

} // namespace tsl
