#!/usr/bin/env bash
# Rebuild the production kernel set of this folder: each kernel's PTX (sm_90a, -lineinfo) from
# our instantiation source, and, for the C++ kernels, the host-only "layout" program that prints
# what the host launches (block, grid, cluster, dynamic shared memory, Params offsets, tensor
# maps) into NAME.layout.txt. CI has no compiler: the outputs are committed; this script is how
# they were made. It installs nothing.
#
#   CUTLASS_DIR=... DEEPGEMM_DIR=... TK_DIR=... FA_DIR=... bash tests/production/build.sh [PROJECT...]
#
# PROJECT is any of: cutlass cute deepgemm thunderkittens triton cub flash-attention (default:
# all). A project whose directory variable is unset is skipped with a message. LAYOUT=0 skips
# the layout programs (the slow part: 30-70 s each), rebuilding only the PTX.
#
# Library trees (not copied here; extract the pinned commit, e.g.
#   git --git-dir=MIRROR archive COMMIT include tools/util/include examples | tar -x -C DIR):
#   CUTLASS_DIR           NVIDIA/cutlass 7107b05535f8977f5ecb9d01ee203205b1fd9bc4 (4.7.0): include/,
#                         tools/util/include/, examples/cute/tutorial/  (cutlass/, cute/)
#   DEEPGEMM_DIR          deepseek-ai/DeepGEMM 54e22612409371d6364144b69086735beb54e98b (deep_gemm/include)
#   DEEPGEMM_CUTLASS_DIR  its third-party/cutlass submodule, NVIDIA/cutlass
#                         f3fde58372d33e9a5650ba7b80fc48b3b49d40c8 (4.2.1); default $DEEPGEMM_DIR/third-party/cutlass
#   TK_DIR                HazyResearch/ThunderKittens 0b55588d2769dde0c7a9a606ffc015b0ca7a9551
#   FA_DIR                Dao-AILab/flash-attention 0251105a2fb19d2957484b7f023cd8c115286ced (hopper/)
#   FA_CUTLASS_DIR        its csrc/cutlass submodule, NVIDIA/cutlass
#                         7127592069c2fe01b041e174ba4345ef9b279671 (4.3.4); default $FA_DIR/csrc/cutlass
#   CCCL_DIR              CUB/libcu++ headers (CCCL 3.5, as nvcc 13.5 from PyPI ships them);
#                         default: the include/cccl next to nvcc
#   TRITON_PYTHON         a python with triton 3.9 (no torch, no GPU needed); default: python3
#   NVCC                  nvcc 13.5 (default: on PATH, else under ~/.cache/ptxmm-nvcc as
#                         tests/hw/compile_all.sh installs it from PyPI)
#
# `.file` paths in the PTX are made relative: our sources as tests/production/..., library files
# as cutlass/..., deepgemm/..., thunderkittens/..., flash-attention/..., cccl/..., cuda/include/...
set -euo pipefail
cd "$(dirname "$0")"
HERE=$PWD
REPO=$(cd ../.. && pwd)
NVCC=${NVCC:-$(command -v nvcc || find "${PTXMM_NVCC_DIR:-$HOME/.cache/ptxmm-nvcc}" -path '*/bin/nvcc' -type f | head -n 1)}
if [ -z "$NVCC" ]; then
    echo "no nvcc: install it with bash tests/hw/compile_all.sh (it fetches nvcc from PyPI), or set NVCC" >&2
    exit 1
fi
CUDA_ROOT=$(cd "$(dirname "$NVCC")/.." && pwd)
CCCL_DIR=${CCCL_DIR:-$CUDA_ROOT/include/cccl}
"$NVCC" --version | tail -n 2

# Flags every C++ kernel gets; each project adds what its own build uses.
PTX_FLAGS=(-arch=sm_90a -ptx -O3 -lineinfo -DNDEBUG --expt-relaxed-constexpr)
# The layout programs only need host code: device code stops at PTX (no ptxas).
HOST_FLAGS=(-gencode arch=compute_90a,code=compute_90a -O1 -DNDEBUG --expt-relaxed-constexpr
            -DPTXMM_HOST_LAYOUT -DCUTLASS_ENABLE_DIRECT_CUDA_DRIVER_CALL -L"$CUDA_ROOT/lib")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

skip() { echo "== $1: skipped ($2 is unset)"; }

need_dir() { # VAR: the directory must exist (a trailing / is dropped)
    if [ ! -d "${!1}" ]; then echo "$1=${!1} is not a directory" >&2; exit 1; fi
    printf -v "$1" '%s' "${!1%/}"
}

# relative FILE PREFIX=NAME...: rewrite absolute `.file` paths
relative() {
    local f=$1; shift
    local args=(-e "s|\"$REPO/|\"|" -e "s|\"$CUDA_ROOT/bin/../include/|\"cuda/include/|" -e "s|\"$CUDA_ROOT/include/|\"cuda/include/|")
    local m
    for m in "$@"; do
        args+=(-e "s|\"${m%%=*}/|\"${m#*=}/|")
    done
    sed -i "${args[@]}" "$f"
}

# ptx SRC MAPS -- NVCC-ARGS: SRC.cu -> SRC.ptx
ptx() {
    local src=$1; shift
    local maps=()
    while [ "$1" != "--" ]; do maps+=("$1"); shift; done
    shift
    local out=${src%.cu}.ptx
    local t0=$SECONDS
    # -frandom-seed: nvcc otherwise puts a per-run number into internal-linkage names
    # (`_ZN54_INTERNAL_..._31740...`), so the PTX would differ from build to build.
    "$NVCC" "${PTX_FLAGS[@]}" -frandom-seed="$src" "$@" "$src" -o "$out"
    relative "$out" "${maps[@]}"
    echo "$out: $(grep -c . "$out") lines, $(grep -c '^\.visible \.entry\|^\.entry' "$out") entry, $((SECONDS - t0)) s"
}

# layout SRC NVCC-ARGS: build SRC.cu as a host program and keep what it prints in SRC.layout.txt
layout() {
    local src=$1; shift
    [ "${LAYOUT:-1}" = 0 ] && return
    local out=${src%.cu}.layout.txt
    "$NVCC" "${HOST_FLAGS[@]}" "$@" "$src" -o "$TMP/layout"
    { echo "# $src: printed by its PTXMM_HOST_LAYOUT program (build.sh), no GPU"; "$TMP/layout" || echo "(exit status $?)"; } > "$out"
    echo "$out"
}

build_cutlass() {
    [ -n "${CUTLASS_DIR:-}" ] || { skip cutlass CUTLASS_DIR; return; }
    need_dir CUTLASS_DIR
    local inc=(-std=c++17 -diag-suppress 20012 -I"$CUTLASS_DIR/include" -I"$CUTLASS_DIR/tools/util/include")
    local f
    for f in cutlass/*.cu; do
        ptx "$f" "$CUTLASS_DIR=cutlass" -- "${inc[@]}"
        layout "$f" "${inc[@]}"
    done
}

build_cute() {
    [ -n "${CUTLASS_DIR:-}" ] || { skip cute CUTLASS_DIR; return; }
    need_dir CUTLASS_DIR
    local inc=(-std=c++17 -diag-suppress 20012 -I"$CUTLASS_DIR" -I"$CUTLASS_DIR/include" -I"$CUTLASS_DIR/tools/util/include")
    local f
    for f in cute/*.cu; do
        ptx "$f" "$CUTLASS_DIR=cutlass" -- "${inc[@]}"
        layout "$f" "${inc[@]}"
    done
}

build_deepgemm() {
    [ -n "${DEEPGEMM_DIR:-}" ] || { skip deepgemm DEEPGEMM_DIR; return; }
    need_dir DEEPGEMM_DIR
    local dgc=${DEEPGEMM_CUTLASS_DIR:-$DEEPGEMM_DIR/third-party/cutlass}
    [ -d "$dgc/include/cute" ] || { echo "DeepGEMM's cutlass submodule not found at $dgc: set DEEPGEMM_CUTLASS_DIR" >&2; exit 1; }
    # The flags of DeepGEMM's JIT (csrc/jit/compiler.hpp, NVCCCompiler): C++20, these diag-suppresses.
    local inc=(-std=c++20 --expt-extended-lambda --diag-suppress=39,161,174,177,186,940,550
               -I"$DEEPGEMM_DIR/deep_gemm/include" -I"$dgc/include")
    local f
    for f in deepgemm/*.cu; do
        ptx "$f" "$DEEPGEMM_DIR=deepgemm" "$dgc=deepgemm-cutlass" -- "${inc[@]}"
    done
}

build_thunderkittens() {
    [ -n "${TK_DIR:-}" ] || { skip thunderkittens TK_DIR; return; }
    need_dir TK_DIR
    # The flags of ThunderKittens' kernels/common.mk for GPU=H100.
    local inc=(-std=c++20 --use_fast_math --expt-extended-lambda -DKITTENS_HOPPER -diag-suppress 2361
               -I"$TK_DIR" -I"$TK_DIR/include" -I"$TK_DIR/prototype")
    local f
    for f in thunderkittens/*.cu; do
        ptx "$f" "$TK_DIR=thunderkittens" -- "${inc[@]}"
        layout "$f" "${inc[@]}"
    done
}

build_flash_attention() {
    [ -n "${FA_DIR:-}" ] || { skip flash-attention FA_DIR; return; }
    need_dir FA_DIR
    local fac=${FA_CUTLASS_DIR:-$FA_DIR/csrc/cutlass}
    [ -d "$fac/include/cute" ] || { echo "FlashAttention's cutlass submodule not found at $fac: set FA_CUTLASS_DIR" >&2; exit 1; }
    # The flags of hopper/setup.py (nvcc_flags).
    local inc=(-std=c++17 --use_fast_math -DCUTE_SM90_EXTENDED_MMA_SHAPES_ENABLED -DCUTLASS_ENABLE_GDC_FOR_SM90
               -DCUTLASS_DEBUG_TRACE_LEVEL=0 -I"$FA_DIR/hopper" -I"$fac/include")
    local f
    for f in flash-attention/*.cu; do
        ptx "$f" "$FA_DIR=flash-attention" "$fac=flash-attention-cutlass" -- "${inc[@]}"
        layout "$f" "${inc[@]}"
    done
}

build_cub() {
    local inc=(-std=c++17 -I"$CCCL_DIR")
    local f
    for f in cub/*.cu; do
        ptx "$f" "$CCCL_DIR=cccl" -- "${inc[@]}"
        layout "$f" "${inc[@]}"
    done
}

build_triton() {
    local py=${TRITON_PYTHON:-python3}
    if ! "$py" -c 'import triton' 2>/dev/null; then
        echo "== triton: skipped ($py has no triton: set TRITON_PYTHON to a python with triton 3.9)"
        return
    fi
    echo "triton $("$py" -c 'import triton; print(triton.__version__)')"
    local f
    for f in triton/*.py; do
        [ "$(basename "$f")" = tcompile.py ] && continue
        (cd triton && TRITON_CACHE_DIR="$TMP/triton-cache" PYTHONPATH=. "$py" tcompile.py "$(basename "$f")")
    done
}

projects=("$@")
[ ${#projects[@]} -gt 0 ] || projects=(cutlass cute deepgemm thunderkittens triton cub flash-attention)
for p in "${projects[@]}"; do
    echo "== $p"
    case $p in
        cutlass) build_cutlass ;;
        cute) build_cute ;;
        deepgemm) build_deepgemm ;;
        thunderkittens) build_thunderkittens ;;
        triton) build_triton ;;
        cub) build_cub ;;
        flash-attention) build_flash_attention ;;
        *) echo "unknown project $p" >&2; exit 1 ;;
    esac
done
