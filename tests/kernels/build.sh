#!/usr/bin/env bash
# Compile each kernel of this folder to PTX, as a kernel engineer would, twice: as written and
# with -DBUG (the buggy version). The PTX is committed, so the tests run without nvcc; this
# script regenerates it (nvcc from PyPI, as tests/hw/compile_all.sh installs it):
#
#   bash tests/kernels/build.sh            # writes NAME.ptx and NAME-bug.ptx
#
# The litmus tests (NAME.litmus, NAME-bug.litmus) paste the kernel body (from its `{` to its
# `}`) unchanged; tests/kernels.rs checks that they still do.
set -euo pipefail
cd "$(dirname "$0")"
NVCC=${NVCC:-$(command -v nvcc || find "${PTXMM_NVCC_DIR:-$HOME/.cache/ptxmm-nvcc}" -path '*/bin/nvcc' -type f | head -n 1)}
if [ -z "$NVCC" ]; then
    echo "no nvcc: install it with bash tests/hw/compile_all.sh (it fetches nvcc from PyPI), or set NVCC" >&2
    exit 1
fi
"$NVCC" --version | tail -n 2
for cu in *.cu; do
    name=${cu%.cu}
    "$NVCC" -arch=sm_90a -ptx -std=c++17 -O3 -lineinfo "$cu" -o "$name.ptx"
    "$NVCC" -arch=sm_90a -ptx -std=c++17 -O3 -lineinfo -DBUG "$cu" -o "$name-bug.ptx"
    # nvcc writes the absolute path of the source in `.file`: keep it relative to this folder.
    sed -i "s|\"$PWD/|\"|" "$name.ptx" "$name-bug.ptx"
    echo "$name: $(grep -c . "$name.ptx") / $(grep -c . "$name-bug.ptx") lines of PTX"
done
