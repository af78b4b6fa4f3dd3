// runtime/TransportMpi.cpp — the world over MPI (Open MPI, Debian's libopenmpi-dev).
//
// MPI is initialised the first time the world is asked about, and only when a launcher
// started the process (worldLaunched): a plain `tsl run` never pays MPI's start-up. It is
// initialised MPI_THREAD_SERIALIZED — calls may come from any thread, one at a time: the
// engine may run on a thread of its own (the `tsl` command's large stack) and finalising
// happens at exit on the main thread; a mutex serialises them. Errors return codes
// (MPI_ERRORS_RETURN), which become runtime errors naming the call. At exit every rank
// first agrees on an end-of-program fingerprint: a rank whose program ends while another
// still calls a collective makes both fail (and the world end) instead of hanging.
//
// Reductions are MPI's own for integers (MPI_SUM, MPI_MAX...) and float sums; float
// maxima and minima are ops of our own that propagate NaN, as max and min do everywhere
// in TSL, and prefer +0 (max) or -0 (min) on ties, so that they are commutative bit for
// bit. f16 and bf16 travel as 16-bit words with ops of our own. A commutative op gives
// every rank the same bits whatever order MPI combines in, which is what keeps
// replicated parameters bitwise equal across ranks.
#include "runtime/Dispatch.h"
#include "runtime/Transport.h"

// The C API only: Open MPI's mpi.h otherwise pulls in its deprecated C++ bindings, whose
// library TSL does not link.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace tsl {

namespace {

struct World {
  std::mutex mutex; ///< one MPI call at a time (MPI_THREAD_SERIALIZED)
  bool joined = false;
  bool ownsMpi = false; ///< this code initialised MPI, so it finalises it
  int rank = 0;
  int size = 1;
  MPI_Op halfSum = MPI_OP_NULL, bhalfSum = MPI_OP_NULL;
  MPI_Op maxOf[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}; ///< f16 bf16 f32 f64
  MPI_Op minOf[4] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  /// Non-blocking all-reduces in flight (startAllReduce): one MPI request per piece.
  std::unordered_map<int64_t, std::vector<MPI_Request>> pending;
  int64_t nextRequest = 1;
};

/// Never destroyed: the exit handler and late callers may still need it.
World& world() {
  static World* instance = new World;
  return *instance;
}

void check(int code, const char* call) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(code, text, &length);
  fail(ErrorKind::Runtime, call, " failed: ", std::string(text, static_cast<size_t>(length)));
}

// ---- Our reduction ops ----

template <typename T>
T larger(T a, T b) {
  if (std::isnan(static_cast<double>(a))) return a;
  if (std::isnan(static_cast<double>(b))) return b;
  if (a == b) return std::signbit(static_cast<double>(a)) ? b : a; // +0 over -0
  return a > b ? a : b;
}
template <typename T>
T smaller(T a, T b) {
  if (std::isnan(static_cast<double>(a))) return a;
  if (std::isnan(static_cast<double>(b))) return b;
  if (a == b) return std::signbit(static_cast<double>(a)) ? a : b; // -0 over +0
  return a < b ? a : b;
}

enum class Combine { Sum, Max, Min };

template <typename T, Combine c>
void combine(void* in, void* inout, int* length, MPI_Datatype*) {
  const auto* a = static_cast<const T*>(in);
  auto* b = static_cast<T*>(inout);
  for (int i = 0; i < *length; ++i) {
    if constexpr (c == Combine::Sum) b[i] = static_cast<T>(static_cast<float>(a[i]) + static_cast<float>(b[i]));
    else if constexpr (c == Combine::Max) b[i] = larger(a[i], b[i]);
    else b[i] = smaller(a[i], b[i]);
  }
}

template <typename T>
void makeOps(World& w, int slot) {
  check(MPI_Op_create(combine<T, Combine::Max>, 1, &w.maxOf[slot]), "MPI_Op_create");
  check(MPI_Op_create(combine<T, Combine::Min>, 1, &w.minOf[slot]), "MPI_Op_create");
}

int floatSlot(DType d) {
  switch (d) {
  case DType::F16: return 0;
  case DType::BF16: return 1;
  case DType::F32: return 2;
  case DType::F64: return 3;
  default: return -1;
  }
}

MPI_Datatype mpiType(DType d) {
  switch (d) {
  case DType::Bool: return MPI_C_BOOL;
  case DType::I32: return MPI_INT32_T;
  case DType::I64: return MPI_INT64_T;
  case DType::F16:
  case DType::BF16: return MPI_UINT16_T;
  case DType::F32: return MPI_FLOAT;
  case DType::F64: return MPI_DOUBLE;
  }
  fail(ErrorKind::Internal, "no MPI type for dtype ", static_cast<int>(d));
}

MPI_Op mpiOp(const World& w, DType d, CollectiveOp op) {
  const int slot = floatSlot(d);
  switch (op) {
  case CollectiveOp::Sum:
    if (d == DType::F16) return w.halfSum;
    if (d == DType::BF16) return w.bhalfSum;
    TSL_ASSERT(d != DType::Bool, "transport: a sum of booleans");
    return MPI_SUM;
  case CollectiveOp::Max: return d == DType::Bool ? MPI_LOR : slot >= 0 ? w.maxOf[slot] : MPI_MAX;
  case CollectiveOp::Min: return d == DType::Bool ? MPI_LAND : slot >= 0 ? w.minOf[slot] : MPI_MIN;
  case CollectiveOp::Mean: break;
  }
  fail(ErrorKind::Internal, "transport: no MPI op for ", collectiveOpName(op));
}

/// The largest count one MPI call takes (its counts are int); longer buffers go in pieces.
constexpr int64_t kPiece = int64_t(1) << 30;

int intCount(int64_t count, const char* what) {
  if (count > kPiece)
    fail(ErrorKind::Value, what, " of ", count, " elements per rank: MPI takes at most ", kPiece, " in one call");
  return static_cast<int>(count);
}

/// agree() without taking the lock (the caller holds it).
bool agreeLocked(uint64_t fingerprint) {
  // Every rank has the same value exactly when max(v) == v and max(-v) == -v everywhere.
  const auto v = static_cast<int64_t>(fingerprint >> 2);
  int64_t in[2] = {v, -v}, out[2] = {0, 0};
  check(MPI_Allreduce(in, out, 2, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD), "MPI_Allreduce");
  return out[0] == v && out[1] == -v;
}

constexpr uint64_t kEndOfProgram = 0x454e44u; // no collective's fingerprint (they hash)

/// At exit: agree that every rank has ended, then finalise.
void finishWorld() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  bool agreed = true;
  if (w.size > 1) {
    try {
      agreed = agreeLocked(kEndOfProgram);
    } catch (const Error&) {
      agreed = false;
    }
  }
  if (!agreed) {
    std::cout.flush();
    std::fflush(stdout);
    std::fprintf(stderr, "rank %d: runtime error: this rank's program ended while another rank still calls a collective\n",
                 w.rank);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
    std::_Exit(1);
  }
  for (MPI_Op* op : {&w.halfSum, &w.bhalfSum, &w.maxOf[0], &w.maxOf[1], &w.maxOf[2], &w.maxOf[3], &w.minOf[0],
                     &w.minOf[1], &w.minOf[2], &w.minOf[3]})
    if (*op != MPI_OP_NULL) MPI_Op_free(op);
  MPI_Finalize();
}

World& joined() {
  joinWorld();
  return world();
}

} // namespace

bool worldHasMpi() { return true; }

void joinWorld() {
  World& w = world();
  std::lock_guard<std::mutex> lock(w.mutex);
  if (w.joined) return;
  if (!worldLaunched()) {
    w.joined = true;
    return;
  }
  int initialised = 0;
  MPI_Initialized(&initialised);
  if (!initialised) { // else a host initialised MPI itself and finalises it
    int provided = 0;
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
    w.ownsMpi = true;
    std::atexit(finishWorld);
  }
  check(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(MPI_COMM_WORLD, &w.rank), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &w.size), "MPI_Comm_size");
  check(MPI_Op_create(combine<f16, Combine::Sum>, 1, &w.halfSum), "MPI_Op_create");
  check(MPI_Op_create(combine<bf16, Combine::Sum>, 1, &w.bhalfSum), "MPI_Op_create");
  makeOps<f16>(w, 0);
  makeOps<bf16>(w, 1);
  makeOps<float>(w, 2);
  makeOps<double>(w, 3);
  w.joined = true;
}

int worldRank() { return joined().rank; }
int worldSize() { return joined().size; }

void abortWorld(int status) {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  World& w = world();
  int initialised = 0, finalized = 0;
  MPI_Initialized(&initialised);
  MPI_Finalized(&finalized);
  if (w.joined && w.size > 1 && initialised && !finalized) MPI_Abort(MPI_COMM_WORLD, status);
  std::exit(status);
}

namespace transport {

bool agree(uint64_t fingerprint) {
  World& w = joined();
  std::lock_guard<std::mutex> lock(w.mutex);
  return agreeLocked(fingerprint);
}

void allReduce(const void* in, void* out, int64_t count, DType dtype, CollectiveOp op) {
  World& w = joined();
  std::lock_guard<std::mutex> lock(w.mutex);
  const size_t bytes = dtypeSize(dtype);
  const MPI_Op mop = mpiOp(w, dtype, op);
  for (int64_t done = 0; done < count; done += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, count - done));
    check(MPI_Allreduce(static_cast<const char*>(in) + done * bytes, static_cast<char*>(out) + done * bytes, n,
                        mpiType(dtype), mop, MPI_COMM_WORLD),
          "MPI_Allreduce");
  }
}

void broadcast(void* buffer, int64_t count, DType dtype, int root) {
  World& w = joined();
  std::lock_guard<std::mutex> lock(w.mutex);
  const size_t bytes = dtypeSize(dtype);
  for (int64_t done = 0; done < count; done += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, count - done));
    check(MPI_Bcast(static_cast<char*>(buffer) + done * bytes, n, mpiType(dtype), root, MPI_COMM_WORLD), "MPI_Bcast");
  }
}

void allGather(const void* in, void* out, int64_t count, DType dtype) {
  World& w = joined();
  const int n = intCount(count, "all-gather");
  std::lock_guard<std::mutex> lock(w.mutex);
  check(MPI_Allgather(in, n, mpiType(dtype), out, n, mpiType(dtype), MPI_COMM_WORLD), "MPI_Allgather");
}

void reduceScatter(const void* in, void* out, int64_t count, DType dtype) {
  World& w = joined();
  const int n = intCount(count, "reduce-scatter");
  std::lock_guard<std::mutex> lock(w.mutex);
  check(MPI_Reduce_scatter_block(in, out, n, mpiType(dtype), mpiOp(w, dtype, CollectiveOp::Sum), MPI_COMM_WORLD),
        "MPI_Reduce_scatter_block");
}

void reduceToRoot(const void* in, void* out, int64_t count, DType dtype, int root) {
  World& w = joined();
  std::lock_guard<std::mutex> lock(w.mutex);
  const size_t bytes = dtypeSize(dtype);
  const MPI_Op mop = mpiOp(w, dtype, CollectiveOp::Sum);
  for (int64_t done = 0; done < count; done += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, count - done));
    check(MPI_Reduce(static_cast<const char*>(in) + done * bytes, static_cast<char*>(out) + done * bytes, n,
                     mpiType(dtype), mop, root, MPI_COMM_WORLD),
          "MPI_Reduce");
  }
}

void barrier() {
  World& w = joined();
  std::lock_guard<std::mutex> lock(w.mutex);
  check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
}

int64_t startAllReduce(void* buffer, int64_t count, DType dtype, CollectiveOp op) {
  World& w = joined();
  std::lock_guard<std::mutex> lock(w.mutex);
  const size_t bytes = dtypeSize(dtype);
  const MPI_Op mop = mpiOp(w, dtype, op);
  std::vector<MPI_Request> requests;
  // An empty buffer still makes one (empty) call: every rank calls as many collectives.
  for (int64_t done = 0; done < count || (count == 0 && requests.empty()); done += kPiece) {
    const int n = static_cast<int>(std::min(kPiece, count - done));
    MPI_Request request = MPI_REQUEST_NULL;
    check(MPI_Iallreduce(MPI_IN_PLACE, static_cast<char*>(buffer) + done * bytes, n, mpiType(dtype), mop,
                         MPI_COMM_WORLD, &request),
          "MPI_Iallreduce");
    requests.push_back(request);
  }
  // Open MPI moves a non-blocking collective's data only inside MPI calls: each start
  // also advances the buckets started before it, so they travel while the compiled code
  // computes the next one's gradients rather than all at the first wait.
  for (auto& [_, earlier] : w.pending) {
    int done = 0;
    check(MPI_Testall(static_cast<int>(earlier.size()), earlier.data(), &done, MPI_STATUSES_IGNORE), "MPI_Testall");
  }
  const int64_t id = w.nextRequest++;
  w.pending.emplace(id, std::move(requests));
  return id;
}

void waitAllReduce(int64_t request) {
  World& w = joined();
  std::lock_guard<std::mutex> lock(w.mutex);
  auto it = w.pending.find(request);
  TSL_ASSERT(it != w.pending.end(), "transport: a wait for an all-reduce never started");
  std::vector<MPI_Request> requests = std::move(it->second);
  w.pending.erase(it);
  check(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
}

} // namespace transport

} // namespace tsl
