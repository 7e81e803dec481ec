// Expert: SIMD lanes within a block, blocks spread over the cores.
#include <algorithm>

static void add_block(const float* __restrict a, const float* __restrict b,
                      float* __restrict c, int lo, int hi) {
#pragma omp simd
  for (int i = lo; i < hi; ++i) c[i] = a[i] + b[i];
}

void vector_add(const float* a, const float* b, float* c, int n) {
  const int block = 1 << 15;
  const int blocks = (n + block - 1) / block;
#pragma omp parallel for schedule(static) if (blocks > 4)
  for (int k = 0; k < blocks; ++k) add_block(a, b, c, k * block, std::min(n, (k + 1) * block));
}
