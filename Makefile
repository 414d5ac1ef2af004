# mlsched: `make run` sets up what is missing, builds, and runs the pipeline;
# `make test` is what CI runs.

GO      ?= go
BIN     := bin/mlsched
WORKER  := bin/mlsched-worker
DIST    := bin/mlsched-dist
CONFIG  ?= pipeline.yaml
# Benchmarks: which packages and how long each runs.
BENCH   ?= .
BENCHPKG ?= ./...
BENCHTIME ?= 1x
COUNT   ?= 5

# DuckDB (from npm) reads the artifacts back in tests, as an independent reader.
DUCKDB_VERSION := 1.5.6-r.1
DUCKDB_DIR := .tools/duckdb

.PHONY: all setup test-tools bench-tools build run test test-faults test-distributed fuzz bench fingerprints clean

all: build

# setup fetches what the build needs; it is idempotent and cheap when done.
setup: .tools/setup.stamp ort-lib

.tools/setup.stamp: go.mod go.sum
	$(GO) mod download
	$(GO) mod verify
	@mkdir -p .tools && touch $@

# onnxruntime's CPU library: github.com/yalue/onnxruntime_go v1.27.0 needs
# onnxruntime 1.24.x. Microsoft's Linux build ships inside the npm package
# onnxruntime-node; the library's sha256 is pinned in $(ORT_SUM), next to the
# package that loads it (stages/lib/ort).
NPM         ?= npm
ORT_VERSION := 1.24.1
ORT_DIR     := .tools/onnxruntime
ORT_LIB     := $(ORT_DIR)/libonnxruntime.so.1
ORT_SUM     := stages/lib/ort/libonnxruntime.sha256
ORT_MEMBER  := package/bin/napi-v6/linux/x64/libonnxruntime.so.1

.PHONY: ort-lib
# ort-lib checks the installed library on every run (a sha256 of 35 MB) rather
# than trusting that it exists, so a truncated or corrupted copy is replaced.
# The fetch works in a temporary folder beside the library and renames it into
# place only after the checksum passes: an interrupted setup leaves nothing
# that looks installed, and the next one starts over (removing what a killed
# fetch left behind).
ort-lib:
	@set -e; \
	if [ -f $(ORT_LIB) ]; then \
	  if (cd $(ORT_DIR) && sha256sum --check --status $(abspath $(ORT_SUM))); then exit 0; fi; \
	  echo "make setup: $(ORT_LIB) does not match $(ORT_SUM); fetching it again"; \
	  rm -f $(ORT_LIB); \
	fi; \
	if [ "$$(uname -sm)" != "Linux x86_64" ]; then \
	  echo "make setup: the pinned onnxruntime library is for Linux x86_64, not $$(uname -sm); set ONNXRUNTIME_LIB to an onnxruntime $(ORT_VERSION) library" >&2; \
	  exit 1; \
	fi; \
	echo "make setup: fetching onnxruntime $(ORT_VERSION) (npm onnxruntime-node) into $(ORT_DIR)"; \
	mkdir -p $(ORT_DIR); \
	rm -rf $(ORT_DIR)/.fetch.*; \
	tmp=$$(mktemp -d $(CURDIR)/$(ORT_DIR)/.fetch.XXXXXX); \
	trap 'rm -rf "$$tmp"' EXIT; \
	trap 'exit 130' INT TERM HUP; \
	cd "$$tmp"; \
	$(NPM) pack --silent --ignore-scripts onnxruntime-node@$(ORT_VERSION) >/dev/null; \
	tar -xzf onnxruntime-node-$(ORT_VERSION).tgz $(ORT_MEMBER); \
	mv $(ORT_MEMBER) libonnxruntime.so.1; \
	if ! sha256sum --check --quiet $(abspath $(ORT_SUM)); then \
	  echo "make setup: onnxruntime-node@$(ORT_VERSION) gave a library whose sha256 is not the one in $(ORT_SUM); nothing installed" >&2; \
	  exit 1; \
	fi; \
	mv -f libonnxruntime.so.1 $(CURDIR)/$(ORT_LIB)

# cuda-ort installs, for a machine with an NVIDIA GPU, the onnxruntime that
# profile.provider: cuda measures with (docs/gpu.md):
# onnxruntime $(CUDA_ORT_VERSION)'s library from the npm package
# onnxruntime-node (built with the bridge that loads GPU providers) and the
# CUDA 13 build of its CUDA provider, which Microsoft publishes on NuGet
# (unreachable here) and the npm package
# com.github.asus4.onnxruntime.linux-x64-gpu@$(CUDA_EP_PACKAGE_VERSION)
# ships. Every file's sha256 is pinned in $(CUDA_ORT_SUM); the files are
# checked in a temporary folder and renamed into place only then. The
# machine must have CUDA 13's runtime, cuBLAS and cuRAND, and cuDNN 9 where
# the loader finds them (LD_LIBRARY_PATH). Not part of setup: it is 180 MB
# of downloads that only a GPU can use.
CUDA_ORT_VERSION        := 1.29.0
CUDA_EP_PACKAGE         := com.github.asus4.onnxruntime.linux-x64-gpu
CUDA_EP_PACKAGE_VERSION := 0.4.9
CUDA_ORT_DIR            := .tools/onnxruntime-cuda
CUDA_ORT_SUM            := stages/lib/ort/cuda.sha256
CUDA_EP_MEMBERS         := $(addprefix package/Plugins/Linux/x64/,libonnxruntime_providers_cuda.so libonnxruntime_providers_shared.so)

.PHONY: cuda-ort
cuda-ort:
	@set -e; \
	if [ -d $(CUDA_ORT_DIR) ] && (cd $(CUDA_ORT_DIR) && sha256sum --check --status $(abspath $(CUDA_ORT_SUM))); then \
	  echo "make cuda-ort: $(CUDA_ORT_DIR) holds onnxruntime $(CUDA_ORT_VERSION) with its CUDA provider"; exit 0; \
	fi; \
	echo "make cuda-ort: fetching onnxruntime $(CUDA_ORT_VERSION) (npm onnxruntime-node) and its CUDA 13 provider (npm $(CUDA_EP_PACKAGE)@$(CUDA_EP_PACKAGE_VERSION)) into $(CUDA_ORT_DIR)"; \
	mkdir -p $(dir $(CUDA_ORT_DIR)); \
	rm -rf $(CUDA_ORT_DIR).fetch.*; \
	tmp=$$(mktemp -d $(CURDIR)/$(CUDA_ORT_DIR).fetch.XXXXXX); \
	trap 'rm -rf "$$tmp"' EXIT; \
	trap 'exit 130' INT TERM HUP; \
	cd "$$tmp"; \
	$(NPM) pack --silent --ignore-scripts onnxruntime-node@$(CUDA_ORT_VERSION) $(CUDA_EP_PACKAGE)@$(CUDA_EP_PACKAGE_VERSION) >/dev/null; \
	tar --no-same-owner -xzf onnxruntime-node-$(CUDA_ORT_VERSION).tgz $(ORT_MEMBER); \
	tar --no-same-owner -xzf $(CUDA_EP_PACKAGE)-$(CUDA_EP_PACKAGE_VERSION).tgz $(CUDA_EP_MEMBERS); \
	mkdir lib; mv $(ORT_MEMBER) $(CUDA_EP_MEMBERS) lib/; \
	if ! (cd lib && sha256sum --check --quiet $(abspath $(CUDA_ORT_SUM))); then \
	  echo "make cuda-ort: the packages gave files whose sha256 is not the one in $(CUDA_ORT_SUM); nothing installed" >&2; \
	  exit 1; \
	fi; \
	rm -rf $(CURDIR)/$(CUDA_ORT_DIR); \
	mv lib $(CURDIR)/$(CUDA_ORT_DIR); \
	echo "make cuda-ort: profile with --ort-lib $(CUDA_ORT_DIR)/libonnxruntime.so.1 --set profile.provider=cuda"

# test-tools installs what only the tests need; idempotent. Debian's
# python3-onnx holds the ONNX checker the model zoo is validated with.
test-tools: $(DUCKDB_DIR)/node_modules/@duckdb/node-api/package.json debian-test-packages

.PHONY: debian-test-packages
debian-test-packages:
	@dpkg -s python3-onnx >/dev/null 2>&1 || { \
	  echo "make test-tools: installing Debian's python3-onnx"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-onnx >/dev/null; }

$(DUCKDB_DIR)/node_modules/@duckdb/node-api/package.json:
	mkdir -p $(DUCKDB_DIR)
	cd $(DUCKDB_DIR) && npm install --no-audit --no-fund --no-save --loglevel=error @duckdb/node-api@$(DUCKDB_VERSION)

# distributed-tools builds the two servers the distributed integration test
# starts on 127.0.0.1, from Go modules at pinned versions, into $(TOOLS_BIN):
# the Temporal dev server (temporal server start-dev; MIT) and versitygw, an
# S3 server over a directory (Apache-2.0). Each is built once: from empty
# module and build caches, on the two-core development machine while other
# builds ran beside it (load average 6 to 8), both took 7m37s, temporal
# 5m29s of it (docs/benchmarks.md, with the command); they leave 2.2 GB of
# modules and 1.7 GB of build cache.
# temporalio/cli v1.5.1 is pinned because newer releases' go.mod carries a
# replace directive that go install refuses. Both are static (CGO_ENABLED=0),
# -trimpath and without symbol tables (-s -w: temporal is 213 MB instead of
# 252), and their --version names the pinned version, as the projects'
# release builds do.
TOOLS_BIN         := .tools/bin
TEMPORAL_MODULE   := github.com/temporalio/cli
TEMPORAL_VERSION  := v1.5.1
TEMPORAL_BIN      := $(TOOLS_BIN)/temporal
VERSITYGW_MODULE  := github.com/versity/versitygw
VERSITYGW_VERSION := v1.8.0
VERSITYGW_BIN     := $(TOOLS_BIN)/versitygw

.PHONY: distributed-tools
distributed-tools:
	@$(call go-tool,$(TEMPORAL_BIN),$(TEMPORAL_MODULE),$(TEMPORAL_MODULE)/cmd/temporal,$(TEMPORAL_VERSION),-X=$(TEMPORAL_MODULE)/temporalcli.Version=$(TEMPORAL_VERSION:v%=%))
	@$(call go-tool,$(VERSITYGW_BIN),$(VERSITYGW_MODULE),$(VERSITYGW_MODULE)/cmd/versitygw,$(VERSITYGW_VERSION),-X=main.Version=$(VERSITYGW_VERSION))

# is-module MODULE,VERSION reads go version -m's output and is true when the
# binary's main module is MODULE at VERSION.
is-module = awk '$$1 == "mod" && $$2 == "$(1)" && $$3 == "$(2)" { found = 1 } END { exit !found }'

# go-tool BIN,MODULE,PACKAGE,VERSION,LDFLAGS installs PACKAGE@VERSION as BIN
# unless BIN already is that module at that version: go version -m reads the
# module and version the go command stamped into the binary, and fails on a
# file that is not a whole Go binary, so a damaged or other-version binary is
# rebuilt. go install writes into a temporary folder beside BIN, and the
# binary is renamed into place only once the build succeeded and checks out:
# an interrupted build leaves nothing that looks installed, and the next one
# starts over (removing what a killed build left behind). GOFLAGS is cleared
# from the environment, since -mod=vendor there makes go install pkg@version
# fail and -tags would change what a pinned version builds.
#
# It says what it does, phase by phase, with the seconds since it began:
# first go mod download, in a copy of MODULE's go.mod, fetches every module
# that go.mod requires (what go install would fetch, and MODULE's test-only
# modules besides) and counts them and their zips' size; then go install
# builds, with a line every 30 s, since it prints nothing until it is done.
define go-tool
set -e; \
bin=$(1); name=$(notdir $(1)); dir=$(patsubst %/,%,$(dir $(1))); \
if [ -f $$bin ]; then \
  if $(GO) version -m $$bin 2>/dev/null | $(call is-module,$(2),$(4)); then exit 0; fi; \
  echo "make distributed-tools: $$bin is not $(2) $(4); building it again"; \
  rm -f $$bin; \
fi; \
mkdir -p $$dir; \
rm -rf $$dir/.build-$$name.*; \
tmp=$$(mktemp -d $(abspath $(dir $(1)))/.build-$$name.XXXXXX); \
beat=; \
trap '[ -z "$$beat" ] || kill $$beat 2>/dev/null; rm -rf "$$tmp"' EXIT; \
trap 'exit 130' INT TERM HUP; \
start=$$(date +%s); \
say() { echo "make distributed-tools: $$name: $$* ($$(( $$(date +%s) - start )) s)"; }; \
say "downloading $(2)@$(4) and the modules it requires (go mod download)"; \
src=$$(GOFLAGS= $(GO) mod download -json $(2)@$(4) | sed -n 's/.*"Dir": "\(.*\)".*/\1/p'); \
mkdir "$$tmp/mod"; cp "$$src/go.mod" "$$src/go.sum" "$$tmp/mod/"; chmod u+w "$$tmp/mod/go.mod" "$$tmp/mod/go.sum"; \
(cd "$$tmp/mod" && GOWORK=off GOFLAGS=-mod=mod $(GO) mod download -json) >"$$tmp/modules.json"; \
say "the module cache holds them: $$(sed -n 's/.*"Zip": "\(.*\)".*/\1/p' "$$tmp/modules.json" | xargs stat -c %s | awk '{ n++; s += $$1 } END { printf "%d modules, %.0f MB of zips", n, s / 1e6 }')"; \
say "building $(3)@$(4) (go install; a line every 30 s)"; \
(while sleep 30 </dev/null >/dev/null 2>&1; do say "building $(3)@$(4)"; done) & beat=$$!; \
GOBIN="$$tmp" GOFLAGS= CGO_ENABLED=0 $(GO) install -trimpath -ldflags='-s -w $(5)' $(3)@$(4); \
kill $$beat 2>/dev/null || true; beat=; \
if ! $(GO) version -m "$$tmp/$$name" | $(call is-module,$(2),$(4)); then \
  echo "make distributed-tools: go install $(3)@$(4) gave a binary that is not $(2) $(4); nothing installed" >&2; \
  exit 1; \
fi; \
mv -f "$$tmp/$$name" $(abspath $(1)); \
say "installed $$bin ($$(( $$(stat -c %s $$bin) / 1000000 )) MB)"
endef

# servers builds what is missing (mlsched, and the two servers: minutes the
# first time) and runs mlsched dev-servers: the Temporal dev server and
# versitygw on 127.0.0.1, for trying distributed runs on this machine, with
# what to paste printed, until Ctrl-C (docs/deployment.md).
.PHONY: servers
servers: build distributed-tools
	./$(BIN) dev-servers --tools $(abspath $(TOOLS_BIN))

# bench-tools installs what only the comparison benchmarks need; idempotent.
# Debian's snakemake is what BenchmarkSnakemakeNoop times against the cached
# mlsched run; hyperfine times either from the shell; python3-simpy3 (SimPy
# 3.0.11, for Debian's /usr/bin/python3) is what BenchmarkStageAgainstSimPy
# times the schedule stage against.
BENCH_PACKAGES := snakemake hyperfine python3-simpy3
bench-tools:
	@dpkg -s $(BENCH_PACKAGES) >/dev/null 2>&1 || { \
	  echo "make bench-tools: installing Debian's $(BENCH_PACKAGES)"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(BENCH_PACKAGES) >/dev/null; }

# onnx-proto regenerates the ONNX protobuf Go code from Debian's onnx.proto;
# its output is committed, so only changing the proto needs this.
.PHONY: onnx-proto
onnx-proto:
	@dpkg -s libonnx-dev protobuf-compiler >/dev/null 2>&1 || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libonnx-dev protobuf-compiler >/dev/null; }
	GOBIN=$(CURDIR)/.tools/bin $(GO) install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.10
	$(GO) generate ./stages/lib/zoo/onnxpb

# fingerprints refreshes the stages' code versions (part of every cache key).
fingerprints: setup
	$(GO) generate ./stages

# build makes three programs: mlsched, the command line and the runner,
# which links none of the stages' code and no C library (CGO_ENABLED=0: a
# static binary starts without the dynamic loader); mlsched-dist, the same
# with the S3 client and Temporal's SDK (-tags lean leaves them out of
# mlsched, which hands it what needs them: they tripled its start-up
# time); and mlsched-worker, beside them, which runs the stages' code when
# a stage must run.
#
# The worker is built with profile-guided optimization: go build reads
# cmd/mlsched-worker/default.pgo, a CPU profile of the stages' code (make
# pgo), and inlines and devirtualizes its hot calls. make bench builds the
# benchmarks with the same profile, so that they time the code the worker
# runs.
build: fingerprints
	CGO_ENABLED=0 $(GO) build -tags lean -o $(BIN) ./cmd/mlsched
	CGO_ENABLED=0 $(GO) build -o $(DIST) ./cmd/mlsched
	$(GO) build -o $(WORKER) ./cmd/mlsched-worker

run: build
	./$(BIN) --config $(CONFIG) run

test: setup test-tools
	$(GO) vet ./...
	DUCKDB_NODE_DIR=$(CURDIR)/$(DUCKDB_DIR) ONNXRUNTIME_LIB=$(CURDIR)/$(ORT_LIB) \
	REQUIRE_ONNXRUNTIME=1 REQUIRE_ONNX_CHECKER=1 $(GO) test -count=1 -timeout 20m ./...
	$(MAKE) test-race
	$(MAKE) fuzz

# test-race runs, under the race detector and its checkptr, the packages
# whose code shares memory between goroutines or reads it through
# unsafe.Pointer: the store and its locks, the Temporal worker, and the
# Parquet writers. It found a concurrent map write in the Temporal
# tests and a pointer stepped past its allocation in the columnar
# writer; the whole tree under -race takes about 20 minutes here.
RACE_PACKAGES = ./pipeline ./pipeline/temporalexec ./pipeline/parquetio/...
.PHONY: test-race
test-race: setup
	$(GO) test -race -count=1 -timeout 10m $(RACE_PACKAGES)

# fuzz runs every fuzz target for FUZZTIME (make test: 3s each; their
# seed corpora in testdata/fuzz/ also run as tests in go test). Minimizing
# a Parquet input byte by byte would take a short run's whole time, so
# minimization is off.
FUZZTIME ?= 3s
FUZZ_TARGETS = \
	./pipeline:FuzzParseManifest ./pipeline:FuzzParseLockFile ./pipeline:FuzzParseMemoManifest \
	./pipeline/config:FuzzLoad ./pipeline/config:FuzzParseYAML ./pipeline/config:FuzzDiff \
	./stages/profile:FuzzReadImportCSV ./stages/profile:FuzzReadImportParquet \
	./stages/generate:FuzzImportCSV ./stages/generate:FuzzImportParquet \
	./stages/lib/cluster:FuzzReadJobs ./stages/lib/metrics:FuzzReadTrace \
	./stages/lib/metrics:FuzzJobSamples ./stages/evaluate/report:FuzzEscape \
	./pipeline/parquetio/columnar:FuzzMatchesParquetGo
# Go 1.26's fuzzing coordinator can fail a target with a bare "context
# deadline exceeded" at the end of its -fuzztime, writing no failing input
# (golang/go#75804, fixed in Go 1.27): such a run is tried once more, and
# a failure that wrote an input under testdata/fuzz/ always fails.
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do \
	  pkg=$${t%%:*}; name=$${t#*:}; corpus=$$pkg/testdata/fuzz/$$name; \
	  for try in 1 2; do \
	    echo "fuzz $$name ($$pkg) for $(FUZZTIME)"; \
	    before=$$(ls $$corpus 2>/dev/null | wc -l); \
	    if $(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 0 "$$pkg" >/tmp/mlsched-fuzz.log 2>&1; then break; fi; \
	    after=$$(ls $$corpus 2>/dev/null | wc -l); \
	    if [ $$try = 1 ] && [ "$$before" = "$$after" ] && tail -5 /tmp/mlsched-fuzz.log | grep -q '^    context deadline exceeded$$'; then \
	      echo "fuzz $$name: Go's coordinator stopped late, no failing input written (golang/go#75804); once more"; continue; \
	    fi; \
	    cat /tmp/mlsched-fuzz.log; exit 1; \
	  done; \
	done

# test-faults kills the real mlsched -9 at random, seeded moments:
# FAULT_KILLS times spread over the stages, a tenth of that in gc (beside
# another config's lock file), while outputs are published and while a
# stage's inputs are re-hashed before it runs, half of it while a run
# re-hashes a store whose mtimes changed; it runs two at once on one
# store, gc during a run, and kills a lock holder. After each fault the store must verify
# intact and status answer; in the end a plain run must equal a clean one,
# byte for byte. make test runs a few of each; FAULT_SEED replays a failure's
# choices (a failing test prints its seed).
FAULT_KILLS ?= 100
FAULT_SEED  ?= 0
test-faults:
	$(GO) test -count=1 -timeout 30m -v -run '^TestFault' ./cmd/mlsched/ -fault.kills=$(FAULT_KILLS) -fault.seed=$(FAULT_SEED)

# test-distributed is the distributed integration test: the Temporal dev
# server and versitygw (built once by distributed-tools) on 127.0.0.1, two
# mlsched workers running a whole pipeline, one killed with SIGKILL
# mid-stage; the run must complete, verify, and match a local run's digests.
.PHONY: test-distributed
test-distributed: setup distributed-tools
	DISTRIBUTED_TOOLS_BIN=$(CURDIR)/$(TOOLS_BIN) $(GO) test -count=1 -timeout 20m -tags distributed -v -run '^TestDistributed' ./cmd/mlsched/

# test-distributed-bench times a stage through Temporal with one and two
# workers beside the same stage run locally (coordination overhead per
# activity, simulations per second); compare medians.
.PHONY: test-distributed-bench
test-distributed-bench: setup distributed-tools
	DISTRIBUTED_TOOLS_BIN=$(CURDIR)/$(TOOLS_BIN) $(GO) test -count=1 -timeout 30m -tags distributed -run '^$$' -bench '^BenchmarkDistributed$$' -benchtime $(BENCHTIME) -count $(COUNT) ./cmd/mlsched/

# bench runs every benchmark COUNT times; compare medians (the machine is
# noisy). They are built with the worker's profile (PGO, below).
bench: build bench-tools
	ONNXRUNTIME_LIB=$(CURDIR)/$(ORT_LIB) $(GO) test -pgo=$(CURDIR)/$(PGO) -run '^$$' -bench '$(BENCH)' -benchtime $(BENCHTIME) -count $(COUNT) -benchmem $(BENCHPKG)

# pgo refreshes the profile the worker is built with: the CPU profiles of
# every stage of a run of the default pipeline.yaml in a scratch store
# (MLSCHED_DEBUG_CPUPROFILE), merged. It takes as long as make run. Rerun it
# after a large change to the stages' hot code and commit the result: a
# stale profile costs speed, never correctness (no artifact depends on
# it).
PGO := cmd/mlsched-worker/default.pgo
.PHONY: pgo
pgo: build
	rm -rf .tools/pgo && mkdir -p .tools/pgo/profiles
	MLSCHED_DEBUG_CPUPROFILE=$(CURDIR)/.tools/pgo/profiles ./$(BIN) --config $(CONFIG) --store .tools/pgo/store run
	$(GO) tool pprof -proto .tools/pgo/profiles/*.pprof > $(PGO).tmp
	mv $(PGO).tmp $(PGO)
	rm -rf .tools/pgo

clean:
	rm -rf bin .tools
