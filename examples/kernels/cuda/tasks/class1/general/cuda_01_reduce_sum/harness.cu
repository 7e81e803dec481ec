// Harness of cuda_01_reduce_sum: out[0] = sum of x. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench_cuda.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench_cuda.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 20, 9999991, 1 << 24}) {
    kh::Buf<float> x(n), x2(n);
    kh::Outputs out(1);
    std::vector<float> hx;
    auto fill = [&](uint64_t seed) {
      // Zero-mean values: the sum stays small, so leaving out elements (a cheap way to
      // look fast) moves it far past the tolerance; all-positive inputs hid one drop.
      kh::fill_uniform(x.p, n, seed, -1.f, 1.f);
      x2.copy_from(x);
      out.poison_all();
    };
    auto ref = [&] { reduce_sum_ref(x.p, n, out.ref.p); };
    auto sol = [&] { reduce_sum(x2.p, n, out.sol.p); };
    auto check = [&](bool first) {
      if (first) {
        x.to_host(hx);
        double s = 0;
        for (int i = 0; i < n; ++i) s += hx[i];
        out.want[0] = float(s);
      }
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
