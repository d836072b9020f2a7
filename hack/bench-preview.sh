#!/usr/bin/env bash
# Times `loadout preview --root` on 3 roots × N skills against cat of every
# file and against the loadout before Pi-parity discovery (02b7993^), side by
# side in one run (docs/benchmarks.md, "Resolution"). The binaries are built
# from the current work tree, from BEFORE_REF and from each of ALSO_REFS (git
# archive, so the work tree is not touched). Every binary must print the
# same preview, or the run fails.
#
#   hack/bench-preview.sh [-skills 1000] [-rounds 15]
#   ALSO_REFS="main HEAD~3" hack/bench-preview.sh -rounds 21
set -euo pipefail

BEFORE_REF=${BEFORE_REF:-02b7993^}
ALSO_REFS=${ALSO_REFS:-}
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-preview.XXXXXX")
trap 'rm -rf "$work"' EXIT

# build_ref REF OUT builds cmd/loadout as it is at REF.
build_ref() {
  local src="$work/src-$2"
  mkdir "$src"
  git -C "$repo" archive "$1" | tar -x -C "$src"
  (cd "$src" && go build -o "$work/$2" ./cmd/loadout)
}

echo "building loadout from the work tree and from $BEFORE_REF ($(git -C "$repo" rev-parse --short "$BEFORE_REF")) $ALSO_REFS" >&2
(cd "$repo" && go build -o "$work/loadout-current" ./cmd/loadout)
build_ref "$BEFORE_REF" loadout-before
also=()
i=0
for ref in $ALSO_REFS; do
  i=$((i + 1))
  build_ref "$ref" "loadout-also-$i"
  also+=(-also "$ref ($(git -C "$repo" rev-parse --short "$ref"))=$work/loadout-also-$i")
done

cd "$repo"
go run ./hack/benchpreview -current "$work/loadout-current" -before "$work/loadout-before" -dir "$work/tree" "${also[@]}" "$@"
