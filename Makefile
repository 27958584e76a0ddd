# warren — the two commands that matter first: `make demo` and `make test`.
GO        ?= go
BIN       ?= warren
PKGS      := ./...
# Test files that talk to the real brokers or database carry the build tag
# `integration`: `go test ./...` runs the unit tests alone and says which
# packages' integration tests it left out; `make test` runs them all.
# Packages whose integration tests take their broker from testkit
# (WARREN_TEST_BROKER): they run once on each broker version.
BROKER_PKGS = ./sources/dlq/... ./sources/mgmt/... ./sources/broker/... ./actions/ ./ops/ ./demo/ ./cli/
TEST_TIMEOUT ?= 15m
# The brokers `make test` runs against; WARREN_TEST_BROKER=3.10 or 4.3
# picks one for a quick run (4.3 then runs BROKER_PKGS only).
TEST_BROKERS := $(or $(WARREN_TEST_BROKER),3.10 4.3)

.PHONY: all build run demo services services-cluster services-stop test test-unit test-faults lint bench bench-quick fmt clean

all: build

build:
	$(GO) build -o $(BIN) .

run: build
	./$(BIN)

## demo: seed a realistic scene on the local broker and open the TUI on it
demo: services build
	./$(BIN) demo

## services: start (or install) RabbitMQ 3.10 and 4.3 with the management plugin, and PostgreSQL
services:
	@bash .ci/services.sh

## services-cluster: start (or build) the three-node RabbitMQ 4.3 cluster the fault suite uses (AMQP 5681-5683, management 15681-15683)
services-cluster:
	@bash .ci/services.sh cluster

## services-stop: stop the RabbitMQ 4.3 nodes that `make services` and `make services-cluster` started
services-stop:
	@bash .ci/services.sh stop

## test: every test, integration tests against the real brokers (3.10 and 4.3 at once) and database
test: services
	$(GO) vet -tags integration $(PKGS) ./testdata/bench
	$(GO) vet -tags faults ./cli/faults/
	@GO=$(GO) TEST_TIMEOUT=$(TEST_TIMEOUT) PKGS='$(PKGS)' BROKER_PKGS='$(BROKER_PKGS)' bash .ci/test-brokers.sh $(TEST_BROKERS)

## test-unit: the tests that need no service
test-unit:
	$(GO) test -count=1 $(PKGS)

## test-faults: stops and restarts services; runs alone, on 3.10, 4.3 and the cluster at once, each broker's faults serially (WARREN_FAULTS_BROKERS picks some)
test-faults: services services-cluster build
	@GO=$(GO) bash .ci/test-faults.sh $(or $(WARREN_FAULTS_BROKERS),3.10 4.3 cluster)

lint:
	$(GO) vet $(PKGS)
	@if command -v staticcheck >/dev/null 2>&1; then staticcheck $(PKGS); \
	else echo "lint: staticcheck is not installed; ran go vet only (go install honnef.co/go/tools/cmd/staticcheck@latest)"; fi

## bench: package benchmarks, then the harness that measures each figure beside its anchor
bench: services build
	$(GO) test -tags integration -run '^$$' -bench . -benchmem -count=1 $(PKGS)
	$(GO) run ./testdata/bench -warren ./$(BIN)

## bench-quick: the harness at small sizes
bench-quick: services build
	$(GO) run ./testdata/bench -quick -warren ./$(BIN)

fmt:
	gofmt -w .

clean:
	rm -f $(BIN)
