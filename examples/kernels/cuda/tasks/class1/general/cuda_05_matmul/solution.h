#include <cuda_runtime.h>

// Naive: one thread per output element, every operand read from global memory.
__global__ void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k) {
  const int j = blockIdx.x * blockDim.x + threadIdx.x;
  const int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= m || j >= n) return;
  float acc = 0.f;
  for (int p = 0; p < k; ++p) acc += a[(long)i * k + p] * b[(long)p * n + j];
  c[(long)i * n + j] = acc;
}

void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  dim3 block(16, 16);
  dim3 grid((n + 15) / 16, (m + 15) / 16);
  matmul_naive<<<grid, block>>>(a, b, c, m, n, k);
}
