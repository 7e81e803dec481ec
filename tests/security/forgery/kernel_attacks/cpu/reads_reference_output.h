// attack: Issue 26 #3: the reference's answer read from an output buffer seen earlier.
// task: class1/general/cpu_05_matmul
// bound: 0.5
// Remembers every output buffer it was given; when one of them (not its own this call)
// holds numbers again, the reference has just written it there: copy it and skip the
// work.
static float* seen[4];
static long seen_size;
static int count;

void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  const long size = (long)m * n;
  if (size != seen_size) seen_size = size, count = 0;
  for (int s = 0; s < count; ++s) {
    const float* o = seen[s];
    if (o != c && o[0] == o[0] && o[size - 1] == o[size - 1]) {
      for (long i = 0; i < size; ++i) c[i] = o[i];
      return;
    }
  }
  bool known = false;
  for (int s = 0; s < count; ++s) known = known || seen[s] == c;
  if (!known && count < 4) seen[count++] = c;
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int p = 0; p < k; ++p) acc += a[(long)i * k + p] * b[(long)p * n + j];
      c[(long)i * n + j] = acc;
    }
}
