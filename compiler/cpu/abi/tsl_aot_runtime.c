/* compiler/cpu/abi/tsl_aot_runtime.c — the host side of tsl_abi.h inside an
 * ahead-of-time library.
 *
 * `tsl compile --emit=lib` links this (as a static archive embedded in the compiler)
 * into every shared library it writes, so the library needs only libc, libm and
 * libpthread: no LLVM, no C++ runtime, no TSL engine. Everything here has hidden
 * visibility; the library exports only its entries.
 *
 *  - tsl_parallel_for: the chunks of a parallel loop on threads started for the call
 *    (TSL_NUM_THREADS of them, by default one per core), the caller working too;
 *  - tapes: stacks of copied buffers, freed when the entry returns;
 *  - the entry's arena (tsl_aot_alloc), and its error message (tsl_aot_report), kept per
 *    thread until the next failure in that thread.
 */
#include "tsl_abi.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xmmintrin.h>

#define TSL_HIDDEN __attribute__((visibility("hidden")))

/* ---- Threads ---- */

static int thread_count(void) {
  const char* text = getenv("TSL_NUM_THREADS");
  if (text && *text) {
    long n = strtol(text, NULL, 10);
    if (n >= 1 && n <= 1024) return (int)n;
  }
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores >= 1 && cores <= 1024 ? (int)cores : 1;
}

struct job {
  tsl_body body;
  void* data;
  int64_t n, grain;
  int64_t next;  /* the first index not yet taken (atomic) */
  unsigned mode; /* the caller's MXCSR control bits (rounding, FTZ, DAZ) */
};

static void run_chunks(struct job* job) {
  for (;;) {
    int64_t begin = __atomic_fetch_add(&job->next, job->grain, __ATOMIC_RELAXED);
    if (begin >= job->n) return;
    int64_t end = begin + job->grain < job->n ? begin + job->grain : job->n;
    job->body(job->data, begin, end);
  }
}

static void* worker(void* arg) {
  struct job* job = (struct job*)arg;
  /* The caller's floating-point mode, so a chunk's result does not depend on its thread. */
  _mm_setcsr((_mm_getcsr() & ~0xFFC0u) | job->mode);
  run_chunks(job);
  return NULL;
}

TSL_HIDDEN int32_t tsl_thread_count(tsl_context* context) {
  (void)context;
  return thread_count();
}

TSL_HIDDEN int32_t tsl_parallel_for(tsl_context* context, int64_t n, int64_t grain, tsl_body body, void* data) {
  (void)context;
  if (grain < 1) grain = 1;
  int64_t chunks = (n + grain - 1) / grain;
  int threads = thread_count();
  if (threads > chunks) threads = (int)chunks;
  struct job job = {body, data, n, grain, 0, _mm_getcsr() & 0xFFC0u};
  pthread_t started[1024];
  int count = 0;
  for (int i = 1; i < threads; ++i) {
    if (pthread_create(&started[count], NULL, worker, &job) != 0) break; /* fewer threads: still correct */
    ++count;
  }
  run_chunks(&job);
  for (int i = 0; i < count; ++i) pthread_join(started[i], NULL);
  return TSL_OK;
}

/* ---- Eager kernels: a library has none (code generation refuses such operations) ---- */

TSL_HIDDEN int32_t tsl_run_kernel(tsl_context* context, int32_t index, void* const* inputs, void* output) {
  (void)context, (void)index, (void)inputs, (void)output;
  return TSL_ERROR_KERNEL;
}

/* ---- Tapes ---- */

struct tuple {
  struct tuple* below;
  size_t bytes;
  char data[];
};

struct tapes {
  struct tuple** tops;
  int64_t count, capacity;
};

static struct tapes* tapes_of(tsl_context* context) {
  if (!context->host) context->host = calloc(1, sizeof(struct tapes));
  return (struct tapes*)context->host;
}

TSL_HIDDEN int32_t tsl_tape_new(tsl_context* context, int64_t* tape) {
  struct tapes* t = tapes_of(context);
  if (!t) return TSL_ERROR_MEMORY;
  if (t->count == t->capacity) {
    int64_t capacity = t->capacity ? 2 * t->capacity : 8;
    struct tuple** tops = realloc(t->tops, (size_t)capacity * sizeof *tops);
    if (!tops) return TSL_ERROR_MEMORY;
    t->tops = tops;
    t->capacity = capacity;
  }
  t->tops[t->count] = NULL;
  *tape = t->count++;
  return TSL_OK;
}

TSL_HIDDEN int32_t tsl_tape_push(tsl_context* context, int64_t tape, int32_t count, void* const* data,
                                 const int64_t* bytes) {
  struct tapes* t = tapes_of(context);
  size_t total = 0;
  for (int32_t i = 0; i < count; ++i) total += (size_t)bytes[i];
  struct tuple* tuple = malloc(sizeof *tuple + total);
  if (!t || !tuple) {
    free(tuple);
    return TSL_ERROR_MEMORY;
  }
  size_t at = 0;
  for (int32_t i = 0; i < count; ++i) {
    memcpy(tuple->data + at, data[i], (size_t)bytes[i]);
    at += (size_t)bytes[i];
  }
  tuple->bytes = total;
  tuple->below = t->tops[tape];
  t->tops[tape] = tuple;
  return TSL_OK;
}

TSL_HIDDEN int32_t tsl_tape_pop(tsl_context* context, int64_t tape, int32_t count, void* const* data,
                                const int64_t* bytes) {
  struct tapes* t = tapes_of(context);
  struct tuple* tuple = t ? t->tops[tape] : NULL;
  if (!tuple) return TSL_ERROR_KERNEL;
  size_t at = 0;
  for (int32_t i = 0; i < count; ++i) {
    memcpy(data[i], tuple->data + at, (size_t)bytes[i]);
    at += (size_t)bytes[i];
  }
  t->tops[tape] = tuple->below;
  free(tuple);
  return TSL_OK;
}

/* ---- What an entry calls around the generated function ---- */

TSL_HIDDEN void* tsl_aot_alloc(int64_t bytes) {
  if (bytes <= 0) return NULL;
  return aligned_alloc(64, ((size_t)bytes + 63) / 64 * 64);
}

/* Frees the arena and whatever the call's tapes still hold. */
TSL_HIDDEN void tsl_aot_release(tsl_context* context, void* arena) {
  free(arena);
  struct tapes* t = (struct tapes*)context->host;
  if (!t) return;
  for (int64_t i = 0; i < t->count; ++i)
    for (struct tuple* tuple = t->tops[i]; tuple;) {
      struct tuple* below = tuple->below;
      free(tuple);
      tuple = below;
    }
  free(t->tops);
  free(t);
  context->host = NULL;
}

static __thread char last_error[1024];

/* Records why the entry failed. `sites` holds each check's message: "T" followed by a
 * template whose {0} and {1} take the details, or "L" and the literal text. */
TSL_HIDDEN void tsl_aot_report(int32_t status, const tsl_context* context, const char* const* sites, int32_t count) {
  switch (status) {
  case TSL_ERROR_CHECK:
    if (context->site >= 0 && context->site < count) {
      const char* site = sites[context->site];
      const int literal = site[0] == 'L';
      size_t out = 0;
      for (const char* p = site + 1; *p && out + 32 < sizeof last_error; ++p) {
        if (!literal && p[0] == '{' && (p[1] == '0' || p[1] == '1') && p[2] == '}') {
          out += (size_t)snprintf(last_error + out, sizeof last_error - out, "%lld", (long long)context->detail[p[1] - '0']);
          p += 2;
        } else {
          last_error[out++] = *p;
        }
      }
      last_error[out] = '\0';
      return;
    }
    snprintf(last_error, sizeof last_error, "internal error: an unknown check failed");
    return;
  case TSL_ERROR_MEMORY: snprintf(last_error, sizeof last_error, "runtime error: out of memory"); return;
  case TSL_ERROR_INTERRUPTED: snprintf(last_error, sizeof last_error, "runtime error: interrupted"); return;
  default: snprintf(last_error, sizeof last_error, "internal error: status %d", (int)status); return;
  }
}

TSL_HIDDEN const char* tsl_aot_last_error(void) { return last_error; }

/* Checks the buffers a caller passed to the entry `function`: `buffers[0..inputs)` are
 * its inputs, the rest up to `count` its results, `bytes[i]` long and named `names[i]`.
 * A buffer of any bytes must not be NULL, and a result must share no byte with an input
 * or another result (the code may write a result before it has read every input). Inputs
 * may overlap each other: they are only read. Returns TSL_OK, or TSL_ERROR_ARGUMENT with
 * the message recorded. */
TSL_HIDDEN int32_t tsl_aot_check_buffers(const char* function, void* const* buffers, const int64_t* bytes,
                                         const char* const* names, int32_t inputs, int32_t count) {
  for (int32_t i = 0; i < count; ++i)
    if (bytes[i] > 0 && !buffers[i]) {
      snprintf(last_error, sizeof last_error, "value error: %s: %s is NULL (every buffer must point at its %lld bytes)",
               function, names[i], (long long)bytes[i]);
      return TSL_ERROR_ARGUMENT;
    }
  for (int32_t r = inputs; r < count; ++r) {
    if (bytes[r] <= 0) continue;
    const uintptr_t begin = (uintptr_t)buffers[r], end = begin + (uintptr_t)bytes[r];
    for (int32_t o = 0; o < r; ++o) { /* every input, and each pair of results once */
      if (bytes[o] <= 0) continue;
      const uintptr_t other = (uintptr_t)buffers[o], otherEnd = other + (uintptr_t)bytes[o];
      if (begin < otherEnd && other < end) {
        snprintf(last_error, sizeof last_error,
                 "value error: %s: %s overlaps %s (a result must not share memory with an input or another result)",
                 function, names[r], names[o]);
        return TSL_ERROR_ARGUMENT;
      }
    }
  }
  return TSL_OK;
}
