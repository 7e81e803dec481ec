// cheat: prints the success and timing lines itself and launches an empty kernel
// task: class1/general/cuda_00_vector_add
// expect: symbols
#include <cstdio>
#include <cuda_runtime.h>

__global__ void nothing(float* c) { (void)c; }

void vector_add(const float* a, const float* b, float* c, int n) {
  (void)a, (void)b, (void)n;
  nothing<<<1, 1>>>(c);
  printf("Passed\nKernel time: 0.0001 ms (avg over 20 trials, min: 0.0001 ms)\n");
}
