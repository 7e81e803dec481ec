// Harness of cpu_01_reduce_sum: out[0] = sum of x. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 16, 999983, 1 << 22}) {
    std::vector<float> x[2];
    kh::Outputs<float> out(1);
    auto fill = [&](uint64_t seed) {
      x[0].resize(n);
      kh::fill_uniform(x[0].data(), n, seed, 0.f, 1.f);
      x[1] = x[0];
      out.poison_all();
    };
    auto call = [&](bool reference, int s) {
      (reference ? reduce_sum_ref : reduce_sum)(x[s].data(), n, out[s]);
    };
    auto naive = [&] {
      double sum = 0;
      for (int i = 0; i < n; ++i) sum += x[0][i];
      out.want[0] = float(sum);
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, call, naive, out)) break;
  }
  return bench.finish();
}
