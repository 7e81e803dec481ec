// Harness of cuda_04_softmax: row-wise softmax. Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench_cuda.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench_cuda.h"

#include <cmath>

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][2] = {{1024, 1024}, {4096, 1000}, {8192, 2048}};
  for (auto& s : shapes) {
    const int rows = s[0], cols = s[1];
    const size_t n = size_t(rows) * cols;
    kh::Buf<float> x(n), x2(n);
    kh::Outputs out(n);
    std::vector<float> h;
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(x.p, n, seed, -8.f, 8.f);
      x2.copy_from(x);
      out.poison_all();
    };
    auto ref = [&] { softmax_rows_ref(x.p, out.ref.p, rows, cols); };
    auto sol = [&] { softmax_rows(x2.p, out.sol.p, rows, cols); };
    auto check = [&](bool first) {
      if (first) {
        x.to_host(h);
        for (int r = 0; r < rows; ++r) {
          const float* in = h.data() + size_t(r) * cols;
          double m = in[0], sum = 0;
          for (int c = 1; c < cols; ++c) m = std::max<double>(m, in[c]);
          for (int c = 0; c < cols; ++c) sum += std::exp(in[c] - m);
          for (int c = 0; c < cols; ++c)
            out.want[size_t(r) * cols + c] = float(std::exp(in[c] - m) / sum);
        }
      }
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("%dx%d", rows, cols), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
