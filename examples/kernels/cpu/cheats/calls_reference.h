// cheat: declares the harness's copy of the expert reference and calls it
// task: class1/general/cpu_07_histogram
// expect: symbols
#include <cstdint>

extern "C" void histogram_ref(const int32_t* x, int n, int32_t* bins);

void histogram(const int32_t* x, int n, int32_t* bins) {
  histogram_ref(x, n, bins);
  return;
}
