// Harness of cpu_04_softmax: row-wise softmax. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

#include <cmath>

static void naive(const float* x, float* y, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    const float* in = x + long(r) * cols;
    double m = in[0], sum = 0;
    for (int c = 1; c < cols; ++c) m = std::max<double>(m, in[c]);
    for (int c = 0; c < cols; ++c) sum += std::exp(in[c] - m);
    for (int c = 0; c < cols; ++c) y[long(r) * cols + c] = float(std::exp(in[c] - m) / sum);
  }
}

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][2] = {{128, 1000}, {256, 1024}, {1024, 777}};
  for (auto& s : shapes) {
    const int rows = s[0], cols = s[1];
    const size_t n = size_t(rows) * cols;
    std::vector<float> x(n), x2(n);
    kh::Outputs<float> out(n);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(x.data(), n, seed, -8.f, 8.f);
      x2 = x;
      out.poison_all();
    };
    auto ref = [&] { softmax_rows_ref(x.data(), out.ref.data(), rows, cols); };
    auto sol = [&] { softmax_rows(x2.data(), out.sol.data(), rows, cols); };
    auto check = [&](bool first) {
      if (first) naive(x.data(), out.want.data(), rows, cols);
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("%dx%d", rows, cols), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
