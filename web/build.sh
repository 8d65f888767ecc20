#!/usr/bin/env bash
# Build the web playground into web/dist: ptxmm compiled to WebAssembly (the `web` profile of
# web/Cargo.toml) plus the static page (web/page). Publish it by copying web/dist to any static
# file server; `ptxmm serve` serves it on localhost.
set -euo pipefail
cd "$(dirname "$0")/.."
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || true
cargo build --manifest-path web/Cargo.toml --target wasm32-unknown-unknown --profile web --target-dir target/web
rm -rf web/dist
mkdir -p web/dist
cp web/page/* web/dist/
cp target/web/wasm32-unknown-unknown/web/ptxmm_web.wasm web/dist/
echo "web/dist: $(du -b web/dist/ptxmm_web.wasm | cut -f1) bytes of WebAssembly; serve it with \`ptxmm serve\` or any static file server"
