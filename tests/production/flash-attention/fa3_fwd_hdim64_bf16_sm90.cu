// FlashAttention-3 (hopper/) forward, sm90, bf16, head dim 64 (Q/K and V), non-causal, no
// local window, no softcap, not varlen, no paged KV, no append-KV, no Qv, no PackGQA, no split,
// V row-major, cluster 1: the one kernel that FA3's run_mha_fwd_<90, bfloat16, 64, 64, false,
// false, false, false> reaches for a plain `flash_attn_func(q, k, v)` call. Instead of
// run_mha_fwd_ (whose BOOL_SWITCHes instantiate every causal/local/varlen/append-KV/... variant)
// we instantiate the run_flash_fwd<...> it dispatches to for these flags; it builds the kernel
// from CollectiveMainloopFwdSm90 (TMA loads of Q/K/V, wgmma, warp-specialized producer/consumer
// with named barriers), CollectiveEpilogueFwd and the StaticPersistentTileScheduler and launches
// cutlass::device_kernel<flash::enable_sm90<flash::FlashAttnFwdSm90<...>>>.
#ifdef PTXMM_HOST_LAYOUT
// Host-only layout program (no GPU): cutlass::kernel_launch, the call that launches the kernel,
// is routed to ptxmm_kernel_launch below, which prints the launch and scans the Params.
#include <cstdio>
#include <cstddef>
#include "cutlass/kernel_launch.h"
#include "../host_layout.hpp"
static inline cudaError_t ptxmm_cudaGetDevice(int* d) { *d = 0; return cudaSuccess; }
namespace cutlass {
template <typename AttnKernel, typename Params>
Status ptxmm_kernel_launch(dim3 grid, dim3 block, size_t smem, cudaStream_t, const Params& params, bool pdl) {
  std::printf("launch block=%u,%u,%u grid=%u,%u,%u cluster=1,1,1 dynamic_smem=%zu pdl=%d\n", block.x, block.y, block.z,
              grid.x, grid.y, grid.z, smem, (int)pdl);
  std::printf("sizeof(Params)=%zu alignof=%zu; mainloop at %zu (%zu B), epilogue at %zu (%zu B), scheduler at %zu (%zu B)\n",
              sizeof(Params), alignof(Params), offsetof(Params, mainloop), sizeof(params.mainloop),
              offsetof(Params, epilogue), sizeof(params.epilogue), offsetof(Params, scheduler), sizeof(params.scheduler));
  std::printf("mainloop+: tma_load_Q=%zu tma_load_K=%zu tma_load_V=%zu; epilogue+: tma_store_O=%zu\n",
              offsetof(decltype(params.mainloop), tma_load_Q), offsetof(decltype(params.mainloop), tma_load_K),
              offsetof(decltype(params.mainloop), tma_load_V), offsetof(decltype(params.epilogue), tma_store_O));
  ptxmm_scan_params(&params, sizeof(params));
  return Status::kSuccess;
}
}  // namespace cutlass
#define kernel_launch ptxmm_kernel_launch
#define cudaGetDevice ptxmm_cudaGetDevice
#define cudaFuncSetAttribute ptxmm_cudaFuncSetAttribute
#endif
#include "flash_fwd_launch_template.h"

template void run_flash_fwd<90, 64, 64, 1, cutlass::bfloat16_t, cutlass::bfloat16_t,
                            /*Is_causal=*/false, /*Is_local=*/false, /*Has_softcap=*/false, /*Varlen=*/false,
                            /*PagedKVNonTMA=*/false, /*AppendKV=*/false, /*HasQv=*/false, /*PackGQA=*/false,
                            /*Split=*/false, /*V_colmajor=*/false>(Flash_fwd_params& params, cudaStream_t stream);

#ifdef PTXMM_HOST_LAYOUT
int main() {
  // b = 1, h = h_k = 2, seqlen_q = 384 (two 192-row m-blocks), seqlen_k = 576 (three 192-row K/V
  // blocks = stages + 1), d = dv = 64, num_sm = 4 (flash_attn_func(..., sm_margin=128) on 132 SMs).
  Flash_fwd_params p{};
  int const b = 1, h = 2, sq = 384, sk = 576, d = 64;
  p.q_ptr = ptxmm_fake_ptr(0xA); p.k_ptr = ptxmm_fake_ptr(0xB); p.v_ptr = ptxmm_fake_ptr(0xC); p.o_ptr = ptxmm_fake_ptr(0xD);
  p.softmax_lse_ptr = ptxmm_fake_ptr(0xE);
  p.b = b; p.h = h; p.h_k = h; p.seqlen_q = sq; p.seqlen_k = sk; p.d = d; p.dv = d; p.d_rounded = d; p.dv_rounded = d;
  p.seqlen_q_rounded = sq; p.seqlen_k_rounded = sk; p.total_q = b * sq; p.total_k = b * sk;
  // (b, s, h, d) contiguous, as torch gives q, k, v, out
  p.q_row_stride = h * d; p.q_head_stride = d; p.q_batch_stride = (int64_t)sq * h * d;
  p.k_row_stride = h * d; p.k_head_stride = d; p.k_batch_stride = (int64_t)sk * h * d;
  p.v_row_stride = h * d; p.v_head_stride = d; p.v_batch_stride = (int64_t)sk * h * d;
  p.o_row_stride = h * d; p.o_head_stride = d; p.o_batch_stride = (int64_t)sq * h * d;
  p.scale_softmax = 0.125f; p.softcap = 0.f;
  p.window_size_left = -1; p.window_size_right = -1; p.attention_chunk = 0;
  p.num_splits = 1; p.pack_gqa = false; p.is_causal = false; p.is_local = false;
  p.num_sm = 4; p.arch = 90; p.rotary_dim = 0; p.page_size = 1;
  std::printf("problem b=%d h=%d seqlen_q=%d seqlen_k=%d d=%d num_sm=%d\n", b, h, sq, sk, d, p.num_sm);
  run_flash_fwd<90, 64, 64, 1, cutlass::bfloat16_t, cutlass::bfloat16_t, false, false, false, false, false, false, false,
                false, false, false>(p, nullptr);
  return 0;
}
#endif
