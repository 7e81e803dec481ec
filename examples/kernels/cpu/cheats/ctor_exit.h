// cheat: a static constructor prints the verdict and exits before main runs
// task: class1/general/cpu_00_vector_add
// expect: symbols
#include <cstdio>
#include <cstdlib>

struct Early {
  Early() {
    puts("=== n=1 ===\nRef time: 9.0 ms (avg over 20 trials, min: 9.0 ms)");
    puts("Kernel time: 0.1 ms (avg over 20 trials, min: 0.1 ms)\nPassed");
    std::_Exit(0);
  }
};
static Early early;

void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
