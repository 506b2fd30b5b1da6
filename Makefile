# toolgate: the two commands a newcomer needs are `make dev` and `make test`.
GO            ?= go
STATICCHECK   := honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHSTAT     := golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
PKGS          := ./...

.PHONY: dev test fmt lint bench build

## dev: run toolgate on its embedded default (Temporal server, Web UI, worker with the toolbox).
dev:
	$(GO) run ./cmd/toolgate dev

## test: vet and the whole test suite under the race detector (what CI runs). The toolgate binary
## is linked once here and shared by every end-to-end package through TOOLGATE_BIN.
test:
	$(GO) vet $(PKGS)
	$(GO) build -o bin/toolgate ./cmd/toolgate
	TOOLGATE_BIN=$(CURDIR)/bin/toolgate $(GO) test -race -timeout 20m $(PKGS)

## fmt: gofmt every Go file.
fmt:
	gofmt -w $$(git ls-files '*.go')

## lint: staticcheck at a pinned version.
lint:
	$(GO) run $(STATICCHECK) $(PKGS)

## bench: the Go benchmarks of toolcore (see BENCHMARKS.md for how figures are taken).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count 6 ./toolcore/ | tee bench.txt
	$(GO) run $(BENCHSTAT) bench.txt

build:
	$(GO) build -o bin/toolgate ./cmd/toolgate

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
	internal/faults:FuzzErrorMapping
soak:
	$(GO) test -count=1 -timeout 150m -v -run '^Test' ./internal/faults/ -soak -faults.report $(abspath $(SOAK_REPORT))
fuzz:
	@set -e; for t in $(FUZZ_TARGETS); do pkg=$${t%%:*}; name=$${t##*:}; \
		echo "== $$pkg $$name ($(FUZZTIME))"; \
		$(GO) test -run '^$$' -fuzz "^$$name$$" -fuzztime $(FUZZTIME) ./$$pkg/; done
