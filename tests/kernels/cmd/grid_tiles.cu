// A grid of independent CTAs (issue 40: the grid must not multiply the search): CTA b runs a
// two-stage TMA pipeline over its own three 16-byte tiles of `src` (warp 0's lane 0 loads each
// tile with cp.async.bulk onto the stage's "full" mbarrier; warp 1's lane 0 waits on it, copies
// the tile's first word to its own word of `out`, and frees the stage on "empty"). The CTAs read
// disjoint words of src and write disjoint words of out, so ptxmm decides them one at a time
// (`decide::groups`, docs/performance.md "Independent groups").
// -DBUG: the consumer waits for the wrong phase (parity 1 first: a fresh barrier passes it at
// once), so it reads the stage while the load may still write it.
// Built as tests/kernels/build.sh builds its kernels:
//   nvcc -arch=sm_90a -ptx -std=c++17 -O3 -lineinfo [-DBUG] grid_tiles.cu -o grid_tiles{,-bug}.ptx
//   (then the `.file` path made relative)
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

constexpr int kStages = 2, kTiles = 3;

__global__ void grid_tiles(const int* __restrict__ src, int* __restrict__ out) {
  __shared__ alignas(128) int tile[kStages][4];
  __shared__ alignas(8) uint64_t full[kStages], empty[kStages];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 1);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  const int* mine = src + 4 * kTiles * blockIdx.x;
#pragma unroll 1
  for (int k = 0; k < kTiles; ++k) {
    const int s = k % kStages;
    const uint32_t parity = (k / kStages) & 1;
    if (warp == 0 && lane == 0) {
      if (k >= kStages) {
        while (!ptx::mbarrier_try_wait_parity(&empty[s], parity ^ 1)) {}
        ptx::fence_proxy_async(ptx::space_shared);
      }
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s], 16);
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tile[s], mine + 4 * k, 16, &full[s]);
    } else if (warp == 1 && lane == 0) {
#ifdef BUG
      while (!ptx::mbarrier_try_wait_parity(&full[s], parity ^ 1)) {}
#else
      while (!ptx::mbarrier_try_wait_parity(&full[s], parity)) {}
#endif
      out[kTiles * blockIdx.x + k] = tile[s][0];
      ptx::mbarrier_arrive(&empty[s]);
    }
  }
}
