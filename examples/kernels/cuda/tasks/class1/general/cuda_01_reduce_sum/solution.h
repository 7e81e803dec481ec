#include <cuda_runtime.h>

// Naive: a single block; each thread sums a strided share in double, then a tree in
// shared memory.
__global__ void reduce_one_block(const float* x, int n, float* out) {
  __shared__ double partial[256];
  double s = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) s += x[i];
  partial[threadIdx.x] = s;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride /= 2) {
    if (threadIdx.x < stride) partial[threadIdx.x] += partial[threadIdx.x + stride];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[0] = (float)partial[0];
}

void reduce_sum(const float* x, int n, float* out) {
  reduce_one_block<<<1, 256>>>(x, n, out);
}
