// Naive: one output at a time, a dot product over the taps.
void conv1d(const float* x, int n, const float* w, int taps, float* y) {
  for (int i = 0; i + taps <= n; ++i) {
    float acc = 0.f;
    for (int t = 0; t < taps; ++t) acc += x[i + t] * w[t];
    y[i] = acc;
  }
}
