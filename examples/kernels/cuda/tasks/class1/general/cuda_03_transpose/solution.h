#include <cuda_runtime.h>

// Naive: one thread per element; reads are coalesced, writes are not.
__global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[(long)c * rows + r] = in[(long)r * cols + c];
}

void transpose(const float* in, float* out, int rows, int cols) {
  dim3 block(16, 16);
  dim3 grid((cols + 15) / 16, (rows + 15) / 16);
  transpose_naive<<<grid, block>>>(in, out, rows, cols);
}
