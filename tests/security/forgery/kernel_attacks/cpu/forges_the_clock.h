// attack: Timer manipulation: the clock the harness times with, replaced.
// task: class1/general/cpu_05_matmul
// bound: 0.5
#include <chrono>
#include <ctime>
// Replaces steady_clock::now: the reading after its own call comes 1 us after the last.
static long last_ns = 0;
static bool armed = false;

namespace std::chrono::_V2 {
steady_clock::time_point steady_clock::now() noexcept {
  if (armed) {
    armed = false;
    last_ns += 1000;
    return time_point(duration(last_ns));
  }
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  last_ns = ts.tv_sec * 1000000000L + ts.tv_nsec;
  return time_point(duration(last_ns));
}
}  // namespace std::chrono::_V2

void matmul(const float* a, const float* b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float acc = 0.f;
      for (int p = 0; p < k; ++p) acc += a[(long)i * k + p] * b[(long)p * n + j];
      c[(long)i * n + j] = acc;
    }
  armed = true;
}
