#!/usr/bin/env bash
# Run the tests of this ptxmm hw campaign on this machine's GPU: one test per process, N at once,
# each killed after a deadline; a test whose output is complete is skipped, so running the script
# again resumes an interrupted campaign. Judge the outputs anywhere with `ptxmm hw judge BUNDLE`.
#
#   bash run.sh [--jobs N] [--deadline SECONDS] [--shard I/N] [--out DIR] [-- HARNESS-FLAGS...]
#
#   --jobs N         processes at once (default 8)
#   --deadline S     wall-clock limit of one test's process, CUDA set-up included (default 120)
#   --shard I/N      only the tests whose index is I modulo N (0 <= I < N)
#   --out DIR        where the outputs go (default: out/ beside this script)
#   HARNESS-FLAGS    passed to every program (--iterations N, --instances N, --stress W, ...)
#
# Each output out/K.out is what test K's process printed, ended by `exit RC wall_ms MS` (RC 124
# or 137: killed at the deadline). Needs bash, GNU coreutils (timeout, date) and xargs.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
jobs=8
deadline=120
shard=0/1
out=$here/out
extra=()
while [ $# -gt 0 ]; do
    case $1 in
        --jobs) jobs=${2:?--jobs needs a number}; shift 2 ;;
        --deadline) deadline=${2:?--deadline needs seconds}; shift 2 ;;
        --shard) shard=${2:?--shard needs I/N}; shift 2 ;;
        --out) out=${2:?--out needs a folder}; shift 2 ;;
        --) shift; extra=("$@"); break ;;
        -h | --help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "run.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
    esac
done
case $shard in
    [0-9]*/[0-9]*) ;;
    *) echo "run.sh: --shard expects I/N, found $shard" >&2; exit 2 ;;
esac
part=${shard%/*}
parts=${shard#*/}
if [ "$parts" -lt 1 ] || [ "$part" -ge "$parts" ]; then
    echo "run.sh: --shard $shard: I must be below N" >&2
    exit 2
fi
for tool in timeout xargs date; do
    command -v "$tool" >/dev/null || { echo "run.sh: needs $tool" >&2; exit 2; }
done
missing=$(awk -F'\t' '!/^#/ && $4 == "ok" {print $3}' "$here/manifest.tsv" | sort -u | while read -r p; do
    [ -x "$here/bin/$p" ] || echo "$p"
done)
if [ -n "$missing" ]; then
    echo "run.sh: programs missing from bin/: $(echo $missing) (build them with: bash build.sh)" >&2
    exit 2
fi
mkdir -p "$out"

run_one() {
    local idx=$1 id=$2 prog=$3 f="$OUT/$1.out"
    if [ -f "$f" ] && grep -q '^exit ' "$f"; then
        return 0
    fi
    local t0 t1 rc
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    timeout -k 5 "$DEADLINE" "$HERE/bin/$prog" $EXTRA "$id" >"$f.part" 2>"$f.err"
    rc=$?
    t1=$(date +%s%N)
    if [ "$rc" -ne 0 ] && [ -s "$f.err" ] && ! grep -q '^error' "$f.part"; then
        printf 'error %s\n' "$(tr '\n' ' ' <"$f.err" | tr -cd '[:print:]' | head -c 500)" >>"$f.part"
    fi
    printf 'exit %d wall_ms %d\n' "$rc" $(((t1 - t0) / 1000000)) >>"$f.part"
    mv "$f.part" "$f"
    rm -f "$f.err"
    echo "$idx $id: exit $rc"
}
export -f run_one
export OUT=$out HERE=$here DEADLINE=$deadline EXTRA="${extra[*]:-}"

total=$(awk -F'\t' -v i="$part" -v n="$parts" '!/^#/ && $4 == "ok" && $1 % n == i' "$here/manifest.tsv" | wc -l)
echo "run.sh: $total tests (shard $shard), $jobs at once, deadline ${deadline}s, outputs in $out"
start=$(date +%s)
awk -F'\t' -v i="$part" -v n="$parts" '!/^#/ && $4 == "ok" && $1 % n == i {print $1, $2, $3}' "$here/manifest.tsv" |
    xargs -P "$jobs" -L 1 bash -c 'run_one "$0" "$1" "$2"'
done=$(find "$out" -name '*.out' | wc -l)
echo "run.sh: done in $(($(date +%s) - start))s; $done outputs in $out; judge with: ptxmm hw judge $here"
