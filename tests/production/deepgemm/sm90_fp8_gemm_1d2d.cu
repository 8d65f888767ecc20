// DeepGEMM sm90 FP8 GEMM with 1D2D block scaling (deep_gemm.fp8_gemm_nt on Hopper, the
// DeepSeek-V3 recipe): D[M,N] = (A[M,K] * sfa) @ (B[N,K] * sfb)^T, e4m3 in, per-1x128 scales of
// A (loaded by TMA), per-128x128 scales of B (read from global by the math warps), f32 accumulate
// with promotion, bf16 out. Instantiated as DeepGEMM's JIT
// (csrc/jit_kernels/impls/sm90_fp8_gemm_1d2d.hpp, generate_impl) would for N = 256, K = 768 with
// the default compiled_dims "nk" (M stays a runtime argument) and the config its SM90 heuristic
// gives for a 128x128 block:
//   BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 128, 128B swizzles for A, B and D, 5 stages,
//   128 TMA threads + 256 math threads, no multicast (one wave), kNumSMs = 4
//   (deep_gemm.set_num_sms(4)), GemmType::Normal, cd bf16, EpilogueIdentity, SFB K-major.
#include <deep_gemm/impls/sm90_fp8_gemm_1d2d.cuh>

using namespace deep_gemm;

static void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm90_fp8_gemm_1d2d_impl<
        cute::UMMA::Major::K,
        0, 256, 768,
        1,
        128, 128, 128,
        128, 128, 128,
        5,
        128, 256,
        1, false,
        4, GemmType::Normal,
        cutlass::bfloat16_t,
        epilogue::transform::EpilogueIdentity
    >);
};
