# Sluice build targets.

BUF ?= go tool buf

SHARED ?= ../shared

.PHONY: test check fmt vet gotest scenarios generate lint-proto check-generated breaking fuzz fuzz-short bench \
	durability-short test-durability build setup help

## test: everything CI runs: formatting, vet, buf lint, generated-code freshness, breaking
## changes, the Go tests with the race detector (which play every scenario through the gRPC
## API), the short durability tests and fuzzing, and every client against real servers
test: check gotest durability-short fuzz-short clients-test

## help: list the targets and what they do
help:
	@awk '/^## [a-z-]+:/ { sub(/^## /, ""); print; next } /^## / { sub(/^## /, "    "); print }' $(MAKEFILE_LIST)

## build: the binaries into bin/: sluiced, sluicectl and the Slurm adapter sluice-slurm
build:
	@mkdir -p bin
	go build -o bin/ ./cmd/sluiced ./cmd/sluicectl ./clients/adapters/slurm/cmd/sluice-slurm

## setup: install what make test needs (Debian/Ubuntu, as root: apt-get for the tools that
## are missing, then the clients' packages); scripts/setup.sh
setup:
	bash scripts/setup.sh

## check: static checks only
check: fmt vet lint-proto check-generated breaking

## fmt: fail when a Go file (generated code aside) is not gofmt-clean
fmt:
	@out=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^gen/')); \
	if [ -n "$$out" ]; then echo "gofmt would change:" >&2; echo "$$out" >&2; exit 1; fi

## vet: go vet over every package
vet:
	go vet ./...

## gotest: unit, scenario and fuzz-seed tests with the race detector (the scenario test in
## cmd/sluicectl plays testdata/scenarios and $(SHARED)/scenarios); the simulation report's
## test opens it in headless Chromium, which must be there (browser)
gotest: browser
	SLUICE_SHARED=$(abspath $(SHARED)) SLUICE_REQUIRE_BROWSER=1 go test -race -count=1 ./...

## browser: install Debian's chromium when no Chromium is on PATH (scripts/browser.sh)
.PHONY: browser
browser:
	bash scripts/browser.sh install

## scenarios: play the public and the project's scenarios through an in-process server
## (gotest plays them too)
scenarios:
	go run ./cmd/sluicectl scenario run testdata/scenarios $(wildcard $(SHARED)/scenarios)

## fuzz: run every fuzz target for a while (FUZZTIME each, default 60s): scheduler
## configurations, store batches (with a replicated twin), resyncs in parts (against one
## ReplaceAll batch), API delta batches, the gRPC codec (against the protobuf runtime),
## scenario files, SWF and native traces
FUZZTIME ?= 60s
FUZZMINIMIZE ?= 5s
# A target that fails is run once more: Go's fuzzing coordinator sometimes ends with "context
# deadline exceeded" on a loaded machine without any failing input, while a real failure is
# saved under testdata/fuzz and fails the second run too.
FUZZ = fuzz() { go test -run '^$$' -fuzz "^$$1$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$2 || \
	{ echo "fuzz: $$1 in $$2 failed; running it once more"; go test -run '^$$' -fuzz "^$$1$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINIMIZE) $$2; }; }
fuzz:
	@$(FUZZ); set -e; \
	fuzz FuzzParse ./engine/conf; \
	fuzz FuzzApply ./engine/state; \
	fuzz FuzzResync ./engine/state; \
	fuzz FuzzApplyDeltas ./service; \
	fuzz FuzzCodecMatchesProto ./internal/vtcodec; \
	fuzz FuzzParse ./clients/go/scenario; \
	fuzz FuzzReadSWF ./engine/sim; \
	fuzz FuzzReadNative ./engine/sim

## fuzz-short: every fuzz target for 10s (part of make test)
fuzz-short:
	$(MAKE) --no-print-directory fuzz FUZZTIME=10s FUZZMINIMIZE=2s

## durability-short: crash consistency (5 kill -9 points), failover of a 3-member cluster,
## load (50 Sync streams and a scheduling loop for 10s) and storage faults (full and
## read-only data directory), linearizability (porcupine, 15s of faults: a leader partition,
## a kill -9, a pause) and reads on a partitioned leader, against real sluiced processes on
## loopback (part of make test); the measurements are printed and appended to DURABILITY_REPORT
DURABILITY_REPORT ?= $(CURDIR)/.cache/durability-report.txt
durability-short:
	@mkdir -p $(dir $(DURABILITY_REPORT))
	SLUICE_DURABILITY=short SLUICE_DURABILITY_REPORT=$(DURABILITY_REPORT) go test -count=1 -timeout 10m -v ./cmd/sluiced/durability

## test-durability: the full versions: 20 kill -9 points, three failovers (and a 5-member
## cluster losing two), 60s of load in durable and in-memory mode
test-durability:
	@mkdir -p $(dir $(DURABILITY_REPORT))
	SLUICE_DURABILITY=full SLUICE_DURABILITY_REPORT=$(DURABILITY_REPORT) go test -count=1 -timeout 30m -v ./cmd/sluiced/durability

## test-jepsen: the linearizability check of reads and writes (porcupine) on a 3-member
## cluster for 3 minutes while the leader or a follower is partitioned from the others (its
## gRPC port still reachable) and healed, and members are killed, restarted, paused and
## resumed; and the read tests (a paused leader, a partitioned leader, a restarted member)
.PHONY: test-jepsen
test-jepsen:
	@mkdir -p $(dir $(DURABILITY_REPORT))
	SLUICE_DURABILITY=full SLUICE_DURABILITY_REPORT=$(DURABILITY_REPORT) go test -count=1 -timeout 20m -v -run 'TestLinearizable|TestReadsAreLinearizable|TestPartitionedLeaderReads' ./cmd/sluiced/durability

## bench: the Go benchmarks of the hot paths
bench:
	go test -run '^$$' -bench . -benchmem -count 5 ./engine/... ./service/...

## generate: regenerate gen/ from proto/ (buf.gen.yaml, local plugins via go tool)
generate:
	$(BUF) generate

## lint-proto: lint the API with buf (STANDARD + COMMENTS)
lint-proto:
	$(BUF) lint

## check-generated: fail when gen/ differs from what proto/ generates
check-generated:
	@tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	$(BUF) generate -o "$$tmp" && \
	if diff -r "$$tmp/gen" gen; then \
		echo "gen/ is up to date"; \
	else \
		echo "gen/ is stale: run make generate" >&2; exit 1; \
	fi

## breaking: check proto/ for breaking changes against the frozen v1 API (proto/v1.binpb, a
## buf image of the surface released as v1) and against the newest v* tag, if any
breaking:
	$(BUF) breaking --against proto/v1.binpb
	@tag=$$(git tag --list 'v*' --sort=-v:refname | head -n 1); \
	if [ -n "$$tag" ]; then \
		echo "breaking: also checking against $$tag"; \
		$(BUF) breaking --against ".git#tag=$$tag"; \
	fi

.PHONY: clients-setup clients-generate clients-check-generated clients-test

## clients-setup: install what the Python and TypeScript clients need (a venv under
## .cache/clients with pinned grpcio-tools, grpcio and protobuf; npm ci); idempotent
clients-setup:
	bash scripts/clients.sh setup

## clients-generate: regenerate the Python and TypeScript clients' code from proto/
clients-generate:
	bash scripts/clients.sh generate

## clients-check-generated: fail when the clients' generated code differs from what proto/
## generates (the Java stubs are generated at build time and not committed)
clients-check-generated:
	bash scripts/clients.sh check-generated

## clients-test: set up, check the generated code, then test every client installed the way
## its users install it (Go from a module of its own, pip, npm install, mvn install) and the
## YARN adapter, against sluiced servers built and started for the run
clients-test:
	bash scripts/clients.sh test

## test-slurm: the Slurm adapter end to end against a real Slurm (Debian's packages,
## installed when missing; needs root): scripts/slurm/e2e.sh starts munged, slurmctld and
## three slurmd on 127.0.0.1 in a temporary directory, runs TestSlurmE2E with SLURM_E2E=1
## against a real sluiced, and stops everything again
.PHONY: test-slurm
test-slurm:
	bash scripts/slurm/e2e.sh

## test-yarn: the Sluice scheduler inside a real YARN: clients/adapters/yarn-rm/run-tests.sh
## installs the Java client and the YARN adapter into ~/.m2, builds sluiced, and runs a
## MiniYARNCluster (a ResourceManager loading SluiceResourceScheduler, three NodeManagers;
## Hadoop 3.4.2 from Maven Central) with distributed-shell applications: gangs, queue weights,
## a reclaim YARN carries out and a sluiced restart; it also builds the RM's shaded jar
.PHONY: test-yarn
test-yarn:
	bash clients/adapters/yarn-rm/run-tests.sh
