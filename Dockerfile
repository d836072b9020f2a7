# Three images from one build:
#
#   docker build --target hostd -t ghcr.io/loadout-dev/loadout-hostd:TAG .
#       the agent-pod sidecar: /loadout-hostd (`loadout hostd` as a lean
#       binary with only hostd, its command hooks and version) and
#       /loadout-fetch, the helper it runs per fetch of an external skill
#       source (so the sidecar links no registry or git client). Nothing
#       else in it can run in hostd's container: no /loadout materialize, no
#       /manager (the agent-pod policy also refuses exec probes and lifecycle
#       hooks on it).
#   docker build --target samples -t ghcr.io/loadout-dev/loadout-samples:TAG .
#       the samples' Services: /review-notes, behind config/samples' runnable
#       review_note tool. Not part of a Loadout install.
#   docker build -t ghcr.io/loadout-dev/loadout:TAG .   (target manager, the default)
#       the manager (/manager, the entrypoint) and the full CLI (/loadout).
#
# `make docker-build` builds all three (IMG, HOSTD_IMG and SAMPLES_IMG); the
# manager's --hostd-image names the second. The builder runs on the build machine's
# platform and cross-compiles for TARGETPLATFORM, so `make docker-buildx`
# builds linux/amd64 and linux/arm64 without emulating the compiler.
FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
COPY samples/ samples/
# Set by BuildKit for each platform; the defaults serve a plain `docker build`.
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# `make docker-build` and `make docker-buildx` pass these (loadout version).
ARG VERSION=dev
ARG COMMIT=unknown
ARG BUILD_DATE=unknown
RUN pkg=github.com/loadout-dev/loadout/internal/buildinfo \
 && ldflags="-s -w -buildid= -X $pkg.version=${VERSION} -X $pkg.commit=${COMMIT} -X $pkg.date=${BUILD_DATE}" \
 && CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags="$ldflags" -o manager ./cmd/manager \
 && CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags="$ldflags" -o loadout ./cmd/loadout \
 && CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags="$ldflags" -o loadout-hostd ./cmd/loadout-hostd \
 && CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags="$ldflags" -o loadout-fetch ./cmd/loadout-fetch \
 && CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -buildvcs=false -ldflags="$ldflags" -o review-notes ./samples/review-notes

# The base of every image: an empty image holding only the non-root user's
# passwd and group entries, run as that user; no shell, no package manager.
# The binaries carry their CA roots (golang.org/x/crypto/x509roots/fallback).
# `make images` builds the same files without a container engine
# (hack/images; a test compares them).
FROM scratch AS nonroot
COPY hack/images/rootfs/etc/group /etc/group
COPY hack/images/rootfs/etc/passwd /etc/passwd
USER 65532:65532

# The sidecar image: /loadout-hostd and its fetch helper, /loadout-fetch.
FROM nonroot AS hostd
COPY --from=builder /workspace/loadout-hostd /loadout-hostd
COPY --from=builder /workspace/loadout-fetch /loadout-fetch
ENTRYPOINT ["/loadout-hostd"]

# The samples' image: /review-notes only, so that neither the manager image
# nor the sidecar carries a sample.
FROM nonroot AS samples
COPY --from=builder /workspace/review-notes /review-notes
ENTRYPOINT ["/review-notes"]

# The manager image (the default target): /manager, and /loadout, the CLI.
FROM nonroot AS manager
COPY --from=builder /workspace/manager /manager
COPY --from=builder /workspace/loadout /loadout
ENTRYPOINT ["/manager"]
