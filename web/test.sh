#!/usr/bin/env bash
# Browser tests of the web playground: build it (web/build.sh), serve it with `ptxmm serve`, and
# drive headless Chromium through web/test/browser.mjs. Screenshots and results go to
# target/web-test. Skips, with a message, where the wasm target, Node or Chromium cannot be had.
set -euo pipefail
cd "$(dirname "$0")/.."
skip() {
  echo "SKIPPED: web playground browser tests: $*"
  exit 0
}
started=$SECONDS
rustup target add wasm32-unknown-unknown >/dev/null 2>&1 || rustup target list --installed 2>/dev/null | grep -q wasm32-unknown-unknown ||
  skip "the wasm32-unknown-unknown target cannot be installed (rustup target add wasm32-unknown-unknown)"
command -v node >/dev/null && command -v npm >/dev/null || skip "node and npm are not installed"
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$CHROMIUM" ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing Debian's chromium (apt-get install chromium)"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; } ||
      skip "apt-get install chromium failed"
  fi
  [ -x "$CHROMIUM" ] || skip "no Chromium at $CHROMIUM (install Debian's chromium, or set CHROMIUM=/path/to/chrome)"
fi
export CHROMIUM
(cd web/test && npm ci --no-audit --no-fund --loglevel=error) || skip "npm ci (playwright-core) failed"

# The wasm-only code (the C ABI) is linted for its target; `cargo test --manifest-path
# web/Cargo.toml` (in .ci/run) covers the rest natively.
cargo clippy --manifest-path web/Cargo.toml --target wasm32-unknown-unknown --profile web --target-dir target/web -- -D warnings
bash web/build.sh
wasm_bytes=$(stat -c %s web/dist/ptxmm_web.wasm)
limit=$((5 * 1024 * 1024))
echo "bundle: ptxmm_web.wasm is $wasm_bytes bytes ($(gzip -9 -c web/dist/ptxmm_web.wasm | wc -c) gzipped); the limit is $limit"
if [ "$wasm_bytes" -ge "$limit" ]; then
  echo "FAIL: the wasm bundle is over 5 MB"
  exit 1
fi

cargo build --release --bin ptxmm
out=target/web-test
rm -rf "$out"
mkdir -p "$out"
target/release/ptxmm serve --port 0 >"$out/serve.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true' EXIT
for _ in $(seq 50); do
  grep -q 'http://' "$out/serve.log" && break
  sleep 0.1
done
url=$(grep -o 'http://[0-9.:]*/' "$out/serve.log") || { cat "$out/serve.log"; echo "FAIL: ptxmm serve did not start"; exit 1; }
node web/test/browser.mjs "$url" "$PWD/target/release/ptxmm" "$PWD/$out"
echo "web playground tests: $((SECONDS - started)) s"
