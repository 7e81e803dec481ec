// attack: Issue 26 #5: the reference slowed through the OpenMP runtime's state.
// task: class1/general/cpu_05_matmul
// bound: 0.5
#include <omp.h>
// Naive work, then leaves OpenMP asking for 48 threads (the reference's next parallel
// region used to get them on a one-core budget) and a team that spun behind it.
void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int p = 0; p < k; ++p) acc += a[(long)i * k + p] * b[(long)p * n + j];
      c[(long)i * n + j] = acc;
    }
  omp_set_num_threads(48);
#pragma omp parallel num_threads(8)
  {
    volatile int spin = 0;
    for (int i = 0; i < 1000; ++i) spin = spin + 1;
  }
}
