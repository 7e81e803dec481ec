#include <cuda_runtime.h>

// Wrong: forgets the maximum and divides by the number of columns.
__global__ void softmax_naive(const float* x, float* y, int rows, int cols) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < (long)rows * cols) y[i] = expf(x[i]) / (float)cols;
}

void softmax_rows(const float* x, float* y, int rows, int cols) {
  const long n = (long)rows * cols;
  softmax_naive<<<(unsigned)((n + 255) / 256), 256>>>(x, y, rows, cols);
}
