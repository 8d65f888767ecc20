// A 4-warp-group producer/consumer ring (issue 39's cost point): 512 threads; warp group 0's
// warp 0 lane 0 fills stage k % 2 with cp.async.bulk (32 words, on full[k % 2]); the 12 warps
// of warp groups 1-3 wait on full, each lane reads its word, the warp syncs and its lane 0
// arrives on empty[k % 2] (count 12: one arrival per consumer warp, as CUTLASS and
// ThunderKittens count them). The producer waits on empty before refilling a stage.
// Correct: with every warp it has no finding. The warp grouping keeps 2 of the 12 consumer
// warps (their code is the same), which cannot make up the count of 12: that hang is checked
// again with every warp, and where that check does not finish it is "not decided", never a
// finding (tests/kernel_cmd.rs).
// Built as tests/kernels/build.sh builds its kernels:
//   nvcc -arch=sm_90a -ptx -std=c++17 -O3 -lineinfo wg_ring.cu -o wg_ring.ptx
//   (then the `.file` path made relative)
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;
#define STAGES 2
#define LAPS 3
__global__ void wg_ring(const int* __restrict__ src, int* __restrict__ out) {
  __shared__ alignas(128) int tile[STAGES][32];
  __shared__ alignas(8) uint64_t full[STAGES], empty[STAGES];
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < STAGES; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 12);
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
    } else if (warp >= 4) {
      while (!ptx::mbarrier_try_wait_parity(&full[s], parity)) {}
      out[512 * k + 32 * warp + lane] = tile[s][lane];
      __syncwarp();
      if (lane == 0) ptx::mbarrier_arrive(&empty[s]);
    }
  }
}
