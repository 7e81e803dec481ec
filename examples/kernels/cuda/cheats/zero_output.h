// cheat: writes zeros (tiny softmax outputs pass a loose absolute tolerance)
// task: class1/general/cuda_04_softmax
// expect: zero_output
#include <cuda_runtime.h>

__global__ void zero(float* y, long n) {
  const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 0.f;
}

void softmax_rows(const float* x, float* y, int rows, int cols) {
  (void)x;
  const long n = (long)rows * cols;
  zero<<<(unsigned)((n + 255) / 256), 256>>>(y, n);
}
