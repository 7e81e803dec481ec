// Wrong: a convolution (the taps reversed) instead of a correlation.
void conv1d(const float* x, int n, const float* w, int taps, float* y) {
  for (int i = 0; i + taps <= n; ++i) {
    float acc = 0.f;
    for (int t = 0; t < taps; ++t) acc += x[i + t] * w[taps - 1 - t];
    y[i] = acc;
  }
}
