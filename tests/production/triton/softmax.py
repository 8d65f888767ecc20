"""Row-wise fused softmax in the style of Triton's tutorial 02-fused-softmax: each of a few
persistent programs walks rows with stride num_programs (tl.range(..., num_stages=...)), loads a
row (masked to n_cols), subtracts the row max, exponentiates, divides by the row sum (warp
shuffles and a shared-memory reduction across warps), and stores it. fp32.

Problem: 1024 x 1000 fp32 (BLOCK_SIZE = next_power_of_2(1000) = 1024), num_warps = 8,
num_stages = 4 (the tutorial's value for sm_90 with >200 KB shared memory), grid = 4 programs
(the tutorial sizes it from occupancy: NUM_SM * occupancy; 4 keeps each program at 256 rows)."""
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


def launch():
    from tcompile import FakeTensor
    n_rows, n_cols = 1024, 1000
    x, y = FakeTensor((n_rows, n_cols), dtype="float32", tag=0xA), FakeTensor((n_rows, n_cols), dtype="float32", tag=0xB)
    args = dict(output_ptr=y, input_ptr=x, input_row_stride=n_cols, output_row_stride=n_cols, n_rows=n_rows,
                n_cols=n_cols, BLOCK_SIZE=triton.next_power_of_2(n_cols), num_stages=4)
    return dict(kernel=softmax_kernel, args=args, options=dict(num_warps=8), grid=(4, ),
                problem=dict(n_rows=n_rows, n_cols=n_cols, dtype="fp32"))
