// Harness of cpu_06_conv1d: y = x (valid) correlated with w. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

static void naive(const float* x, int n, const float* w, int taps, float* y) {
  for (int i = 0; i + taps <= n; ++i) {
    double acc = 0;
    for (int t = 0; t < taps; ++t) acc += double(x[i + t]) * w[t];
    y[i] = float(acc);
  }
}

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][2] = {{10007, 7}, {300007, 31}, {1 << 20, 15}};
  for (auto& s : shapes) {
    const int n = s[0], taps = s[1], outputs = n - taps + 1;
    std::vector<float> x(n), w(taps), x2, w2;
    kh::Outputs<float> out(outputs);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(x.data(), n, seed, -1.f, 1.f);
      kh::fill_uniform(w.data(), taps, seed ^ 1, -1.f, 1.f);
      x2 = x, w2 = w;
      out.poison_all();
    };
    auto ref = [&] { conv1d_ref(x.data(), n, w.data(), taps, out.ref.data()); };
    auto sol = [&] { conv1d(x2.data(), n, w2.data(), taps, out.sol.data()); };
    auto check = [&](bool first) {
      if (first) naive(x.data(), n, w.data(), taps, out.want.data());
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("n=%d,taps=%d", n, taps), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
