"""Persistent matmul with TMA through host-side tensor descriptors, in the style of Triton's
tutorial 09-persistent-matmul (matmul_kernel_tma_persistent): C = A @ B^T with A (M, K) and
B (N, K) K-major, fp16 in, fp32 accumulate, fp16 out. The host builds
triton.tools.tensor_descriptor.TensorDescriptor objects (A block 128x64, B block 128x64,
C block 128x128); the launcher passes each as a CUtensorMap (a 128-byte, 64-aligned
`.param .align 64 .b8 [128]`) followed by its shape and strides. Each of NUM_SMS programs loops
over tiles (stride NUM_SMS); loads are TMA (cp.async.bulk.tensor with mbarrier expect-tx),
pipelined over num_stages = 3 buffers, tl.dot is wgmma, the store is a TMA store.

Problem: M = N = 256, K = (3 + 1) * 64 = 256; BLOCK 128x128x64, GROUP_SIZE_M = 8,
NUM_SMS = 132 (an H100/H200), num_warps = 8. Grid: min(NUM_SMS, tiles) = 4.
"""
import triton
import triton.language as tl


@triton.jit
def _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M: tl.constexpr):
    group_id = tile_id // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + (tile_id % group_size_m)
    pid_n = (tile_id % num_pid_in_group) // group_size_m
    return pid_m, pid_n


@triton.jit
def matmul_kernel_tma_persistent(a_desc, b_desc, c_desc, M, N, K,
                                 BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                                 BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                                 NUM_SMS: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
    dtype = c_desc.dtype
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n
    num_pid_in_group = GROUP_SIZE_M * num_pid_n

    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True, warp_specialize=WARP_SPECIALIZE):
        pid_m, pid_n = _compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M)
        offs_am = pid_m * BLOCK_SIZE_M
        offs_bn = pid_n * BLOCK_SIZE_N
        accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
        for ki in range(k_tiles):
            offs_k = ki * BLOCK_SIZE_K
            a = a_desc.load([offs_am, offs_k])
            b = b_desc.load([offs_bn, offs_k])
            accumulator = tl.dot(a, b.T, accumulator)
        c = accumulator.to(dtype)
        c_desc.store([offs_am, offs_bn], c)


def make_launch(warp_specialize=False):
    from tcompile import FakeTensor
    from triton.tools.tensor_descriptor import TensorDescriptor
    M, N, K = 256, 256, 256
    BM, BN, BK = 128, 128, 64
    NUM_SMS = 132
    a, b, c = FakeTensor((M, K), tag=0xA), FakeTensor((N, K), tag=0xB), FakeTensor((M, N), tag=0xC)
    a_desc = TensorDescriptor(a, a.shape, a.stride(), [BM, BK])
    b_desc = TensorDescriptor(b, b.shape, b.stride(), [BN, BK])
    c_desc = TensorDescriptor(c, c.shape, c.stride(), [BM, BN])
    args = dict(a_desc=a_desc, b_desc=b_desc, c_desc=c_desc, M=M, N=N, K=K,
                BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=8, NUM_SMS=NUM_SMS,
                WARP_SPECIALIZE=warp_specialize)
    tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
    return dict(kernel=matmul_kernel_tma_persistent, args=args, options=dict(num_warps=8, num_stages=3),
                grid=(min(NUM_SMS, tiles), ), problem=dict(M=M, N=N, K=K, dtype="fp16", B="N x K"))


def launch():
    return make_launch(False)
