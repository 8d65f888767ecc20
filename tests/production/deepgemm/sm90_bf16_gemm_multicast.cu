// DeepGEMM sm90 BF16 GEMM (deep_gemm.bf16_gemm_nt) on 2-CTA clusters with TMA multicast: the
// kernel of sm90_bf16_gemm.cu with the config DeepGEMM's SM90 heuristic may pick once there is
// more than one wave (multicast is disabled for a single wave): cluster_m = 2, so the two CTAs of
// a cluster work on vertically adjacent blocks (same N) and share B's tile, each loading half of
// it and multicasting it to both (kNumTMAMulticast = 2, kIsTMAMulticastOnA = cluster_n > 1 =
// false); the empty barriers are then arrived on from both CTAs of the cluster.
// Instantiated as DeepGEMM's JIT would for N = 256, K = 448 (compiled_dims "nk"), M = 512 at
// launch (8 blocks of 128x128 on kNumSMs = 4: two waves), BLOCK 128x128x64, 128B swizzles,
// 6 stages, 128 TMA + 256 math threads, GemmType::Normal, cd bf16.
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
        2, false,
        4,
        GemmType::Normal, false,
        cutlass::bfloat16_t
    >);
};
