// Harness of cpu_03_transpose: out = transpose(in). Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][2] = {{256, 300}, {1024, 1024}, {1536, 1000}};
  for (auto& shape : shapes) {
    const int rows = shape[0], cols = shape[1];
    const size_t n = size_t(rows) * cols;
    std::vector<float> in[2];
    kh::Outputs<float> out(n);
    auto fill = [&](uint64_t seed) {
      in[0].resize(n);
      kh::fill_uniform(in[0].data(), n, seed, -1.f, 1.f);
      in[1] = in[0];
      out.poison_all();
    };
    auto call = [&](bool reference, int s) {
      (reference ? transpose_ref : transpose)(in[s].data(), out[s], rows, cols);
    };
    auto naive = [&] {
      for (int r = 0; r < rows; ++r)
        for (int c = 0; c < cols; ++c) out.want[size_t(c) * rows + r] = in[0][size_t(r) * cols + c];
    };
    if (!bench.size(kh::fmt("%dx%d", rows, cols), fill, call, naive, out)) break;
  }
  return bench.finish();
}
