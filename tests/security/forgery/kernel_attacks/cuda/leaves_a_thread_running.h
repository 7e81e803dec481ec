// attack: leaves a thread running (CUDA, refused at compile time)
// task: class1/general/cuda_00_vector_add
// refused: symbols
#include <thread>
// Launches from a host thread after the call returned.
__global__ void add(const float* a, const float* b, float* c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] + b[i];
}
void vector_add(const float* a, const float* b, float* c, int n) {
  std::thread([=] { add<<<(n + 255) / 256, 256>>>(a, b, c, n); }).detach();
}
