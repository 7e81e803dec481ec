// Wrong: forgets the last element.
void reduce_sum(const float* x, int n, float* out) {
  double sum = 0.0;
  for (int i = 0; i < n - 1; ++i) {
    sum += x[i];
  }
  out[0] = (float)sum;
}
