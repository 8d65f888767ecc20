#!/usr/bin/env bash
# A short run of every fuzz target (a few thousand executions each, under a minute together),
# seeded from the repository's tests. Skipped, with a message, without nightly and cargo-fuzz.
# Longer sessions: docs/robustness.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    echo "fuzz smoke run SKIPPED: needs a nightly toolchain and cargo-fuzz (cargo install cargo-fuzz)"
    exit 0
fi
RUNS=${FUZZ_RUNS:-3000}
SECONDS_EACH=${FUZZ_SECONDS:-12}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/litmus" "$work/cat"
find tests examples -name '*.litmus' -size -8k -exec cp {} "$work/litmus/" \; 2>/dev/null || true
cp models/*.cat tests/cat/*.cat "$work/cat/" 2>/dev/null || true
for target in parse_lower decide explain_liveness cat_model cat_defs; do
    if [ "$target" = cat_model ] || [ "$target" = cat_defs ]; then seeds="$work/cat"; dict=fuzz/cat.dict; else seeds="$work/litmus"; dict=fuzz/litmus.dict; fi
    mkdir -p "$work/corpus-$target"
    echo "fuzz smoke: $target ($RUNS runs or ${SECONDS_EACH}s)"
    cargo +nightly fuzz run --fuzz-dir fuzz "$target" "$work/corpus-$target" "$seeds" -- \
        -dict="$dict" -runs="$RUNS" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=2048 -max_len=4096 2>&1 | tail -3
done
