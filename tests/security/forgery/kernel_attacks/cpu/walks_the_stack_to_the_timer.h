// attack: Timer manipulation with no symbol at all: the harness's start time, on the stack.
// task: class1/general/cpu_05_matmul
// bound: 0.5
// Honest naive work, then looks up its stack for doubles that read like a steady-clock
// time in milliseconds (a timer's start, spilled across the call) and moves them forward
// by 0.95 of the work's time.
void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int p = 0; p < k; ++p) acc += a[(long)i * k + p] * b[(long)p * n + j];
      c[(long)i * n + j] = acc;
    }
  const double forward = 1e-6 * m * n * k;  // ~1 ns per multiply-add
  double* frame = static_cast<double*>(__builtin_frame_address(0));
  for (int i = 2; i < 512; ++i) {
    const double v = frame[i];
    if (v > 1e4 && v < 1e11 && v != (double)(long)v) frame[i] = v + 0.95 * forward;
  }
}
