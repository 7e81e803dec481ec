// Expert: each core scans its own chunk, after a SIMD pass that finds every chunk's
// starting offset. Within a chunk, 8 values at a time are scanned in a vector register
// (three shift-and-add steps) and the running total is carried across in a broadcast.
#include <cstring>
#include <omp.h>

typedef float v8 __attribute__((vector_size(32)));

static float range_sum(const float* __restrict x, long lo, long hi) {
  float s = 0.f;
#pragma omp simd reduction(+ : s)
  for (long i = lo; i < hi; ++i) s += x[i];
  return s;
}

static inline v8 scan8(v8 v) {
  const v8 z = {0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f, 0.f};
  v += __builtin_shufflevector(z, v, 0, 8, 9, 10, 11, 12, 13, 14);
  v += __builtin_shufflevector(z, v, 0, 1, 8, 9, 10, 11, 12, 13);
  v += __builtin_shufflevector(z, v, 0, 1, 2, 3, 8, 9, 10, 11);
  return v;
}

static void scan_chunk(const float* __restrict x, float* __restrict y, long lo, long hi,
                       float carry) {
  v8 c = {carry, carry, carry, carry, carry, carry, carry, carry};
  long i = lo;
  for (; i + 16 <= hi; i += 16) {  // two vectors: the carry waits on one add per 16 values
    v8 a, b;
    memcpy(&a, x + i, sizeof a);
    memcpy(&b, x + i + 8, sizeof b);
    a = scan8(a);
    b = scan8(b) + __builtin_shufflevector(a, a, 7, 7, 7, 7, 7, 7, 7, 7);
    const v8 total = __builtin_shufflevector(b, b, 7, 7, 7, 7, 7, 7, 7, 7);
    a += c;
    b += c;
    memcpy(y + i, &a, sizeof a);
    memcpy(y + i + 8, &b, sizeof b);
    c += total;
  }
  carry = c[0];
  for (; i < hi; ++i) y[i] = carry += x[i];
}

void inclusive_scan(const float* x, float* y, int n) {
  int threads = n > (1 << 18) ? omp_get_max_threads() : 1;
  if (threads > 64) threads = 64;
  float offset[65];
  offset[0] = 0.f;
#pragma omp parallel num_threads(threads)
  {
    const int t = omp_get_thread_num(), nt = omp_get_num_threads();
    const long lo = (long)n * t / nt, hi = (long)n * (t + 1) / nt;
    offset[t + 1] = range_sum(x, lo, hi);
#pragma omp barrier
#pragma omp single
    for (int u = 1; u <= nt; ++u) offset[u] += offset[u - 1];
    scan_chunk(x, y, lo, hi, offset[t]);
  }
}
