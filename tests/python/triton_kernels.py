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
