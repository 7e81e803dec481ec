// Naive: per row, the max, then exp and sum, then divide; libm's expf one at a time.
#include <cmath>

void softmax_rows(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* in = x + (long)r * cols;
    float* out = y + (long)r * cols;
    float m = in[0];
    for (int c = 1; c < cols; ++c) m = in[c] > m ? in[c] : m;
    float sum = 0.f;
    for (int c = 0; c < cols; ++c) {
      out[c] = expf(in[c] - m);
      sum += out[c];
    }
    for (int c = 0; c < cols; ++c) out[c] /= sum;
  }
}
