// cheat: looks printf up at run time so no call appears in the source
// task: class1/general/cpu_02_prefix_scan
// expect: symbols
#include <dlfcn.h>

void inclusive_scan(const float* x, float* y, int n) {
  typedef int (*print_fn)(const char*, ...);
  print_fn p = (print_fn)dlsym(RTLD_DEFAULT, "printf");
  if (p) p("Passed\n");
  float s = 0.f;
  for (int i = 0; i < n; ++i) y[i] = s += x[i];
}
