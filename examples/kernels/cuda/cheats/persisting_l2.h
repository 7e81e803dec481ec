// cheat: pins its input in a persisting L2 window so the harness's cache flush misses it
// task: class1/general/cuda_03_transpose
// expect: symbols
#include <cuda_runtime.h>

__global__ void transpose_naive(const float* in, float* out, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) out[(long)c * rows + r] = in[(long)r * cols + c];
}

void transpose(const float* in, float* out, int rows, int cols) {
  cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 32 << 20);
  cudaStreamAttrValue attr = {};
  attr.accessPolicyWindow.base_ptr = (void*)in;
  attr.accessPolicyWindow.num_bytes = (size_t)rows * cols * sizeof(float);
  attr.accessPolicyWindow.hitRatio = 1.0f;
  attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(0, cudaStreamAttributeAccessPolicyWindow, &attr);
  dim3 block(16, 16);
  dim3 grid((cols + 15) / 16, (rows + 15) / 16);
  transpose_naive<<<grid, block>>>(in, out, rows, cols);
}
