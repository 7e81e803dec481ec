// Harness of cuda_03_transpose: out = transpose(in). Verdicts and timings go to the results channel named by
// KH_RESULTS (kh_bench_cuda.h); stdout is for people.
#include <vector>

#include "api.h"
#include "kh_bench_cuda.h"

int main() {
  kh::Bench bench("KH_RESULTS");
  const int shapes[][2] = {{1024, 1024}, {3000, 2001}, {4096, 4096}};
  for (auto& s : shapes) {
    const int rows = s[0], cols = s[1];
    const size_t n = size_t(rows) * cols;
    kh::Buf<float> in(n), in2(n);
    kh::Outputs out(n);
    std::vector<float> h;
    auto fill = [&](uint64_t seed) {
      kh::fill_uniform(in.p, n, seed, -1.f, 1.f);
      in2.copy_from(in);
      out.poison_all();
    };
    auto ref = [&] { transpose_ref(in.p, out.ref.p, rows, cols); };
    auto sol = [&] { transpose(in2.p, out.sol.p, rows, cols); };
    auto check = [&](bool first) {
      if (first) {
        in.to_host(h);
        for (int r = 0; r < rows; ++r)
          for (int c = 0; c < cols; ++c) out.want[size_t(c) * rows + r] = h[size_t(r) * cols + c];
      }
      return out.judge(first, bench.atol(), bench.rtol());
    };
    if (!bench.size(kh::fmt("%dx%d", rows, cols), fill, ref, sol, check)) break;
  }
  return bench.finish();
}
