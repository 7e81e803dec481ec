// Harness of cpu_07_histogram: 256-bin histogram. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

static void naive(const int32_t* x, int n, int32_t* bins) {
  for (int b = 0; b < 256; ++b) bins[b] = 0;
  for (int i = 0; i < n; ++i) bins[x[i]]++;
}

// Half the values are 0 (a background), the rest uniform in [0, 255].
static void fill_values(int32_t* x, int n, uint64_t seed) {
  kh::fill_int(x, n, seed, 0, 511);
  for (int i = 0; i < n; ++i) x[i] = x[i] > 255 ? 0 : x[i];
}

int main() {
  kh::Bench bench("KH_RESULTS");
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    std::vector<int32_t> x(n), x2(n);
    kh::Outputs<int32_t> out(256);
    auto fill = [&](uint64_t seed) {
      fill_values(x.data(), n, seed);
      x2 = x;
      out.poison_all();
    };
    auto ref = [&] { histogram_ref(x.data(), n, out.ref.data()); };
    auto sol = [&] { histogram(x2.data(), n, out.sol.data()); };
    auto check = [&](bool first) {
      if (first) naive(x.data(), n, out.want.data());
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("n=%d", n), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
