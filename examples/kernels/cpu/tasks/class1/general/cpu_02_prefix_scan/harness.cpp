// Harness of cpu_02_prefix_scan: inclusive prefix sum. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

static void naive(const float* x, float* y, int n) {
  double s = 0;
  for (int i = 0; i < n; ++i) y[i] = float(s += x[i]);
}

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    std::vector<float> x(n), x2(n);
    kh::Outputs<float> out(n);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(x.data(), n, seed, 0.f, 1.f);
      x2 = x;
      out.poison_all();
    };
    auto ref = [&] { inclusive_scan_ref(x.data(), out.ref.data(), n); };
    auto sol = [&] { inclusive_scan(x2.data(), out.sol.data(), n); };
    auto check = [&](bool first) {
      if (first) naive(x.data(), out.want.data(), n);
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
