"""Triton kernels checked as compiled (for sm_90, no GPU): a pipelined loop, and a buggy variant
whose finding is at its Python line."""

import inspect
import json
import subprocess

import pytest

triton = pytest.importorskip("triton", reason="Triton is not installed (pip install triton)")

import ptxmm
import ptxmm.triton as pt
import triton_kernels as tk

N_COLS = 256
BLOCK = 64


def call(kernel, rows=2):
    return dict(args=(pt.Buffer("fp32", rows * N_COLS), pt.Buffer("fp32", rows * BLOCK), N_COLS), grid=(rows,),
                BLOCK=BLOCK, num_warps=1, num_stages=3)


def line_of(fn, text):
    lines, first = inspect.getsourcelines(fn.fn)
    return first + next(i for i, l in enumerate(lines) if text in l)


def test_the_pipelined_kernel_compiles_to_cp_async_and_has_no_finding():
    c = call(tk.row_sum)
    compiled = pt.compile(tk.row_sum, *c["args"], BLOCK=BLOCK, num_warps=1, num_stages=3)
    assert "cp.async" in compiled.ptx and compiled.num_warps == 1 and compiled.shared > 0
    r = pt.check(tk.row_sum, *c["args"], grid=c["grid"], BLOCK=BLOCK, num_warps=1, num_stages=3)
    assert r.ok, r.report
    assert r.summary == "no finding"
    assert r.launch["grid"] == [2, 1, 1] and r.launch["block"] == [32, 1, 1]


def test_the_buggy_kernel_races_at_its_store_line():
    c = call(tk.row_sum_shared_output)
    r = pt.check(tk.row_sum_shared_output, *c["args"], grid=c["grid"], BLOCK=BLOCK, num_warps=1, num_stages=3)
    assert r.found, r.report
    store = line_of(tk.row_sum_shared_output, "tl.store(")
    at_store = [f for f in r.races if any(s.source_line == store and s.source_file.endswith("triton_kernels.py") for s in f.sites)]
    assert at_store, r.report
    assert f"triton_kernels.py:{store}" in str(r)


def test_the_launch_file_reruns_from_the_shell(tmp_path):
    c = call(tk.row_sum_shared_output)
    ptx, launch = pt.launch_file(tk.row_sum_shared_output, *c["args"], path=tmp_path / "row_sum.ptx", grid=c["grid"],
                                 BLOCK=BLOCK, num_warps=1, num_stages=3)
    doc = json.load(open(launch))
    assert doc["grid"] == [2] and doc["block"] == 32 and doc["entry"] == "row_sum_shared_output"
    out = subprocess.run(["ptxmm", "kernel", ptx, "--launch", launch, "--json"], capture_output=True, text=True)
    assert out.returncode == 3, out.stderr
    assert json.loads(out.stdout)["races"]


def test_a_tensor_descriptor_is_a_tensor_map():
    desc = pt.Descriptor("fp32", shape=[64, 32], block_shape=[32, 32])
    args = (desc, pt.Buffer("fp32", 64 * 32), 32)
    compiled = pt.compile(tk.tile_copy, *args, BM=32, BN=32, num_warps=4)
    assert "cp.async.bulk.tensor.2d" in compiled.ptx
    assert compiled.tensor_maps == {"param_0": "f32,32x64,box=32x32,stride=128,swizzle=128B"}
    # The descriptor's shape and strides are the parameters after its map.
    assert [compiled.params[f"param_{i}"] for i in range(1, 5)] == [64, 32, 32, 1]
    r = pt.check(tk.tile_copy, *args, grid=(2,), BM=32, BN=32, num_warps=4)
    assert r.ok, r.report
    assert any("tensor map of f32 32x64" in b for b in r.record["parameters"]), r.record["parameters"]
