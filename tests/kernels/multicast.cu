// A 2-CTA cluster multicast: each CTA initialises its own "full" mbarrier and expects 16 bytes on
// it; after a cluster barrier, CTA rank 0 loads one 16-byte tile from global memory into the
// tile buffer of every CTA in the cluster with a multicast cp.async.bulk (ctaMask 0b11), each
// copy completing on the destination CTA's barrier. Each CTA waits and writes its first word out.
// -DBUG: ctaMask 0b01 leaves out CTA 1: its barrier never completes and CTA 1 waits forever.
#include <cstdint>
#include <cooperative_groups.h>
#include <cuda/ptx>
namespace ptx = cuda::ptx;
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) multicast(const int* __restrict__ src, int* __restrict__ out) {
  __shared__ alignas(128) int tile[4];
  __shared__ alignas(8) uint64_t full;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&full, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
    ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cluster, ptx::space_shared, &full, 16);
  }
  ptx::barrier_cluster_arrive(ptx::sem_release);
  ptx::barrier_cluster_wait(ptx::sem_acquire);
  if (threadIdx.x == 0) {
    if (rank == 0) {
#ifdef BUG
      const uint16_t mask = 0b01;
#else
      const uint16_t mask = 0b11;
#endif
      ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, tile, src, 16, &full, mask);
    }
    while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, &full, 0)) {}
    out[rank] = tile[0];
  }
}
