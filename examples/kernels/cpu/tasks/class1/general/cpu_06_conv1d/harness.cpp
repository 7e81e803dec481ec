// Harness of cpu_06_conv1d: y = x (valid) correlated with w. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][2] = {{10007, 7}, {300007, 31}, {1 << 20, 15}};
  for (auto& shape : shapes) {
    const int n = shape[0], taps = shape[1], outputs = n - taps + 1;
    std::vector<float> x[2], w[2];
    kh::Outputs<float> out(outputs);
    auto fill = [&](uint64_t seed) {
      x[0].resize(n), w[0].resize(taps);
      kh::fill_uniform(x[0].data(), n, seed, -1.f, 1.f);
      kh::fill_uniform(w[0].data(), taps, seed ^ 1, -1.f, 1.f);
      x[1] = x[0], w[1] = w[0];
      out.poison_all();
    };
    auto call = [&](bool reference, int s) {
      (reference ? conv1d_ref : conv1d)(x[s].data(), n, w[s].data(), taps, out[s]);
    };
    auto naive = [&] {
      for (int i = 0; i < outputs; ++i) {
        double acc = 0;
        for (int t = 0; t < taps; ++t) acc += double(x[0][i + t]) * w[0][t];
        out.want[i] = float(acc);
      }
    };
    if (!bench.size(kh::fmt("n=%d,taps=%d", n, taps), fill, call, naive, out)) break;
  }
  return bench.finish();
}
