// Harness of cpu_06_conv1d: valid 1-D convolution. Verdicts and timings go to the results
// channel named by KH_RESULTS (kh_bench.h: the harness, the reference and the solution
// each run in a process of their own); stdout is for people.
#include "api.h"
#include "kh_bench.h"

KH_ENTRY_POINT(conv1d)

int main(int argc, char** argv) {
  kh::Bench bench(argc, argv);
  const int shapes[][2] = {{10007, 7}, {300007, 31}, {1 << 20, 15}};
  for (auto& shape : shapes) {
    const int n = shape[0], taps = shape[1], outputs = n - taps + 1;
    kh::Size size(bench, kh::fmt("n=%d,taps=%d", n, taps));
    auto x = size.input<float>(n), w = size.input<float>(taps);
    auto y = size.output<float>(outputs);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(x(), n, seed, -1.f, 1.f);
      kh::fill_uniform(w(), taps, seed ^ 1, -1.f, 1.f);
    };
    auto call = [&](bool reference) { (reference ? conv1d_ref : conv1d)(x(), n, w(), taps, y()); };
    auto naive = [&](float* want) {
      for (int i = 0; i < outputs; ++i) {
        double acc = 0;
        for (int t = 0; t < taps; ++t) acc += double(x()[i + t]) * w()[t];
        want[i] = float(acc);
      }
    };
    if (!size.run(y, fill, call, naive)) break;
  }
  return bench.finish();
}
