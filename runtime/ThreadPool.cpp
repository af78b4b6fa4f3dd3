// runtime/ThreadPool.cpp — a fixed set of workers fed one parallel loop at a time.
#include "runtime/ThreadPool.h"

#include "runtime/Interrupt.h"

#include <algorithm>
#if defined(__x86_64__) || defined(__SSE__)
#include <xmmintrin.h>
#endif
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <csignal>
#include <mutex>
#include <pthread.h>
#include <thread>
#include <vector>

namespace tsl {

namespace {

/// The floating-point control state a chunk runs under: the x86 MXCSR's rounding and
/// denormal bits (FTZ, DAZ), the caller's, so that which thread runs a chunk never changes
/// its result (docs/cpu-backend.md, "Threads").
struct FloatMode {
  unsigned bits = 0;
  static FloatMode current() {
#if defined(__x86_64__) || defined(__SSE__)
    return {_mm_getcsr() & kControl};
#else
    return {};
#endif
  }
  static constexpr unsigned kControl = 0xFFC0; ///< every bit but the sticky exception flags
};

/// Sets a chunk's floating-point mode for its duration (nothing to do when it is this
/// thread's already).
class FloatModeScope {
public:
  explicit FloatModeScope(FloatMode mode) {
#if defined(__x86_64__) || defined(__SSE__)
    saved_ = _mm_getcsr();
    if ((saved_ & FloatMode::kControl) != mode.bits) {
      _mm_setcsr((saved_ & ~FloatMode::kControl) | mode.bits);
      changed_ = true;
    }
#else
    (void)mode;
#endif
  }
  ~FloatModeScope() {
#if defined(__x86_64__) || defined(__SSE__)
    if (changed_) _mm_setcsr(saved_);
#endif
  }
  FloatModeScope(const FloatModeScope&) = delete;
  FloatModeScope& operator=(const FloatModeScope&) = delete;

private:
  unsigned saved_ = 0;
  bool changed_ = false;
};


class ThreadPool {
  /// One parallel loop as a thread found it, under the mutex. `next_` holds the loop's
  /// tag (its generation, modulo 2^24) above the index of the next chunk to take.
  struct Loop {
    const std::function<void(int64_t)>* job = nullptr;
    int64_t chunks = 0;
    uint64_t tag = 0;
  };
  static constexpr int kIndexBits = 40; // loops of up to 2^40 chunks
  static constexpr int64_t kIndexMask = (int64_t{1} << kIndexBits) - 1;
  static constexpr uint64_t kTagMask = (uint64_t{1} << (63 - kIndexBits)) - 1;

public:
  explicit ThreadPool(int threads) {
    // Workers inherit a mask blocking every asynchronous signal: a process signal such as
    // the REPL's SIGINT must reach the thread that waits for it, never a worker.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &previous);
    for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { work(); });
    pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : workers_) t.join();
  }

  int size() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs chunks [0, chunks) of `job`, this thread taking part; one loop at a time.
  void run(int64_t chunks, const std::function<void(int64_t)>& job) {
    std::lock_guard<std::mutex> serial(runMutex_); // nested or concurrent loops wait their turn
    Loop loop;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &job;
      chunks_ = chunks;
      pending_.store(chunks);
      error_ = nullptr;
      failed_.store(false);
      loop = {job_, chunks_, (generation_.fetch_add(1, std::memory_order_release) + 1) & kTagMask};
      next_.store(static_cast<int64_t>(loop.tag << kIndexBits));
    }
    wake_.notify_all();
    drain(loop);
    spinWhile([this] { return pending_.load(std::memory_order_acquire) != 0; });
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    job_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

private:
  /// Takes chunks until none are left. Once a chunk has failed (an error, or an
  /// interrupt) the rest are skipped: their results would be thrown away.
  void drain(const Loop& loop) {
    for (;;) {
      // Claim the next chunk of this loop only: a worker still here from a loop that has
      // ended must neither take a chunk of the next one nor read its fields as they change.
      int64_t word = next_.load();
      int64_t chunk = 0;
      for (;;) {
        if (static_cast<uint64_t>(word) >> kIndexBits != loop.tag) return;
        chunk = word & kIndexMask;
        if (chunk >= loop.chunks) return;
        if (next_.compare_exchange_weak(word, word + 1)) break;
      }
      if (!failed_.load(std::memory_order_relaxed)) {
        try {
          (*loop.job)(chunk);
        } catch (...) {
          failed_.store(true, std::memory_order_relaxed);
          std::lock_guard<std::mutex> lock(mutex_);
          if (!error_) error_ = std::current_exception();
        }
      }
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_); // the caller checks pending_ under it
        done_.notify_all();
      }
    }
  }

  /// Spins while `busy()` for up to kSpin: a loop follows a loop within microseconds in
  /// compiled code (a training step runs dozens), and a thread that sleeps on a futex
  /// takes tens of microseconds to wake. Waiting then blocks as usual.
  template <typename Busy>
  static void spinWhile(Busy busy) {
    constexpr auto kSpin = std::chrono::microseconds(50);
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0; busy(); ++i) {
#if defined(__x86_64__) || defined(__SSE__)
      _mm_pause();
#endif
      if ((i & 63) == 63 && std::chrono::steady_clock::now() >= until) return;
    }
  }

  void work() {
    uint64_t seen = 0;
    Loop loop;
    for (;;) {
      // The next loop usually comes soon: watch for it before sleeping.
      spinWhile([&] { return generation_.load(std::memory_order_acquire) == seen && !stopping_.load(); });
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || (generation_.load() != seen && job_); });
        if (stopping_) return;
        seen = generation_.load();
        loop = {job_, chunks_, seen & kTagMask};
      }
      drain(loop);
    }
  }

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::mutex runMutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(int64_t)>* job_ = nullptr;
  int64_t chunks_ = 0;
  std::atomic<int64_t> next_{0};
  std::atomic<bool> failed_{false};
  std::atomic<int64_t> pending_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stopping_{false};
  std::exception_ptr error_;
};

int configuredThreads() {
  if (const char* env = std::getenv("TSL_NUM_THREADS")) {
    const int n = std::atoi(env);
    if (n >= 1) return std::min(n, 256);
  }
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

ThreadPool& pool() {
  static ThreadPool instance(configuredThreads());
  return instance;
}

/// Set while this thread runs a chunk: a parallel loop inside a chunk runs inline.
thread_local bool insideChunk = false;

} // namespace

int threadCount() { return pool().size(); }

void parallelFor(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  checkInterrupt();
  grain = std::max<int64_t>(grain, 1);
  const int threads = threadCount();
  if (insideChunk || n < 2 * grain) {
    body(0, n);
    return;
  }
  // A few chunks per thread balance uneven work without much overhead; more of them when
  // the range is long, so that an interrupt, checked before each chunk, is seen soon.
  // (At most 2^32 chunks: the pool counts them in 40 bits.)
  const int64_t chunks = std::min<int64_t>(
      {n / grain, std::max<int64_t>(int64_t(threads) * 4, n / (grain * 64)), int64_t{1} << 32});
  const int64_t step = (n + chunks - 1) / chunks;
  const InterruptFlag* flag = currentInterruptFlag();
  const FloatMode mode = FloatMode::current();
  auto chunkBody = [&](int64_t chunk) {
    const int64_t begin = chunk * step, end = std::min(n, begin + step);
    if (begin >= end) return;
    InterruptScope scope(flag); // the caller's flag, in whichever thread runs the chunk
    FloatModeScope floats(mode); // and the caller's rounding and denormal modes
    checkInterrupt();
    insideChunk = true;
    struct Reset {
      ~Reset() { insideChunk = false; }
    } reset;
    body(begin, end);
  };
  if (threads == 1) {
    for (int64_t chunk = 0; chunk < chunks; ++chunk) chunkBody(chunk);
    return;
  }
  pool().run(chunks, chunkBody);
}

} // namespace tsl
