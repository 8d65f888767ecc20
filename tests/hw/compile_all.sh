#!/usr/bin/env bash
# Compile the hardware harness (`ptxmm hw gen`) of every test in tests/async (and the own tests of
# tests/async_section, tests/litmus, tests/hw, tests/isa, tests/tensor, tests/ptx and tests/kernels) and of every Dat3M
# PTX test in ../shared for sm_90a, with nvcc from PyPI (no GPU needed): ptxas must accept every
# instruction the generator emits. Skips, with a visible message, where nvcc cannot be installed
# or ../shared is absent. Tests are generated many per program (`--chunks`) and the programs are
# compiled in parallel (object files only: nothing is linked or run).
#
#   bash tests/hw/compile_all.sh            (CI: called from .ci/run)
#   JOBS=4 NVCC=/usr/local/cuda/bin/nvcc bash tests/hw/compile_all.sh
set -uo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
PTXMM=${PTXMM:-target/release/ptxmm}
JOBS=${JOBS:-2}
ARCH=${ARCH:-sm_90a}
NVCC_DIR=${PTXMM_NVCC_DIR:-$HOME/.cache/ptxmm-nvcc}
DAT3M=../shared/peers/dat3m/litmus/PTX

if [ ! -x "$PTXMM" ]; then
    cargo build --release --quiet || exit 1
fi

find_nvcc() {
    if [ -n "${NVCC:-}" ] && [ -x "$NVCC" ]; then echo "$NVCC"; return; fi
    if command -v nvcc >/dev/null 2>&1; then command -v nvcc; return; fi
    if [ -n "${CUDA_HOME:-}" ] && [ -x "$CUDA_HOME/bin/nvcc" ]; then echo "$CUDA_HOME/bin/nvcc"; return; fi
    find "$NVCC_DIR" -path '*/bin/nvcc' -type f 2>/dev/null | head -n 1
}

nvcc=$(find_nvcc)
if [ -z "$nvcc" ]; then
    echo "hw compile: installing nvcc from PyPI into $NVCC_DIR"
    if ! python3 -m pip install --quiet --disable-pip-version-check --target "$NVCC_DIR" \
        nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-cccl >/tmp/ptxmm-hw-pip.log 2>&1; then
        echo "SKIPPED hw compile: cannot install nvcc from PyPI (see /tmp/ptxmm-hw-pip.log)"
        exit 0
    fi
    nvcc=$(find_nvcc)
    if [ -z "$nvcc" ]; then
        echo "SKIPPED hw compile: the PyPI packages installed no nvcc"
        exit 0
    fi
fi
echo "hw compile: $("$nvcc" --version | tail -n 2 | head -n 1) ($nvcc), arch $ARCH, $JOBS jobs"

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0

# gen SUITE_NAME CHUNKS PATH...: generate, and check that every test the model accepts is generated
# except the known rejections (counted, listed).
gen() {
    local name=$1 chunks=$2
    shift 2
    mkdir -p "$out/$name"
    "$PTXMM" hw gen "$@" -o "$out/$name" --chunks "$chunks" --arch "$ARCH" --keep-going \
        >"$out/$name.gen" 2>"$out/$name.rejected"
    local rc=$?
    cat "$out/$name.gen"
    if [ -s "$out/$name.rejected" ]; then
        echo "  rejections by reason:"
        sed 's/.*cannot generate a hardware harness for [^:]*: //; s/`[^`]*`/`…`/' "$out/$name.rejected" | sort | uniq -c | sort -rn | sed 's/^/   /'
    fi
    if [ $rc -ne 0 ]; then
        echo "FAILED hw gen $name (exit $rc)"
        status=1
    fi
}

gen async 2 tests/async
gen own 1 tests/async_section tests/litmus tests/hw tests/isa
gen tensor 1 tests/tensor
gen ptx 1 tests/ptx tests/kernels
# The families `ptxmm gen` writes (docs/for-researchers.md): every cycle of size 4 over the
# generic edges, the asynchronous ones and the read-modify-write ones, as a researcher would run
# them on a GPU.
if ! { "$PTXMM" gen --family --size 4 -o "$out/family-generic-src" &&
    "$PTXMM" gen --family --size 4 --async -o "$out/family-async-src" &&
    "$PTXMM" gen --family --size 4 --rmw -o "$out/family-rmw-src"; } >"$out/family.log" 2>&1; then
    cat "$out/family.log"
    echo "FAILED ptxmm gen --family"
    status=1
fi
gen gen-generic 2 "$out/family-generic-src"
gen gen-async 1 "$out/family-async-src"
gen gen-rmw 1 "$out/family-rmw-src"
if [ -d "$DAT3M" ]; then
    gen dat3m 6 "$DAT3M"
else
    echo "SKIPPED hw compile of Dat3M tests: $DAT3M is absent"
fi

compile_one() {
    local cu=$1
    if "$nvcc" -O2 -std=c++17 -gencode "arch=compute_${ARCH#sm_},code=$ARCH" -c -o "${cu%.cu}.o" "$cu" >"${cu%.cu}.log" 2>&1; then
        echo "ok $cu"
    else
        echo "FAILED nvcc $cu"
        grep -v Advisory "${cu%.cu}.log" | head -n 20
    fi
}
export -f compile_one
export nvcc ARCH
compiled=$(ls "$out"/*/*.cu | xargs -P "$JOBS" -I{} bash -c 'compile_one {}')
echo "$compiled" | grep -v '^ok ' || true
files=$(ls "$out"/*/*.cu | wc -l)
ok=$(echo "$compiled" | grep -c '^ok ')
tests=$(cat "$out"/*.gen | awk '{for (i = 1; i < NF; i++) if ($(i + 1) == "generated") n += $i} END {print n + 0}')
echo "hw compile: $ok of $files programs ($tests tests) compiled for $ARCH in $(( $(date +%s) - start )) s"
if [ "$ok" -ne "$files" ]; then
    status=1
fi
exit $status
