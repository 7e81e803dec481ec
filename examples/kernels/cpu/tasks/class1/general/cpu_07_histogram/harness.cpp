// Harness of cpu_07_histogram: 256-bin histogram. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    std::vector<int32_t> x[2];
    kh::Outputs<int32_t> out(256);
    auto fill = [&](uint64_t seed) {  // half the values 0 (a background), the rest 0..255
      x[0].resize(n);
      kh::fill_int(x[0].data(), n, seed, 0, 511);
      for (int32_t& v : x[0]) v = v > 255 ? 0 : v;
      x[1] = x[0];
      out.poison_all();
    };
    auto call = [&](bool reference, int s) {
      (reference ? histogram_ref : histogram)(x[s].data(), n, out[s]);
    };
    auto naive = [&] {
      for (int b = 0; b < 256; ++b) out.want[b] = 0;
      for (int i = 0; i < n; ++i) out.want[x[0][i]]++;
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, call, naive, out)) break;
  }
  return bench.finish();
}
