// Wrong: an exclusive scan (y[i] leaves out x[i]).
void inclusive_scan(const float* x, float* y, int n) {
  float sum = 0.f;
  for (int i = 0; i < n; ++i) {
    y[i] = sum;
    sum += x[i];
  }
}
