// Harness of cpu_04_softmax: row-wise softmax. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

#include <cmath>

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][2] = {{128, 1000}, {256, 1024}, {1024, 777}};
  for (auto& shape : shapes) {
    const int rows = shape[0], cols = shape[1];
    const size_t n = size_t(rows) * cols;
    std::vector<float> x[2];
    kh::Outputs<float> out(n);
    auto fill = [&](uint64_t seed) {
      x[0].resize(n);
      kh::fill_uniform(x[0].data(), n, seed, -8.f, 8.f);
      x[1] = x[0];
      out.poison_all();
    };
    auto call = [&](bool reference, int s) {
      (reference ? softmax_rows_ref : softmax_rows)(x[s].data(), out[s], rows, cols);
    };
    auto naive = [&] {
      for (int r = 0; r < rows; ++r) {
        const float* in = x[0].data() + size_t(r) * cols;
        double m = in[0], sum = 0;
        for (int c = 1; c < cols; ++c) m = std::max<double>(m, in[c]);
        for (int c = 0; c < cols; ++c) sum += std::exp(in[c] - m);
        for (int c = 0; c < cols; ++c) out.want[size_t(r) * cols + c] = float(std::exp(in[c] - m) / sum);
      }
    };
    if (!bench.size(kh::fmt("%dx%d", rows, cols), fill, call, naive, out)) break;
  }
  return bench.finish();
}
