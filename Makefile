# mlsched: `make run` sets up what is missing, builds, and runs the pipeline;
# `make test` is what CI runs.

GO      ?= go
BIN     := bin/mlsched
CONFIG  ?= pipeline.yaml
# Benchmarks: which packages and how long each runs.
BENCH   ?= .
BENCHPKG ?= ./...
BENCHTIME ?= 1x
COUNT   ?= 5

# DuckDB (from npm) reads the artifacts back in tests, as an independent reader.
DUCKDB_VERSION := 1.5.6-r.1
DUCKDB_DIR := .tools/duckdb

.PHONY: all setup test-tools build run test bench fingerprints clean

all: build

# setup fetches what the build needs; it is idempotent and cheap when done.
setup: .tools/setup.stamp

.tools/setup.stamp: go.mod go.sum
	$(GO) mod download
	$(GO) mod verify
	@mkdir -p .tools && touch $@

# test-tools installs what only the tests need; idempotent.
test-tools: $(DUCKDB_DIR)/node_modules/@duckdb/node-api/package.json

$(DUCKDB_DIR)/node_modules/@duckdb/node-api/package.json:
	mkdir -p $(DUCKDB_DIR)
	cd $(DUCKDB_DIR) && npm install --no-audit --no-fund --no-save --loglevel=error @duckdb/node-api@$(DUCKDB_VERSION)

# fingerprints refreshes the stages' code versions (part of every cache key).
fingerprints: setup
	$(GO) generate ./stages

build: fingerprints
	$(GO) build -o $(BIN) ./cmd/mlsched

run: build
	./$(BIN) --config $(CONFIG) run

test: setup test-tools
	$(GO) vet ./...
	DUCKDB_NODE_DIR=$(CURDIR)/$(DUCKDB_DIR) $(GO) test -count=1 ./...

# bench runs every benchmark COUNT times; compare medians (the machine is noisy).
bench: build
	$(GO) test -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -count $(COUNT) -benchmem $(BENCHPKG)

clean:
	rm -rf bin .tools
