#!/usr/bin/env bash
# The Python package (docs/python.md): build the wheel with maturin, install it in a fresh virtual
# environment, and run the API's tests (pytest), the Triton tests where Triton installs (it needs
# no GPU: kernels compile for sm_90). Where Python, pip, maturin or pytest cannot be had, it says
# "skipped: ..." and exits 0; a test that fails fails CI.
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET=${CARGO_TARGET_DIR:-target}
BUILD_VENV=$TARGET/python-build-venv
TEST_VENV=$TARGET/python-test-venv
WHEELS=$TARGET/wheels
skip() { echo "skipped: $*"; exit 0; }
command -v python3 >/dev/null || skip "no python3"
if [ ! -x "$BUILD_VENV/bin/python" ]; then
    python3 -m venv "$BUILD_VENV" >/dev/null 2>&1 || skip "python3 cannot make a virtual environment (python3-venv)"
fi
"$BUILD_VENV/bin/pip" install -q --disable-pip-version-check 'maturin>=1.5,<2' >/dev/null 2>&1 || skip "pip cannot install maturin"
rm -rf "$WHEELS" && mkdir -p "$WHEELS"
# Its own target folder: the extension is built without the root package's debug info.
CARGO_TARGET_DIR=$TARGET/python "$BUILD_VENV/bin/maturin" build --release --quiet -o "$WHEELS"
WHEEL=$(ls "$WHEELS"/ptxmm-*.whl)
# A fresh environment each run: the test is of the wheel as a user installs it.
rm -rf "$TEST_VENV"
python3 -m venv "$TEST_VENV"
"$TEST_VENV/bin/pip" install -q --disable-pip-version-check "$WHEEL"
"$TEST_VENV/bin/pip" install -q --disable-pip-version-check 'pytest>=7' >/dev/null 2>&1 || skip "pip cannot install pytest"
if ! "$TEST_VENV/bin/pip" install -q --disable-pip-version-check 'triton>=3.2' >/dev/null 2>&1; then
    echo "skipped: the Triton tests (pip cannot install triton here); the API tests run"
fi
# The `ptxmm` the tests run is the wheel's (its console script), not a cargo build.
PATH="$PWD/$TEST_VENV/bin:$PATH" "$TEST_VENV/bin/python" -m pytest -q -p no:cacheprovider tests/python
