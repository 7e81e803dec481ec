// Harness of cpu_05_matmul: c = a @ b. Verdicts and timings go to the results channel
// named by KH_RESULTS (kh_bench.h: the harness, the reference and the solution each run in
// a process of their own); stdout is for people.
#include "api.h"
#include "kh_bench.h"

KH_ENTRY_POINT(matmul)

int main(int argc, char** argv) {
  kh::Bench bench(argc, argv);
  const int shapes[][3] = {{64, 64, 64}, {160, 144, 200}, {256, 256, 256}};
  for (auto& shape : shapes) {
    const int m = shape[0], n = shape[1], k = shape[2];
    kh::Size size(bench, kh::fmt("%dx%dx%d", m, n, k));
    auto a = size.input<float>(size_t(m) * k), b = size.input<float>(size_t(k) * n);
    auto c = size.output<float>(size_t(m) * n);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(a(), a.count, seed, -1.f, 1.f);
      kh::fill_uniform(b(), b.count, seed ^ 1, -1.f, 1.f);
    };
    auto call = [&](bool reference) { (reference ? matmul_ref : matmul)(a(), b(), c(), m, n, k); };
    auto naive = [&](float* want) {
      for (int i = 0; i < m; ++i)
        for (int j = 0; j < n; ++j) {
          double acc = 0;
          for (int p = 0; p < k; ++p) acc += double(a()[size_t(i) * k + p]) * b()[size_t(p) * n + j];
          want[size_t(i) * n + j] = float(acc);
        }
    };
    if (!size.run(c, fill, call, naive)) break;
  }
  return bench.finish();
}
