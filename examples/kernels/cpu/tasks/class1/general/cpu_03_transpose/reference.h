// Expert: 32x32 tiles that stay in cache, tile rows spread over the cores.
static void tile(const float* __restrict in, float* __restrict out, int rows, int cols,
                 int r0, int c0) {
  const int r1 = r0 + 32 < rows ? r0 + 32 : rows;
  const int c1 = c0 + 32 < cols ? c0 + 32 : cols;
  for (int c = c0; c < c1; ++c) {
    float* dst = out + (long)c * rows;
#pragma omp simd
    for (int r = r0; r < r1; ++r) dst[r] = in[(long)r * cols + c];
  }
}

void transpose(const float* in, float* out, int rows, int cols) {
  const int tiles_r = (rows + 31) / 32, tiles_c = (cols + 31) / 32;
#pragma omp parallel for schedule(static) if (tiles_r * tiles_c > 16)
  for (int tc = 0; tc < tiles_c; ++tc)
    for (int tr = 0; tr < tiles_r; ++tr) tile(in, out, rows, cols, tr * 32, tc * 32);
}
