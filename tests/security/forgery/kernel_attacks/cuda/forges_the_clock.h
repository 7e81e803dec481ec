// attack: forges the clock (CUDA, refused at compile time)
// task: class1/general/cuda_00_vector_add
// refused: interposition
#include <cuda_runtime.h>
// Replaces the event timer the harness reads.
extern "C" cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0.001f;
  return cudaSuccess;
}
__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
void vector_add(const float* a, const float* b, float* c, int n) {
  add<<<(n + 255) / 256, 256>>>(a, b, c, n);
}
