// Harness of cpu_01_reduce_sum: out[0] = sum of x. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

static void naive(const float* x, int n, float* out) {
  double s = 0;
  for (int i = 0; i < n; ++i) s += x[i];
  out[0] = float(s);
}

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 16, 999983, 1 << 22}) {
    std::vector<float> x(n), x2(n);
    kh::Outputs<float> out(1);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(x.data(), n, seed, 0.f, 1.f);
      x2 = x;
      out.poison_all();
    };
    auto ref = [&] { reduce_sum_ref(x.data(), n, out.ref.data()); };
    auto sol = [&] { reduce_sum(x2.data(), n, out.sol.data()); };
    auto check = [&](bool first) {
      if (first) naive(x.data(), n, out.want.data());
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
