// Per-lane arrival counts on one phase (issue 39): the "ready" mbarrier counts 32 arrivals, one
// per lane of warp 1. Each lane writes its word of a shared tile and arrives (release); warp 0's
// lane 0 waits for the phase, orders the lanes' generic writes before the async proxy with
// fence.proxy.async, and stores the tile to global memory with cp.async.bulk.
// -DBUG: lane 31 does not arrive, so the phase never completes and lane 0 waits forever.
// The 32 arrivals are unordered among themselves and nothing tells them apart, so ptxmm's graph
// of the mbarrier's states places them in one order (docs/performance.md, "Interchangeable
// arrivals in one order"): every lane decides in a fraction of a second.
// Built as tests/kernels/build.sh builds its kernels:
//   nvcc -arch=sm_90a -ptx -std=c++17 -O3 -lineinfo [-DBUG] lane_arrivals.cu -o lane_arrivals{,-bug}.ptx
//   (then the `.file` path made relative)
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

__global__ void lane_arrivals(int* __restrict__ out) {
  __shared__ alignas(128) int tile[32];
  __shared__ alignas(8) uint64_t ready;
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&ready, 32);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  if (warp == 1) {
    tile[lane] = 100 + lane;
#ifdef BUG
    if (lane != 31)
#endif
      ptx::mbarrier_arrive(&ready);
  } else if (lane == 0) {
    while (!ptx::mbarrier_try_wait_parity(&ready, 0)) {}
    ptx::fence_proxy_async(ptx::space_shared);
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out, tile, 128);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group_read(ptx::n32_t<0>{});
  }
}
