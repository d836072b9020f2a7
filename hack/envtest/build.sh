#!/usr/bin/env bash
# Builds the envtest control plane (kube-apiserver and etcd) from Go modules into a
# per-user cache keyed by version, reuses it when present, and prints its directory.
# No binary is downloaded: everything comes from the Go module proxy.
set -euo pipefail

KUBE_VERSION=v1.37.2
ETCD_VERSION=v3.6.16
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${LOADOUT_ENVTEST_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/loadout/envtest}
dir="$cache_root/k8s-${KUBE_VERSION}-etcd-${ETCD_VERSION}-$(go env GOOS)-$(go env GOARCH)"

build() { # build <module dir> <output name> [ldflags]
	local out="$dir/$2"
	[ -x "$out" ] && return 0
	mkdir -p "$dir"
	echo "building $2 into $dir (first run only; the API server takes several minutes)" >&2
	(cd "$here/$1" && CGO_ENABLED=0 go build -trimpath -ldflags "${3:-}" -o "$out.tmp" .)
	mv "$out.tmp" "$out"
}

major=${KUBE_VERSION#v}; major=${major%%.*}
minor=${KUBE_VERSION#v*.}; minor=${minor%%.*}
vpkg=k8s.io/component-base/version
build etcd etcd
build kube-apiserver kube-apiserver "-s -w -X $vpkg.gitVersion=$KUBE_VERSION -X $vpkg.gitMajor=$major -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
echo "$dir"
