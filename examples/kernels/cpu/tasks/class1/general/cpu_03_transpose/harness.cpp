// Harness of cpu_03_transpose: out = transpose(in). Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench.h"

static void naive(const float* in, float* out, int rows, int cols) {
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) out[(long)c * rows + r] = in[(long)r * cols + c];
}

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][2] = {{256, 300}, {1024, 1024}, {1536, 1000}};
  for (auto& s : shapes) {
    const int rows = s[0], cols = s[1];
    const size_t n = size_t(rows) * cols;
    std::vector<float> in(n), in2(n);
    kh::Outputs<float> out(n);
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(in.data(), n, seed, -1.f, 1.f);
      in2 = in;
      out.poison_all();
    };
    auto ref = [&] { transpose_ref(in.data(), out.ref.data(), rows, cols); };
    auto sol = [&] { transpose(in2.data(), out.sol.data(), rows, cols); };
    auto check = [&](bool first) {
      if (first) naive(in.data(), out.want.data(), rows, cols);
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("%dx%d", rows, cols), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
