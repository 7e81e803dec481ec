// Expert: rows spread over the cores; within a row, SIMD lanes with an inline exp
// (round to the nearest power of two with the 1.5 * 2^23 trick, a degree-6 polynomial on
// the rest, the exponent set by bits). Inputs are x - max in [-16, 0]: no clamping needed.
#include <cstdint>

static inline float fast_exp(float x) {
  const float t = x * 1.44269504f + 12582912.0f;
  const float n = t - 12582912.0f;
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.38888889e-3f;
  p = p * r + 8.33333333e-3f;
  p = p * r + 4.16666667e-2f;
  p = p * r + 1.66666667e-1f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const int32_t k = __builtin_bit_cast(int32_t, t) - 0x4B400000;
  return p * __builtin_bit_cast(float, (k + 127) << 23);
}

static void row(const float* __restrict in, float* __restrict out, int cols) {
  float m = in[0];
#pragma omp simd reduction(max : m)
  for (int c = 0; c < cols; ++c) m = in[c] > m ? in[c] : m;
  float sum = 0.f;
#pragma omp simd reduction(+ : sum)
  for (int c = 0; c < cols; ++c) {
    const float e = fast_exp(in[c] - m);
    out[c] = e;
    sum += e;
  }
  const float inv = 1.0f / sum;
#pragma omp simd
  for (int c = 0; c < cols; ++c) out[c] *= inv;
}

void softmax_rows(const float* x, float* y, int rows, int cols) {
#pragma omp parallel for schedule(static) if ((long)rows * cols > 32768)
  for (int r = 0; r < rows; ++r) row(x + (long)r * cols, y + (long)r * cols, cols);
}
