// Harness of cpu_00_vector_add: c = a + b. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

static void naive(const float* a, const float* b, float* c, int n) {
  for (int i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    std::vector<float> a(n), b(n), a2(n), b2(n);
    kh::Outputs<float> out(n);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(a.data(), n, seed, -1.f, 1.f);
      kh::fill_uniform(b.data(), n, seed ^ 1, -1.f, 1.f);
      a2 = a, b2 = b;  // the solution reads its own copy
      out.poison_all();
    };
    auto ref = [&] { vector_add_ref(a.data(), b.data(), out.ref.data(), n); };
    auto sol = [&] { vector_add(a2.data(), b2.data(), out.sol.data(), n); };
    auto check = [&](bool first) {
      if (first) naive(a.data(), b.data(), out.want.data(), n);
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
