// Naive: one dot product per output, walking b down its columns.
void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int p = 0; p < k; ++p) acc += a[(long)i * k + p] * b[(long)p * n + j];
      c[(long)i * n + j] = acc;
    }
  }
}
