#!/usr/bin/env bash
# The main job on the embedded default: a sandbox on the current directory
# (the host's / read-only, this directory writable, nothing else), running a
# command that shows its walls from inside.
set -euo pipefail
rt=${1:-umwelt-run}
exec "$rt" sandbox run -p . -- /bin/sh -c '
echo "inside $(hostname), as $(id -un 2>/dev/null || id -u), in $PWD"
echo "network interfaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")"
grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status
echo "home: $(ls -A "$HOME" | wc -l) entries; /: $(touch /umwelt-probe 2>/dev/null && echo writable || echo read-only)"
echo "workspace: $(touch .umwelt-probe 2>/dev/null && rm -f .umwelt-probe && echo writable || echo read-only)"'
