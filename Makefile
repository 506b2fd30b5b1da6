# toolgate: the two commands a newcomer needs are `make dev` and `make test`.
GO            ?= go
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
# workflowcheck v0.6.0 is the release of sdk-go's contrib tools that matches go.temporal.io/sdk v1.50.0.
WORKFLOWCHECK := go.temporal.io/sdk/contrib/tools/workflowcheck@v0.6.0
BENCHSTAT     := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
PKGS          := ./... ./cmd/toolgate/... ./internal/uitest/...

.PHONY: dev test test-cluster test-oauth test-traces setup vet check workflowcheck test-race test-norace fmt lint lint-noserver bench build

## dev: run toolgate on its embedded default (Temporal server, Web UI, worker with the toolbox).
dev:
	$(GO) run ./cmd/toolgate dev

## test: what CI runs (.ci/run), two jobs at a time (the suites that drive real processes leave
## cores idle, and setup waits on the network): setup and vet (which compiles everything,
## downloading modules first), then the static checks and every test, split in two groups by
## what the test binaries link (scripts/packages says which group a package is in):
##   test-race    every test binary that does not link the Temporal server, under the race
##                detector: unit tests, and client, worker and tools against a real server run
##                as a process (bin/toolgate, linked once here and handed to every suite
##                through TOOLGATE_BIN);
##   test-norace  tests that link the server: without the race detector, so the ~1,800 server
##                packages are compiled once (not again with race instrumentation) and shared
##                with bin/toolgate.
## test-race runs three test binaries at a time (-p 3, the default is one per core): the suites
## that drive processes mostly wait, and a third slot keeps both cores busy meanwhile.
## vet runs every analyzer first (over the packages staticcheck analyzes, see vet), so go test's
## own vet pass (a subset, which recomputes the facts of every dependency under its other flags:
## ~130 CPU-s on a cold cache) is off in both groups. No DWARF anywhere: make test compiles with -dwarf=false (~14% less compile
## CPU on a cold cache) and links with -w (~40% less link CPU); stack traces, race reports and
## profiles do not need it.
test: export GOFLAGS += -gcflags=all=-dwarf=false
test:
	$(MAKE) --no-print-directory -j2 -Otarget setup vet
	$(MAKE) --no-print-directory -j2 -Otarget check test-race test-norace

## setup: install what the tests need when it is missing (Chromium, interop/'s npm packages, ...).
## Tests never install anything; when something is missing they fail naming `make setup`.
setup:
	scripts/setup

## vet: go vet over the packages make test's staticcheck analyzes (scripts/packages lint, cmd/toolgate
## without its embedded server): every analyzer over them, without computing vet's facts for the
## server's ~1,600 packages. `make lint` vets every package.
vet:
	pkgs=$$(GO=$(GO) scripts/packages lint) && $(GO) vet -tags toolgate_noserver $$pkgs

# The package lists are computed first, so a failing `go list` fails the target instead of
# testing nothing.
test-race: bin/toolgate
	pkgs=$$(GO=$(GO) scripts/packages race) && \
		TOOLGATE_BIN=$(CURDIR)/bin/toolgate $(GO) test -p 3 -race -vet=off -ldflags=-w -timeout 15m $$pkgs

test-norace: bin/toolgate
	pkgs=$$(GO=$(GO) scripts/packages norace) && \
		TOOLGATE_BIN=$(CURDIR)/bin/toolgate $(GO) test -vet=off -ldflags=-w -timeout 20m $$pkgs

## test-cluster: the long forms of the cmd/toolgate/internal/cluster scenarios (PostgreSQL 15 and two Temporal
## server processes, 20-40 s each); `make test` runs the short form of TestClusterFaults.
test-cluster: setup bin/toolgate
	TOOLGATE_BIN=$(CURDIR)/bin/toolgate $(GO) test -ldflags=-w -timeout 15m ./cmd/toolgate/internal/cluster/ -args -cluster

## test-oauth: the long form of the delegated-credentials tests (cmd/toolgate/internal/oauthtest)
## against ORY Hydra v2.3.0, built from internal/tools/hydra (a tools module outside go.work; its
## cold build costs minutes of CPU); `make test` runs the same tests against zitadel/oidc's
## OpenID provider in process.
test-oauth: bin/toolgate
	TOOLGATE_BIN=$(CURDIR)/bin/toolgate $(GO) test -ldflags=-w -timeout 30m ./cmd/toolgate/internal/oauthtest/ -args -hydra

## test-traces: the long form of the trace tests (cmd/toolgate TestJaegerTraces) against a real
## Jaeger v1.75.0, built from internal/tools/jaeger (a tools module outside go.work; its cold
## build costs many minutes of CPU; $TOOLGATE_JAEGER_BIN names a prebuilt one): a call, an MCP call
## and an agent round exported over OTLP, read back from Jaeger's query API. `make test` runs the
## short forms (in-process recorders, an in-process OTLP receiver).
test-traces: bin/toolgate
	TOOLGATE_BIN=$(CURDIR)/bin/toolgate $(GO) test -ldflags=-w -timeout 45m -run '^TestJaegerTraces$$' ./cmd/toolgate/ -args -jaeger

# bin/toolgate is always relinked (cheap when nothing changed: the build cache has every package);
# the FORCE prerequisite keeps make from trusting the file's age. Build with plain `go build` for
# a debugger (this one has no DWARF).
bin/toolgate: FORCE
	$(GO) build -ldflags=-w -o bin/toolgate ./cmd/toolgate
.PHONY: FORCE
FORCE:

## fmt: gofmt every Go file.
fmt:
	gofmt -w $$(git ls-files '*.go')

## check: the static checks of make test: staticcheck over every package that does not embed the
## Temporal server (scripts/packages lint: all but cmd/toolgate/internal/devserver, cmd/toolgate/internal/cluster,
## cmd/toolgate/internal/pgstore and cmd/toolgate/internal/recordhistories; cmd/toolgate is analyzed built with the
## toolgate_noserver tag, without its embedded server), and workflowcheck. Analyzing the server's
## ~1,600 packages would cost staticcheck ~210 CPU-s on a cold cache; `make lint` does it.
check: lint-noserver workflowcheck

## lint: go vet and staticcheck at a pinned version over every package. Deliberate exceptions carry
## //lint:ignore with a reason.
lint:
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)

lint-noserver:
	pkgs=$$(GO=$(GO) scripts/packages lint) && $(GO) run $(STATICCHECK) -tags toolgate_noserver $$pkgs

## workflowcheck: sdk-go's determinism check of workflow code. Deliberate exceptions carry
## //workflowcheck:ignore with a reason; workflowcheck.config.yaml lists the false positives.
workflowcheck:
	$(GO) run $(WORKFLOWCHECK) -config workflowcheck.config.yaml ./workflows/... ./examples/...

## bench: the Go benchmarks of toolcore (see BENCHMARKS.md for how figures are taken).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./toolcore/ | tee bench.txt
	$(GO) run $(BENCHSTAT) bench.txt

build: bin/toolgate

## compose-up / compose-down: PostgreSQL, Temporal, the Web UI and a toolgate worker (needs Docker).
.PHONY: compose-up compose-down
compose-up:
	docker compose up -d --build
compose-down:
	docker compose down

## soak: the long form of the fault scenarios (internal/faults), figures appended to SOAK_REPORT.
## fuzz: every fuzz target for FUZZTIME each; new corpus entries go to the Go build cache.
.PHONY: soak fuzz
SOAK_REPORT  ?= soak-figures.jsonl
FUZZTIME     ?= 1m
FUZZ_TARGETS := toolcore:FuzzParseToolCall toolcore:FuzzArguments toolcore:FuzzSerialize \
	toolcore:FuzzSerializeRawMessage toolcore:FuzzSerializeString toolcore:FuzzSerializeCapContent \
	toolcore:FuzzDecodeString internal/safetext:FuzzEscape \
	internal/faults:FuzzErrorMapping wire:FuzzEscapeID
soak:
	$(GO) test -count=1 -timeout 150m -v -run '^Test' ./internal/faults/ -soak -faults.report $(abspath $(SOAK_REPORT))
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) ./$$pkg/; done
