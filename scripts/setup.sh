#!/usr/bin/env bash
# Installs what `make test` and `make demo` need. Idempotent, and silent when
# everything is already there:
#   - the Rust target wasm32-unknown-unknown
#   - wasm-bindgen-cli 0.2.130 (wasm-bindgen, wasm-bindgen-test-runner), which
#     must match the `wasm-bindgen = "=0.2.130"` pin in core/Cargo.toml
#   - with --browser: Debian's chromium, for the browser test of the plugin's views (as root)
#   - strace, for the failing-sync test of serve (as root)
#   - npm packages, when the repository has a package.json
set -euo pipefail

WASM_BINDGEN_VERSION=0.2.130
CARGO_BIN="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$CARGO_BIN:$PATH"

cd "$(dirname "${BASH_SOURCE[0]}")/.."

say() { echo "setup: $*" >&2; }
die() { say "error: $*"; exit 1; }

command -v cargo >/dev/null || die "cargo not found (install Rust with rustup: https://rustup.rs)"

# --- Rust target for the wasm build of core ----------------------------------
if command -v rustup >/dev/null; then
    if ! rustup target list --installed | grep -qx wasm32-unknown-unknown; then
        say "adding the Rust target wasm32-unknown-unknown"
        rustup target add wasm32-unknown-unknown
    fi
elif ! rustc --print sysroot >/dev/null 2>&1 ||
    [ ! -d "$(rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown" ]; then
    die "the Rust target wasm32-unknown-unknown is missing and rustup is not available"
fi

# --- wasm-bindgen-cli ----------------------------------------------------------
wasm_bindgen_ok() {
    command -v wasm-bindgen-test-runner >/dev/null &&
        [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" = "$WASM_BINDGEN_VERSION" ]
}

if ! wasm_bindgen_ok; then
    # Another install of the CLI may be under way (two cargo installs of the
    # same crate compete and build it twice): wait for it first.
    if command -v pgrep >/dev/null && pgrep -f "cargo install wasm-bindgen-cli" >/dev/null; then
        say "waiting for a running 'cargo install wasm-bindgen-cli' to finish"
        while pgrep -f "cargo install wasm-bindgen-cli" >/dev/null; do sleep 5; done
    fi
fi

if ! wasm_bindgen_ok; then
    say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (about 2.5 minutes)"
    # No --locked: its lock file names a webpki-roots version the registry lacks.
    cargo install wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
    wasm_bindgen_ok || die "wasm-bindgen $WASM_BINDGEN_VERSION is still not on PATH after the install"
fi

# Debian's package $1; a fresh machine may have no package lists yet, so they
# are updated once when the first try fails.
apt_install() {
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$1" >/dev/null ||
        { apt-get update >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$1" >/dev/null; }
}

# --- Chromium, for the plugin's views in a real browser (plugin/browser/run.mjs) ---
# Only with --browser (make test): the demo and the release need no browser.
if [ "${1:-}" = "--browser" ] && [ -z "${CHROMIUM:-}" ] && ! command -v chromium >/dev/null && [ ! -x /usr/bin/chromium ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing Debian's chromium (about a minute)"
        apt_install chromium ||
            die "could not install chromium: install it (apt-get install chromium), or set CHROMIUM to a Chromium for the browser test"
    else
        say "warning: no chromium: the browser test (npm run test:browser) needs one: apt-get install chromium, or set CHROMIUM"
    fi
fi

# --- strace, for the failing-sync test of serve (bridge/tests/faults.rs) ----------
# The test skips, saying so, where strace is missing.
if ! command -v strace >/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "installing strace"
        apt_install strace ||
            say "warning: could not install strace: the failing-sync test of serve is skipped"
    else
        say "warning: no strace: the failing-sync test of serve is skipped (apt-get install strace)"
    fi
fi

# --- npm -------------------------------------------------------------------------
# Install when node_modules is missing or older than package.json or its lock file.
npm_install_in() {
    local dir=$1
    [ -f "$dir/package.json" ] || return 0
    local stale=
    if [ ! -d "$dir/node_modules" ] || [ "$dir/package.json" -nt "$dir/node_modules" ]; then
        stale=1
    elif [ -f "$dir/package-lock.json" ] && [ "$dir/package-lock.json" -nt "$dir/node_modules" ]; then
        stale=1
    fi
    [ -n "$stale" ] || return 0
    command -v npm >/dev/null || die "$dir/package.json exists but npm is not installed (node 20 is expected)"
    if [ -f "$dir/package-lock.json" ]; then
        say "npm ci in $dir"
        (cd "$dir" && npm ci --no-audit --no-fund)
    else
        say "npm install in $dir (no package-lock.json)"
        (cd "$dir" && npm install --no-audit --no-fund)
    fi
    # npm install may leave the folder's time alone when nothing changed, and
    # creates no folder at all when there are no dependencies.
    mkdir -p "$dir/node_modules"
    touch "$dir/node_modules"
}

if [ -f package.json ]; then
    npm_install_in .
elif [ -f plugin/package.json ]; then
    # No root package.json (no npm workspace): the plugin installs on its own.
    npm_install_in plugin
fi
