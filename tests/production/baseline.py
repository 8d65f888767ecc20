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
        for p in SCALARS.get(r["file"], []):
            args += ["--param", p]
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
