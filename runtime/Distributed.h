// runtime/Distributed.h — the world of processes a program runs in.
//
// A program started by a launcher (mpirun, srun) is one rank of a world of several
// processes, which talk through MPI (docs/distributed.md); a program started any other way
// is a world of one rank, where every collective is the identity, so the same program runs
// on a laptop and on a cluster. MPI is initialised once per process, the first time the
// world is asked about (or when `tsl run` starts under a launcher), and finalised at exit;
// a build without MPI gives the one-rank world only. Collective operations themselves are
// rows of the operation table (runtime/CollectiveRows.h, runtime/Collectives.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tsl {

/// How all-reduce combines the ranks' tensors.
enum class CollectiveOp : uint8_t { Sum, Mean, Max, Min };
const char* collectiveOpName(CollectiveOp op); ///< "sum"
std::optional<CollectiveOp> collectiveOpFromName(std::string_view name);

/// The attributes of every collective row. `ranks` is the size of the world the call was
/// made in: all-gather's and reduce-scatter's result shapes depend on it, so it is part of
/// the operation (and of its IR), and a kernel run in a world of another size refuses.
struct CollectiveAttrs {
  CollectiveOp op = CollectiveOp::Sum; ///< all-reduce's combination
  int64_t axis = 0;                    ///< all-gather's and reduce-scatter's axis
  int64_t root = 0;                    ///< broadcast's (and reduce-to-root's) rank
  int64_t ranks = 1;                   ///< the world's size when the call was made
  int64_t part = 0;                    ///< all-reduce-wait's operand of its all-reduce-start
  bool operator==(const CollectiveAttrs&) const = default;
};

/// Whether this build can run as one of many ranks (it was built with MPI).
bool worldHasMpi();
/// Whether a launcher started this process as a rank of a world (mpirun or srun set its
/// environment); without one the world has one rank and MPI is never initialised.
bool worldLaunched();
/// Joins the world now: initialises MPI when launched (idempotent). A runtime error when
/// launched as one of several ranks by a build without MPI.
void joinWorld();
/// This process's rank and the world's size (joining it first).
int worldRank();
int worldSize();
/// Ends every rank with `status` (MPI_Abort) once MPI is initialised, else this process
/// alone. Standard output and error are flushed first.
[[noreturn]] void abortWorld(int status);

} // namespace tsl
