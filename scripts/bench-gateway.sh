#!/bin/bash
# Egress gateway benchmark, every number from the same run:
#   1. CONNECT throughput: BYTES from a TCP source on the loopback of the
#      gateway's namespace through umwelt-gateway's CONNECT tunnel (allowed
#      by an exact address rule, 127.0.0.1:9443; the client sends a real
#      ClientHello, then the source streams raw bytes), against the same
#      transfer directly over that loopback; for context also a source
#      behind the veth the gateway dials across, by name, directly, through
#      the gateway and through Squid's CONNECT;
#   2. small plain-HTTP requests per second through the gateway and through
#      Squid (Debian's, a forward proxy without cache or access log), wrk
#      with the same connections and keep-alive for both, against the same
#      origin server;
#   3. the cost of egress at a sandbox's start: `sandbox run -p P -- true`
#      with and without [egress] enabled = true, interleaved.
# The scene lives in network namespaces this script makes (an "internet"
# joined by a veth pair to the gateway's namespace, a sandbox namespace with
# lo only) and on their loopback; the sandbox starts run in a namespace of
# their own whose /etc is an overlay holding a floor that allows egress.
# A benchmark, not a test: it reports, it never fails on speed.
#
# Usage: sudo scripts/bench-gateway.sh [--bytes N] [--runs N] [--duration S]
#                                      [--connections N] [--starts N] [--write]
#   --write   also replace the gateway block of BENCHMARKS.md
# Environment: UMW_BENCH_PARTS (default "connect rps start": which to run,
#   --write needs all three), UMW_BUILDDIR (where umwelt-run and umwelt-gateway were built;
#   default the source tree), UMW_RUNTIME, UMW_GATEWAY (the binaries), CC.
# Needs: iproute2, util-linux (nsenter, unshare), wrk, squid, python3, a C
#   compiler, nftables support in the kernel (sandbox egress).

set -u
export LC_ALL=C

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BYTES=$((1 << 30))
RUNS=5
DURATION=10
CONNS=50
STARTS=40
WRITE=0

usage() {
        sed -n '23,31s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
        exit 2
}

while (($#)); do
        case $1 in
        --bytes) BYTES=${2:?}; shift ;;
        --runs) RUNS=${2:?}; shift ;;
        --duration) DURATION=${2:?}; shift ;;
        --connections) CONNS=${2:?}; shift ;;
        --starts) STARTS=${2:?}; shift ;;
        --write) WRITE=1 ;;
        -h | --help) usage ;;
        *) printf 'bench-gateway.sh: unknown argument %s\n' "$1" >&2; usage ;;
        esac
        shift
done

. "$SRCDIR/scripts/bench-lib.sh"

PARTS=" ${UMW_BENCH_PARTS:-connect rps start} "
part() { [[ $PARTS == *" $1 "* ]]; }
((WRITE)) && [[ $PARTS != " connect rps start " ]] && die "--write runs every part"
[[ $(id -u) -eq 0 ]] || die "needs root (network namespaces, squid, sandboxes as root)"
for c in ip nsenter unshare wrk python3 "${CC:-cc}"; do
        command -v "$c" >/dev/null || die "$c is missing"
done
SQUID=$(command -v squid || echo /usr/sbin/squid)
[[ -x $SQUID ]] || die "squid is missing (apt-get install squid)"
BUILD=${UMW_BUILDDIR:-$SRCDIR}
UMW=${UMW_RUNTIME:-$BUILD/umwelt-run}
GW=${UMW_GATEWAY:-$BUILD/umwelt-gateway}
[[ -x $UMW && -x $GW ]] || die "build umwelt-run and umwelt-gateway first (UMW_BUILDDIR=DIR)"

W=$(mktemp -d "${TMPDIR:-/tmp}/umwelt-bench-gw.XXXXXX") || die "mktemp failed"
NS=umwb-gw$$
INET=$NS-inet GWNS=$NS-gw SBX=$NS-sbx
PIDS=()
cleanup() {
        local p ns
        for p in "${PIDS[@]}"; do
                kill -TERM "$p" 2>/dev/null
        done
        for p in "${PIDS[@]}"; do
                wait "$p" 2>/dev/null
        done
        for ns in "$INET" "$GWNS" "$SBX"; do
                ip netns del "$ns" 2>/dev/null
        done
        [[ -n ${UMW_KEEP:-} ]] || rm -rf --one-file-system "$W"
}
trap cleanup EXIT

# in_ns NS CMD...: CMD in that network namespace. What runs in the
# background is started with nsenter itself, so that $! is its pid.
in_ns() {
        local ns=$1
        shift
        nsenter --net="/run/netns/$ns" -- "$@"
}

# wait_port NS PORT: until something listens there (5 s at most).
wait_port() {
        local n=50
        while ((n-- > 0)); do
                [[ -n $(in_ns "$1" ss -Hltn "sport = :$2") ]] && return 0
                sleep 0.1
        done
        return 1
}

"${CC:-cc}" -O2 -std=gnu11 -D_GNU_SOURCE -Wall -Werror -o "$W/peer" "$SRCDIR/tests/bench/gateway-peer.c" ||
        die "cannot build tests/bench/gateway-peer.c"

# ------------------------------------------------------------- the scene

ip -batch - <<EOF || die "cannot make the namespaces"
netns add $INET
netns add $GWNS
netns add $SBX
EOF
ip -n "$SBX" link set lo up || die "lo in $SBX"
# The gateway's namespace: a veth into the internet, the default route on it.
ip -n "$GWNS" -batch - <<EOF || die "cannot make the veth pair"
link set lo up
link add gw0 type veth peer name in0 netns $INET
addr add 11.0.0.1/8 dev gw0
link set gw0 up
route add default dev gw0
EOF
ip -n "$INET" -batch - <<EOF || die "cannot address the internet"
link set lo up
addr add 11.0.0.10/8 dev in0
addr add 11.0.0.11/8 dev in0
link set in0 up
EOF

nsenter --net="/run/netns/$INET" -- "$W/peer" origin 11.0.0.10 80 2>"$W/origin.err" &
PIDS+=($!)
# On every address of the internet namespace: 11.0.0.11 and its loopback.
nsenter --net="/run/netns/$INET" -- "$W/peer" source 11.0.0.11 443 "$BYTES" 2>"$W/source.err" &
PIDS+=($!)
nsenter --net="/run/netns/$GWNS" -- "$W/peer" source 127.0.0.1 9443 "$BYTES" 2>"$W/lsource.err" &
PIDS+=($!)
wait_port "$INET" 80 && wait_port "$INET" 443 && wait_port "$GWNS" 9443 ||
        die "the peers did not start"

printf '11.0.0.10 web.example\n11.0.0.11 bulk.example\n' >"$W/hosts"
printf '[egress]\nenabled = true\nallow = ["web.example", "bulk.example", "127.0.0.1:9443"]\n' \
        >"$W/policy.toml"
mkfifo "$W/ready"
nsenter --net="/run/netns/$GWNS" -- "$GW" --netns "/run/netns/$SBX" --policy "$W/policy.toml" --log "$W/egress.jsonl" \
        --hosts "$W/hosts" --sandbox bench --ready-fd 3 3>"$W/ready" 2>"$W/gateway.err" </dev/null &
GW_PID=$!
PIDS+=($GW_PID)
read -r -t 10 line <"$W/ready"
[[ ${line:-} == ready ]] || die "the gateway did not start: $(cat "$W/gateway.err")"

# Squid as a plain forward proxy: no cache, no access log, names from the
# same hosts file, its own pid file and logs here, on the loopback of the
# gateway's namespace (which has the same route out).
# Squid drops to its own user: it must reach its directory and the hosts file.
chmod 711 "$W"
mkdir -p "$W/squid"
chown proxy: "$W/squid" || die "no user proxy for squid"
cat >"$W/squid.conf" <<EOF
http_port 127.0.0.1:3129
acl localnet src 127.0.0.0/8
http_access allow localnet
http_access deny all
cache deny all
cache_mem 0 MB
access_log none
cache_store_log none
cache_log $W/squid/cache.log
pid_filename $W/squid/squid.pid
coredump_dir $W/squid
hosts_file $W/hosts
dns_nameservers 127.0.0.1
pinger_enable off
netdb_filename none
shutdown_lifetime 0 seconds
via off
forwarded_for delete
EOF
nsenter --net="/run/netns/$GWNS" -- "$SQUID" -N -f "$W/squid.conf" >"$W/squid.out" 2>&1 </dev/null &
PIDS+=($!)
wait_port "$GWNS" 3129 || die "squid did not start: $(cat "$W/squid.out" "$W/squid/cache.log" 2>/dev/null)"

# ------------------------------------------------------------- 1. CONNECT throughput

# Real ClientHellos, for bulk.example and without SNI (for an address):
# the gateway judges them, the sources ignore them and stream.
python3 - "$W/hello" <<'EOF' || die "cannot make a ClientHello"
import ssl, sys
for suffix, name in (("", "bulk.example"), (".nosni", None)):
    i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    s = ctx.wrap_bio(i, o, server_hostname=name)
    try:
        s.do_handshake()
    except ssl.SSLWantReadError:
        pass
    open(sys.argv[1] + suffix, "wb").write(o.read())
EOF

# The gateway's CPU time so far (user + system, clock ticks): what a
# tunnel costs it, a figure that the other processes on the machine move
# far less than the throughput. The gateway is three processes (its
# monitor, the signer, the engine that carries the bytes): all of them.
gw_ticks() {
        local p t=0
        for p in "$GW_PID" $(pgrep -P "$GW_PID"); do
                t=$((t + $(awk '{print $14 + $15}' "/proc/$p/stat" 2>/dev/null || echo 0)))
        done
        echo "$t"
}
# The machine's busy and total clock ticks, all cores: whether a transfer
# is bound by the cores (a relay does a second TCP leg's work on the same two).
machine_ticks() { awk '/^cpu / {t = 0; for (i = 2; i <= 9 && i <= NF; i++) t += $i; print t - $5 - $6, t; exit}' /proc/stat; }
# transfer NAME NS ARGS...: one transfer, "NAME BYTES SECONDS GW_TICKS BUSY TOTAL" appended.
transfer() {
        local name=$1 ns=$2 out ticks busy0 total0 busy1 total1
        shift 2
        ticks=$(gw_ticks)
        read -r busy0 total0 < <(machine_ticks)
        out=$(in_ns "$ns" "$W/peer" sink "$@" 2>&1) || die "$name transfer failed: $out"
        read -r busy1 total1 < <(machine_ticks)
        printf '%s %s %s %s %s\n' "$name" "$out" "$(($(gw_ticks) - ticks))" \
                "$((busy1 - busy0))" "$((total1 - total0))" >>"$W/transfers"
}
: >"$W/transfers"
for ((i = 0; i < RUNS; i++)); do
        part connect || break
        transfer direct-loopback "$GWNS" 127.0.0.1 9443 "$BYTES"
        transfer gateway "$SBX" 127.0.0.1 3128 "$BYTES" 127.0.0.1:9443 "$W/hello.nosni"
        transfer direct-veth "$GWNS" 11.0.0.11 443 "$BYTES"
        transfer gateway-veth "$SBX" 127.0.0.1 3128 "$BYTES" bulk.example:443 "$W/hello"
        transfer squid-veth "$GWNS" 127.0.0.1 3129 "$BYTES" bulk.example:443 "$W/hello"
done

# ------------------------------------------------------------- 2. requests per second

cat >"$W/proxy.lua" <<'EOF'
wrk.path = "http://web.example/"
wrk.headers["Host"] = "web.example"
EOF
# rps NAME NS PORT: one wrk run, "NAME REQ/S NON2XX ERRORS" appended.
rps() {
        local name=$1 ns=$2 port=$3
        in_ns "$ns" wrk -t1 -c "$CONNS" -d "${DURATION}s" -s "$W/proxy.lua" \
                "http://127.0.0.1:$port/" >"$W/wrk.out" 2>&1 || die "wrk failed: $(cat "$W/wrk.out")"
        printf '%s %s %s %s\n' "$name" \
                "$(awk '/^Requests\/sec:/ {print $2}' "$W/wrk.out")" \
                "$(awk '/Non-2xx/ {print $NF}' "$W/wrk.out" | grep . || echo 0)" \
                "$(awk '/Socket errors/ {print $0}' "$W/wrk.out" | tr -d ' ,' | grep . || echo none)" \
                >>"$W/rps"
}
: >"$W/rps"
for ((i = 0; i < 3; i++)); do
        part rps || break
        rps gateway "$SBX" 3128
        rps squid "$GWNS" 3129
done
REQUESTS=$(grep -c '"event":"egress"' "$W/egress.jsonl")

# ------------------------------------------------------------- 3. sandbox start

if part start; then
mkdir -p "$W/plain" "$W/egress" "$W/upper" "$W/work" "$W/upper/umwelt"
printf '[egress]\nenabled = true\nallow = ["example.com"]\n' >"$W/egress/.umwelt.toml"
printf 'egress = true\n' >"$W/upper/umwelt/floor.toml"
chmod 755 "$W/upper/umwelt"
chmod 644 "$W/upper/umwelt/floor.toml"
# Rounds of (plain, egress) in turn, in a mount namespace whose /etc shows
# the floor, in the gateway's network namespace (the sandbox's gateway
# dials from wherever umwelt-run runs).
# shellcheck disable=SC2016 # expanded by the inner bash
in_ns "$GWNS" unshare --mount --propagation private -- bash -c '
        mount -t overlay overlay -o "lowerdir=/etc,upperdir=$1/upper,workdir=$1/work" /etc || exit 1
        shift
        exec "$@"' sh "$W" \
        env XDG_STATE_HOME="$W/xdg-state" XDG_CONFIG_HOME="$W/xdg-config" \
        python3 - "$UMW" "$W/state" "$W/plain" "$W/egress" "$STARTS" >"$W/starts" 2>"$W/starts.err" <<'EOF' ||
import subprocess, sys, time
umw, root, plain, egress, n = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5])
def once(project):
    t = time.perf_counter()
    r = subprocess.run([umw, "--root", root, "sandbox", "run", "-p", project, "--", "true"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    t = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("sandbox run -p %s: exit %d: %s" % (project, r.returncode, r.stderr.decode()))
    return t
subprocess.run([umw, "policy", "accept", "-p", egress], check=True, stdout=subprocess.DEVNULL)
for _ in range(3):
    once(plain), once(egress)
for _ in range(n):
    print("plain %.6f" % once(plain))
    print("egress %.6f" % once(egress))
EOF
        die "sandbox starts failed: $(cat "$W/starts.err")"
else
        : >"$W/starts"
fi

# ------------------------------------------------------------- the report

REPRO="sudo scripts/bench-gateway.sh --bytes $BYTES --runs $RUNS --duration $DURATION --connections $CONNS --starts $STARTS --write"
python3 - "$W/transfers" "$W/rps" "$W/starts" "$BYTES" "$CONNS" "$DURATION" "$REQUESTS" "$REPRO" \
        "$($SQUID -v | head -1)" "$(wrk -v 2>&1 | head -1)" >"$W/report.md" <<'EOF'
import os, platform, statistics, sys, time
transfers, rps_file, starts_file = sys.argv[1:4]
nbytes, conns, duration, requests = int(sys.argv[4]), sys.argv[5], sys.argv[6], sys.argv[7]
repro, squid_v, wrk_v = sys.argv[8], sys.argv[9], sys.argv[10]
med = statistics.median

rate = {k: [0.0] for k in ("direct-loopback", "gateway", "direct-veth", "gateway-veth", "squid-veth")}
reqs = {"gateway": [0.0], "squid": [1.0]}
starts = {"plain": [0.0], "egress": [0.0]}
for d in (rate, reqs, starts):
    for k in d:
        d[k] = []
cpu = {"gateway": [], "gateway-veth": []}
busy = {k: [] for k in rate}
ticks = os.sysconf("SC_CLK_TCK")
for l in open(transfers):
    name, got, secs, gw, b, t = l.split()
    rate[name].append(int(got) / float(secs) / 2**20)
    busy[name].append(os.cpu_count() * int(b) / max(int(t), 1))
    if name in cpu:
        cpu[name].append(int(gw) / ticks / (int(got) / 2**30))
bad = {}
for l in open(rps_file):
    name, r, non2xx, errors = l.split()
    reqs[name].append(float(r))
    bad[name] = bad.get(name, 0) + int(non2xx)
    if errors != "none":
        bad[name] = bad.get(name, 0) + 1
for l in open(starts_file):
    name, secs = l.split()
    starts[name].append(float(secs) * 1e3)
for d in (rate, reqs, starts):
    for k in d:
        d[k] = d[k] or [float("nan")]
diffs = [e - p for p, e in zip(starts["plain"], starts["egress"])] or [float("nan")]

def verdict(ok):
    return "met" if ok else "**not met**"

def ratio(a, b):
    return a / b if b else float("nan")

thr = ratio(med(rate["gateway"]), med(rate["direct-loopback"]))
rq = ratio(med(reqs["gateway"]), med(reqs["squid"]))
# The target is judged on the rounds' paired differences (each round runs
# both, so a busy moment hits both); the medians' difference is shown too.
cost = med(diffs)
cost_medians = med(starts["egress"]) - med(starts["plain"])
print("Measured %s: %d cores, kernel %s." % (time.strftime("%Y-%m-%d"), os.cpu_count(),
                                             platform.release()))
print()
print("| target | measured | |")
print("|---|---|---|")
print("| CONNECT throughput at least 0.8x direct loopback | %.2fx | %s |" % (thr, verdict(thr >= 0.8)))
print("| plain-HTTP requests/s at least 1x Squid's | %.2fx | %s |" % (rq, verdict(rq >= 1)))
print("| egress adds at most 2 ms to `sandbox run -- true` | %+.2f ms (medians' difference %+.2f) | %s |" %
      (cost, cost_medians, verdict(cost <= 2)))
print()
print("CONNECT throughput, %d MiB per transfer, median of %d (MiB/s; cores busy: the whole "
      "machine's, every process, during the transfer, of %d):" % (nbytes >> 20, len(rate["gateway"]),
                                                               os.cpu_count()))
print()
print("| path | median | min | max | cores busy |")
print("|---|---|---|---|---|")
for name, what in (("direct-loopback", "direct, loopback (127.0.0.1:9443)"),
                   ("gateway", "umwelt-gateway CONNECT 127.0.0.1:9443 (sandbox loopback -> loopback)"),
                   ("direct-veth", "direct, across the veth (11.0.0.11:443)"),
                   ("gateway-veth", "umwelt-gateway CONNECT bulk.example:443 (sandbox loopback -> veth)"),
                   ("squid-veth", "Squid CONNECT bulk.example:443 (loopback -> veth)")):
    v = rate[name]
    print("| %s | %.0f | %.0f | %.0f | %.2f |" % (what, med(v), min(v), max(v),
                                                 med(busy[name] or [float("nan")])))
print()
if cpu["gateway"]:
    print("umwelt-gateway's CPU time per GiB tunnelled (user + system, median): %.2f s "
          "loopback -> loopback, %.2f s loopback -> veth." % (med(cpu["gateway"]),
                                                              med(cpu["gateway-veth"] or [float("nan")])))
    print()
print("Small plain-HTTP requests (13-byte body), wrk -t1 -c %s, %s s each, keep-alive "
      "to the proxy, best and median of %d runs (requests/s):" % (conns, duration, len(reqs["gateway"])))
print()
print("| proxy | median | max | non-2xx or socket errors |")
print("|---|---|---|---|")
for name, what in (("gateway", "umwelt-gateway (one JSON log line per request: %s lines)" % requests),
                   ("squid", "Squid, no cache, no access log")):
    v = reqs[name]
    print("| %s | %.0f | %.0f | %d |" % (what, med(v), max(v), bad.get(name, 0)))
print()
print("`umwelt-run sandbox run -p P -- true`, %d interleaved rounds (ms):" % len(diffs))
print()
print("| project | median | min | max |")
print("|---|---|---|---|")
for name, what in (("plain", "no egress"), ("egress", "[egress] enabled = true")):
    v = starts[name]
    print("| %s | %.2f | %.2f | %.2f |" % (what, med(v), min(v), max(v)))
print("| difference, median of the rounds' differences | %+.2f | | |" % med(diffs))
print()
print("Tools: %s; %s." % (squid_v, wrk_v))
print()
print("Reproduce as root from the source tree (UMW_BUILDDIR=DIR for an out-of-tree build):")
print()
print("    " + repro)
EOF

printf '\n'
cat "$W/report.md"

if ((WRITE)); then
        bench_write_block gateway "$W/report.md"
fi
