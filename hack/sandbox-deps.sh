#!/usr/bin/env bash
# Installs what the agents' own sandboxes need to run (Claude Code runs Bash
# under bubblewrap, its network through socat) from Debian, when missing and
# when this machine lets us (root with apt-get). The agent tests that need
# them skip, saying so, where they are missing (docs/security.md, "Sandbox").
set -euo pipefail
missing=()
for p in bwrap socat; do
	command -v "$p" >/dev/null || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
	echo "hack/sandbox-deps.sh: ${missing[*]} missing; install bubblewrap and socat (the sandbox tests of Claude Code skip without them)" >&2
	exit 0
fi
apt-get install -y --no-install-recommends bubblewrap socat >/dev/null 2>&1 ||
	{ apt-get update >/dev/null && apt-get install -y --no-install-recommends bubblewrap socat >/dev/null; }
