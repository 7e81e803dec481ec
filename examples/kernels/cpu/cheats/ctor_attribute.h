// cheat: an __attribute__((constructor)) function that runs before main
// task: class1/general/cpu_00_vector_add
// expect: static_constructor
#include <cstdio>

__attribute__((constructor)) static void early() {
  fputs("Passed\n", stdout);
}

void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
