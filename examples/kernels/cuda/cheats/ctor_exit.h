// cheat: a static constructor prints the verdict and exits before main runs
// task: class1/general/cuda_03_transpose
// expect: symbols
#include <cuda_runtime.h>
#include <cstdio>
#include <unistd.h>

struct Early {
  Early() {
    fputs("Passed\nRef time: 1.0 ms (avg over 20 trials, min: 1.0 ms)\n", stdout);
    fflush(stdout);
    _exit(0);
  }
};
static Early early;

__global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[(long)c * rows + r] = in[(long)r * cols + c];
}

void transpose(const float* in, float* out, int rows, int cols) {
  transpose_naive<<<dim3((cols + 15) / 16, (rows + 15) / 16), dim3(16, 16)>>>(in, out, rows, cols);
}
