// Harness of cpu_03_transpose: out = in transposed. Verdicts and timings go to the results
// channel named by KH_RESULTS (kh_bench.h: the harness, the reference and the solution
// each run in a process of their own); stdout is for people.
#include "api.h"
#include "kh_bench.h"

KH_ENTRY_POINT(transpose)

int main(int argc, char** argv) {
  kh::Bench bench(argc, argv);
  const int shapes[][2] = {{256, 300}, {1024, 1024}, {1536, 1000}};
  for (auto& shape : shapes) {
    const int rows = shape[0], cols = shape[1];
    const size_t n = size_t(rows) * cols;
    kh::Size size(bench, kh::fmt("%dx%d", rows, cols));
    auto in = size.input<float>(n);
    auto out = size.output<float>(n);
    auto fill = [&](uint64_t seed) { kh::fill_uniform(in(), n, seed, -1.f, 1.f); };
    auto call = [&](bool reference) {
      (reference ? transpose_ref : transpose)(in(), out(), rows, cols);
    };
    auto naive = [&](float* want) {
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) want[size_t(c) * rows + r] = in()[size_t(r) * cols + c];
    };
    if (!size.run(out, fill, call, naive)) break;
  }
  return bench.finish();
}
