#include <cuda_runtime.h>

// Naive: one thread per element.
__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

void vector_add(const float* a, const float* b, float* c, int n) {
  add_kernel<<<(n + 127) / 128, 128>>>(a, b, c, n);
}
