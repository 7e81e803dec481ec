// cheat: launches on a non-blocking stream the timing events do not wait for
// task: class1/general/cuda_00_vector_add
// expect: symbols
#include <cuda_runtime.h>

__global__ void add_kernel(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}

void vector_add(const float* a, const float* b, float* c, int n) {
  static cudaStream_t side = nullptr;
  if (!side) cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
  add_kernel<<<(n + 127) / 128, 128, 0, side>>>(a, b, c, n);
}
