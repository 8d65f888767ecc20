// A 2-stage TMA ring whose stages are freed by every consumer lane (issue 39): the "empty"
// mbarriers count 32 arrivals, one per lane of the consumer warp, as CUTLASS's consumer release
// and ThunderKittens' arrive count them. Warp 0's lane 0 fills stage k % 2 (cp.async.bulk into
// 32 words, completing on full[k % 2]); the 32 lanes of warp 1 wait on full, each reads its
// word of the stage, and each arrives on empty[k % 2]. Before refilling a stage the producer
// waits on its empty barrier and orders the consumers' reads before the async-proxy write.
// -DBUG: lane 31 does not arrive, so empty completes no phase and the producer waits forever.
// The wall of every lane (docs/performance.md, "Every lane by default"): 32 lanes arriving one by
// one on empty, lap after lap, give the mbarrier more than a million reachable states, so the
// default check falls back to lane 0 and reports its hang as not decided (tests/kernel_cmd.rs).
// Built as tests/kernels/build.sh builds its kernels:
//   nvcc -arch=sm_90a -ptx -std=c++17 -O3 -lineinfo [-DBUG] lane_counts.cu -o lane_counts{,-bug}.ptx
//   (then the `.file` path made relative)
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

#define STAGES 2
#define LAPS 4

__global__ void lane_counts(const int* __restrict__ src, int* __restrict__ out) {
  __shared__ alignas(128) int tile[STAGES][32];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 32);
    }
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  for (int k = 0; k < LAPS; ++k) {
    const int s = k % STAGES;
    const uint32_t parity = (k / STAGES) & 1;
    if (warp == 0 && lane == 0) {
      if (k >= STAGES) {
        while (!ptx::mbarrier_try_wait_parity(&empty[s], parity ^ 1)) {}
        ptx::fence_proxy_async(ptx::space_shared);
      }
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &full[s], 128);
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, tile[s], src + 32 * k, 128, &full[s]);
    } else if (warp == 1) {
      while (!ptx::mbarrier_try_wait_parity(&full[s], parity)) {}
      out[32 * k + lane] = tile[s][lane];
#ifdef BUG
      if (lane != 31)
#endif
        ptx::mbarrier_arrive(&empty[s]);
    }
  }
}
