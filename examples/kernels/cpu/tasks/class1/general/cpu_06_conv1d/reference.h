// Expert: blocks of outputs spread over the cores; in a block, taps outside and outputs
// inside, so the inner loop runs across SIMD lanes.
static void block(const float* __restrict x, const float* __restrict w, int taps,
                  float* __restrict y, int lo, int hi) {
#pragma omp simd
  for (int i = lo; i < hi; ++i) y[i] = 0.f;
  for (int t = 0; t < taps; ++t) {
    const float wt = w[t];
#pragma omp simd
    for (int i = lo; i < hi; ++i) y[i] += x[i + t] * wt;
  }
}

void conv1d(const float* x, int n, const float* w, int taps, float* y) {
  const int outputs = n - taps + 1;
  const int size = 2048;
  const int blocks = (outputs + size - 1) / size;
#pragma omp parallel for schedule(static) if (blocks > 4)
  for (int b = 0; b < blocks; ++b) {
    const int hi = (b + 1) * size < outputs ? (b + 1) * size : outputs;
    block(x, w, taps, y, b * size, hi);
  }
}
