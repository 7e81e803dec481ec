// Harness of cpu_00_vector_add: c = a + b. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    std::vector<float> a[2], b[2];
    kh::Outputs<float> out(n);
    auto fill = [&](uint64_t seed) {
      a[0].resize(n), b[0].resize(n);
      kh::fill_uniform(a[0].data(), n, seed, -1.f, 1.f);
      kh::fill_uniform(b[0].data(), n, seed ^ 1, -1.f, 1.f);
      a[1] = a[0], b[1] = b[0];  // each side reads its own copy
      out.poison_all();
    };
    auto call = [&](bool reference, int s) {
      (reference ? vector_add_ref : vector_add)(a[s].data(), b[s].data(), out[s], n);
    };
    auto naive = [&] {
      for (int i = 0; i < n; ++i) out.want[i] = a[0][i] + b[0][i];
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, call, naive, out)) break;
  }
  return bench.finish();
}
