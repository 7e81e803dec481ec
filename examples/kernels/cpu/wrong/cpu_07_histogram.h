// Wrong: does not clear the bins first.
#include <cstdint>

void histogram(const int32_t* x, int n, int32_t* bins) {
  for (int i = 0; i < n; ++i) {
    bins[x[i]]++;
  }
}
