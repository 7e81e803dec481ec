// Wrong: skips the tail when n is not a multiple of 8.
void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i + 8 <= n; i += 8) {
    for (int j = 0; j < 8; ++j) c[i + j] = a[i + j] + b[i + j];
  }
}
