// A cp.async double buffer: thread 0 copies three 4-word tiles through two shared stages with
// cp.async (one commit group per tile), and before reading tile k waits with
// cp.async.wait_group until at most the groups issued after it are pending.
// -DBUG: it waits for one group too few (wait_group 2), so tile k's copy may still be in flight.
#include <cstdint>

__device__ inline void cp_async16(void* smem, const void* gmem) {
  uint32_t s = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(s), "l"(gmem) : "memory");
}
__device__ inline void commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N> __device__ inline void wait() { asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory"); }

__global__ void cp_async_double(const int* __restrict__ src, int* __restrict__ out) {
  __shared__ alignas(16) int buf[2][4];
  if (threadIdx.x != 0) return;
  cp_async16(buf[0], src);
  commit();
#pragma unroll 1
  for (int k = 0; k < 3; ++k) {
    if (k + 1 < 3) cp_async16(buf[(k + 1) % 2], src + 4 * (k + 1));
    commit();
#ifdef BUG
    wait<2>();
#else
    wait<1>();
#endif
    out[k] = buf[k % 2][0];
  }
}
