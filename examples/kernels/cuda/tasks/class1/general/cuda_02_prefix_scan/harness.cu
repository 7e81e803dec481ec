// Harness of cuda_02_prefix_scan: inclusive prefix sum. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench_cuda.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench_cuda.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 20, 4000037, 1 << 24}) {
    kh::Buf<float> x(n), x2(n);
    kh::Outputs out(n);
    std::vector<float> hx;
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(x.p, n, seed, 0.f, 1.f);
      x2.copy_from(x);
      out.poison_all();
    };
    auto ref = [&] { inclusive_scan_ref(x.p, out.ref.p, n); };
    auto sol = [&] { inclusive_scan(x2.p, out.sol.p, n); };
    auto check = [&](bool first) {
      if (first) {
        x.to_host(hx);
        double s = 0;
        for (int i = 0; i < n; ++i) out.want[i] = float(s += hx[i]);
      }
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
