// DeepGEMM sm90 BF16 GEMM (deep_gemm.bf16_gemm_nt): D[M,N] = A[M,K] @ B[N,K]^T, bf16 in, f32
// accumulate, bf16 out, instantiated as DeepGEMM's JIT (csrc/jit_kernels/impls/sm90_bf16_gemm.hpp,
// generate_impl) would for N = 256, K = 448 with the default compiled_dims "nk" (M stays a
// runtime argument) and the config its SM90 heuristic gives for a 128x128 block:
//   BLOCK_M = 128, BLOCK_N = 128, BLOCK_K = 64, 128B swizzles for A, B and D,
//   6 stages ((232448 - 32768 - 256) / 32768), 128 TMA threads + 256 math threads (2 warp groups),
//   no multicast (one wave), kNumSMs = 4 (deep_gemm.set_num_sms(4): the grid is kNumSMs CTAs,
//   persistent), GemmType::Normal, no accumulation, cd bf16.
// The instantiation mirrors the generated kernel.cu: taking the kernel's address instantiates it.
#include <deep_gemm/impls/sm90_bf16_gemm.cuh>

using namespace deep_gemm;

static void __instantiate_kernel() {
    auto ptr = reinterpret_cast<void*>(&sm90_bf16_gemm_impl<
        cute::UMMA::Major::K, cute::UMMA::Major::K,
        0, 256, 448,
        1,
        128, 128, 64,
        128, 128, 128,
        6,
        128, 256,
        1, false,
        4,
        GemmType::Normal, false,
        cutlass::bfloat16_t
    >);
};
