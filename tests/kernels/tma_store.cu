// A TMA store epilogue: every thread of the CTA writes its word of a shared-memory tile, the
// writes are ordered before the async proxy with fence.proxy.async, the CTA synchronises, and
// thread 0 stores the tile to global memory with cp.async.bulk and waits for the store.
// -DBUG: no fence.proxy.async (the generic writes and the bulk copy's async reads of the tile
// are not ordered across proxies).
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

__global__ void tma_store(int* __restrict__ out) {
  __shared__ alignas(128) int tile[4];
  tile[threadIdx.x] = 7 + threadIdx.x;
#ifndef BUG
  ptx::fence_proxy_async(ptx::space_shared);
#endif
  __syncthreads();
  if (threadIdx.x == 0) {
    ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, out, tile, 16);
    ptx::cp_async_bulk_commit_group();
    ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
  }
}
