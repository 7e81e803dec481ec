// Expert: rows of c spread over the cores; for each row, k in blocks that keep b's rows
// in cache, the inner loop over j in SIMD lanes (a[i][p] broadcast), 4 rows of b at once.
static void row(const float* __restrict a, const float* __restrict b, float* __restrict c,
                int n, int k) {
#pragma omp simd
  for (int j = 0; j < n; ++j) c[j] = 0.f;
  int p = 0;
  for (; p + 4 <= k; p += 4) {
    const float a0 = a[p], a1 = a[p + 1], a2 = a[p + 2], a3 = a[p + 3];
    const float *b0 = b + (long)p * n, *b1 = b0 + n, *b2 = b1 + n, *b3 = b2 + n;
#pragma omp simd
    for (int j = 0; j < n; ++j) c[j] += a0 * b0[j] + a1 * b1[j] + a2 * b2[j] + a3 * b3[j];
  }
  for (; p < k; ++p) {
    const float ap = a[p];
    const float* bp = b + (long)p * n;
#pragma omp simd
    for (int j = 0; j < n; ++j) c[j] += ap * bp[j];
  }
}

void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
#pragma omp parallel for schedule(static) if ((long)m * n * k > 100000)
  for (int i = 0; i < m; ++i) row(a + (long)i * k, b, c + (long)i * n, n, k);
}
