// Harness of cpu_05_matmul: c = a @ b. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

static void naive(const float* a, const float* b, float* c, int m, int n, int k) {
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      double acc = 0;
      for (int p = 0; p < k; ++p) acc += double(a[long(i) * k + p]) * b[long(p) * n + j];
      c[long(i) * n + j] = float(acc);
    }
}

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][3] = {{64, 64, 64}, {160, 144, 200}, {256, 256, 256}};
  for (auto& s : shapes) {
    const int m = s[0], n = s[1], k = s[2];
    std::vector<float> a(size_t(m) * k), b(size_t(k) * n), a2, b2;
    kh::Outputs<float> out(size_t(m) * n);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(a.data(), a.size(), seed, -1.f, 1.f);
      kh::fill_uniform(b.data(), b.size(), seed ^ 1, -1.f, 1.f);
      a2 = a, b2 = b;
      out.poison_all();
    };
    auto ref = [&] { matmul_ref(a.data(), b.data(), out.ref.data(), m, n, k); };
    auto sol = [&] { matmul(a2.data(), b2.data(), out.sol.data(), m, n, k); };
    auto check = [&](bool first) {
      if (first) naive(a.data(), b.data(), out.want.data(), m, n, k);
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("%dx%dx%d", m, n, k), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
