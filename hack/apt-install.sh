#!/usr/bin/env bash
# Installs Debian packages the tests use, when their command is missing and
# this machine lets us (root with apt-get): hack/apt-install.sh COMMAND=PACKAGE...
# (e.g. podman=podman bwrap=bubblewrap). Elsewhere it says what is missing and
# exits 0: the tests that need a missing command skip, saying so.
set -euo pipefail
missing=()
for pair in "$@"; do
	command -v "${pair%%=*}" >/dev/null || missing+=("${pair#*=}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
	echo "hack/apt-install.sh: install ${missing[*]} (Debian) for the tests that need them; they skip without" >&2
	exit 0
fi
echo "installing ${missing[*]} from Debian" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
	{ apt-get update >/dev/null && apt-get install -y --no-install-recommends "${missing[@]}" >/dev/null; }
