// Harness of cpu_05_matmul: c = a @ b. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][3] = {{64, 64, 64}, {160, 144, 200}, {256, 256, 256}};
  for (auto& shape : shapes) {
    const int m = shape[0], n = shape[1], k = shape[2];
    std::vector<float> a[2], b[2];
    kh::Outputs<float> out(size_t(m) * n);
    auto fill = [&](uint64_t seed) {
      a[0].resize(size_t(m) * k), b[0].resize(size_t(k) * n);
      kh::fill_uniform(a[0].data(), a[0].size(), seed, -1.f, 1.f);
      kh::fill_uniform(b[0].data(), b[0].size(), seed ^ 1, -1.f, 1.f);
      a[1] = a[0], b[1] = b[0];
      out.poison_all();
    };
    auto call = [&](bool reference, int s) {
      (reference ? matmul_ref : matmul)(a[s].data(), b[s].data(), out[s], m, n, k);
    };
    auto naive = [&] {
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double acc = 0;
          for (int p = 0; p < k; ++p) acc += double(a[0][size_t(i) * k + p]) * b[0][size_t(p) * n + j];
          out.want[size_t(i) * n + j] = float(acc);
        }
    };
    if (!bench.size(kh::fmt("%dx%dx%d", m, n, k), fill, call, naive, out)) break;
  }
  return bench.finish();
}
