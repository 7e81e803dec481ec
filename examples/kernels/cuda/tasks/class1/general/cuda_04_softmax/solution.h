#include <cuda_runtime.h>

// Naive: one thread per row, three passes over the row.
__global__ void softmax_naive(const float* x, float* y, int rows, int cols) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* in = x + (long)r * cols;
  float* out = y + (long)r * cols;
  float m = in[0];
  for (int c = 1; c < cols; ++c) m = fmaxf(m, in[c]);
  float s = 0.f;
  for (int c = 0; c < cols; ++c) s += expf(in[c] - m);
  for (int c = 0; c < cols; ++c) out[c] = expf(in[c] - m) / s;
}

void softmax_rows(const float* x, float* y, int rows, int cols) {
  softmax_naive<<<(rows + 127) / 128, 128>>>(x, y, rows, cols);
}
