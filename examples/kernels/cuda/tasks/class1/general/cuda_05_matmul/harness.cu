// Harness of cuda_05_matmul: c = a @ b. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench_cuda.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench_cuda.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][3] = {{256, 256, 256}, {500, 300, 700}, {1024, 1024, 1024}};
  for (auto& s : shapes) {
    const int m = s[0], n = s[1], k = s[2];
    kh::Buf<float> a(size_t(m) * k), b(size_t(k) * n), a2(size_t(m) * k), b2(size_t(k) * n);
    kh::Outputs out(size_t(m) * n);
    std::vector<float> ha, hb;
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(a.p, a.n, seed, -1.f, 1.f);
      kh::fill_uniform(b.p, b.n, seed ^ 1, -1.f, 1.f);
      a2.copy_from(a), b2.copy_from(b);
      out.poison_all();
    };
    auto ref = [&] { matmul_ref(a.p, b.p, out.ref.p, m, n, k); };
    auto sol = [&] { matmul(a2.p, b2.p, out.sol.p, m, n, k); };
    auto check = [&](bool first) {
      if (first) {  // the reference against a naive product on 4096 sampled entries
        a.to_host(ha), b.to_host(hb);
        out.check_ref = {0, size_t(m) * n - 1};
        uint64_t r = 12345;
        for (int q = 0; q < 4096; ++q) out.check_ref.push_back((r = kh::mix(r)) % (size_t(m) * n));
        for (size_t idx : out.check_ref) {
          const size_t i = idx / n, j = idx % n;
          double acc = 0;
          for (int p = 0; p < k; ++p) acc += double(ha[i * k + p]) * hb[size_t(p) * n + j];
          out.want[idx] = float(acc);
        }
      }
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("%dx%dx%d", m, n, k), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
