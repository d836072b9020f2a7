#!/usr/bin/env bash
# Times `loadout preview --root` on 3 roots × N skills against cat of every
# file and against the loadout before Pi-parity discovery (02b7993^), side by
# side in one run (docs/benchmarks.md, "Resolution"). The binaries are built
# from the current work tree and from BEFORE_REF (git archive, so the work
# tree is not touched).
#
#   hack/bench-preview.sh [-skills 1000] [-rounds 15]
set -euo pipefail

BEFORE_REF=${BEFORE_REF:-02b7993^}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-preview.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "building loadout from the work tree and from $BEFORE_REF ($(git -C "$repo" rev-parse --short "$BEFORE_REF"))" >&2
(cd "$repo" && go build -o "$work/loadout-current" ./cmd/loadout)
mkdir "$work/before-src"
git -C "$repo" archive "$BEFORE_REF" | tar -x -C "$work/before-src"
(cd "$work/before-src" && go build -o "$work/loadout-before" ./cmd/loadout)

cd "$repo"
go run ./hack/benchpreview -current "$work/loadout-current" -before "$work/loadout-before" -dir "$work/tree" "$@"
