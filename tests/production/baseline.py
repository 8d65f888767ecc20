#!/usr/bin/env python3
"""Run ptxmm on every kernel of kernels.csv with the launch the manifest records, and print what
it says (README.md's baseline table).

    cargo build --release
    python3 tests/production/baseline.py [--ptxmm target/release/ptxmm] [--timeout 60] [FILTER]

Each kernel is checked as `ptxmm kernel FILE --entry E --block B --grid G [--cluster C]`; the
first line of its diagnostic (or its verdict) is reported with the exit status and the time.
"""
import argparse
import csv
import os
import re
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))

# The scalar parameters a user passes (the values of the manifest's problem), by file.
SCALARS = {
    "deepgemm/sm90_bf16_gemm.ptx": ["param_1=256", "param_2=256", "param_3=448"],
    "deepgemm/sm90_bf16_gemm_multicast.ptx": ["param_1=512", "param_2=256", "param_3=448"],
    "deepgemm/sm90_fp8_gemm_1d2d.ptx": ["param_2=256", "param_3=256", "param_4=768"],
    "triton/matmul_pipelined.ptx": ["param_3=256", "param_4=256", "param_5=256", "param_6=256", "param_7=256",
                                    "param_8=256"],
    "triton/matmul_descriptor_persistent.ptx": ["param_3=256", "param_4=256", "param_5=256"],
    # sm_scale (0.125f as its bits: --param takes integers), H, then each descriptor's shape (512, 64) and strides (64, 1), N_CTX
    "triton/flash_attention_fwd.ptx": ["param_0=1040187392", "param_2=2"] + [
        f"param_{b + i}={v}" for b in (4, 9, 14, 19) for i, v in enumerate((512, 64, 64, 1))] + ["param_23=256"],
    "triton/softmax.ptx": ["param_2=1000", "param_3=1000", "param_4=1024", "param_5=1000"],
    "cub/device_transform.ptx": ["param_0=1024", "param_1=1", "param_2=0", "param_3=0", "param_4=0"],
    "cub/device_scan_inclusive_sum.ptx": ["param_3=0", "param_4=0", "param_5=0", "param_6=12288", "param_7=1"],
}


# What else a user passes: aggregate fields, buffers and tensor maps (the manifest's notes), by file.
BF16_A = "bf16,320x256x1,stride=640x163840,box=64x128x1,swizzle=128B"
CUTLASS_FIELDS = ["param_0+128=" + BF16_A, "param_0+384=" + BF16_A]
# The 72 B of the sm90 TMA epilogue's fusion params at +768: beta 0 (+768), alpha 1.0f (+800, as its
# bits), every pointer (beta_ptr, alpha_ptr, their arrays) null and every stride 0.
FUSION = ["--param", "param_0+768={" + ",".join("1065353216" if i == 8 else "0" for i in range(18)) + "}"]
FLAGS = {
    # Its epilogue's params at +768: alpha 1.0f (as its bits), beta 0, the four scalar pointers null.
    "cutlass/sm90_gemm_ws.ptx": ["--param", "param_0+0={256,256,320,1}", "--param", "param_0+640=32768",
                                 "--param", "param_0+768={1065353216,0,0,0,0,0,0,0,0,0}",
                                 "--param", "param_0+808=buffer:131072", "--param", "param_0+832=buffer:131072"]
    + [x for m in CUTLASS_FIELDS for x in ("--tensor-map", m)],
    "cutlass/sm90_gemm_pingpong.ptx": FUSION + ["--param", "param_0+0={0,256,256,320,1}", "--param", "param_0+640=32768"]
    + [x for m in CUTLASS_FIELDS for x in ("--tensor-map", m)]
    + ["--tensor-map", "param_0+896=bf16,256x256x1,stride=512x131072,box=64x32x1,swizzle=128B",
       "--tensor-map", "param_0+1152=bf16,256x256x1,stride=512x131072,box=64x32x1,swizzle=128B"],
    "cutlass/sm90_gemm_cooperative.ptx": FUSION + ["--param", "param_0+0={0,256,256,320,1}", "--param", "param_0+640=32768"]
    + [x for m in CUTLASS_FIELDS for x in ("--tensor-map", m)]
    + ["--tensor-map", "param_0+896=bf16,256x256x1,stride=512x131072,box=64x32x1,swizzle=128B",
       "--tensor-map", "param_0+1152=bf16,256x256x1,stride=512x131072,box=64x32x1,swizzle=128B"],
    "cutlass/sm90_gemm_cluster2x1_multicast.ptx": FUSION + ["--param", "param_0+0={0,256,256,320,1}", "--param", "param_0+640=32768",
                                                   "--tensor-map", "param_0+128=" + BF16_A, "--tensor-map",
                                                   "param_0+384=bf16,320x256x1,stride=640x163840,box=64x64x1,swizzle=128B",
                                                   "--tensor-map", "param_0+896=bf16,256x256x1,stride=512x131072,box=64x32x1,swizzle=128B",
                                                   "--tensor-map", "param_0+1152=bf16,256x256x1,stride=512x131072,box=64x32x1,swizzle=128B"],
    "cutlass/sm80_gemm_multistage.ptx": ["--param", "param_0+0={256,256,128}", "--param", "param_0+64=buffer:65536",
                                         "--param", "param_0+72=128", "--param", "param_0+112=buffer:65536",
                                         "--param", "param_0+120=128", "--param", "param_0+192=buffer:131072",
                                         "--param", "param_0+200=256", "--param", "param_0+272=buffer:131072",
                                         "--param", "param_0+280=256", "--param", "param_0+336=128"],
    "cute/sgemm_sm80_tn_hgemm.ptx": ["--param", "param_0+0={256,256,256}", "--param", "param_2=buffer:131072",
                                     "--param", "param_3+0=256", "--param", "param_7=buffer:131072", "--param", "param_8+0=256",
                                     "--param", "param_12=buffer:131072", "--param", "param_13+0=256"],
    "cute/wgmma_tma_sm90_tn.ptx": ["--param", "param_0+0={256,256,256}", "--param", "param_6=buffer:131072",
                                   "--param", "param_7+0=256",
                                   "--tensor-map", "param_3=f16,256x256,box=64x128,swizzle=128B",
                                   "--tensor-map", "param_5=f16,256x256,box=64x128,swizzle=128B"],
    "deepgemm/sm90_bf16_gemm.ptx": ["--tensor-map", "param_4=bf16,448x256,box=64x128,swizzle=128B",
                                    "--tensor-map", "param_5=bf16,448x256,box=64x128,swizzle=128B",
                                    "--tensor-map", "param_6=bf16,256x256,box=64x128,swizzle=128B"],
    "deepgemm/sm90_bf16_gemm_multicast.ptx": ["--tensor-map", "param_4=bf16,448x512,box=64x128,swizzle=128B",
                                              "--tensor-map", "param_5=bf16,448x256,box=64x128,swizzle=128B",
                                              "--tensor-map", "param_6=bf16,256x512,box=64x128,swizzle=128B"],
    "deepgemm/sm90_fp8_gemm_1d2d.ptx": ["--param", "param_0=buffer:48",
                                        "--tensor-map", "param_5=e4m3,768x256,box=128x128,swizzle=128B",
                                        "--tensor-map", "param_6=e4m3,768x256,box=128x128,swizzle=128B",
                                        "--tensor-map", "param_7=bf16,256x256,box=64x128,swizzle=128B",
                                        "--tensor-map", "param_8=f32,256x6,box=128x1"],
    "thunderkittens/bf16_h100_gemm.ptx": ["--param", "param_0+0=buffer:163840", "--param", "param_0+16=u64:256",
                                          "--param", "param_0+24=u64:320", "--param", "param_0+384=buffer:163840",
                                          "--param", "param_0+400=u64:320", "--param", "param_0+408=u64:256",
                                          "--param", "param_0+768=buffer:131072", "--param", "param_0+784=u64:256",
                                          "--param", "param_0+792=u64:256",
                                          "--tensor-map", "param_0+128=bf16,320x256x1x1x1,box=64x64x1x1x1,swizzle=128B",
                                          "--tensor-map", "param_0+512=bf16,256x320x1x1x1,box=64x64x1x1x1,swizzle=128B",
                                          "--tensor-map", "param_0+896=bf16,256x256x1x1x1,box=64x64x1x1x1,swizzle=128B"],
    "thunderkittens/mha_h100_fwd.ptx": ["--param", "param_0+1920=768", "--param", "param_0+1924=1",
                                        "--tensor-map", "param_0+128=bf16,64x768x1x1x1,box=64x64x1x1x1,swizzle=128B",
                                        "--tensor-map", "param_0+512=bf16,64x768x1x1x1,box=64x128x1x1x1,swizzle=128B",
                                        "--tensor-map", "param_0+896=bf16,64x768x1x1x1,box=64x128x1x1x1,swizzle=128B",
                                        "--tensor-map", "param_0+1280=f32,768x1x1x1x1,box=64x1x1x1x1",
                                        "--tensor-map", "param_0+1664=bf16,64x768x1x1x1,box=64x64x1x1x1,swizzle=128B"],
    "triton/matmul_pipelined.ptx": ["--param", "param_0=buffer:131072", "--param", "param_1=buffer:131072",
                                    "--param", "param_2=buffer:131072"],
    # The device-side descriptors: A, B, C (fp16, 256x256) and the global scratch the kernel
    # builds their tensor maps in (grid * 384 B).
    "triton/matmul_descriptor_persistent.ptx": ["--param", "param_0=buffer:131072", "--param", "param_1=buffer:131072",
                                                "--param", "param_2=buffer:131072", "--param", "param_6=buffer:1536"],
    "triton/matmul_tma_persistent.ptx": ["--tensor-map", "param_0=f16,256x256,box=64x128,swizzle=128B",
                                         "--tensor-map", "param_5=f16,256x256,box=64x128,swizzle=128B",
                                         "--tensor-map", "param_10=f16,256x256,box=128x128"],
    "triton/flash_attention_fwd.ptx": ["--param", "param_1=buffer:2048",
                                       "--tensor-map", "param_3=f16,64x512,box=64x128,swizzle=128B",
                                       "--tensor-map", "param_8=f16,64x512,box=64x64,swizzle=128B",
                                       "--tensor-map", "param_13=f16,64x512,box=64x64,swizzle=128B",
                                       "--tensor-map", "param_18=f16,64x512,box=64x128,swizzle=128B"],
    "triton/softmax.ptx": ["--param", "param_0=buffer:4096000", "--param", "param_1=buffer:4096000"],
    "cub/device_transform.ptx": ["--param", "param_5=buffer:4096", "--param", "param_6+0=buffer:4096",
                                 "--param", "param_6+8=0"],
    # FA3's TMA maps in its Params (the manifest's notes): Q, K, V (bf16 rank 4) and O (rank 5).
    "flash-attention/fa3_fwd_hdim64_bf16_sm90.ptx": [
        "--tensor-map", "param_0+512=bf16,64x384x2x1,box=64x192x1x1,swizzle=128B",
        "--tensor-map", "param_0+768=bf16,64x576x2x1,box=64x192x1x1,swizzle=128B",
        "--tensor-map", "param_0+1024=bf16,64x576x2x1,box=64x192x1x1,swizzle=128B",
        "--tensor-map", "param_0+2432=bf16,64x384x2x1x1,box=64x192x1x1x1,swizzle=128B"],
    "cub/device_scan_inclusive_sum.ptx": ["--param", "param_0=buffer:49152", "--param", "param_1=buffer:49152",
                                          "--param", "param_2+0=buffer:1024"],
}


def flatten(shape):
    x, y, z = (int(v) for v in shape.split(","))
    return f"{x * y * z},1,1"
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


def first_message(out):
    lines = [re.sub(r"\x1b\[[0-9;]*m", "", l).rstrip() for l in out.splitlines()]
    lines = [l for l in lines if l.strip()]
    for l in lines:
        if re.match(r"^(error|warning)(\[\w+\])?:", l):
            return l
    return lines[0] if lines else ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ptxmm", default=os.path.join(REPO, "target", "release", "ptxmm"))
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--extra", action="append", default=[], help="an extra ptxmm argument (repeatable)")
    ap.add_argument("--deeper", action="store_true",
                    help="go past the launch checks: flatten 2-D/3-D grids to X*Y*Z CTAs and cap the grid at the "
                         "CTAs that get work (not the real launch: only to see the next diagnostic)")
    ap.add_argument("filter", nargs="?", default="")
    a = ap.parse_args()
    with open(os.path.join(HERE, "kernels.csv")) as f:
        rows = list(csv.DictReader(f))
    print("| # | file | command (after `ptxmm kernel FILE`) | rc | s | first message |")
    print("|---|---|---|---|---|---|")
    for i, r in enumerate(rows):
        if a.filter not in r["file"]:
            continue
        grid = r["grid"]
        if a.deeper:
            grid = flatten(grid)
            if r["file"] == "thunderkittens/bf16_h100_gemm.ptx":
                grid = "2,1,1"  # the 2 of its 132 persistent CTAs that get a tile for M=N=256
        args = ["--entry", r["entry"], "--block", r["block"], "--grid", grid]
        if r["cluster"] and r["cluster"] != "1,1,1":
            args += ["--cluster", r["cluster"]]
        if r["dynamic_smem"] and r["dynamic_smem"] != "0":
            args += ["--dynamic-smem", r["dynamic_smem"]]
        x, y, z = (int(v) for v in grid.split(","))
        if x * y * z > 64:
            args += ["--ctas", "0-1"]  # the CTAs that get work (a persistent grid's first two)
        for p in SCALARS.get(r["file"], []):
            args += ["--param", p]
        args += FLAGS.get(r["file"], [])
        args += a.extra
        path = os.path.join(HERE, r["file"])
        t0 = time.time()
        try:
            p = subprocess.run([a.ptxmm, "kernel", path, "--color", "never"] + args, capture_output=True, text=True,
                               timeout=a.timeout)
            rc, out = p.returncode, p.stderr + "\n" + p.stdout
        except subprocess.TimeoutExpired as e:
            rc, out = "timeout", (e.stderr or b"").decode() if isinstance(e.stderr, bytes) else (e.stderr or "")
        dt = time.time() - t0
        shown = " ".join(x if x != r["entry"] else "E" for x in args)
        msg = first_message(out).replace(r["entry"], "E").replace("|", "\\|")
        if len(msg) > 300:
            msg = msg[:300] + "..."
        print(f"| {i + 1} | {r['file']} | `{shown}` | {rc} | {dt:.1f} | {msg} |", flush=True)


if __name__ == "__main__":
    main()
