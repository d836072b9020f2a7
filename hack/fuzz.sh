#!/usr/bin/env bash
# Runs every fuzz target of the module for the given time each (default 60s):
#   bash hack/fuzz.sh 30s
# Targets are discovered, not listed: packages whose tests declare a Fuzz
# function are asked for their targets with `go test -list`, so a new target
# runs here as soon as it exists. Seeds live in testdata/fuzz/<FuzzName>/;
# a failing input is written there too, and the run stops with an error.
set -euo pipefail
cd "$(dirname "$0")/.."

fuzztime="${1:-60s}"
# Only packages whose tests declare fuzz targets: listing the others would
# build (and, for envtest suites, start) them for nothing.
mapfile -t pkgs < <(grep -rl --include='*_test.go' -E '^func Fuzz[A-Za-z0-9_]*\(' . \
  | grep -v '^./hack/' | xargs -r -n1 dirname | sort -u)

failed=()
ran=0
for dir in "${pkgs[@]}"; do
  pkg="./${dir#./}"
  mapfile -t targets < <(go test -list '^Fuzz' "$pkg" | grep -E '^Fuzz' || true)
  for name in "${targets[@]}"; do
    echo "=== fuzz ${pkg} ${name} (${fuzztime})"
    ran=$((ran + 1))
    corpus="${dir}/testdata/fuzz/${name}"
    before="$(ls "$corpus" 2>/dev/null | sort || true)"
    log="$(mktemp)"
    if go test -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" "$pkg" 2>&1 | tee "$log"; then
      :
    elif [ "$(ls "$corpus" 2>/dev/null | sort || true)" = "$before" ] &&
      tail -n 5 "$log" | grep -q 'context deadline exceeded'; then
      # Go's fuzz coordinator can report its own -fuzztime deadline as a
      # failure (golang/go#75804, fixed in Go 1.27). It wrote no failing
      # input, so nothing was found: say so and go on.
      echo "note: ${pkg} ${name} ended with the coordinator's deadline race (golang/go#75804); no failing input was written"
    else
      failed+=("${pkg} ${name}")
    fi
    rm -f "$log"
  done
done

echo "ran ${ran} fuzz targets for ${fuzztime} each"
if [ "${#failed[@]}" -gt 0 ]; then
  printf 'FAILED: %s\n' "${failed[@]}"
  echo "failing inputs were written to testdata/fuzz/<FuzzName>/ of their package"
  exit 1
fi
