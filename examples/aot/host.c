/* examples/aot/host.c — a C program calling TSL code compiled ahead of time.
 *
 *   host DIR     reads w1, b1, w2, b2 and x from DIR/*.npy (written by reference.tsl),
 *                runs predict from libpredict.so, and compares its probabilities with
 *                DIR/expected.npy, the eager TSL engine's; exit status 0 if they agree.
 *
 * Plain C99 and libc: the library needs nothing else, not LLVM, not the TSL engine. */
#include "predict.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a little-endian f32 .npy file of exactly `count` elements into `out`. */
static int read_npy(const char* dir, const char* name, float* out, size_t count) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.npy", dir, name);
  FILE* f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 0;
  }
  unsigned char magic[10];
  int ok = fread(magic, 1, 10, f) == 10 && memcmp(magic, "\x93NUMPY", 6) == 0 && magic[6] == 1;
  if (ok) {
    size_t header = (size_t)magic[8] | ((size_t)magic[9] << 8);
    char text[1024] = {0};
    ok = header < sizeof text && fread(text, 1, header, f) == header && strstr(text, "'<f4'") != NULL &&
         fread(out, sizeof(float), count, f) == count && fgetc(f) == EOF;
  }
  if (!ok) fprintf(stderr, "%s: not a .npy file of %zu float32 values\n", path, count);
  fclose(f);
  return ok;
}

enum { N = 32, IN = 64, HIDDEN = 128, OUT = 10 };

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  static float w1[IN * HIDDEN], b1[HIDDEN], w2[HIDDEN * OUT], b2[OUT], x[N * IN], expected[N * OUT], probs[N * OUT];
  if (!read_npy(argv[1], "w1", w1, IN * HIDDEN) || !read_npy(argv[1], "b1", b1, HIDDEN) ||
      !read_npy(argv[1], "w2", w2, HIDDEN * OUT) || !read_npy(argv[1], "b2", b2, OUT) ||
      !read_npy(argv[1], "x", x, N * IN) || !read_npy(argv[1], "expected", expected, N * OUT))
    return 2;
  if (predict(w1, b1, w2, b2, x, probs) != 0) {
    fprintf(stderr, "predict failed: %s\n", predict_error());
    return 1;
  }
  double worst = 0;
  for (int i = 0; i < N * OUT; ++i) worst = fmax(worst, fabs((double)probs[i] - expected[i]));
  printf("predicted classes:");
  for (int r = 0; r < N; ++r) {
    int best = 0;
    for (int c = 1; c < OUT; ++c)
      if (probs[r * OUT + c] > probs[r * OUT + best]) best = c;
    printf(" %d", best);
  }
  printf("\nlargest difference from the eager engine: %.3g\n", worst);
  return worst <= 1e-5 ? 0 : 1;
}
