// Harness of cuda_00_vector_add: c = a + b. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench_cuda.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench_cuda.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 20, 4000037, 1 << 24}) {
    kh::Buf<float> a(n), b(n), a2(n), b2(n);
    kh::Outputs out(n);
    std::vector<float> ha, hb;
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(a.p, n, seed, -1.f, 1.f);
      kh::fill_uniform(b.p, n, seed ^ 1, -1.f, 1.f);
      a2.copy_from(a), b2.copy_from(b);  // the solution reads its own copy
      out.poison_all();
    };
    auto ref = [&] { vector_add_ref(a.p, b.p, out.ref.p, n); };
    auto sol = [&] { vector_add(a2.p, b2.p, out.sol.p, n); };
    auto check = [&](bool first) {
      if (first) {
        a.to_host(ha), b.to_host(hb);
        for (int i = 0; i < n; ++i) out.want[i] = ha[i] + hb[i];
      }
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
