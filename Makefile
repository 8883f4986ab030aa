# jido-bus — make targets. `make run` starts a node; `make test` runs every
# test (unit, race, end-to-end with the real NATS CLI).

GO       ?= go
BIN      := $(CURDIR)/bin
DATA_DIR ?= ./data
LISTEN   ?= 127.0.0.1:4222
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Each fuzz target runs this long under `make fuzz`.
FUZZTIME ?= 60s

.PHONY: all build run test soak check fmt vet staticcheck bench fuzz tools mcp-client a2a-client clean help

all: build

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/jido-bus
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/jido-bus ./cmd/jido-bus

run: build $(BIN)/nats ## start a node (embedded NATS on $(LISTEN), data in $(DATA_DIR)) with the demo project "demo" open; also builds bin/nats
	@# The demo project is a copy (its files get edited), made once.
	@test -d $(DATA_DIR)-demo || cp -R examples/demo $(DATA_DIR)-demo
	$(BIN)/jido-bus serve --listen $(LISTEN) --data-dir $(DATA_DIR) --open $(DATA_DIR)-demo=demo

test: tools ## every test, with -race, including the end-to-end tests
	$(GO) test -race -timeout 20m $$($(GO) list ./... | grep -v /e2e$$)
	@# The end-to-end tests build the binary themselves, which go test's
	@# cache cannot see: never reuse a cached result.
	JIDO_NATS_CLI=$(BIN)/nats $(GO) test -race -count=1 -timeout 20m ./e2e/

soak: tools ## the long crash suite: kill -9 the node 25 times under load, fill its disk from its tools 12 times (needs root for a tmpfs), and check nothing acknowledged is lost
	JIDO_CRASH_KILLS=25 JIDO_SOAK=1 JIDO_NATS_CLI=$(BIN)/nats $(GO) test -race -count=1 -timeout 60m -run CrashSuite -v ./e2e/

check: tools fmt vet staticcheck ## gofmt, go vet and staticcheck

fmt:
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed on:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet ./...

staticcheck: tools
	$(BIN)/staticcheck ./...

bench: build ## every package's benchmarks, then `jido-bus bench` (a node against the limits of NATS and the disk)
	$(GO) test -run '^$$' -bench . -benchmem -timeout 60m ./...
	$(BIN)/jido-bus bench

fuzz: ## run each fuzz target for $(FUZZTIME)
	@set -e; for pkg in $$($(GO) list ./...); do \
	  for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
	    echo "== $$pkg $$f"; $(GO) test -run '^$$' -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
	  done; \
	done

tools: $(BIN)/nats $(BIN)/staticcheck mcp-client a2a-client ## build the NATS CLI and staticcheck at their pinned versions into bin/, install the MCP TypeScript and A2A JavaScript clients the e2e tests drive

$(BIN)/nats: tools/go.mod tools/go.sum
	cd tools && $(GO) build -o $(BIN)/nats github.com/nats-io/natscli/nats

$(BIN)/staticcheck: tools/go.mod tools/go.sum
	cd tools && $(GO) build -o $(BIN)/staticcheck honnef.co/go/tools/cmd/staticcheck

# The official MCP TypeScript SDK, pinned by e2e/testdata/mcp-client's
# package-lock.json, installed into bin/mcp-client (never into the
# checkout's tracked files) for e2e/clients_mcp_test.go. Without npm the
# test is skipped (it says so), since it needs Node.js.
MCP_CLIENT := $(BIN)/mcp-client
MCP_CLIENT_SRC := e2e/testdata/mcp-client

mcp-client: ## install the MCP TypeScript SDK client into bin/mcp-client (npm ci; skipped without npm)
	@if command -v npm >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(MCP_CLIENT)/node_modules/.package-lock.json; \
	else echo "npm not found: the MCP TypeScript client test (e2e/clients_mcp_test.go) will be skipped"; fi

$(MCP_CLIENT)/node_modules/.package-lock.json: $(MCP_CLIENT_SRC)/package.json $(MCP_CLIENT_SRC)/package-lock.json $(MCP_CLIENT_SRC)/.npmrc
	mkdir -p $(MCP_CLIENT)
	cp $(MCP_CLIENT_SRC)/package.json $(MCP_CLIENT_SRC)/package-lock.json $(MCP_CLIENT_SRC)/.npmrc $(MCP_CLIENT)/
	cd $(MCP_CLIENT) && npm ci --no-audit --no-fund

# The official A2A JavaScript SDK, its 0.3 and 1.0 lines side by side,
# pinned by e2e/testdata/a2a-client's package-lock.json and installed into
# bin/a2a-client for e2e/clients_a2a_test.go, as the MCP client is.
A2A_CLIENT := $(BIN)/a2a-client
A2A_CLIENT_SRC := e2e/testdata/a2a-client

a2a-client: ## install the A2A JavaScript SDK clients (0.3 and 1.0) into bin/a2a-client (npm ci; skipped without npm)
	@if command -v npm >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory $(A2A_CLIENT)/node_modules/.package-lock.json; \
	else echo "npm not found: the A2A JavaScript client test (e2e/clients_a2a_test.go) will be skipped"; fi

$(A2A_CLIENT)/node_modules/.package-lock.json: $(A2A_CLIENT_SRC)/package.json $(A2A_CLIENT_SRC)/package-lock.json $(A2A_CLIENT_SRC)/.npmrc
	mkdir -p $(A2A_CLIENT)
	cp $(A2A_CLIENT_SRC)/package.json $(A2A_CLIENT_SRC)/package-lock.json $(A2A_CLIENT_SRC)/.npmrc $(A2A_CLIENT)/
	cd $(A2A_CLIENT) && npm ci --no-audit --no-fund

clean: ## remove bin/ (the data dir is left alone)
	rm -rf $(BIN)
