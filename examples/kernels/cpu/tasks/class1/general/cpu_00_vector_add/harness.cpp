// Harness of cpu_00_vector_add: c = a + b. Verdicts and timings go to the results channel
// named by KH_RESULTS (kh_bench.h: the harness, the reference and the solution each run in
// a process of their own); stdout is for people.
#include "api.h"
#include "kh_bench.h"

KH_ENTRY_POINT(vector_add)

int main(int argc, char** argv) {
  kh::Bench bench(argc, argv);
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    kh::Size size(bench, kh::fmt("n=%d", n));
    auto a = size.input<float>(n), b = size.input<float>(n);
    auto c = size.output<float>(n);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(a(), n, seed, -1.f, 1.f);
      kh::fill_uniform(b(), n, seed ^ 1, -1.f, 1.f);
    };
    auto call = [&](bool reference) {
      (reference ? vector_add_ref : vector_add)(a(), b(), c(), n);
    };
    auto naive = [&](float* want) {
      for (int i = 0; i < n; ++i) want[i] = a()[i] + b()[i];
    };
    if (!size.run(c, fill, call, naive)) break;
  }
  return bench.finish();
}
