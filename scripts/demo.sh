#!/usr/bin/env bash
# Runs a small container: a busybox rootfs in a fresh bundle, started with
# umwelt-run, printing what it sees of its walls. Leaves nothing behind.
set -euo pipefail
rt=${1:-umwelt-run}
bundle=$(mktemp -d /tmp/umwelt-demo.XXXXXX)
trap 'rm -rf "$bundle"' EXIT
mkdir -p "$bundle/rootfs/bin"
cp /bin/busybox "$bundle/rootfs/bin/busybox"
for applet in $(/bin/busybox --list | grep -vx busybox); do
        ln -sf busybox "$bundle/rootfs/bin/$applet"
done
"$rt" spec -b "$bundle"
python3 - "$bundle/config.json" <<'PY'
import json, sys
path = sys.argv[1]
c = json.load(open(path))
c["process"]["terminal"] = False
c["process"]["args"] = ["sh", "-c",
    "echo hello from $(hostname); id; grep -E 'Cap(Eff|Bnd)' /proc/self/status; ls /"]
json.dump(c, open(path, "w"), indent=2)
PY
cd "$bundle"
exec "$rt" --root "$bundle/state" run "demo-$$"
