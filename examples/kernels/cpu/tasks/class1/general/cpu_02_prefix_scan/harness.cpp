// Harness of cpu_02_prefix_scan: inclusive prefix sum. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    std::vector<float> x[2];
    kh::Outputs<float> out(n);
    auto fill = [&](uint64_t seed) {
      x[0].resize(n);
      kh::fill_uniform(x[0].data(), n, seed, 0.f, 1.f);
      x[1] = x[0];
      out.poison_all();
    };
    auto call = [&](bool reference, int s) {
      (reference ? inclusive_scan_ref : inclusive_scan)(x[s].data(), out[s], n);
    };
    auto naive = [&] {
      double sum = 0;
      for (int i = 0; i < n; ++i) out.want[i] = float(sum += x[0][i]);
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, call, naive, out)) break;
  }
  return bench.finish();
}
