// cheat: a dummy kernel to satisfy the rules, cuBLAS for the work
// task: class1/general/cuda_05_matmul
// expect: library
#include <cublas_v2.h>
#include <cuda_runtime.h>

__global__ void unused(float* c) { (void)c; }

void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  static cublasHandle_t handle = nullptr;
  if (!handle) cublasCreate(&handle);
  const float one = 1.f, zero = 0.f;
  cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n);
  if (m < 0) unused<<<1, 1>>>(c);
}
