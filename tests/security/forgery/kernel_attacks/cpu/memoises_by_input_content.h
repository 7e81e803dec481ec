// attack: Memoising across calls by input content (a fingerprint of the inputs).
// task: class1/general/cpu_05_matmul
// bound: 0.5
#include <cstdlib>
#include <cstring>
// Keeps every answer under a fingerprint of its inputs (a few values of a and b) and
// returns the stored answer when a fingerprint comes back.
static unsigned long long keys[64];
static float* answers[64];
static int stored;

static unsigned long long fingerprint(const float* a, const float* b, long na, long nb) {
  unsigned long long h = 1469598103934665603ull;
  const float v[4] = {a[0], a[na - 1], b[0], b[nb - 1]};
  unsigned int w[4];
  memcpy(w, v, sizeof w);
  for (unsigned int x : w) h = (h ^ x) * 1099511628211ull;
  return h;
}

void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  const long size = (long)m * n;
  const unsigned long long key = fingerprint(a, b, (long)m * k, (long)k * n);
  for (int s = 0; s < stored; ++s)
    if (keys[s] == key) {
      memcpy(c, answers[s], size * sizeof(float));
      return;
    }
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int p = 0; p < k; ++p) acc += a[(long)i * k + p] * b[(long)p * n + j];
      c[(long)i * n + j] = acc;
    }
  if (stored < 64) {
    answers[stored] = static_cast<float*>(malloc(size * sizeof(float)));
    memcpy(answers[stored], c, size * sizeof(float));
    keys[stored++] = key;
  }
}
