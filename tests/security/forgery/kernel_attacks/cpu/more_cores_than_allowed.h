// attack: Issue 26 #6: more cores than allowed; its output is wrong if any of its threads sees more than one CPU, so a pass proves the run was held to cpu_threads = 1
// task: class1/general/cpu_00_vector_add
// bound: pass
#include <omp.h>
// Asks for more threads every way a kernel may (omp_set_num_threads, a num_threads
// clause); each thread checks how many CPUs it may use.
void vector_add(const float* a, const float* b, float* c, int n) {
  omp_set_num_threads(64);
  int wide = 0;
#pragma omp parallel num_threads(4) reduction(| : wide)
  {
    wide |= omp_get_num_procs() > 1;
#pragma omp for
    for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
  }
  if (wide) c[0] += 1.f;
}
