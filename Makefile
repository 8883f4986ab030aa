# jido-bus — make targets. `make run` starts a node; `make test` runs every
# test (unit, race, end-to-end with the real NATS CLI).

GO       ?= go
BIN      := $(CURDIR)/bin
LISTEN   ?= 127.0.0.1:4222
# The gateways (MCP and A2A over HTTP) of `make run`, on loopback: no
# token needed there. HTTP= (empty) turns them off.
HTTP     ?= 127.0.0.1:8080
# `make run` keeps its data outside the checkout, where serve does by
# default: the checkout stays free to open as a project (a project may
# not hold its node's data dir). DATA_DIR=DIR puts the node's data in DIR
# and the demo's copy in DIR-demo instead.
ifeq ($(XDG_DATA_HOME),)
JIDO_DATA := $(HOME)/.local/share/jido-bus
else
JIDO_DATA := $(XDG_DATA_HOME)/jido-bus
endif
ifeq ($(origin DATA_DIR),undefined)
DATA_DIR := $(JIDO_DATA)/node
DEMO_DIR ?= $(JIDO_DATA)/demo
else
DEMO_DIR ?= $(DATA_DIR)-demo
endif
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT   ?= $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := -X main.version=$(VERSION) -X main.commit=$(COMMIT)
# Each fuzz target runs this long under `make fuzz`.
FUZZTIME ?= 60s

.PHONY: all build run test soak check fmt vet staticcheck bench docs fuzz tools mcp-client a2a-client images compose-smoke clean help

all: build

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  %-12s %s\n", $$1, $$2}'

build: ## build bin/jido-bus
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN)/jido-bus ./cmd/jido-bus

run: build $(BIN)/nats ## start a node (NATS on $(LISTEN), MCP and A2A on http://$(HTTP), data in $(DATA_DIR)) with the demo project "demo" open; also builds bin/nats
	@# The demo project is a copy (its files get edited), made once.
	@# $(JIDO_DATA) is its user's only: the node's log holds what its tools read.
	@test -d "$(DEMO_DIR)" || { mkdir -p -m 700 "$(dir $(DEMO_DIR))" && cp -R examples/demo "$(DEMO_DIR)"; }
	@test ! -d data/log || echo "note: ./data, the data dir of make run before, is left alone; make run DATA_DIR=./data uses it again"
	@# A port taken (another node, another make run) is said by serve;
	@# the make variables are what a make run user changes.
	$(BIN)/jido-bus serve --listen $(LISTEN) --data-dir "$(DATA_DIR)" $(if $(HTTP),--http $(HTTP)) --open "$(DEMO_DIR)=demo" || \
	  { code=$$?; echo "make run: serve exited $$code; to run beside another node: make run LISTEN=127.0.0.1:4223 HTTP=127.0.0.1:8081 DATA_DIR=/tmp/jido-2 (NATS port, gateways' port, data dir)" >&2; exit $$code; }

test: tools ## every test, with -race, including the end-to-end tests
	$(GO) test -race -timeout 20m $$($(GO) list ./... | grep -v /e2e$$)
	@# The end-to-end tests build the binary themselves, which go test's
	@# cache cannot see: never reuse a cached result.
	JIDO_NATS_CLI=$(BIN)/nats $(GO) test -race -count=1 -timeout 20m ./e2e/
	@# go test without -v does not show a skip: say it where it is read.
	@command -v node >/dev/null 2>&1 || echo "make test: node is not on PATH, so the tests with the real MCP TypeScript and A2A JavaScript clients were SKIPPED (they prove nothing here); install Node.js 18 or later and run make test again" >&2

soak: tools ## the long crash suites: kill -9 the node 25 times under load, fill its disk from its tools 12 times (needs root for a tmpfs), kill -9 a cluster node 20 times and restart a NATS server 5 times, and check nothing acknowledged is lost
	JIDO_CRASH_KILLS=25 JIDO_SOAK=1 JIDO_NATS_CLI=$(BIN)/nats $(GO) test -race -count=1 -timeout 60m -run CrashSuite -v ./e2e/
	JIDO_CLUSTER_KILLS=20 JIDO_SOAK=1 JIDO_NATS_CLI=$(BIN)/nats $(GO) test -race -count=1 -timeout 60m -run TestClusterSoak -v ./e2e/

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

docs: ## rewrite the generated reference pages (docs/cli.md, docs/api.md) from the code
	$(GO) test -count=1 -run 'TestDocs(CLI|API)$$' ./cmd/jido-bus/ -args -update-docs

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

# docker-compose.yml's images are FROM scratch: the static binaries are
# built here on the host (no golang image can be pulled) into bin/compose,
# which .dockerignore lets through as the only build context besides
# deploy/nats.conf. Debian's docker-compose (v1) where the docker compose
# plugin is missing.
COMPOSE  ?= $(shell docker compose version >/dev/null 2>&1 && echo 'docker compose' || echo docker-compose)
IMAGES   := $(BIN)/compose
STATIC   := CGO_ENABLED=0 $(GO) build -trimpath

images: ## build static jido-bus, nats-server (go.mod's), the NATS CLI and the probe into bin/compose, then docker-compose.yml's images (nothing pulled)
	rm -rf $(IMAGES) && mkdir -p $(IMAGES)/empty $(IMAGES)/tmp && chmod 1777 $(IMAGES)/tmp
	$(STATIC) -ldflags "-s -w $(LDFLAGS)" -o $(IMAGES)/jido-bus ./cmd/jido-bus
	$(STATIC) -ldflags "-s -w" -o $(IMAGES)/nats-server github.com/nats-io/nats-server/v2
	$(STATIC) -ldflags "-s -w" -o $(IMAGES)/probe ./deploy/probe
	cd tools && $(STATIC) -ldflags "-s -w" -o $(IMAGES)/nats github.com/nats-io/natscli/nats
	$(COMPOSE) build

compose-smoke: images ## bring docker-compose.yml up under a project of its own, call a counter through kills of a node and a NATS server, check nothing acknowledged was lost, tear it all down (needs a Docker engine; not part of make test)
	$(GO) run ./deploy/smoke -compose "$(COMPOSE)"

clean: ## remove bin/ (the data dir is left alone)
	rm -rf $(BIN)
