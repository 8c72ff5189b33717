#!/bin/bash
# Relay benchmark, every number from the same run, as root:
#   1. a live grant a standing rule of the user's allows, timed inside a
#      running sandbox from the request to the path visible (one process
#      inside asks on /run/umwelt/relay.sock, stats the path until it is
#      there, and revokes it again, ROUNDS times), against `sandbox exec
#      -- true` into the same sandbox (hyperfine);
#   2. a host action of the table that runs without asking (/bin/true),
#      timed inside from the request to its status back, against the
#      same `sandbox exec -- true` (/etc/umwelt/host-actions.toml is
#      replaced for the run and put back);
#   3. the relay's resident memory with 20 running sandboxes (sandbox up).
# A benchmark, not a test: it reports, it never fails on speed.
#
# Usage: sudo scripts/bench-relay.sh [--rounds N] [--write]
#   --write   also replace the relay block of BENCHMARKS.md
# Environment: UMW_BUILDDIR (where umwelt-run was built; default the source tree).
# Needs: hyperfine, python3.

set -u
export LC_ALL=C

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$SRCDIR/scripts/bench-lib.sh"
ROUNDS=200
bench_args "$@"
bench_needs hyperfine python3
UMW=${UMW_BUILDDIR:-$SRCDIR}/umwelt-run
RELAY=$(dirname "$UMW")/umwelt-relay
[[ -x $UMW && -x $RELAY ]] || die "build umwelt-run and umwelt-relay first (UMW_BUILDDIR=DIR)"

W=$(mktemp -d "${TMPDIR:-/tmp}/umwelt-bench-relay.XXXXXX") || die "mktemp failed"
chmod 755 "$W"
RELAY_PID=
TABLE=/etc/umwelt/host-actions.toml
cleanup() {
        for p in "$W"/home/p*; do "$UMW" --root "$W/root" sandbox down -p "$p" >/dev/null 2>&1; done
        [[ -n $RELAY_PID ]] && kill "$RELAY_PID" 2>/dev/null
        if [[ -e $W/table.saved ]]; then cp -p "$W/table.saved" "$TABLE"; else rm -f "$TABLE"; fi
        rm -rf "$W"
}
trap cleanup EXIT
export HOME=$W/home XDG_STATE_HOME=$W/state
mkdir -p "$HOME/.config/umwelt" "$HOME/data/d"
echo x >"$HOME/data/d/f"
printf '[relay]\nallow_ro = ["%s/data/*"]\n' "$HOME" >"$HOME/.config/umwelt/config.toml"

[[ -e $TABLE ]] && cp -p "$TABLE" "$W/table.saved"
mkdir -p /etc/umwelt
printf '[[action]]\nname = "bench-true"\nargv = ["/bin/true"]\nask = false\n' >"$TABLE"
chmod 644 "$TABLE"

# A relay of this run's own, once one another run started has ended.
for _ in $(seq 400); do
        lock=/run/umwelt/relay/lock
        [[ -e $lock ]] && ! flock -n "$lock" true && { sleep 0.1; continue; }
        break
done
"$RELAY" --idle 0 2>"$W/relay.log" &
RELAY_PID=$!
for _ in $(seq 100); do [[ -S /run/umwelt/relay/control.sock ]] && break; sleep 0.05; done

# ------------------------------------------------------------- 1, 2. grant and action latency
P=$HOME/p00
mkdir -p "$P"
"$UMW" --root "$W/root" sandbox up -p "$P" --workspace direct >/dev/null 2>&1 || die "sandbox up failed"
cat >"$P/grant.py" <<'EOF'
import json, os, socket, sys, time
path, n = sys.argv[1], int(sys.argv[2])
def ask(msg):
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/umwelt/relay.sock")
    s.sendall((json.dumps(msg) + "\n").encode())
    a = json.loads(s.makefile().readline())
    s.close()
    return a
for i in range(n + 5):
    t = time.perf_counter()
    a = ask({"v": 1, "kind": "grant", "path": path, "mode": "ro", "why": "bench"})
    while not os.path.exists(path + "/f"):
        pass
    t = time.perf_counter() - t
    if a["status"] != "granted":
        sys.exit("grant: %s" % a)
    if ask({"v": 1, "kind": "revoke", "path": path})["status"] != "ok":
        sys.exit("revoke failed")
    if i >= 5:
        print("%.6f" % t)
EOF
"$UMW" --root "$W/root" sandbox exec -p "$P" -- python3 grant.py "$HOME/data/d" "$ROUNDS" >"$W/grants" ||
        die "the grants failed: $(cat "$W/grants")"
cat >"$P/action.py" <<'PY'
import json, socket, sys, time
n = int(sys.argv[1])
for i in range(n + 5):
    t = time.perf_counter()
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/umwelt/relay.sock")
    s.sendall(b'{"v":1,"kind":"action","name":"bench-true","why":"bench"}\n')
    a = json.loads(s.makefile().readline())
    s.close()
    t = time.perf_counter() - t
    if a.get("exit_status") != 0:
        sys.exit("action: %s" % a)
    if i >= 5:
        print("%.6f" % t)
PY
"$UMW" --root "$W/root" sandbox exec -p "$P" -- python3 action.py "$ROUNDS" >"$W/actions" ||
        die "the actions failed: $(cat "$W/actions")"
hyperfine -N -w 5 -r "$ROUNDS" --export-json "$W/exec.json" \
        -n "sandbox exec -- true" "$UMW --root $W/root sandbox exec -p $P -- true" >"$W/hyperfine.out" 2>&1 ||
        die "hyperfine failed: $(cat "$W/hyperfine.out")"

# ------------------------------------------------------------- 3. memory
for i in $(seq -w 1 19); do
        mkdir -p "$HOME/p$i"
        "$UMW" --root "$W/root" sandbox up -p "$HOME/p$i" --workspace direct >/dev/null 2>&1 ||
                die "sandbox up $i failed"
done
sleep 0.5
doors=$(ls /run/umwelt/relay/sandboxes | wc -l)
rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$RELAY_PID/status")

# ------------------------------------------------------------- the report
REPRO="sudo scripts/bench-relay.sh --rounds $ROUNDS --write"
python3 - "$W/grants" "$W/actions" "$W/exec.json" "$rss" "$doors" "$REPRO" >"$W/report" <<'EOF'
import json, statistics as st, sys
grants, actions, execs, rss, doors, repro = sys.argv[1:7]
g = [float(l) * 1000 for l in open(grants)]
a = [float(l) * 1000 for l in open(actions)]
e = json.load(open(execs))["results"][0]
em = e["median"] * 1000
ratio = st.median(g) / em
aratio = st.median(a) / em
rss_mib = int(rss) / 1024
print("| target | measured | |")
print("|---|---|---|")
print("| a standing-rule grant, request to visible, at most 1.5x `sandbox exec -- true` | %.3fx | %s |"
      % (ratio, "met" if ratio <= 1.5 else "NOT MET"))
print("| an `ask = false` host action of `/bin/true`, request to status back inside, at most 2x `sandbox exec -- true` | %.3fx | %s |"
      % (aratio, "met" if aratio <= 2 else "NOT MET"))
print("| the relay's RSS with 20 running sandboxes at most 4 MiB | %.2f MiB (%s doors) | %s |"
      % (rss_mib, doors, "met" if rss_mib <= 4 else "NOT MET"))
print()
print("| what (ms) | median | min | max |")
print("|---|---|---|---|")
print("| grant, request to visible inside (%d rounds) | %.3f | %.3f | %.3f |" % (len(g), st.median(g), min(g), max(g)))
print("| host action `/bin/true`, request to status inside (%d rounds) | %.3f | %.3f | %.3f |" % (len(a), st.median(a), min(a), max(a)))
print("| `sandbox exec -- true` (hyperfine -N) | %.3f | %.3f | %.3f |" % (em, e["min"] * 1000, e["max"] * 1000))
print()
print("Reproduce as root from the source tree (UMW_BUILDDIR=DIR for an out-of-tree build):")
print()
print("    " + repro)
EOF
cat "$W/report"
((WRITE)) && bench_write_block relay "$W/report"
exit 0
