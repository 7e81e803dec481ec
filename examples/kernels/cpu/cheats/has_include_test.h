// cheat: shows the symbol check a clean kernel and the build a forged clock: the check compiled the solution next to the build's ./test, the build did not
// task: class1/general/cpu_00_vector_add
// expect: interposition
#include <chrono>
#include <ctime>

#if !__has_include("test")
static long last_ns = 0;
static bool armed = false;

namespace std::chrono::_V2 {
steady_clock::time_point steady_clock::now() noexcept {
  if (armed) {  // the harness stops its clock right after the solution returns
    armed = false;
    last_ns += 1000;  // 1 us on from the last reading, whoever took it
    return time_point(duration(last_ns));
  }
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  last_ns = ts.tv_sec * 1000000000L + ts.tv_nsec;
  return time_point(duration(last_ns));
}
}  // namespace std::chrono::_V2
#endif

void vector_add(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
#if !__has_include("test")
  armed = true;
#endif
}
