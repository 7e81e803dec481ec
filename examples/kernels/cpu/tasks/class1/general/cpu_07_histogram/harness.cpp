// Harness of cpu_07_histogram: 256-bin histogram. Verdicts and timings go to the results
// channel named by KH_RESULTS (kh_bench.h: the harness, the reference and the solution
// each run in a process of their own); stdout is for people.
#include "api.h"
#include "kh_bench.h"

KH_ENTRY_POINT(histogram)

int main(int argc, char** argv) {
  kh::Bench bench(argc, argv);
  for (int n : {1 << 16, 1000003, 1 << 22}) {
    kh::Size size(bench, kh::fmt("n=%d", n));
    auto x = size.input<int32_t>(n);
    auto bins = size.output<int32_t>(256);
    auto fill = [&](uint64_t seed) {  // half the values 0 (a background), the rest 0..255
      kh::fill_int(x(), n, seed, 0, 511);
      for (int i = 0; i < n; ++i) x()[i] = x()[i] > 255 ? 0 : x()[i];
    };
    auto call = [&](bool reference) { (reference ? histogram_ref : histogram)(x(), n, bins()); };
    auto naive = [&](int32_t* want) {
      for (int b = 0; b < 256; ++b) want[b] = 0;
      for (int i = 0; i < n; ++i) want[x()[i]]++;
    };
    if (!size.run(bins, fill, call, naive)) break;
  }
  return bench.finish();
}
