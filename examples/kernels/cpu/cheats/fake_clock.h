// cheat: replaces the clock the harness times with, so every call looks instant
// task: class1/general/cpu_00_vector_add
// expect: interposition
#include <chrono>

namespace std::chrono::_V2 {
steady_clock::time_point steady_clock::now() noexcept {
  static long ticks = 0;
  return time_point(duration(++ticks));
}
}  // namespace std::chrono::_V2

void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}
