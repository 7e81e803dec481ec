#include <cuda_runtime.h>

// Expert: reduce, then scan. Tiles of 4096 values (256 threads x 16): a first pass sums
// each tile, one block scans the tile sums, a last pass scans each tile again (coalesced
// loads staged in padded shared memory, 16 values per thread in registers, warp shuffles
// across threads) and adds its tile's offset.
namespace {

constexpr int kThreads = 256, kItems = 16, kTile = kThreads * kItems;
__device__ float tile_sums[1 << 14];  // n up to 2^26

__device__ __forceinline__ float warp_inclusive(float v) {
  const int lane = threadIdx.x & 31;
  for (int o = 1; o < 32; o <<= 1) {
    const float u = __shfl_up_sync(0xffffffffu, v, o);
    if (lane >= o) v += u;
  }
  return v;
}

// The exclusive prefix of v over the block's threads; the block's total in *total.
__device__ float block_exclusive(float v, float* total) {
  __shared__ float warp_totals[kThreads / 32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const float inclusive = warp_inclusive(v);
  if (lane == 31) warp_totals[warp] = inclusive;
  __syncthreads();
  if (warp == 0) {
    float t = lane < kThreads / 32 ? warp_totals[lane] : 0.f;
    t = warp_inclusive(t);
    if (lane < kThreads / 32) warp_totals[lane] = t;
  }
  __syncthreads();
  const float before = warp > 0 ? warp_totals[warp - 1] : 0.f;
  *total = warp_totals[kThreads / 32 - 1];
  __syncthreads();  // warp_totals is reused by the next call
  return before + inclusive - v;
}

__device__ __forceinline__ int pad(int p) { return p + p / 32; }

__global__ void __launch_bounds__(kThreads) tile_totals(const float* __restrict__ x, int n) {
  const long base = (long)blockIdx.x * kTile;
  float s = 0.f;
  for (int k = 0; k < kItems; ++k) {
    const long i = base + k * kThreads + threadIdx.x;
    if (i < n) s += x[i];
  }
  float total;
  block_exclusive(s, &total);
  if (threadIdx.x == 0) tile_sums[blockIdx.x] = total;
}

__global__ void __launch_bounds__(kThreads) scan_totals(int tiles) {
  float carry = 0.f;
  for (int c = 0; c < tiles; c += kThreads) {
    const int i = c + threadIdx.x;
    const float v = i < tiles ? tile_sums[i] : 0.f;
    float total;
    const float before = block_exclusive(v, &total);
    if (i < tiles) tile_sums[i] = carry + before;
    carry += total;
  }
}

__global__ void __launch_bounds__(kThreads) scan_tiles(const float* __restrict__ x,
                                                       float* __restrict__ y, int n) {
  __shared__ float tile[kTile + kTile / 32];
  const long base = (long)blockIdx.x * kTile;
  for (int k = 0; k < kItems; ++k) {
    const int p = k * kThreads + threadIdx.x;
    tile[pad(p)] = base + p < n ? x[base + p] : 0.f;
  }
  __syncthreads();
  float v[kItems];
  float run = 0.f;
  for (int k = 0; k < kItems; ++k) {
    run += tile[pad(threadIdx.x * kItems + k)];
    v[k] = run;
  }
  float total;
  const float offset = block_exclusive(run, &total) + tile_sums[blockIdx.x];
  for (int k = 0; k < kItems; ++k) tile[pad(threadIdx.x * kItems + k)] = v[k] + offset;
  __syncthreads();
  for (int k = 0; k < kItems; ++k) {
    const int p = k * kThreads + threadIdx.x;
    if (base + p < n) y[base + p] = tile[pad(p)];
  }
}

}  // namespace

void inclusive_scan(const float* x, float* y, int n) {
  const int tiles = (n + kTile - 1) / kTile;
  tile_totals<<<tiles, kThreads>>>(x, n);
  scan_totals<<<1, kThreads>>>(tiles);
  scan_tiles<<<tiles, kThreads>>>(x, y, n);
}
