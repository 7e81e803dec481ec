// Harness of cpu_02_prefix_scan: inclusive prefix sum. Verdicts and timings go to the
// results channel named by KH_RESULTS (kh_bench.h: the harness, the reference and the
// solution each run in a process of their own); stdout is for people.
#include "api.h"
#include "kh_bench.h"

KH_ENTRY_POINT(inclusive_scan)

int main(int argc, char** argv) {
  kh::Bench bench(argc, argv);
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    kh::Size size(bench, kh::fmt("n=%d", n));
    auto x = size.input<float>(n);
    auto y = size.output<float>(n);
    auto fill = [&](uint64_t seed) { kh::fill_uniform(x(), n, seed, 0.f, 1.f); };
    auto call = [&](bool reference) {
      (reference ? inclusive_scan_ref : inclusive_scan)(x(), y(), n);
    };
    auto naive = [&](float* want) {
      double sum = 0;
      for (int i = 0; i < n; ++i) want[i] = float(sum += x()[i]);
    };
    if (!size.run(y, fill, call, naive)) break;
  }
  return bench.finish();
}
