// cheat: declares the harness's copy of the expert reference and calls it
// task: class1/general/cuda_05_matmul
// expect: symbols
#include <cuda_runtime.h>

extern "C" void matmul_ref(const float* a, const float* b, float* c, int m, int n, int k);

__global__ void unused(float* c) { (void)c; }

void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  matmul_ref(a, b, c, m, n, k);
  if (m < 0) unused<<<1, 1>>>(c);
}
