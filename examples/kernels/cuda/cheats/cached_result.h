// cheat: reduces once per input buffer and copies the cached sum on later calls
// task: class1/general/cuda_01_reduce_sum
// expect: cached_result
#include <cuda_runtime.h>

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

__device__ float cached;

__global__ void copy_cached(float* out) { out[0] = cached; }
__global__ void keep(const float* out) { cached = out[0]; }

void reduce_sum(const float* x, int n, float* out) {
  static const float* last = nullptr;
  if (x == last) {
    copy_cached<<<1, 1>>>(out);
    return;
  }
  last = x;
  reduce_one_block<<<1, 256>>>(x, n, out);
  keep<<<1, 1>>>(out);
}
