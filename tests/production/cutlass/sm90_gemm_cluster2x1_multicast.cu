// CUTLASS 3.x sm90: persistent cooperative warp-specialized TMA GEMM on a 2x1x1 thread-block
// cluster, as examples 48/49 build it: the two CTAs of a cluster compute vertically adjacent tiles
// (same N, different M), so B's tile is loaded once and multicast to both CTAs
// (SM90_TMA_LOAD_MULTICAST, .multicast::cluster), and consumer warps release a stage to the
// producers of both CTAs (remote mbarrier arrive). bf16 x bf16 -> bf16, f32 accumulate,
// tile 128x128x64, 4 stages, PersistentScheduler.
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"
using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;
using ClusterShape = cute::Shape<cute::_2, cute::_1, cute::_1>;
using StageCount = cute::Int<4>;
using MainloopSchedule = cutlass::gemm::KernelTmaWarpSpecializedCooperative;
using EpilogueSchedule = cutlass::epilogue::TmaWarpSpecializedCooperative;
using TileScheduler = cutlass::gemm::PersistentScheduler;
#define PTXMM_PRINT_FIELDS \
  std::printf("epilogue+ (Sm90 TMA epilogue): thread=%zu (%zu B: fusion alpha/beta...) tma_load_c=%zu (%zu B) tma_store_d=%zu (%zu B) tma_transaction_bytes=%zu\n", \
              offsetof(EP, thread), sizeof(EP::thread), offsetof(EP, tma_load_c), sizeof(EP::tma_load_c), \
              offsetof(EP, tma_store_d), sizeof(EP::tma_store_d), offsetof(EP, tma_transaction_bytes)); \
  std::printf("kernel: mode=%zu hw_info=%zu (%zu B) scheduler=%zu (%zu B)\n", offsetof(P, mode), offsetof(P, hw_info), \
              sizeof(P::hw_info), offsetof(P, scheduler), sizeof(P::scheduler));
#include "sm90_gemm_common.hpp"
