// CuTe tutorial examples/cute/tutorial/hopper/wgmma_tma_sm90.cu, TN path: f16 x f16 -> f16,
// A and B K-major, CTA tile 128x128x64, 3-stage pipeline: one elected thread issues TMA loads
// (SM90_TMA_LOAD, 128B swizzle, ClusterTransactionBarrier = mbarrier with expect-tx), all 128
// threads (one warp group) wait and run wgmma SM90_64x64x16_F16F16F16_SS, then arrive on a
// per-stage consumer ClusterBarrier; launched on a 2x1x1 cluster (no multicast).
// We include the tutorial as it is, with its main() turned into an uninstantiated template so
// that only the TN kernel is emitted; ptxmm_instantiate is the tutorial's gemm_tn launch.
// (`int main(...)` becomes `int ptxmm_unused = 0; template <class> int ptxmm_tutorial_main(...)`)
#ifdef PTXMM_HOST_LAYOUT
#include "../host_layout.hpp"
#define cudaFuncSetAttribute ptxmm_cudaFuncSetAttribute
#define cudaLaunchKernelExC ptxmm_cudaLaunchKernelExC
#define CUTE_CHECK_LAST()  // no device: nothing to check
#endif
#define main ptxmm_unused = 0; template <class PtxmmUnused> int ptxmm_tutorial_main
#include "examples/cute/tutorial/hopper/wgmma_tma_sm90.cu"
#undef main

void ptxmm_instantiate(int m, int n, int k, cute::half_t const* A, cute::half_t const* B, cute::half_t* C) {
  gemm_tn(m, n, k, cute::half_t(1.0f), A, k, B, k, cute::half_t(0.0f), C, m);
}

#ifdef PTXMM_HOST_LAYOUT
int main() {
  // M = N = 256, K = (stages + 1) * 64 with the tutorial's 3 stages.
  int M = 256, N = 256, K = 4 * 64;
  std::printf("problem M=%d N=%d K=%d\n", M, N, K);
  ptxmm_instantiate(M, N, K, (cute::half_t const*)ptxmm_fake_ptr(0xA), (cute::half_t const*)ptxmm_fake_ptr(0xB),
                    (cute::half_t*)ptxmm_fake_ptr(0xC));
  return 0;
}
#endif
