#include <cuda_runtime.h>

// Expert: one warp per row; coalesced passes over the row, reductions by warp shuffles.
namespace {

__global__ void __launch_bounds__(256) softmax_warp(const float* __restrict__ x,
                                                    float* __restrict__ y, int rows, int cols) {
  const int row = (blockIdx.x * blockDim.x + threadIdx.x) >> 5;
  const int lane = threadIdx.x & 31;
  if (row >= rows) return;
  const float* in = x + (long)row * cols;
  float* out = y + (long)row * cols;
  float m = -3.402823466e38f;
  for (int c = lane; c < cols; c += 32) m = fmaxf(m, in[c]);
  for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
  float s = 0.f;
  for (int c = lane; c < cols; c += 32) s += __expf(in[c] - m);
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  const float inv = 1.f / s;
  for (int c = lane; c < cols; c += 32) out[c] = __expf(in[c] - m) * inv;
}

}  // namespace

void softmax_rows(const float* x, float* y, int rows, int cols) {
  const long threads = (long)rows * 32;
  softmax_warp<<<(unsigned)((threads + 255) / 256), 256>>>(x, y, rows, cols);
}
