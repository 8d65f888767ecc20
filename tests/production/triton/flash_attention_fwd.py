"""Flash-attention forward in the style of Triton's tutorial 06-fused-attention (_attn_fwd):
O = softmax(Q K^T * sm_scale) V per (batch, head), fp16 in, fp32 online softmax (exp2, running
max m_i and sum l_i), fp16 out, plus the log-sum-exp M for the backward pass. Q, K, V and O are
host-side TensorDescriptors over the (Z*H*N_CTX, HEAD_DIM) view (blocks 128x64 for Q/O, 64x64 for
K/V), so loads and the store are TMA; both dots are wgmma; the K/V loop is pipelined over
num_stages = 3 buffers. Non-causal (STAGE = 1: the tutorial's `stage = 3 if causal else 1`).

Problem: Z = 1, H = 2, N_CTX = 256 (the K/V loop runs N_CTX / BLOCK_N = 4 = stages + 1 times),
HEAD_DIM = 64, BLOCK_M = 128, BLOCK_N = 64, num_warps = 4. Grid: (N_CTX / BLOCK_M, Z * H) = (2, 2).
"""
import triton
import triton.language as tl


@triton.jit
def _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype: tl.constexpr, start_m, qk_scale,
                    BLOCK_M: tl.constexpr, HEAD_DIM: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr,
                    offs_m: tl.constexpr, offs_n: tl.constexpr, N_CTX: tl.constexpr):
    # range of values handled by this stage
    if STAGE == 1:
        lo, hi = 0, start_m * BLOCK_M
    elif STAGE == 2:
        lo, hi = start_m * BLOCK_M, (start_m + 1) * BLOCK_M
        lo = tl.multiple_of(lo, BLOCK_M)
    else:  # non-causal
        lo, hi = 0, N_CTX
    offsetk_y = offset_y + lo
    offsetv_y = offset_y + lo
    for start_n in tl.range(lo, hi, BLOCK_N):
        start_n = tl.multiple_of(start_n, BLOCK_N)
        k = desc_k.load([offsetk_y, 0]).T
        qk = tl.dot(q, k)
        if STAGE == 2:
            mask = offs_m[:, None] >= (start_n + offs_n[None, :])
            qk = qk * qk_scale + tl.where(mask, 0, -1.0e6)
            m_ij = tl.maximum(m_i, tl.max(qk, 1))
            qk -= m_ij[:, None]
        else:
            m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
            qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        alpha = tl.math.exp2(m_i - m_ij)
        l_ij = tl.sum(p, 1)
        acc = acc * alpha[:, None]
        v = desc_v.load([offsetv_y, 0])
        p = p.to(dtype)
        acc = tl.dot(p, v, acc)
        l_i = l_i * alpha + l_ij
        m_i = m_ij
        offsetk_y += BLOCK_N
        offsetv_y += BLOCK_N
    return acc, l_i, m_i


@triton.jit
def _attn_fwd(sm_scale, M, Z, H, desc_q, desc_k, desc_v, desc_o, N_CTX,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, STAGE: tl.constexpr):
    dtype = tl.float16
    tl.static_assert(BLOCK_N <= HEAD_DIM)
    start_m = tl.program_id(0)
    off_hz = tl.program_id(1)
    off_z = off_hz // H
    off_h = off_hz % H
    offset_y = off_z * (N_CTX * H) + off_h * N_CTX
    qo_offset_y = offset_y + start_m * BLOCK_M
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    qk_scale = sm_scale
    qk_scale *= 1.44269504  # 1/log(2)
    q = desc_q.load([qo_offset_y, 0])
    # stage 1: off-band (or the whole row when not causal)
    if STAGE & 1:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype, start_m, qk_scale,
                                        BLOCK_M, HEAD_DIM, BLOCK_N, 4 - STAGE, offs_m, offs_n, N_CTX)
    # stage 2: on-band (causal only)
    if STAGE & 2:
        acc, l_i, m_i = _attn_fwd_inner(acc, l_i, m_i, q, desc_k, desc_v, offset_y, dtype, start_m, qk_scale,
                                        BLOCK_M, HEAD_DIM, BLOCK_N, 2, offs_m, offs_n, N_CTX)
    m_i += tl.math.log2(l_i)
    acc = acc / l_i[:, None]
    m_ptrs = M + off_hz * N_CTX + offs_m
    tl.store(m_ptrs, m_i)
    desc_o.store([qo_offset_y, 0], acc.to(dtype))


def launch():
    from tcompile import FakeTensor
    from triton.tools.tensor_descriptor import TensorDescriptor
    Z, H, N_CTX, HEAD_DIM = 1, 2, 256, 64
    BM, BN = 128, 64
    y_dim = Z * H * N_CTX
    q, k, v, o = (FakeTensor((Z, H, N_CTX, HEAD_DIM), tag=t) for t in (0xA, 0xB, 0xC, 0xD))
    lse = FakeTensor((Z, H, N_CTX), dtype="float32", tag=0xE)
    desc_q = TensorDescriptor(q, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BM, HEAD_DIM])
    desc_k = TensorDescriptor(k, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BN, HEAD_DIM])
    desc_v = TensorDescriptor(v, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BN, HEAD_DIM])
    desc_o = TensorDescriptor(o, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=[BM, HEAD_DIM])
    args = dict(sm_scale=0.125, M=lse, Z=Z, H=H, desc_q=desc_q, desc_k=desc_k, desc_v=desc_v, desc_o=desc_o,
                N_CTX=N_CTX, HEAD_DIM=HEAD_DIM, BLOCK_M=BM, BLOCK_N=BN, STAGE=1)
    return dict(kernel=_attn_fwd, args=args, options=dict(num_warps=4, num_stages=3),
                grid=(triton.cdiv(N_CTX, BM), Z * H), problem=dict(Z=Z, H=H, N_CTX=N_CTX, HEAD_DIM=HEAD_DIM,
                                                                   causal=False, dtype="fp16"))
