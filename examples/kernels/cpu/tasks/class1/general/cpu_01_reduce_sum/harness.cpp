// Harness of cpu_01_reduce_sum: the sum of x. Verdicts and timings go to the results
// channel named by KH_RESULTS (kh_bench.h: the harness, the reference and the solution
// each run in a process of their own); stdout is for people.
#include "api.h"
#include "kh_bench.h"

KH_ENTRY_POINT(reduce_sum)

int main(int argc, char** argv) {
  kh::Bench bench(argc, argv);
  for (int n : {1 << 16, 999983, 1 << 22}) {
    kh::Size size(bench, kh::fmt("n=%d", n));
    auto x = size.input<float>(n);
    auto out = size.output<float>(1);
    auto fill = [&](uint64_t seed) { kh::fill_uniform(x(), n, seed, 0.f, 1.f); };
    auto call = [&](bool reference) { (reference ? reduce_sum_ref : reduce_sum)(x(), n, out()); };
    auto naive = [&](float* want) {
      double sum = 0;
      for (int i = 0; i < n; ++i) sum += x()[i];
      want[0] = float(sum);
    };
    if (!size.run(out, fill, call, naive)) break;
  }
  return bench.finish();
}
