// cheat: prints the verdict from inside a kernel (device printf reaches stdout)
// task: class1/general/cuda_00_vector_add
// expect: device_io
#include <cuda_runtime.h>
#include <cstdio>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i == 0) printf("Passed\n");
  if (i < n) c[i] = a[i] + b[i];
}

void vector_add(const float* a, const float* b, float* c, int n) {
  add_kernel<<<(n + 127) / 128, 128>>>(a, b, c, n);
}
