// Expert: SIMD partial sums in float over short blocks, block sums in double, blocks
// spread over the cores.
static float block_sum(const float* __restrict x, int lo, int hi) {
  float s = 0.f;
#pragma omp simd reduction(+ : s)
  for (int i = lo; i < hi; ++i) s += x[i];
  return s;
}

void reduce_sum(const float* x, int n, float* out) {
  const int block = 4096;
  const int blocks = (n + block - 1) / block;
  double total = 0.0;
#pragma omp parallel for schedule(static) reduction(+ : total) if (blocks > 8)
  for (int k = 0; k < blocks; ++k) {
    int hi = (k + 1) * block < n ? (k + 1) * block : n;
    total += block_sum(x, k * block, hi);
  }
  out[0] = (float)total;
}
