// cheat: work before main through an initializer section, no constructor attribute
// task: class1/general/cpu_00_vector_add
// expect: init_section
#include <cstdlib>

static float* warm = nullptr;

static void before_main() {
  warm = static_cast<float*>(std::malloc(1 << 20));  // anything, before the clock exists
}

__attribute__((used, section(".init_array"))) static void (*early)() = before_main;

void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
