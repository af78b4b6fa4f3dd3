/* bench/allreduce.c BYTES... — MPI_Allreduce (MPI_SUM, MPI_FLOAT) timed as
   bench/allreduce.tsl times TSL's all-reduce: for each size a warm-up, then per run a
   barrier and the collective alone, the slowest rank's time; rank 0 prints "c BYTES NS".
   Built with mpicc by bench/allreduce.py. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int a = 1; a < argc; ++a) {
    const long bytes = atol(argv[a]);
    const int n = (int)(bytes / 4);
    const int runs = bytes > 4000000 ? 9 : bytes > 100000 ? 41 : 201;
    float* in = malloc(sizeof(float) * (size_t)n);
    float* out = malloc(sizeof(float) * (size_t)n);
    for (int i = 0; i < n; ++i) in[i] = (float)rank + (float)(i % 97) / 97.0f;
    MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    for (int r = 0; r < runs; ++r) {
      MPI_Barrier(MPI_COMM_WORLD);
      const double start = MPI_Wtime();
      MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      double took = MPI_Wtime() - start, slowest = 0;
      MPI_Allreduce(&took, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
      if (rank == 0) printf("c %ld %.0f\n", bytes, slowest * 1e9);
    }
    free(in);
    free(out);
  }
  MPI_Finalize();
  return 0;
}
