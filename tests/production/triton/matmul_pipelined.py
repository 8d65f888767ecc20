"""Tiled matmul with a software-pipelined K loop, in the style of Triton's tutorial
03-matrix-multiplication: C = A @ B, fp16 in, fp32 accumulate, fp16 out, grouped program
ordering (GROUP_SIZE_M = 8), the tutorial's first sm90 config BLOCK 128x256x64, num_warps = 8,
num_stages = 3. Loads are pointer-based (tl.load on a block of pointers with masks), so on sm_90
the pipeliner turns them into cp.async copies into a 3-buffer shared ring (cp.async.commit_group /
wait_group), and tl.dot becomes wgmma.

Problem: M = N = 256, K = (3 + 1) * 64 = 256, A row-major (stride_ak = 1), B row-major
(stride_bn = 1), C row-major (stride_cn = 1): the unit strides are specialized to constexprs, as
the JIT does. Grid: cdiv(M, 128) * cdiv(N, 256) = 2 programs.
"""
import triton
import triton.language as tl


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                  stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def launch():
    from tcompile import FakeTensor
    M, N, K = 256, 256, 256
    BM, BN, BK = 128, 256, 64
    a, b, c = FakeTensor((M, K), tag=0xA), FakeTensor((K, N), tag=0xB), FakeTensor((M, N), tag=0xC)
    args = dict(a_ptr=a, b_ptr=b, c_ptr=c, M=M, N=N, K=K,
                stride_am=a.stride(0), stride_ak=a.stride(1), stride_bk=b.stride(0), stride_bn=b.stride(1),
                stride_cm=c.stride(0), stride_cn=c.stride(1),
                BLOCK_SIZE_M=BM, BLOCK_SIZE_N=BN, BLOCK_SIZE_K=BK, GROUP_SIZE_M=8)
    return dict(kernel=matmul_kernel, args=args, options=dict(num_warps=8, num_stages=3),
                grid=(triton.cdiv(M, BM) * triton.cdiv(N, BN), ), problem=dict(M=M, N=N, K=K, dtype="fp16"))
