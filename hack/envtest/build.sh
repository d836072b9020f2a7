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

# progress reads `go build -v` (one package name per line, as each is
# compiled) and prints, at most every 20 s, how far the build is, out of the
# packages the binary links: a first build takes many minutes on two cores
# and must not look hung.
progress() { # progress <name> <total packages>
	local name=$1 total=$2 n=0 start=$SECONDS last=$SECONDS
	while IFS= read -r line; do
		case $line in
		"#"* | *": "* | *"error"*) echo "$line" >&2 ;; # compiler output, not a package
		*) n=$((n + 1)) ;;
		esac
		if ((SECONDS - last >= 20)); then
			last=$SECONDS
			echo "  $name: $n of at most $total packages compiled, $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s so far" >&2
		fi
	done
	echo "  $name: done, $n packages compiled in $(((SECONDS - start) / 60)) min $(((SECONDS - start) % 60)) s" >&2
}

build() { # build <module dir> <output name> [ldflags]
	local out="$dir/$2"
	[ -x "$out" ] && return 0
	local total
	total=$(cd "$here/$1" && go list -deps . 2>/dev/null | wc -l)
	echo "building $2 into $dir (first run only: $total packages; on two busy cores the API server takes 10 to 45 minutes, etcd a few)" >&2
	local tmp
	tmp=$(mktemp "$out.XXXXXX")
	# pipefail carries go build's status through the progress reader.
	(cd "$here/$1" && CGO_ENABLED=0 go build -v -trimpath -ldflags "${3:-}" -o "$tmp" . 2>&1) | progress "$2" "$total" || {
		rm -f "$tmp"
		return 1
	}
	chmod 0755 "$tmp"
	mv "$tmp" "$out"
}

major=${KUBE_VERSION#v}; major=${major%%.*}
minor=${KUBE_VERSION#v*.}; minor=${minor%%.*}
vpkg=k8s.io/component-base/version
mkdir -p "$dir"
# Two first runs at once (two terminals, a test and make demo) wait for each
# other instead of both compiling for most of an hour; the second finds the
# binaries built. flock is util-linux's, on every Debian and Ubuntu.
exec 9>"$dir.lock"
if ! flock -n 9; then
	echo "another build of the envtest control plane holds $dir.lock; waiting for it" >&2
	flock 9
fi
build etcd etcd
build kube-apiserver kube-apiserver "-s -w -X $vpkg.gitVersion=$KUBE_VERSION -X $vpkg.gitMajor=$major -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean"
echo "$dir"
