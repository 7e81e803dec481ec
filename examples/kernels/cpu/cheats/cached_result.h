// cheat: computes once per input buffer and returns the cached sum on later calls
// task: class1/general/cpu_01_reduce_sum
// expect: cached_result
static const float* last_input = nullptr;
static float last_sum = 0.f;

void reduce_sum(const float* x, int n, float* out) {
  if (x != last_input) {
    double s = 0.0;
    for (int i = 0; i < n; ++i) s += x[i];
    last_sum = (float)s;
    last_input = x;
  }
  out[0] = last_sum;
}
