// Naive: one running sum, in double to stay accurate.
void reduce_sum(const float* x, int n, float* out) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    sum += x[i];
  }
  out[0] = (float)sum;
}
