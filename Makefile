# Loadout: a Kubernetes controller that manages what AI coding agents carry.

# Tools are pinned and built from the Go module proxy into ./bin.
CONTROLLER_GEN_VERSION ?= v0.23.0
LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_GEN_VERSION)
# kustomize v5.8.3 and later need Go 1.27; test/e2e reads this pin too.
KUSTOMIZE_VERSION ?= v5.8.2
KUSTOMIZE ?= $(LOCALBIN)/kustomize-$(KUSTOMIZE_VERSION)

# Helm, built from Go modules like the other tools, for the chart tests.
HELM_VERSION ?= v3.22.0
HELM ?= $(LOCALBIN)/helm-$(HELM_VERSION)
GOLANGCI_LINT_VERSION ?= v2.15.0
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)

IMG ?= ghcr.io/loadout-dev/loadout:dev
# The agent-pod sidecar image (Dockerfile target hostd): /loadout-hostd and its fetch helper /loadout-fetch.
HOSTD_IMG ?= ghcr.io/loadout-dev/loadout-hostd:dev
# The samples' image (Dockerfile target samples): /review-notes, the Service
# of config/samples' runnable review_note tool. Not part of a Loadout install.
SAMPLES_IMG ?= ghcr.io/loadout-dev/loadout-samples:dev
# Stamped into both binaries (`loadout version`, `manager --version`).
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT ?= $(shell git rev-parse HEAD 2>/dev/null || echo unknown)
BUILD_DATE ?= $(shell date -u $(if $(SOURCE_DATE_EPOCH),-d @$(SOURCE_DATE_EPOCH)) +%Y-%m-%dT%H:%M:%SZ)
# Evaluated once, so that both binaries carry the same stamp.
VERSION := $(VERSION)
COMMIT := $(COMMIT)
BUILD_DATE := $(BUILD_DATE)
BUILDINFO := github.com/loadout-dev/loadout/internal/buildinfo
LDFLAGS ?= -s -w -X $(BUILDINFO).version=$(VERSION) -X $(BUILDINFO).commit=$(COMMIT) -X $(BUILDINFO).date=$(BUILD_DATE)
# `make docker-buildx` builds these platforms and pushes IMG.
PLATFORMS ?= linux/amd64,linux/arm64
# -timeout: the image test cross-compiles every image binary for two platforms and the envtest
# suites start API servers; on two shared cores a package can pass go test's
# default 10 minutes without hanging.
GO_TEST_FLAGS ?= -race -timeout 30m
# Fuzz time per target: a smoke in `make test`, longer in `make fuzz`.
FUZZTIME ?= 60s

.DEFAULT_GOAL := help

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate deepcopy code for the API types.
	$(CONTROLLER_GEN) object:headerFile="hack/boilerplate.go.txt" paths="./api/..."

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate CRDs (config/crd/bases) and RBAC (config/rbac) from markers, and copy them (and config/policy) into charts/.
	$(CONTROLLER_GEN) rbac:roleName=loadout-manager crd paths="./..." \
		output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac
	@bash hack/sync-charts.sh

.PHONY: verify-gen
verify-gen: generate manifests ## Regenerate and fail if any generated file differs from what is committed.
	@git diff --exit-code -- api config charts || { echo "generated files are stale: run 'make generate manifests' and commit"; exit 1; }
	@test -z "$$(git status --porcelain -- api config charts)" || { git status --porcelain -- api config charts; echo "untracked generated files: run 'make generate manifests' and commit"; exit 1; }

.PHONY: fmt
fmt: ## Run gofmt on the code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: vet $(GOLANGCI_LINT) lint-selfcheck ## Check formatting, vet, and run golangci-lint (.golangci.yml: the standard set and the bug-finding linters, the layering rules, containedctx, importas).
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "gofmt needed: run 'make fmt'"; exit 1; }
	$(GOLANGCI_LINT) run ./...

# The layering rules must bite: a probe file that makes the engine read the
# disk and link test support has to fail the linter, naming both rules.
.PHONY: lint-selfcheck
lint-selfcheck: $(GOLANGCI_LINT)
	@probe=internal/resources/zz_layering_probe.go; \
	printf 'package resources\n\nimport (\n\t"os"\n\n\t"github.com/loadout-dev/loadout/internal/test/testnet"\n)\n\nvar _, _ = os.Getpid, testnet.FreeAddr\n' > $$probe; \
	out="$$($(GOLANGCI_LINT) run ./internal/resources/ 2>&1)"; rm -f $$probe; \
	echo "$$out" | grep -q "not allowed from list 'engine'" || { echo "$$out"; echo "lint-selfcheck: the engine layering rule did not fail an engine importing os"; exit 1; }; \
	echo "$$out" | grep -q "not allowed from list 'product'" || { echo "$$out"; echo "lint-selfcheck: the product rule did not fail a product package importing internal/test"; exit 1; }; \
	echo "lint-selfcheck: the engine layering rule refuses an engine importing os, the product rule a product package importing internal/test"

.PHONY: envtest
envtest: ## Build the envtest control plane from Go modules (cached per user) and print its directory.
	@bash hack/envtest/build.sh

AGENT_CLI_DIR := test/agents/cli
AGENT_CLIS := $(AGENT_CLI_DIR)/node_modules/.loadout-installed
MCP_SERVERS_DIR := test/mcpservers
MCP_SERVERS := $(MCP_SERVERS_DIR)/node_modules/.loadout-installed

.PHONY: test
test: fuzz-smoke test-pi $(HELM) $(KUSTOMIZE) $(AGENT_CLIS) $(MCP_SERVERS) ## Run all tests, envtest suites and chart lint/render/install included (builds the control plane, helm and kustomize on first use), each fuzzer briefly, the Pi package's tests and the real Claude Code and Codex CLIs.
	@bash hack/apt-install.sh podman=podman setpriv=util-linux
	HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) LOADOUT_AGENT_CLIS=$(CURDIR)/$(AGENT_CLI_DIR)/node_modules/.bin LOADOUT_MCP_SERVERS=$(CURDIR)/$(MCP_SERVERS_DIR)/node_modules KUBEBUILDER_ASSETS="$$(bash hack/envtest/build.sh)" go test $(GO_TEST_FLAGS) ./...

.PHONY: test-go
test-go: $(HELM) $(KUSTOMIZE) ## Run the Go tests and envtest suites only: no npm, no Pi, no agent CLIs (tests that need them skip and say why).
	HELM=$(HELM) KUSTOMIZE=$(KUSTOMIZE) KUBEBUILDER_ASSETS="$$(bash hack/envtest/build.sh)" go test $(GO_TEST_FLAGS) ./...

.PHONY: helm
helm: $(HELM) ## Build helm from Go modules into ./bin (cached) and print its path.
	@echo $(HELM)

# The Pi package (integrations/pi) is tested with the real Pi agent: npm
# installs the pinned Pi from package-lock.json (once per lockfile change),
# and the node tests run Pi sessions against bin/loadout's hostd (and the
# samples' bin/review-notes for the runnable tool).
PI_DIR := integrations/pi
PI_MODULES := $(PI_DIR)/node_modules/.loadout-installed

.PHONY: test-pi
test-pi: $(PI_MODULES) build-loadout build-samples ## Type-check the Pi package (tsc --noEmit, strict) and run its node tests: real Pi sessions against a real hostd (needs Node 20+ and npm).
	cd $(PI_DIR) && npm run --silent typecheck && LOADOUT_BIN=$(LOCALBIN)/loadout LOADOUT_REVIEW_NOTES_BIN=$(LOCALBIN)/review-notes npm test

.PHONY: node-check
node-check:
	@command -v node >/dev/null && command -v npm >/dev/null || { echo "Node.js 20+ and npm are needed for integrations/pi (README: Requirements)"; exit 1; }
	@node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' || { echo "Node.js $$(node --version) is too old: integrations/pi needs Node 20+ (README: Requirements)"; exit 1; }

$(PI_MODULES): $(PI_DIR)/package-lock.json $(PI_DIR)/package.json | node-check
	cd $(PI_DIR) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

# The real Claude Code and Codex CLIs (test/agents/cli, pinned by its
# package-lock.json) run offline in the agent tests against a scripted model
# server. Claude Code's postinstall copies its platform binary into place: it
# is run explicitly, the one install script this lockfile allows.

.PHONY: agent-clis
agent-clis: $(AGENT_CLIS) ## Install the pinned Claude Code and Codex CLIs the agent tests run (npm, once per lockfile change).

$(AGENT_CLIS): $(AGENT_CLI_DIR)/package-lock.json $(AGENT_CLI_DIR)/package.json | node-check
	cd $(AGENT_CLI_DIR) && npm ci --ignore-scripts --no-audit --no-fund && node node_modules/@anthropic-ai/claude-code/install.cjs
	bash hack/apt-install.sh bwrap=bubblewrap socat=socat
	@touch $@

# Third-party MCP servers (test/mcpservers, pinned by its package-lock.json)
# run behind Extensions in the MCP tool tests: the reference
# @modelcontextprotocol/server-everything over streamable HTTP.
.PHONY: mcp-servers
mcp-servers: $(MCP_SERVERS) ## Install the pinned MCP servers the MCP tool tests run (npm, once per lockfile change).

$(MCP_SERVERS): $(MCP_SERVERS_DIR)/package-lock.json $(MCP_SERVERS_DIR)/package.json | node-check
	cd $(MCP_SERVERS_DIR) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME each.
	@bash hack/fuzz.sh $(FUZZTIME)

.PHONY: fuzz-smoke
fuzz-smoke: ## Run every fuzz target for 2s (part of `make test`; about a minute in all).
	@bash hack/fuzz.sh 2s

# `make bench`: the Pi package numbers (bench-pi), every Go benchmark (resolution, hooks), then the scale harness
# (propagation, writes, storm, memory, resolution against Pi; ~20 min, needs
# npm for Pi). BENCH_FLAGS=-mode=smoke runs the harness in seconds.
BENCH_COUNT ?= 3
BENCH_FLAGS ?= -mode=full -out=$(LOCALBIN)/bench-results.md -profile-dir=$(LOCALBIN)/bench-profiles
# The propagation run with the client rate limits lifted, where the
# controller's own cost shows (docs/benchmarks.md, Propagation).
BENCH_LIFTED_FLAGS ?= -mode=smoke -workspaces=100,500,1000 -rounds=5 -qps=1000 -burst=2000 -resolution=none -skills=0 -pi-cache= -out=$(LOCALBIN)/bench-lifted.md

.PHONY: bench-pi
bench-pi: $(PI_MODULES) build-loadout ## Pi start-up (materialized winners vs scanning 3 roots × 1,000 skills), added latency per tool call through the Pi package, its HTTP client against undici, and a session's first calls.
	cd $(PI_DIR) && LOADOUT_BIN=$(LOCALBIN)/loadout node bench.mjs 1000 9 2000
	cd $(PI_DIR) && LOADOUT_BIN=$(LOCALBIN)/loadout node bench-client.mjs 2000 7
	cd $(PI_DIR) && LOADOUT_BIN=$(LOCALBIN)/loadout node bench-first.mjs 2000 5

.PHONY: bench
bench: bench-pi ## Run the Pi numbers, the Go benchmarks and the scale harness (test/bench); results in docs/benchmarks.md.
	KUBEBUILDER_ASSETS="$$(bash hack/envtest/build.sh)" go test -run '^$$' -bench . -benchmem -count $(BENCH_COUNT) ./...
	KUBEBUILDER_ASSETS="$$(bash hack/envtest/build.sh)" go run ./test/bench/cmd/loadout-bench $(BENCH_FLAGS)
	KUBEBUILDER_ASSETS="$$(bash hack/envtest/build.sh)" go run ./test/bench/cmd/loadout-bench $(BENCH_LIFTED_FLAGS)

# The shard harness (docs/benchmarks.md, Shards): N = 1 and N = 3 manager
# processes against one envtest control plane, server mode (ShardedListAndWatch
# on) and client mode; 8,000 Workspaces over 2,000 namespaces plus a
# 4,000-Workspace whale. Long (tens of minutes on two cores): not part of
# `make bench`; SHARDS_BENCH_FLAGS='-workspaces=200 -namespaces=50 -whale=200 -small=10' runs it in about two minutes.
SHARDS_BENCH_FLAGS ?= -qps=1000 -burst=2000 -out=$(LOCALBIN)/bench-shards.md

.PHONY: bench-shards
bench-shards: ## Run the shard harness (test/bench/cmd/loadout-shards-bench); results in docs/benchmarks.md, Shards.
	KUBEBUILDER_ASSETS="$$(bash hack/envtest/build.sh)" go run ./test/bench/cmd/loadout-shards-bench $(SHARDS_BENCH_FLAGS)

##@ Build

.PHONY: build
build: build-loadout ## Build the manager, the loadout CLI, loadout-hostd (the sidecar) and loadout-fetch (its fetch helper) into ./bin, stamped with VERSION, COMMIT and BUILD_DATE.
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/manager ./cmd/manager
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/loadout-hostd ./cmd/loadout-hostd
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/loadout-fetch ./cmd/loadout-fetch

.PHONY: build-loadout
build-loadout: ## Build the loadout CLI (preview, hostd, materialize, ...) into ./bin.
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/loadout ./cmd/loadout

.PHONY: build-samples
build-samples: ## Build the samples' review-notes (the Service of config/samples' review_note tool) into ./bin.
	CGO_ENABLED=0 go build -trimpath -ldflags "$(LDFLAGS)" -o $(LOCALBIN)/review-notes ./samples/review-notes

.PHONY: run
run: ## Run the manager against the cluster of the current kubeconfig.
	go run ./cmd/manager

.PHONY: demo
demo: build build-samples $(PI_MODULES) ## Run Loadout end to end on a local control plane, with a Pi session (scripted model), and clean up; KEEP=1 keeps it running.
	@go build -o $(LOCALBIN)/loadout-demo ./hack/demo
	@$(LOCALBIN)/loadout-demo --assets "$$(bash hack/envtest/build.sh)" --manager $(LOCALBIN)/manager --loadout $(LOCALBIN)/loadout --review-notes $(LOCALBIN)/review-notes --pi $(PI_DIR) $(if $(filter 1 true yes,$(KEEP)),--keep)

# `make images` needs no container engine: hack/images builds the images
# from Go (static binaries on an empty base, non-root, linux/amd64 and
# linux/arm64) as OCI layouts under IMAGES_DIR, with an SPDX SBOM each. The
# build time is the commit's, so one commit builds the same digests.
IMAGES_DIR ?= $(LOCALBIN)/images
IMAGES_DATE ?= $(shell git log -1 --format=%cI 2>/dev/null | xargs -r -I{} date -u -d {} +%Y-%m-%dT%H:%M:%SZ || echo 1970-01-01T00:00:00Z)

.PHONY: images
images: ## Build the manager, hostd and samples images as OCI layouts in bin/images (no container engine), printing their digests.
	go run ./hack/images build --out $(IMAGES_DIR) --version $(VERSION) --commit $(COMMIT) --date $(or $(IMAGES_DATE),1970-01-01T00:00:00Z)

.PHONY: push
push: ## Push what `make images` built: IMG (the manager image), HOSTD_IMG (the sidecar) and SAMPLES_IMG (the samples' Services), e.g. make push IMG=registry.example/loadout:v1 HOSTD_IMG=registry.example/loadout-hostd:v1 SAMPLES_IMG=registry.example/loadout-samples:v1.
	go run ./hack/images push --out $(IMAGES_DIR) --image manager --ref $(IMG)
	go run ./hack/images push --out $(IMAGES_DIR) --image hostd --ref $(HOSTD_IMG)
	go run ./hack/images push --out $(IMAGES_DIR) --image samples --ref $(SAMPLES_IMG)

# `make release VERSION=vX.Y.Z` builds everything a user installs, all at
# that version, and pushes it to REGISTRY (log in first: `docker login` for
# the images, `helm registry login` for the charts): the three images for
# linux/amd64 and linux/arm64, each with its SBOM as an OCI referrer; image
# archives for `docker load`, `podman load` and `kind load image-archive`;
# the loadout CLI for Linux and macOS (amd64, arm64) with SHA256SUMS; the
# charts, whose default image tag is VERSION, pushed to oci://REGISTRY/charts.
# Everything lands in RELEASE_DIR too. .github/workflows/release.yml runs it
# for a pushed tag. INSECURE=1 allows a plain-HTTP registry (a local one).
REGISTRY ?= ghcr.io/loadout-dev
RELEASE_DIR ?= $(CURDIR)/dist/release

.PHONY: release
release: $(HELM) ## Build and push a release: make release VERSION=vX.Y.Z [REGISTRY=ghcr.io/loadout-dev] [INSECURE=1] (images with SBOM referrers, image archives, CLI binaries with checksums, OCI charts).
	go run ./hack/images release --version $(VERSION) --commit $(COMMIT) --date $(or $(IMAGES_DATE),1970-01-01T00:00:00Z) \
		--registry $(REGISTRY) --helm $(HELM) --dist $(RELEASE_DIR) $(if $(filter 1 true yes,$(INSECURE)),--insecure)

.PHONY: docker-build
docker-build: ## Build the manager image IMG, the hostd sidecar image HOSTD_IMG and the samples image SAMPLES_IMG (needs a Docker engine).
	@command -v docker >/dev/null 2>&1 || { echo "docker-build: no docker CLI on PATH; install Docker to build the image"; exit 1; }
	docker build $(DOCKER_BUILD_ARGS) --target manager -t $(IMG) .
	docker build $(DOCKER_BUILD_ARGS) --target hostd -t $(HOSTD_IMG) .
	docker build $(DOCKER_BUILD_ARGS) --target samples -t $(SAMPLES_IMG) .

DOCKER_BUILD_ARGS = --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) --build-arg BUILD_DATE=$(BUILD_DATE)

.PHONY: docker-buildx
docker-buildx: ## Build and push IMG, HOSTD_IMG and SAMPLES_IMG for PLATFORMS (linux/amd64,linux/arm64) with docker buildx.
	@command -v docker >/dev/null 2>&1 || { echo "docker-buildx: no docker CLI on PATH; a Docker engine with the buildx plugin is needed for multi-arch images"; exit 1; }
	@docker buildx version >/dev/null 2>&1 || { echo "docker-buildx: 'docker buildx' is not available; install the buildx plugin (Docker Desktop and docker-ce ship it)"; exit 1; }
	@docker buildx inspect loadout-builder >/dev/null 2>&1 || docker buildx create --name loadout-builder --driver docker-container >/dev/null
	docker buildx build --builder loadout-builder --platform $(PLATFORMS) $(DOCKER_BUILD_ARGS) --target manager --tag $(IMG) --push .
	docker buildx build --builder loadout-builder --platform $(PLATFORMS) $(DOCKER_BUILD_ARGS) --target hostd --tag $(HOSTD_IMG) --push .
	docker buildx build --builder loadout-builder --platform $(PLATFORMS) $(DOCKER_BUILD_ARGS) --target samples --tag $(SAMPLES_IMG) --push .

##@ Deployment

.PHONY: install
install: ## Install the CRDs into the cluster of the current kubeconfig.
	kubectl apply --server-side -f config/crd/bases

.PHONY: uninstall
uninstall: ## Remove the CRDs (and every Loadout object) from the cluster.
	kubectl delete --ignore-not-found -f config/crd/bases

.PHONY: build-installer
build-installer: manifests $(KUSTOMIZE) ## Write dist/install.yaml (namespace, CRDs, RBAC, manager with image IMG and hostd image HOSTD_IMG, policies).
	@rm -rf dist/overlay && mkdir -p dist/overlay
	@cd dist/overlay && $(KUSTOMIZE) create --resources ../../config/default && $(KUSTOMIZE) edit set image ghcr.io/loadout-dev/loadout=$(IMG)
	$(KUSTOMIZE) build dist/overlay | sed 's|--hostd-image=ghcr.io/loadout-dev/loadout-hostd:dev|--hostd-image=$(HOSTD_IMG)|' > dist/install.yaml
	@rm -rf dist/overlay

.PHONY: deploy
deploy: build-installer ## Install Loadout (dist/install.yaml) into the cluster of the current kubeconfig.
	kubectl apply --server-side -f dist/install.yaml

.PHONY: undeploy
undeploy: build-installer ## Remove Loadout, its CRDs and every Loadout object from the cluster.
	kubectl delete --ignore-not-found -f dist/install.yaml

$(KUSTOMIZE):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	@mv $(LOCALBIN)/kustomize $(KUSTOMIZE)

$(GOLANGCI_LINT):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)
	@mv $(LOCALBIN)/golangci-lint $(GOLANGCI_LINT)

$(HELM):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install helm.sh/helm/v3/cmd/helm@$(HELM_VERSION)
	@mv $(LOCALBIN)/helm $(HELM)

$(CONTROLLER_GEN):
	@mkdir -p $(LOCALBIN)
	GOBIN=$(LOCALBIN) go install sigs.k8s.io/controller-tools/cmd/controller-gen@$(CONTROLLER_GEN_VERSION)
	@mv $(LOCALBIN)/controller-gen $(CONTROLLER_GEN)
