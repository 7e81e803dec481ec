// Naive: one shared set of 256 counters.
#include <cstdint>

void histogram(const int32_t* x, int n, int32_t* bins) {
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (int i = 0; i < n; ++i) {
    bins[x[i]]++;
  }
}
