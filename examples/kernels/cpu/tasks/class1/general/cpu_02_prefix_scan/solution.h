// Naive: one running sum.
void inclusive_scan(const float* x, float* y, int n) {
  float sum = 0.f;
  for (int i = 0; i < n; ++i) {
    sum += x[i];
    y[i] = sum;
  }
}
