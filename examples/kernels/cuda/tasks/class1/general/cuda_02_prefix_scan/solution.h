#include <cuda_runtime.h>

// Naive: each block of 1024 scans its values (Hillis-Steele, double-buffered in shared
// memory), one thread scans the block totals, then every block adds its offset.
__device__ float block_sums[1 << 16];  // n up to 2^26

__global__ void scan_blocks(const float* x, float* y, int n) {
  __shared__ float buf[2][1024];
  const int i = blockIdx.x * 1024 + threadIdx.x;
  int in = 0;
  buf[0][threadIdx.x] = i < n ? x[i] : 0.f;
  __syncthreads();
  for (int off = 1; off < 1024; off *= 2) {
    float v = buf[in][threadIdx.x];
    if (threadIdx.x >= off) v += buf[in][threadIdx.x - off];
    buf[1 - in][threadIdx.x] = v;
    in = 1 - in;
    __syncthreads();
  }
  if (i < n) y[i] = buf[in][threadIdx.x];
  if (threadIdx.x == 1023) block_sums[blockIdx.x] = buf[in][1023];
}

__global__ void scan_sums(int blocks) {
  float s = 0.f;
  for (int b = 0; b < blocks; ++b) {
    s += block_sums[b];
    block_sums[b] = s;
  }
}

__global__ void add_offsets(float* y, int n) {
  const int i = blockIdx.x * 1024 + threadIdx.x;
  if (blockIdx.x > 0 && i < n) y[i] += block_sums[blockIdx.x - 1];
}

void inclusive_scan(const float* x, float* y, int n) {
  const int blocks = (n + 1023) / 1024;
  scan_blocks<<<blocks, 1024>>>(x, y, n);
  scan_sums<<<1, 1>>>(blocks);
  add_offsets<<<blocks, 1024>>>(y, n);
}
