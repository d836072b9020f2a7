# Build the manager, the loadout CLI and loadout-hostd (the lean build of
# `loadout hostd` the agent-pod policy runs as the sidecar) as static
# binaries. The builder runs on the build machine's platform and cross-compiles
# for TARGETPLATFORM, so `make docker-buildx` builds linux/amd64 and
# linux/arm64 without emulating the compiler.
FROM --platform=$BUILDPLATFORM golang:1.26 AS builder
WORKDIR /workspace
COPY go.mod go.sum ./
RUN go mod download
COPY api/ api/
COPY cmd/ cmd/
COPY controllers/ controllers/
COPY internal/ internal/
# Set by BuildKit for each platform; the defaults serve a plain `docker build`.
ARG TARGETOS=linux
ARG TARGETARCH=amd64
# `make docker-build` and `make docker-buildx` pass these (loadout version).
ARG VERSION=dev
ARG COMMIT=unknown
ARG BUILD_DATE=unknown
RUN pkg=github.com/loadout-dev/loadout/internal/buildinfo \
 && ldflags="-s -w -X $pkg.version=${VERSION} -X $pkg.commit=${COMMIT} -X $pkg.date=${BUILD_DATE}" \
 && CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags="$ldflags" -o manager ./cmd/manager \
 && CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags="$ldflags" -o loadout ./cmd/loadout \
 && CGO_ENABLED=0 GOOS=${TARGETOS} GOARCH=${TARGETARCH} go build -trimpath -ldflags="$ldflags" -o loadout-hostd ./cmd/loadout-hostd

# Distroless static, non-root: no shell, no package manager.
FROM gcr.io/distroless/static:nonroot
WORKDIR /
COPY --from=builder /workspace/manager /manager
COPY --from=builder /workspace/loadout /loadout
COPY --from=builder /workspace/loadout-hostd /loadout-hostd
USER 65532:65532
ENTRYPOINT ["/manager"]
