// tma_pipeline.cu with a library's shared storage: the tile and the pipeline's two mbarriers
// are members of one struct in dynamic shared memory (`extern __shared__`), as CUTLASS's
// SharedStorage, DeepGEMM's smem_buffer and Triton's global_smem lay them out, so one PTX
// array holds both data and mbarrier objects.
// -DBUG: the consumer waits for the wrong phase (as tma_pipeline-bug): it reads the stage while
// the load may still write it.
// -DOVERRUN: the copy is 144 bytes, not 16: it runs past the tile onto the mbarriers.
// Built as tests/kernels/build.sh builds its kernels (tests/kernel_cmd.rs checks the PTX):
//   nvcc -arch=sm_90a -ptx -std=c++17 -O3 -lineinfo [-DBUG | -DOVERRUN] shared_storage.cu \
//        -o shared_storage{,-bug,-overrun}.ptx    (then the `.file` path made relative)
#include <cstdint>
#include <cuda/ptx>
namespace ptx = cuda::ptx;

struct SharedStorage {
  alignas(128) int tile[32];
  uint64_t full, empty;
};

extern __shared__ __align__(128) unsigned char smem[];

__global__ void shared_storage(const int* __restrict__ src, int* __restrict__ out) {
  SharedStorage& s = *reinterpret_cast<SharedStorage*>(smem);
  const unsigned warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#ifdef OVERRUN
  const unsigned bytes = 144;
#else
  const unsigned bytes = 16;
#endif
  if (threadIdx.x == 0) {
    ptx::mbarrier_init(&s.full, 1);
    ptx::mbarrier_init(&s.empty, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncthreads();
  for (int k = 0; k < 2; ++k) {
    const uint32_t parity = k & 1;
    if (warp == 0 && lane == 0) {
      if (k > 0) {
        while (!ptx::mbarrier_try_wait_parity(&s.empty, parity ^ 1)) {}
        ptx::fence_proxy_async(ptx::space_shared);
      }
      ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &s.full, bytes);
      ptx::cp_async_bulk(ptx::space_shared, ptx::space_global, s.tile, src + 4 * k, bytes, &s.full);
    } else if (warp == 1 && lane == 0) {
#ifdef BUG
      while (!ptx::mbarrier_try_wait_parity(&s.full, parity ^ 1)) {}
#else
      while (!ptx::mbarrier_try_wait_parity(&s.full, parity)) {}
#endif
      out[k] = s.tile[0];
      ptx::mbarrier_arrive(&s.empty);
    }
  }
}
