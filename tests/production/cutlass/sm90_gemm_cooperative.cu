// CUTLASS 3.x sm90: persistent cooperative warp-specialized TMA GEMM
// (KernelTmaWarpSpecializedCooperative + TmaWarpSpecializedCooperative epilogue), as the
// "Cooperative" runner of example 49 (with the PersistentScheduler instead of stream-K):
// bf16 x bf16 -> bf16, f32 accumulate, D = alpha*A*B + beta*C, tile 128x128x64 shared by two
// consumer warp groups (64 rows each), cluster 1x1x1, 4 stages.
#include "cutlass/cutlass.h"
#include "cute/tensor.hpp"
#include "cutlass/gemm/dispatch_policy.hpp"
#include "cutlass/epilogue/dispatch_policy.hpp"
#include "cutlass/gemm/kernel/tile_scheduler.hpp"
using TileShape = cute::Shape<cute::_128, cute::_128, cute::_64>;
using ClusterShape = cute::Shape<cute::_1, cute::_1, cute::_1>;
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
