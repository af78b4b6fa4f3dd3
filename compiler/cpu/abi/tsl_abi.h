/* compiler/cpu/abi/tsl_abi.h — what code compiled for :cpu needs from its host.
 *
 * A generated function takes an array of buffer pointers (its inputs, then its outputs,
 * then its arena: scratch memory of the size the memory plan gives) and a context, and
 * returns TSL_OK or why it stopped, with the context saying more:
 *
 *   int32_t f(void* const* buffers, tsl_context* context);
 *
 * A rank-0 input or output is a pointer to its one element. Generated code calls its host
 * only through the functions below, which never throw or longjmp: a failure is a returned
 * code that the caller passes up. In the JIT the host is the engine
 * (compiler/cpu/HostAbi.cpp: the runtime's thread pool, the eager kernels, the interrupt
 * flag); an ahead-of-time library links compiler/cpu/abi/tsl_aot_runtime.c instead.
 * Plain C, so that both sides and a C host can include it.
 */
#ifndef TSL_ABI_H
#define TSL_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Why a generated function returned early. */
enum tsl_status {
  TSL_OK = 0,
  TSL_ERROR_CHECK = 1,       /* a check of the program failed: `site` and `detail` say which */
  TSL_ERROR_INTERRUPTED = 2, /* the interrupt flag was set */
  TSL_ERROR_KERNEL = 3,      /* a runtime kernel failed; the host holds its error */
  TSL_ERROR_MEMORY = 4,      /* the host could not allocate */
  TSL_ERROR_ARGUMENT = 5     /* an ahead-of-time entry was given a NULL or overlapping buffer */
};

typedef struct tsl_context {
  const volatile uint8_t* interrupt; /* nonzero: stop at the next check (may be null) */
  int32_t site;                      /* TSL_ERROR_CHECK: which check of the program */
  int32_t pad;
  int64_t detail[2];                 /* the values the check's message names */
  void* host;                        /* the host's own state */
} tsl_context;

/* Runs body(data, begin, end) over chunks covering [0, n), in parallel when n >= 2 grain.
 * Returns TSL_OK, or TSL_ERROR_INTERRUPTED when a stop was requested between chunks. */
typedef void (*tsl_body)(void* data, int64_t begin, int64_t end);
int32_t tsl_parallel_for(tsl_context* context, int64_t n, int64_t grain, tsl_body body, void* data);

/* How many threads tsl_parallel_for may use (a loop that packs data per chunk, like the
 * GEMM, makes one chunk per thread). */
int32_t tsl_thread_count(tsl_context* context);

/* Runs operation number `index` of the executable on its eager kernel (JIT only; the
 * operation's types are in the host's table): `inputs` point at its operands' elements,
 * `output` at where its result goes. */
int32_t tsl_run_kernel(tsl_context* context, int32_t index, void* const* inputs, void* output);

/* A stack of tuples of buffers (reverse-mode autodiff records loop iterations on one):
 * push copies `count` buffers of `bytes[i]` bytes; pop copies the last tuple pushed back
 * into `data` and drops it. Tapes live until the generated function returns. */
int32_t tsl_tape_new(tsl_context* context, int64_t* tape);
int32_t tsl_tape_push(tsl_context* context, int64_t tape, int32_t count, void* const* data, const int64_t* bytes);
int32_t tsl_tape_pop(tsl_context* context, int64_t tape, int32_t count, void* const* data, const int64_t* bytes);

#ifdef __cplusplus
}
#endif

#endif
