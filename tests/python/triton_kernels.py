"""Triton kernels of the Python tests: a row sum whose K-loop Triton pipelines (`num_stages=3`:
cp.async into a 3-stage shared-memory ring), written back per program; and the same kernel with
the bug of a missing program offset, so that every program writes the same output words."""

import triton
import triton.language as tl


@triton.jit
def row_sum(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.range(0, n_cols, BLOCK, num_stages=3):
        offs = k + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + pid * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + pid * BLOCK + tl.arange(0, BLOCK), acc)


@triton.jit
def row_sum_shared_output(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for k in tl.range(0, n_cols, BLOCK, num_stages=3):
        offs = k + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + pid * n_cols + offs, mask=offs < n_cols, other=0.0)
    tl.store(out_ptr + tl.arange(0, BLOCK), acc)  # BUG: every program writes the same words


@triton.jit
def tile_copy(in_desc, out_ptr, N, BM: tl.constexpr, BN: tl.constexpr):
    """A tile loaded by TMA through a host tensor descriptor (cp.async.bulk.tensor + mbarrier),
    then stored per program."""
    pid = tl.program_id(0)
    tile = in_desc.load([pid * BM, 0])
    offs = (pid * BM + tl.arange(0, BM))[:, None] * N + tl.arange(0, BN)[None, :]
    tl.store(out_ptr + offs, tile)
