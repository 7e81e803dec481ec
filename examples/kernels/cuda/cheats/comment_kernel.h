// cheat: sums on the host; the kernel the rules ask for exists only in a comment
// task: class1/general/cuda_01_reduce_sum
// expect: required_pattern
#include <cuda_runtime.h>
#include <vector>

// __global__ void reduce_kernel(const float* x, int n, float* out) {}
// reduce_kernel<<<1, 256>>>(x, n, out);
void reduce_sum(const float* x, int n, float* out) {
  std::vector<float> h(n);
  cudaMemcpy(h.data(), x, n * sizeof(float), cudaMemcpyDeviceToHost);
  double s = 0.0;
  for (int i = 0; i < n; ++i) s += h[i];
  float f = (float)s;
  cudaMemcpy(out, &f, sizeof f, cudaMemcpyHostToDevice);
}
