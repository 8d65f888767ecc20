// A TMA load pipeline with producer and consumer warps. Warp 0's lane 0 loads two 16-byte tiles,
// one after the other, through one shared-memory stage with cp.async.bulk, each completing on
// the stage's "full" mbarrier; warp 1's lane 0 waits on "full" with the tile's phase parity,
// copies the tile's first word out, and frees the stage on the "empty" mbarrier. Before
// refilling the stage the producer waits on "empty" and orders the consumer's generic reads
// before its async-proxy write with fence.proxy.async.
// -DBUG: the consumer waits for the wrong phase (parity 1 first: a fresh barrier passes it at
// once), so it reads the stage while the load may still write it.
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

__global__ void tma_pipeline(const int* __restrict__ src, int* __restrict__ out) {
  __shared__ alignas(128) int tile[4];
  __shared__ alignas(8) uint64_t full, empty;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::mbarrier_init(&empty, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  for (int k = 0; k < 2; ++k) {
    const uint32_t parity = k & 1;
    if (warp == 0 && lane == 0) {
      if (k > 0) {
        while (!ptx::mbarrier_try_wait_parity(&empty, parity ^ 1)) {}
        ptx::fence_proxy_async(ptx::space_shared);
      }
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full, 16);
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tile, src + 4 * k, 16, &full);
    } else if (warp == 1 && lane == 0) {
#ifdef BUG
      while (!ptx::mbarrier_try_wait_parity(&full, parity ^ 1)) {}
#else
      while (!ptx::mbarrier_try_wait_parity(&full, parity)) {}
#endif
      out[k] = tile[0];
      ptx::mbarrier_arrive(&empty);
    }
  }
}
