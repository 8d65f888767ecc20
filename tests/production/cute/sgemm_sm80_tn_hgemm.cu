// CuTe tutorial examples/cute/tutorial/sgemm_sm80.cu, TN HGEMM path: f16 x f16 -> f16, A and B
// K-major, CTA tile 128x128x64, 3-stage cp.async pipeline (SM80_CP_ASYNC_CACHEALWAYS<uint128_t>)
// into Swizzle<3,3,3> shared memory, ldmatrix (SM75_U32x4_LDSM_N) to registers, mma.sync
// SM80_16x8x16_F16F16F16F16_TN on a 2x2 atom layout (128 threads), axpby epilogue.
// We include the tutorial as it is, with its main() turned into an uninstantiated template so
// that only the kernel instantiated below is emitted; ptxmm_instantiate is the tutorial's launch
// with half alpha/beta, as its main() calls it with transA='T', transB='N'.
// (`int main(...)` becomes `int ptxmm_unused = 0; template <class> int ptxmm_tutorial_main(...)`)
#ifdef PTXMM_HOST_LAYOUT
#include "../host_layout.hpp"
#define cudaFuncSetAttribute ptxmm_cudaFuncSetAttribute
#define cudaLaunchKernelExC ptxmm_cudaLaunchKernelExC
#endif
#define main ptxmm_unused = 0; template <class PtxmmUnused> int ptxmm_tutorial_main
#include "examples/cute/tutorial/sgemm_sm80.cu"
#undef main

void ptxmm_instantiate(int m, int n, int k, cute::half_t const* A, cute::half_t const* B, cute::half_t* C) {
  gemm_tn(m, n, k, cute::half_t(1.0f), A, k, B, k, cute::half_t(0.0f), C, m);
}

#ifdef PTXMM_HOST_LAYOUT
int main() {
  // M = N = 256, K = (stages + 1) * 64 with the tutorial's 3 stages; the tutorial launches
  // block = size(mmaC) = 128 threads, grid = (ceil(M/128), ceil(N/128)).
  int M = 256, N = 256, K = 4 * 64;
  std::printf("problem M=%d N=%d K=%d; launch block=128,1,1 grid=%d,%d,1 cluster=1,1,1\n", M, N, K, (M + 127) / 128, (N + 127) / 128);
  ptxmm_instantiate(M, N, K, (cute::half_t const*)ptxmm_fake_ptr(0xA), (cute::half_t const*)ptxmm_fake_ptr(0xB),
                    (cute::half_t*)ptxmm_fake_ptr(0xC));
  return 0;
}
#endif
