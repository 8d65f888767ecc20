#!/usr/bin/env python3
"""Write kernels.csv: one row per kernel, its launch and what its parameters hold.

    python3 tests/production/make_manifest.py

The launch facts come from each kernel's NAME.layout.txt (C++; printed by its host-only layout
program) or NAME.json (Triton metadata); the entry name from the PTX; the parameter descriptions
are written here, from those printouts (offsets are the layout programs' offsetof and tensor-map
scans).
"""
import csv
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))

CUTLASS3_TMA_EPI = (
    "param_0: 1792 B (.align 128) GemmKernel::Params; +0 mode i32 (0 = kGemm); +4 M,N,K,L (4x i32); "
    "+128 mainloop.tma_load_a CUtensorMap (A bf16 as u16, dims K x M x L = 320x256x1, stride 640 B, box 64x128x1, "
    "swizzle 128B; 256 B TMA atom with its aux strides); +384 mainloop.tma_load_b CUtensorMap (B, dims K x N x L, {bbox}); "
    "+640 tma_transaction_bytes u32, +644 _mk, +648 _nk; +768 epilogue.thread (72 B fusion params: beta f32 at +768, "
    "alpha f32 at +800, their pointers/strides); +896 epilogue.tma_load_c CUtensorMap (C bf16, dims M x N x L = 256x256x1, "
    "box 64x32x1, swizzle 128B); +1152 epilogue.tma_store_d CUtensorMap (D, same); +1408 epilogue tma_transaction_bytes; "
    "+1536 hw_info (36 B: device_id, sm_count=132, ...); +1576 scheduler (120 B PersistentTileSchedulerSm90Params)")

ROWS = [
    dict(file="cutlass/sm90_gemm_ws.ptx", project="CUTLASS 3.x (4.7.0)",
         params="param_0: 896 B (.align 128) GemmKernel::Params; +0 M,N,K,L (4x i32); +128 mainloop.tma_load_a "
                "CUtensorMap (A bf16 as u16, dims K x M x L = 320x256x1, stride 640 B, box 64x128x1, swizzle 128B; 256 B "
                "TMA atom with aux strides); +384 mainloop.tma_load_b CUtensorMap (B, dims K x N x L = 320x256x1, box "
                "64x128x1, swizzle 128B); +640 tma_transaction_bytes u32 (32768), +644 _mk, +648 _nk; +768 epilogue "
                "(DefaultEpilogue): +768 alpha f32, +772 beta f32, +776 alpha_ptr, +784 beta_ptr, +792/+800 ptr arrays; "
                "+808 ptr_C, +816 dC (i64 ldC=256, i64 batch); +832 ptr_D, +840 dD (i64 ldD, i64 batch)",
         notes="KernelTmaWarpSpecialized (not persistent), NoSmemWarpSpecialized epilogue; bf16, tile 128x128x64, "
               "cluster 1x1x1, 4 stages; 1 producer + 1 consumer warp group; M=N=256 K=320"),
    dict(file="cutlass/sm90_gemm_pingpong.ptx", project="CUTLASS 3.x (4.7.0)",
         params=CUTLASS3_TMA_EPI.format(bbox="box 64x128x1"),
         notes="KernelTmaWarpSpecializedPingpong + TmaWarpSpecialized epilogue, PersistentScheduler; bf16, tile "
               "128x128x64, cluster 1x1x1, 4 stages; 1 producer + 2 consumer warp groups alternating tiles; "
               "M=N=256 K=320 (grid from get_grid_shape with sm_count 132)"),
    dict(file="cutlass/sm90_gemm_cooperative.ptx", project="CUTLASS 3.x (4.7.0)",
         params=CUTLASS3_TMA_EPI.format(bbox="box 64x128x1"),
         notes="KernelTmaWarpSpecializedCooperative + TmaWarpSpecializedCooperative epilogue, PersistentScheduler; bf16, "
               "tile 128x128x64 split over 2 consumer warp groups, cluster 1x1x1, 4 stages; M=N=256 K=320"),
    dict(file="cutlass/sm90_gemm_cluster2x1_multicast.ptx", project="CUTLASS 3.x (4.7.0)",
         params=CUTLASS3_TMA_EPI.format(bbox="box 64x64x1: each CTA loads half of B's 128-row tile and multicasts it"),
         notes="Cooperative schedule on a 2x1x1 cluster: B loaded with SM90_TMA_LOAD_MULTICAST (.multicast::cluster), "
               "stage release arrives on both CTAs' empty barriers; bf16, tile 128x128x64, 4 stages; M=N=256 K=320"),
    dict(file="cutlass/sm80_gemm_multistage.ptx", project="CUTLASS 2.x (4.7.0)",
         params="param_0: 368 B (.align 8) kernel::Gemm::Params; +0 problem_size M,N,K (3x i32); +12 grid_tiled_shape "
                "(3x i32); +24 swizzle_log_tile i32; +32 params_A (32 B PredicatedTileAccessIterator params); +64 ref_A "
                "(ptr A f16, +72 ldA i32); +80 params_B (32 B); +112 ref_B (ptr B, +120 ldB); +128 params_C (64 B); "
                "+192 ref_C (ptr C, +200 ldC); +208 params_D (64 B); +272 ref_D (ptr D, +280 ldD); +288 output_op "
                "(alpha f32, +292 beta f32, +296 alpha_ptr, +304 beta_ptr; 40 B); +328 semaphore ptr (null); +336 "
                "gemm_k_size i32 (=K); +344 gather_A_indices, +352 gather_B_indices, +360 scatter_D_indices (null)",
         notes="device::Gemm<f16 RowMajor, f16 ColumnMajor, f16 RowMajor, f32, OpClassTensorOp, Sm80, 128x128x32, warp "
               "64x64x32, mma 16x8x16, LinearCombination, identity swizzle, 3 stages>; cutlass::Kernel<GemmKernel> with "
               "extern __shared__ SharedStorage; cp.async + ldmatrix + mma.sync; M=N=256 K=128"),
    dict(file="cute/sgemm_sm80_tn_hgemm.ptx", project="CuTe tutorial (CUTLASS 4.7.0)",
         params="separate params: param_0 shape_MNK (3x i32, 12 B); param_1 cta_tiler (empty, 1 B); param_2 A (f16*); "
                "param_3 dA (ldA i32; K-stride 1 static); param_4..6 sA layout, copy_a, s2r_atom_a (empty, 1 B each); "
                "param_7 B (f16*); param_8 dB (ldB i32); param_9..11 empty; param_12 C (f16*); param_13 dC (ldC i32); "
                "param_14 sC, param_15 mmaC (empty); param_16 alpha (f16, 2 B); param_17 beta (f16)",
         notes="examples/cute/tutorial/sgemm_sm80.cu gemm_tn for half: 128x128x64 CTA tile, 3-stage cp.async "
               "(SM80_CP_ASYNC_CACHEALWAYS<uint128_t>) into Swizzle<3,3,3> smem, ldmatrix x4, mma.sync 16x8x16 on 2x2 "
               "atoms; dynamic smem = sizeof(SharedStorage); M=N=256 K=256"),
    dict(file="cute/wgmma_tma_sm90_tn.ptx", project="CuTe tutorial (CUTLASS 4.7.0)",
         params="separate params: param_0 shape_MNK (3x i32); param_1 cta_tiler (empty); param_2 A (f16*); param_3 tma_a "
                "(256 B .align 128 TMA Copy_Atom: CUtensorMap at +0 (f16, dims K x M = 256x256, stride 512 B, box 64x128, "
                "swizzle 128B), aux strides after); param_4 B (f16*); param_5 tma_b (same, N side); param_6 C (f16*); "
                "param_7 dC (ldC i32); param_8 mma (8 B TiledMMA); param_9 alpha (f16); param_10 beta (f16)",
         notes="examples/cute/tutorial/hopper/wgmma_tma_sm90.cu gemm_tn: 128x128x64 tile, 3 stages, one elected thread "
               "issues TMA (ClusterTransactionBarrier = mbarrier expect-tx), one warp group of wgmma 64x64x16, "
               "per-stage consumer ClusterBarrier; launched on a 2x1x1 cluster without multicast; M=N=256 K=256"),
    dict(file="deepgemm/sm90_bf16_gemm.ptx", project="DeepGEMM",
         launch=dict(block="384,1,1", grid="4,1,1", cluster="1,1,1", dynamic_smem="229632"),
         params="param_0 grouped_layout (int*, null for GemmType::Normal); param_1 shape_m u32 (256; runtime); param_2 "
                "shape_n u32 (256; the compiled SHAPE_N overrides it); param_3 shape_k u32 (448, compiled); param_4 "
                "tensor_map_a (CUtensorMap .align 128 [128]: bf16, dims K x M = 448x256, box 64x128, swizzle 128B); "
                "param_5 tensor_map_b (bf16, dims K x N = 448x256, box 64x128, swizzle 128B); param_6 tensor_map_cd "
                "(bf16, dims N x M = 256x256, box 64x128, swizzle 128B)",
         notes="sm90_bf16_gemm_impl<K,K, 0,256,448, 1, 128,128,64, 128,128,128, 6 stages, 128 TMA + 256 math threads, "
               "multicast 1, kNumSMs 4, Normal, no accumulation, bf16>; persistent grid = kNumSMs "
               "(deep_gemm.set_num_sms(4)); smem from the SM90 heuristic: 32768 + 256 + 6 * 32768"),
    dict(file="deepgemm/sm90_bf16_gemm_multicast.ptx", project="DeepGEMM",
         launch=dict(block="384,1,1", grid="4,1,1", cluster="2,1,1", dynamic_smem="229632"),
         params="as sm90_bf16_gemm, with shape_m = 512 at launch: param_0 grouped_layout (null); param_1..3 shape_m/n/k "
                "u32 (512, 256, 448); param_4 tensor_map_a (bf16, dims 448 x 512, box 64x128, swizzle 128B); param_5 "
                "tensor_map_b (bf16, dims 448 x 256, box 64x128: the kernel issues half-tile multicast loads); param_6 "
                "tensor_map_cd (bf16, dims 256 x 512, box 64x128, swizzle 128B)",
         notes="as sm90_bf16_gemm with kNumTMAMulticast = 2, kIsTMAMulticastOnA = false (cluster_m = 2: B shared, "
               "multicast); M=512 gives 8 blocks on 4 SMs (two waves, so the heuristic allows multicast)"),
    dict(file="deepgemm/sm90_fp8_gemm_1d2d.ptx", project="DeepGEMM",
         launch=dict(block="384,1,1", grid="4,1,1", cluster="1,1,1", dynamic_smem="199448"),
         params="param_0 sfb (f32*: B scales per 128x128 block, ceil(N/128) x ceil(K/128) = 2x6, K-major); param_1 "
                "grouped_layout (null); param_2..4 shape_m/n/k u32 (256, 256, 768); param_5 tensor_map_a (e4m3 as u8, "
                "dims K x M = 768x256, box 128x128, swizzle 128B); param_6 tensor_map_b (e4m3, dims 768x256, box "
                "128x128, swizzle 128B); param_7 tensor_map_d (bf16, dims N x M = 256x256, box 64x128, swizzle 128B); "
                "param_8 tensor_map_sfa (f32, dims M x ceil(K/128) = 256x6, box 128x1, no swizzle)",
         notes="sm90_fp8_gemm_1d2d_impl<SFB K-major, 0,256,768, 1, 128,128,128, 128,128,128, 5 stages, 128+256 threads, "
               "multicast 1, kNumSMs 4, Normal, bf16, EpilogueIdentity>; smem 33048 + 5 * 33280"),
    dict(file="thunderkittens/bf16_h100_gemm.ptx", project="ThunderKittens",
         params="param_0: 1152 B (.align 128) globals {A, B, C}, each a gl<bf16,1,1,-1,-1,st_bf<64,64>> of 384 B: "
                "+0 A.raw_ptr, +16 A.rows u64 (M=256), +24 A.cols u64 (K=320), +128 A CUtensorMap (bf16 rank 5, box "
                "64x64 tile, swizzle 128B); +384 B.raw_ptr, +400 B.rows (K), +408 B.cols (N=256), +512 B CUtensorMap; "
                "+768 C.raw_ptr, +784 C.rows (M), +792 C.cols (N), +896 C CUtensorMap",
         notes="prototype::lcf::kernel<matmul_template<2,4,8>>: 128x256 block per CTA, 2 consumer warp groups + 1 "
               "producer, 4 input stages, setmaxnreg 40/232; persistent grid of 132 (mmt::grid; only 2 CTAs get work "
               "for M=N=256, the rest exit); dynamic smem MAX_SHARED_MEMORY - 1024"),
    dict(file="thunderkittens/mha_h100_fwd.ptx", project="ThunderKittens",
         params="param_0: 2048 B (.align 128) fwd_globals<64>: q, k, v, l, o gl's of 384 B at +0, +384, +768, +1152, "
                "+1536 (each: raw_ptr +0, batch/depth/rows/cols u64 at +8/+16/+24/+32, CUtensorMap at +128: q bf16 box "
                "64x64, k/v box 64x128, o box 64x64, swizzle 128B; l f32 box 64, no swizzle); +1920 N i32 (768); +1924 "
                "hr i32 (q heads per kv head = 1)",
         notes="fwd_attend_ker<64, false>: non-causal MHA forward, 1 producer (setmaxnreg 24) + 3 consumer warp groups "
               "(240), 4-stage K/V ring; B=1 H=1 N=768 D=64; grid (N/192, H, B)"),
    dict(file="triton/matmul_pipelined.ptx", project="Triton 3.9",
         notes="tutorial-03 style matmul: fp16, BLOCK 128x256x64, GROUP_SIZE_M 8, num_warps 8, num_stages 3 (cp.async "
               "ring), wgmma; unit strides specialized away; M=N=K=256"),
    dict(file="triton/matmul_tma_persistent.ptx", project="Triton 3.9",
         notes="tutorial-09 style matmul_kernel_tma_persistent: host TensorDescriptors (A 128x64, B 128x64, C 128x128 "
               "blocks), fp16, NUM_SMS 132, num_warps 8, num_stages 3; M=N=K=256"),
    dict(file="triton/matmul_descriptor_persistent.ptx", project="Triton 3.9",
         notes="tutorial-09 style matmul_kernel_descriptor_persistent: tl.make_tensor_descriptor in the kernel "
               "(descriptors written to global_scratch: launch needs grid * 384 B of scratch, 128-aligned); fp16, "
               "NUM_SMS 132, num_warps 8, num_stages 3; M=N=K=256"),
    dict(file="triton/flash_attention_fwd.ptx", project="Triton 3.9",
         notes="tutorial-06 style _attn_fwd, non-causal (STAGE 1), host TensorDescriptors for Q/K/V/O, HEAD_DIM 64, "
               "BLOCK_M 128, BLOCK_N 64, num_warps 4, num_stages 3; Z=1 (specialized to a constexpr) H=2 N_CTX=256"),
    dict(file="triton/softmax.ptx", project="Triton 3.9",
         notes="tutorial-02 style fused softmax: persistent row loop (tl.range num_stages 4), fp32 1024x1000, "
               "BLOCK_SIZE 1024, num_warps 8, 4 programs"),
    dict(file="cub/device_transform.ptx", project="CUB (CCCL 3.5)",
         params="param_0 num_items i64 (1024); param_1 num_elem_per_thread i32 (1); param_2 can_vectorize u8 (0); param_3 "
                "pred (always_true, 1 B empty); param_4 op (ptxmm_axpb, 1 B empty); param_5 out (f32*); param_6 (16 B "
                ".align 8) kernel_arg<const float*> = aligned_base_ptr {+0 ptr to the input rounded down to 128 B, +8 "
                "head_padding i32 (bytes)}",
         notes="cub::DeviceTransform::Transform(in, out, n, op) on float; sm_90 policy picks the ublkcp algorithm "
               "(cp.async.bulk into shared with an mbarrier); launched with PDL; the file also has EmptyKernel"),
    dict(file="cub/device_scan_inclusive_sum.ptx", project="CUB (CCCL 3.5)",
         params="param_0 d_in (const int*); param_1 d_out (int*); param_2 (16 B .align 8) tile_state_kernel_arg_t: +0 "
                "ScanTileState<int>::d_tile_descriptors (u64 pointer to (32 padding + num_tiles) 8-byte {status, value} "
                "words, initialized by DeviceScanInitKernel); param_3 start_tile i32 (0); param_4 scan_op (plus, 1 B "
                "empty); param_5 init_value (NullType, 1 B); param_6 num_items u32 (12288); param_7 num_stages i32 (1, "
                "unused by look-back)",
         notes="cub::DeviceScan::InclusiveSum on int32, look-back policy 128 threads x 24 items; the file has 3 entries: "
               "EmptyKernel, DeviceScanInitKernel (launch block 128, grid ceil(num_tiles/128) = 1; params: 16 B "
               "tile_state, i32 num_tiles) and DeviceScanKernel (the scan, this row); both launched with PDL"),
    dict(file="flash-attention/fa3_fwd_hdim64_bf16_sm90.ptx", project="FlashAttention-3",
         params="param_0: 2944 B (.align 128) FlashAttnFwdSm90::Params; +0 mainloop (2048 B: +0 ptr_Q, shapes/strides, "
                "+88 ptr_K, +136 ptr_V, ...; +512 tma_load_Q CUtensorMap (bf16 rank 4, dims d x seqlen_q x h x b = "
                "64x384x2x1, box 64x192x1x1, swizzle 128B); +768 tma_load_K (64x576x2x1, box 64x192); +1024 tma_load_V "
                "(same); +1280/+1536 tma_load_K_new/V_new (built, unused without append-KV); softmax scale, windows ...); "
                "+2048 epilogue (768 B: +2048 ptr_O, +2240 ptr_LSE, +2432 tma_store_O CUtensorMap (bf16 rank 5, box "
                "64x192)); +2852 scheduler (40 B StaticPersistentTileScheduler params)",
         notes="run_flash_fwd<90, 64, 64, ClusterM 1, bf16, bf16, non-causal, no local/softcap/varlen/paged/appendKV/Qv/"
               "PackGQA/split, V row-major>: tile 192x192, 2 stages, 3 consumer warp groups + 1 producer; "
               "StaticPersistentTileScheduler, grid = num_sm = 4 (flash_attn_func(..., sm_margin=128) on 132 SMs); "
               "b=1 h=2 seqlen_q=384 seqlen_k=576 d=64"),
]


def entries(ptx):
    return re.findall(r"^\s*(?:\.visible\s+)?\.entry\s+([\w$]+)\s*\(", open(ptx).read(), re.M)


def launch_from_layout(path):
    text = open(path).read()
    ms = re.findall(r"launch block=(\S+) grid=(\S+)(?: cluster=(\S+))?(?: dynamic_smem=(\d+))?(?: cluster=(\S+))?", text)
    if not ms:
        return None
    # The scan's second launch is the scan kernel; the others print one.
    block, grid, c1, smem, c2 = ms[-1]
    if not smem:  # the launch line does not say; the cudaFuncSetAttribute the host makes does
        smem = re.search(r"MaxDynamicSharedMemorySize=(\d+)", text).group(1)
    return dict(block=block, grid=grid, cluster=c1 or c2 or "1,1,1", dynamic_smem=smem)


def main():
    out = []
    for r in ROWS:
        ptx = os.path.join(HERE, r["file"])
        base = os.path.splitext(ptx)[0]
        es = entries(ptx)
        if r["file"].startswith("cub/device_scan"):
            entry = [e for e in es if "DeviceScanKernel" in e][0]
        elif r["file"].startswith("cub/"):
            entry = [e for e in es if "EmptyKernel" not in e][0]
        else:
            assert len(es) == 1, (r["file"], es)
            entry = es[0]
        if os.path.exists(base + ".json"):
            md = json.load(open(base + ".json"))
            launch = dict(block=",".join(map(str, md["block"])), grid=",".join(map(str, md["grid"])),
                          cluster=",".join(map(str, md["cluster"])), dynamic_smem=str(md["dynamic_smem"]))
            params = "; ".join(f"{k} {v}" for k, v in md["params"].items())
        elif os.path.exists(base + ".layout.txt"):
            launch = launch_from_layout(base + ".layout.txt")
            params = r["params"]
        else:
            launch = r["launch"]
            params = r["params"]
        if "launch" in r:
            launch = r["launch"]
        out.append(dict(file=r["file"], project=r["project"], entry=entry, block=launch["block"], grid=launch["grid"],
                        cluster=launch["cluster"], dynamic_smem=launch["dynamic_smem"], params=params, notes=r["notes"]))
    with open(os.path.join(HERE, "kernels.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["file", "project", "entry", "block", "grid", "cluster", "dynamic_smem",
                                          "params", "notes"], quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        w.writeheader()
        for row in out:
            w.writerow(row)
    for row in out:
        print(f"{row['file']}: block {row['block']} grid {row['grid']} cluster {row['cluster']} smem {row['dynamic_smem']}")


if __name__ == "__main__":
    main()
