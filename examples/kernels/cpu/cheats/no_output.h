// cheat: never writes its output and hopes stale memory matches
// task: class1/general/cpu_05_matmul
// expect: no_output
void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  (void)a;
  (void)b;
  (void)c;
  (void)m, (void)n, (void)k;
}
