# Datanotes: build, test and try the engine.
#   make setup   install the wasm target, wasm-bindgen-cli and npm packages (idempotent)
#   make test    native tests, wasm tests (under node), the plugin's build, then the npm tests
#   make lint    rustfmt and clippy, then the plugin's lint (Obsidian's review rules), warnings as errors
#   make demo    build the binary, create ./vault with the film diary, call an operation, serve it
#   make bench   the benchmarks (native engine, then the plugin's wasm engine opening 10k and 100k notes); figures as JSON on stdout
#   make release the files of a GitHub release of the plugin (main.js, manifest.json, styles.css) in release/
#   make fuzz    the parsers' fuzz targets, FUZZ_SECS (120) seconds each (make test gives them 2)
#   make clean   remove build output and the demo vault

SHELL := /bin/bash
# Every recipe line runs with errexit, nounset and pipefail: a failing step stops make.
.SHELLFLAGS := -euo pipefail -c
.DELETE_ON_ERROR:
MAKEFLAGS += --no-builtin-rules

export PATH := $(HOME)/.cargo/bin:$(PATH)

BIN   := ./target/release/datanotes
VAULT := vault

# $(call has_npm_test,DIR): true when DIR/package.json has a "test" script.
has_npm_test = { [ -f $(1)/package.json ] && node -e 'process.exit(require("./$(1)/package.json").scripts?.test ? 0 : 1)'; }

.PHONY: all setup test test-native test-wasm test-npm lint demo bench fuzz soak clean release

all: test

setup:
	bash scripts/setup.sh

test: setup
	bash scripts/setup.sh --browser
	@echo "==> cargo test --workspace (native)"
	cargo test --workspace
	@echo "==> scripts/test-wasm.sh (the core's tests in wasm, under node)"
	bash scripts/test-wasm.sh
	@echo "==> scripts/build-wasm.sh (the engine for the Obsidian plugin: plugin/wasm/)"
	bash scripts/build-wasm.sh
	@echo "==> npm run build:plugin (tsc --noEmit, esbuild: plugin/dist/)"
	npm run build:plugin
	@echo "==> npm run lint (eslint-plugin-obsidianmd's recommended rules: plugin/src, manifest.json, LICENSE)"
	npm run lint
	@echo "==> npm tests (the MCP client, then the plugin: tsc --noEmit and vitest)"
	@if $(call has_npm_test,.); then \
		npm test; \
	elif $(call has_npm_test,plugin); then \
		(cd plugin && npm test); \
	else \
		echo "no package.json with a test script yet: skipped"; \
	fi

lint: setup
	cargo fmt --all --check
	cargo clippy --workspace --all-targets -- -D warnings
	npm run lint

release: setup
	npm run release

demo: setup
	cargo build --release -p datanotes
	@if [ ! -d $(VAULT) ]; then \
		echo "==> creating ./$(VAULT) with the film diary"; \
		$(BIN) init --vault $(VAULT) --example films; \
	else \
		echo "==> ./$(VAULT) exists: kept as it is (make clean removes it)"; \
	fi
	@echo "==> $(BIN) call --vault $(VAULT) describe_database '{}'"
	$(BIN) call --vault $(VAULT) describe_database '{}'
	@echo
	@echo "Call any operation the same way: its name, then its arguments as JSON. For example:"
	@echo "  $(BIN) call --vault $(VAULT) select_rows '{\"table\":\"film\",\"columns\":[\"title\",\"year\"]}'"
	@echo "The answer is JSON on stdout; exit code 0 done, 1 refused or failed, 2 bad usage."
	@echo "The notes are plain Markdown under ./$(VAULT)/datanotes/: open the folder in Obsidian to browse them."
# ---- serve: the HTTP API, MCP over HTTP and the vault watcher on the demo vault ----
	@echo
	@echo "==> serving ./$(VAULT) (Ctrl-C stops it)"
	@echo "    HTTP API:  POST http://127.0.0.1:8765/datanotes/operations/<name>/  (OpenAPI: /datanotes/openapi.json)"
	@echo "    MCP:       http://127.0.0.1:8765/mcp (streamable HTTP), or $(BIN) mcp --vault $(VAULT) (stdio)"
	@echo "    token:     \$$DATANOTES_TOKEN if set, else $(VAULT)/.datanotes/token (made at the first start, owner-only)"
	@echo "    try:       curl -s -X POST http://127.0.0.1:8765/datanotes/operations/select_rows/ \\"
	@echo "                 -H \"Authorization: Bearer \$$(cat $(VAULT)/.datanotes/token)\" -d '{\"table\":\"film\"}'"
	@echo "    While it serves, $(BIN) call --vault $(VAULT) ... forwards to it."
	$(BIN) serve --vault $(VAULT)
# ---- end of the serve spot ------------------------------------------------------------------

bench:
	cargo run --release -p datanotes -- bench
	bash scripts/build-wasm.sh
	node scripts/bench-wasm.mjs

FUZZ_SECS ?= 120
fuzz:
	DATANOTES_FUZZ_SECS=$(FUZZ_SECS) cargo test --release -p datanotes-core --test fuzz -- --nocapture --test-threads=2

# Devices syncing one vault (core/tests/sync.rs), SYNC_ROUNDS rounds a simulation
# (make test runs 200).
SYNC_ROUNDS ?= 5000
soak:
	DATANOTES_SYNC_ROUNDS=$(SYNC_ROUNDS) cargo test --release -p datanotes-core --test sync -- --nocapture

clean:
	cargo clean
	rm -rf $(VAULT)
