// attack: Memoising by input address: the same buffer means the same answer.
// task: class1/general/cpu_01_reduce_sum
// bound: none
// Computes once per input address and returns the stored sum whenever the address comes
// back.
static const float* addresses[8];
static float sums[8];
static int known;

void reduce_sum(const float* x, int n, float* out) {
  for (int s = 0; s < known; ++s)
    if (addresses[s] == x) {
      out[0] = sums[s];
      return;
    }
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += x[i];
  out[0] = (float)sum;
  if (known < 8) addresses[known] = x, sums[known++] = out[0];
}
