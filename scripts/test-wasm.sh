#!/usr/bin/env bash
# The core's whole test suite in wasm32 under node (wasm-bindgen-test-runner), so
# that the engine the plugin ships is the one tested. A floor on the number of
# tests run catches a suite that silently stopped running in wasm ("no tests to
# run" is a success to cargo).
set -euo pipefail
FLOOR=${DATANOTES_WASM_TEST_FLOOR:-350}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cargo test -p datanotes-core --target wasm32-unknown-unknown 2>&1 | tee "$out"
ran=$(grep -E '^test result: ok\.' "$out" | awk '{ n += $4 } END { print n + 0 }')
echo "==> $ran core tests ran in wasm (at least $FLOOR expected)"
if [ "$ran" -lt "$FLOOR" ]; then
  echo "error: only $ran core tests ran in wasm, fewer than $FLOOR: a test file lost its wasm_bindgen_test alias?" >&2
  exit 1
fi
