#!/usr/bin/env bash
# Builds the engine (core/) for the Obsidian plugin: wasm32, bound for JavaScript
# with wasm-bindgen, then shrunk with wasm-opt from the npm package `binaryen`
# when it is installed. Output: plugin/wasm/ (not in git; esbuild inlines
# datanotes_core_bg.wasm into main.js).
#   scripts/build-wasm.sh           build
# Needs: the wasm32-unknown-unknown target and wasm-bindgen-cli 0.2.130
# (scripts/setup.sh installs both).
set -euo pipefail

CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$CARGO_BIN:$PATH"
cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { echo "build-wasm: $*" >&2; }

OUT=plugin/wasm
WASM=${CARGO_TARGET_DIR:-target}/wasm32-unknown-unknown/wasm/datanotes_core.wasm

say "cargo build -p datanotes-core --target wasm32-unknown-unknown --profile wasm"
cargo build -p datanotes-core --target wasm32-unknown-unknown --profile wasm

BG="$OUT/datanotes_core_bg.wasm"
# wasm-opt (binaryen compiled to JavaScript) takes about 30 s: skip the
# rest when cargo left its output as it was at the last run.
if [ -f "$BG" ] && [ -f "$OUT/datanotes_core.js" ] && [ "$BG" -nt "$WASM" ]; then
    say "$BG is up to date"
    exit 0
fi

# Built in a folder of its own, moved into place whole: a run cut short leaves
# no half-made output that the check above would take for finished.
mkdir -p plugin
TMP=$(mktemp -d plugin/.wasm-build.XXXXXX)
chmod 755 "$TMP"
trap 'rm -rf "$TMP"' EXIT
say "wasm-bindgen --target web --omit-default-module-path --out-dir $OUT"
wasm-bindgen --target web --omit-default-module-path --out-dir "$TMP" "$WASM"
# The bundle imports the .wasm as bytes (plugin/src/wasm.d.ts types it so); the
# module typing wasm-bindgen writes beside it would shadow that.
rm -f "$TMP/datanotes_core_bg.wasm.d.ts"

size() { wc -c <"$1" | tr -d ' '; }
before=$(size "$TMP/datanotes_core_bg.wasm")
# Debian's binaryen (108) writes modules that fail at load: only the npm one.
OPT=node_modules/.bin/wasm-opt
if [ -x "$OPT" ]; then
    say "wasm-opt -Oz (binaryen $("$OPT" --version | awk '{print $3}'), about 30 s)"
    # Rust 1.82+ emits bulk memory and sign-extension ops by default.
    "$OPT" -Oz --enable-bulk-memory --enable-sign-ext --enable-nontrapping-float-to-int \
        --enable-mutable-globals "$TMP/datanotes_core_bg.wasm" -o "$TMP/opt.wasm"
    mv "$TMP/opt.wasm" "$TMP/datanotes_core_bg.wasm"
    after="$(size "$TMP/datanotes_core_bg.wasm") after wasm-opt -Oz"
else
    after="wasm-opt skipped: npm install brings binaryen"
fi
rm -rf "$OUT"
mv "$TMP" "$OUT"
trap - EXIT
say "$BG: $before bytes, $after"
