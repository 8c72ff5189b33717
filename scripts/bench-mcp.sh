#!/bin/bash
# umwelt-mcp benchmark, every number from the same run, as root, in
# interleaved rounds (one of each per round, so drift hits both alike):
#   1. a `bash` call of `true` through umwelt-mcp, timed from the request
#      written to its stdin to the result read, against `umwelt-run sandbox
#      exec -- true` into the same sandbox (spawned and waited for);
#   2. `read` of a 1 MiB text file through umwelt-mcp (inside the sandbox)
#      against `read_text_file` of the reference filesystem server
#      (@modelcontextprotocol/server-filesystem, Node.js on the host), both
#      servers running, each call from request to result;
#   3. umwelt-mcp's resident memory after the rounds (the server on the
#      host; its worker inside is reported beside it).
# A benchmark, not a test: it reports, it never fails on speed.
#
# Usage: sudo scripts/bench-mcp.sh [--rounds N] [--write]
#   --write   also replace the mcp block of BENCHMARKS.md
# Environment: UMW_BUILDDIR (where umwelt-run and umwelt-mcp were built;
# default the source tree). Needs: python3, node and npm (the reference
# server, pinned in tests/npm/mcp, is installed into UMW_BUILDDIR/npm/mcp).

set -u
export LC_ALL=C

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$SRCDIR/scripts/bench-lib.sh"
ROUNDS=200
bench_args "$@"
bench_needs python3 node npm
BUILD=${UMW_BUILDDIR:-$SRCDIR}
UMW=$BUILD/umwelt-run
MCP=$BUILD/umwelt-mcp
[[ -x $UMW && -x $MCP ]] || die "build umwelt-run and umwelt-mcp first (UMW_BUILDDIR=DIR)"
NPM=$BUILD/npm/mcp
if ! cmp -s "$SRCDIR/tests/npm/mcp/package-lock.json" "$NPM/package-lock.json"; then
        rm -rf "$NPM" && mkdir -p "$NPM" &&
                cp "$SRCDIR"/tests/npm/mcp/package{,-lock}.json "$NPM/" &&
                (cd "$NPM" && npm ci --no-audit --no-fund --loglevel=error) >/dev/null ||
                die "npm ci of tests/npm/mcp failed"
fi
FS=$NPM/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js

W=$(mktemp -d "${TMPDIR:-/tmp}/umwelt-bench-mcp.XXXXXX") || die "mktemp failed"
chmod 755 "$W"
cleanup() {
        "$UMW" --root "$W/root" sandbox down -p "$W/home/p" >/dev/null 2>&1
        rm -rf "$W"
}
trap cleanup EXIT
export HOME=$W/home XDG_STATE_HOME=$W/state
P=$HOME/p
mkdir -p "$P" "$HOME/.config/umwelt"
printf '[workspace]\nmode = "direct"\n' >"$HOME/.config/umwelt/config.toml"
# 1 MiB of text: 16384 lines of 63 characters and a newline.
python3 -c 'import sys; sys.stdout.write(("%063d\n" % 7) * 16384)' >"$P/big.txt"
"$UMW" --root "$W/root" sandbox up -p "$P" >/dev/null 2>&1 || die "sandbox up failed"

python3 - "$ROUNDS" "$UMW" "$W/root" "$P" "$MCP" "$FS" >"$W/times" <<'EOF'
import json, os, subprocess, sys, time
rounds, umw, root, proj, mcp, fs = int(sys.argv[1]), *sys.argv[2:7]

class Server:
    def __init__(self, argv):
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL)
        self.n = 0
        self.ask("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                "clientInfo": {"name": "bench", "version": "1"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
    def ask(self, method, params):
        self.n += 1
        line = json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method,
                           "params": params}).encode() + b"\n"
        t = time.perf_counter()
        self.p.stdin.write(line)
        self.p.stdin.flush()
        answer = self.p.stdout.readline()
        t = time.perf_counter() - t
        r = json.loads(answer)
        if "error" in r or r["result"].get("isError"):
            sys.exit("%s failed: %s" % (method, answer[:300]))
        return t, r["result"]
    def call(self, name, args):
        return self.ask("tools/call", {"name": name, "arguments": args})

def sandbox_exec():
    t = time.perf_counter()
    pid = os.posix_spawn(umw, [umw, "--root", root, "sandbox", "exec", "-p", proj, "--", "true"],
                         os.environ)
    _, status = os.waitpid(pid, 0)
    t = time.perf_counter() - t
    if status != 0:
        sys.exit("sandbox exec failed")
    return t

ours = Server([mcp, "--project", proj, "--root", root])
ref = Server(["node", fs, proj])
big = os.path.join(proj, "big.txt")
_, r = ours.call("read", {"path": big})
if r["content"][0]["text"] != open(big).read():
    sys.exit("umwelt-mcp's read differs from the file")
_, r = ref.call("read_text_file", {"path": big})
for _ in range(5):
    ours.call("bash", {"command": "true"}); sandbox_exec()
    ours.call("read", {"path": big}); ref.call("read_text_file", {"path": big})
rows = []
for _ in range(rounds):
    a = ours.call("bash", {"command": "true"})[0]
    b = sandbox_exec()
    c = ours.call("read", {"path": big})[0]
    d = ref.call("read_text_file", {"path": big})[0]
    rows.append((a, b, c, d))
def rss(pid):
    for l in open("/proc/%d/status" % pid):
        if l.startswith("VmRSS:"):
            return int(l.split()[1])
worker = subprocess.run(["pgrep", "-f", "^/proc/self/fd/3 worker$"], capture_output=True,
                        text=True).stdout.split()
print(json.dumps({"rows": rows, "rss": rss(ours.p.pid),
                  "worker_rss": rss(int(worker[0])) if worker else 0}))
EOF
[[ -s $W/times ]] || die "the rounds failed"

REPRO="sudo scripts/bench-mcp.sh --rounds $ROUNDS --write"
python3 - "$W/times" "$REPRO" >"$W/report" <<'EOF'
import json, statistics as st, sys
d = json.load(open(sys.argv[1]))
cols = list(zip(*d["rows"]))
ms = [[x * 1000 for x in c] for c in cols]
med = [st.median(c) for c in ms]
bash_ratio, read_ratio = med[0] / med[1], med[2] / med[3]
rss = d["rss"] / 1024
print("| target | measured | |")
print("|---|---|---|")
print("| a `bash` call of `true` through umwelt-mcp at most 1.3x `sandbox exec -- true` | %.3fx | %s |"
      % (bash_ratio, "met" if bash_ratio <= 1.3 else "NOT MET"))
print("| `read` of a 1 MiB file at most 0.5x server-filesystem's `read_text_file` | %.3fx | %s |"
      % (read_ratio, "met" if read_ratio <= 0.5 else "NOT MET"))
print("| umwelt-mcp's RSS under 8 MiB | %.2f MiB (its worker inside: %.2f MiB) | %s |"
      % (rss, d["worker_rss"] / 1024, "met" if rss < 8 else "NOT MET"))
print()
print("| what (ms, %d interleaved rounds) | median | min | max |" % len(d["rows"]))
print("|---|---|---|---|")
names = ["umwelt-mcp `bash` `true`, request to result", "`umwelt-run sandbox exec -- true`, spawn to exit",
         "umwelt-mcp `read` 1 MiB, request to result", "server-filesystem `read_text_file` 1 MiB"]
for n, c in zip(names, ms):
    print("| %s | %.3f | %.3f | %.3f |" % (n, st.median(c), min(c), max(c)))
print()
print("Reproduce as root from the source tree (UMW_BUILDDIR=DIR for an out-of-tree build):")
print()
print("    " + sys.argv[2])
EOF
cat "$W/report"
((WRITE)) && bench_write_block mcp "$W/report"
exit 0
