// eval/BuiltinsDistributed.cpp — the world a program runs in: world-rank and world-size.
//
// The collectives themselves are rows of the operation table (runtime/CollectiveRows.h),
// whose builtins eval/BuiltinsTensor.cpp makes. The rank and the size are numbers known
// when the program runs, the same for all its life: under jit they are constants of the
// compiled code (each rank compiles its own).
#include "eval/Builtins.h"
#include "runtime/Distributed.h"

namespace tsl::builtins {

void registerDistributedBuiltins(Evaluator& evaluator) {
  evaluator.defineBuiltin("world-rank", 0, 0, [](CallContext&, Args) { return Value(Tensor::ofInt(worldRank())); });
  document(evaluator, "world-rank",
           "(world-rank): this process's rank in the world, from 0 to (world-size) - 1; 0 when the program was not "
           "started as one of several ranks (mpirun, srun, tsl run --ranks N).\n  e.g. (world-rank)  ; 0");
  evaluator.defineBuiltin("world-size", 0, 0, [](CallContext&, Args) { return Value(Tensor::ofInt(worldSize())); });
  document(evaluator, "world-size",
           "(world-size): the number of ranks the program runs as; 1 when it was not started by a launcher.\n"
           "  e.g. (world-size)  ; 1");
}

} // namespace tsl::builtins
