// A cluster remote arrive: CTA 1 writes a word into CTA 0's shared memory (a distributed shared
// memory store through mapa) and then arrives on CTA 0's mbarrier with release semantics at
// cluster scope; CTA 0 waits on its barrier with acquire at cluster scope and reads the word.
// -DBUG: the remote arrive is relaxed, so nothing orders the store before CTA 0's read.
#include <cstdint>
#include <cooperative_groups.h>
#include <cuda/ptx>
namespace ptx = cuda::ptx;
namespace cg = cooperative_groups;

__global__ void __cluster_dims__(2, 1, 1) remote_arrive(int* __restrict__ out) {
  __shared__ int data;
  __shared__ alignas(8) uint64_t bar;
  cg::cluster_group cluster = cg::this_cluster();
  const unsigned rank = cluster.block_rank();
  if (threadIdx.x == 0 && rank == 0) {
    data = 0;
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  cluster.sync();
  if (threadIdx.x == 0 && rank == 1) {
    int* remote_data = cluster.map_shared_rank(&data, 0);
    uint64_t* remote_bar = cluster.map_shared_rank(&bar, 0);
    *remote_data = 42;
    const uint32_t b = static_cast<uint32_t>(__cvta_generic_to_shared(remote_bar));
#ifdef BUG
    asm volatile("mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [%0];" ::"r"(b) : "memory");
#else
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(b) : "memory");
#endif
  }
  if (threadIdx.x == 0 && rank == 0) {
    while (!ptx::mbarrier_try_wait_parity(ptx::sem_acquire, ptx::scope_cluster, &bar, 0)) {}
    out[0] = data;
  }
}
