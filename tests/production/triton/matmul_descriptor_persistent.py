"""Persistent matmul with device-side tensor descriptors, in the style of Triton's tutorial
09-persistent-matmul (matmul_kernel_descriptor_persistent): each program builds its TMA
descriptors with tl.make_tensor_descriptor from plain pointers, shapes and strides. The
descriptors are written by the kernel into global scratch memory (the launcher allocates
grid * metadata.global_scratch_size bytes through triton.set_allocator and passes it as the
kernel's extra global_scratch parameter), made visible to the TMA unit
(tensormap.cp_fenceproxy / fence.proxy.tensormap), then used by cp.async.bulk.tensor.
C = A @ B^T with A (M, K) and B (N, K) K-major, fp16 in, fp32 accumulate, fp16 out.

Problem: M = N = 256, K = (3 + 1) * 64 = 256; BLOCK 128x128x64, GROUP_SIZE_M = 8,
NUM_SMS = 132, num_warps = 8, num_stages = 3. Grid: min(NUM_SMS, tiles) = 4.
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
def matmul_kernel_descriptor_persistent(a_ptr, b_ptr, c_ptr, M, N, K,
                                        BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr,
                                        BLOCK_SIZE_K: tl.constexpr, GROUP_SIZE_M: tl.constexpr,
                                        NUM_SMS: tl.constexpr):
    dtype = c_ptr.dtype.element_ty
    start_pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    k_tiles = tl.cdiv(K, BLOCK_SIZE_K)
    num_tiles = num_pid_m * num_pid_n

    a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_K])
    b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[K, 1],
                                       block_shape=[BLOCK_SIZE_N, BLOCK_SIZE_K])
    c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1],
                                       block_shape=[BLOCK_SIZE_M, BLOCK_SIZE_N])

    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    for tile_id in tl.range(start_pid, num_tiles, NUM_SMS, flatten=True):
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


def launch():
    from tcompile import FakeTensor
    M, N, K = 256, 256, 256
    BM, BN, BK = 128, 128, 64
    NUM_SMS = 132
    a, b, c = FakeTensor((M, K), tag=0xA), FakeTensor((N, K), tag=0xB), FakeTensor((M, N), tag=0xC)
    args = dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K,
                BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=8, NUM_SMS=NUM_SMS)
    tiles = triton.cdiv(M, BM) * triton.cdiv(N, BN)
    return dict(kernel=matmul_kernel_descriptor_persistent, args=args, options=dict(num_warps=8, num_stages=3),
                grid=(min(NUM_SMS, tiles), ), problem=dict(M=M, N=N, K=K, dtype="fp16", B="N x K"))
