// Harness of cpu_04_softmax: row-wise softmax. Verdicts and timings go to the results
// channel named by KH_RESULTS (kh_bench.h: the harness, the reference and the solution
// each run in a process of their own); stdout is for people.
#include "api.h"
#include "kh_bench.h"

#include <cmath>
KH_ENTRY_POINT(softmax_rows)

int main(int argc, char** argv) {
  kh::Bench bench(argc, argv);
  const int shapes[][2] = {{128, 1000}, {256, 1024}, {1024, 777}};
  for (auto& shape : shapes) {
    const int rows = shape[0], cols = shape[1];
    const size_t n = size_t(rows) * cols;
    kh::Size size(bench, kh::fmt("%dx%d", rows, cols));
    auto x = size.input<float>(n);
    auto y = size.output<float>(n);
    auto fill = [&](uint64_t seed) { kh::fill_uniform(x(), n, seed, -8.f, 8.f); };
    auto call = [&](bool reference) {
      (reference ? softmax_rows_ref : softmax_rows)(x(), y(), rows, cols);
    };
    auto naive = [&](float* want) {
      for (int r = 0; r < rows; ++r) {
        const float* in = x() + size_t(r) * cols;
        double m = in[0], sum = 0;
        for (int c = 1; c < cols; ++c) m = std::max<double>(m, in[c]);
        for (int c = 0; c < cols; ++c) sum += std::exp(in[c] - m);
        for (int c = 0; c < cols; ++c) want[size_t(r) * cols + c] = float(std::exp(in[c] - m) / sum);
      }
    };
    if (!size.run(y, fill, call, naive)) break;
  }
  return bench.finish();
}
