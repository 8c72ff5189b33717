#!/bin/bash
# Start-up benchmark: `run` of a /bin/true bundle with umwelt-run, crun and
# runc, against the bare floor of unshare + chroot; `sandbox run -- true`
# against bwrap; `sandbox exec -- true` into a running sandbox and `exec` into
# a running umwelt-run container against `crun exec`; all in one hyperfine
# run; then the same commands interleaved (each once per round, in turn);
# then the peak RSS of each runtime. A benchmark, not a test: it reports, it
# never fails on speed.
#
# Usage: sudo scripts/bench.sh [--runs N] [--warmup N] [--rounds N] [--write]
#   --rounds  interleaved rounds (default: as many as --runs; 0: none)
#   --write   also replace the results block of BENCHMARKS.md
# Environment: UMW_RUNTIME (default $UMW_BUILDDIR/umwelt-run, else ./umwelt-run),
#   UMW_CRUN (/usr/bin/crun), UMW_RUNC (/usr/sbin/runc).
# Needs: hyperfine, busybox-static, util-linux (unshare), time (GNU time);
#   bubblewrap for the sandbox's reference (skipped without it).

set -u
export LC_ALL=C

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
RUNS=50
WARMUP=5
ROUNDS=
WRITE=0
ARGS=("$@")

usage() {
	sed -n '10,16s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"
	exit 2
}

while (($#)); do
	case $1 in
	--runs) RUNS=${2:?}; shift ;;
	--warmup) WARMUP=${2:?}; shift ;;
	--rounds) ROUNDS=${2:?}; shift ;;
	--write) WRITE=1 ;;
	-h | --help) usage ;;
	*) printf 'bench.sh: unknown argument %s\n' "$1" >&2; usage ;;
	esac
	shift
done

. "$SRCDIR/scripts/bench-lib.sh"

[[ $(id -u) -eq 0 ]] || die "needs root (containers as root, like podman's rootful mode)"
for c in hyperfine unshare chroot python3; do
	command -v "$c" >/dev/null || die "$c is missing"
done
[[ -x /bin/busybox ]] || die "/bin/busybox is missing (install busybox-static)"

UMW=${UMW_RUNTIME:-${UMW_BUILDDIR:-$SRCDIR}/umwelt-run}
CRUN=${UMW_CRUN:-/usr/bin/crun}
RUNC=${UMW_RUNC:-/usr/sbin/runc}

W=$(mktemp -d "${TMPDIR:-/tmp}/umwelt-bench.XXXXXX") || die "mktemp failed"
cleanup() {
	local r id
	[[ -d $W/project-up ]] && "${SANDBOX[@]}" down -p "$W/project-up" >/dev/null 2>&1
	for r in "$W"/state-*; do
		[[ -d $r ]] || continue
		for id in "$r"/*; do
			[[ -d $id && -f $W/bin-${r##*/state-} ]] || continue
			"$(cat "$W/bin-${r##*/state-}")" --root "$r" delete -f "${id##*/}" >/dev/null 2>&1
		done
	done
	rm -rf --one-file-system "$W"
}
trap cleanup EXIT

# The sandbox face with its own state, audit log and (empty) user config, so
# the machine's and the caller's are neither read nor written.
export XDG_STATE_HOME=$W/xdg-state XDG_CONFIG_HOME=$W/xdg-config
SANDBOX=("$UMW" --root "$W/state-sandbox" sandbox)

make_bundle() {
	local b=$W/bundle a
	mkdir -p "$b/rootfs"/{bin,dev,proc,sys,tmp,etc} || return 1
	cp /bin/busybox "$b/rootfs/bin/" || return 1
	for a in true sh sleep; do ln -s busybox "$b/rootfs/bin/$a"; done
	(cd "$b" && "$CRUN" spec) || return 1
	python3 - "$b/config.json" <<'EOF'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["process"]["args"] = ["/bin/true"]
c["process"]["terminal"] = False
json.dump(c, open(p, "w"), indent=1)
EOF
}

# run_once NAME: one `run` of the bundle; its stderr is kept for the report.
run_once() {
	local name=$1 bin
	bin=$(cat "$W/bin-$name")
	"$bin" --root "$W/state-$name" run -b "$W/bundle" "bench-probe-$name" >/dev/null 2>"$W/err-$name"
}

# crun 1.8 refuses a hybrid cgroup host whose cgroup2 mount has controllers.
# Then every runtime runs in a mount namespace of this script's own where that
# mount is gone, so all of them see the same pure cgroup v1 hierarchy.
hide_cgroup2_if_crun_refuses() {
	[[ -n ${UMW_BENCH_NS:-} || ! -x $CRUN ]] && return 0
	"$CRUN" --root "$W/state-hybrid-probe" run -b "$W/bundle" bench-hybrid-probe >/dev/null 2>"$W/err-hybrid" &&
		return 0
	grep -q 'hybrid mode not supported' "$W/err-hybrid" || return 0
	rm -rf --one-file-system "$W"
	trap - EXIT
	export UMW_BENCH_NS=1
	# shellcheck disable=SC2016 # expanded by the inner bash
	exec unshare --mount --propagation private -- \
		bash -c 'umount /sys/fs/cgroup/unified && exec bash "$0" "$@"' "${BASH_SOURCE[0]}" "${ARGS[@]}"
}

make_bundle || die "cannot make the bundle in $W"
hide_cgroup2_if_crun_refuses
NAMES=()
for pair in "umwelt-run:$UMW" "crun:$CRUN" "runc:$RUNC"; do
	name=${pair%%:*} bin=${pair#*:}
	[[ -x $bin ]] || { printf 'bench.sh: %s not found at %s: skipped\n' "$name" "$bin" >&2; continue; }
	printf '%s\n' "$bin" >"$W/bin-$name"
	mkdir -p "$W/state-$name"
	NAMES+=("$name")
done
NOTE=
[[ -n ${UMW_BENCH_NS:-} ]] && NOTE="cgroup2 mount hidden for all runtimes (crun 1.8 refuses this hybrid cgroup host)"

# Only runtimes that can run the bundle at all are timed.
HF=(hyperfine --style basic --warmup "$WARMUP" --runs "$RUNS" --export-json "$W/times.json")
: >"$W/commands"
# timed NAME CMD: a command for hyperfine and for the interleaved rounds.
timed() {
	HF+=(-n "$1" "$2")
	printf '%s\0%s\0' "$1" "$2" >>"$W/commands"
}
TIMED=()
for name in "${NAMES[@]}"; do
	if ! run_once "$name"; then
		printf 'bench.sh: %s cannot run the bundle, skipped: %s\n' "$name" "$(head -c 300 "$W/err-$name")" >&2
		continue
	fi
	TIMED+=("$name")
	# Each run's sh has its own pid, so `$$` gives each container a fresh id.
	timed "$name run" "$(printf '%q ' "$(cat "$W/bin-$name")" --root "$W/state-$name" run -b "$W/bundle") bench-\$\$ >/dev/null"
done
FLOOR="unshare --mount --uts --ipc --net --pid --fork chroot $W/bundle/rootfs /bin/true"
timed "unshare + chroot (floor)" "$FLOOR"

# add_timed NAME CMD...: one more command to time, when it works once.
add_timed() {
	local name=$1
	shift
	if ! "$@" </dev/null >/dev/null 2>"$W/err-once"; then
		printf 'bench.sh: %s does not work here, skipped: %s\n' "$name" "$(head -c 300 "$W/err-once")" >&2
		return 1
	fi
	timed "$name" "$(printf '%q ' "$@")</dev/null >/dev/null 2>&1"
}

# A container that stays up for exec: the bundle running sleep, detached,
# with the id exec-NAME under runtime NAME.
exec_target() {
	local b=$W/bundle-exec
	if [[ ! -d $b ]]; then
		cp -a "$W/bundle" "$b" || return 1
		python3 - "$b/config.json" <<'EOF' || return 1
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["process"]["args"] = ["/bin/sleep", "3600"]
json.dump(c, open(p, "w"), indent=1)
EOF
	fi
	"$(cat "$W/bin-$1")" --root "$W/state-$1" run -d -b "$b" "exec-$1" </dev/null >/dev/null 2>"$W/err-exec-$1" && return 0
	printf 'bench.sh: %s cannot keep a container up for exec, skipped: %s\n' "$1" "$(head -c 300 "$W/err-exec-$1")" >&2
	return 1
}

if [[ " ${TIMED[*]} " == *" umwelt-run "* ]]; then
	mkdir -p "$W/project" "$W/project-up" "$W/xdg-state" "$W/xdg-config"
	add_timed "umwelt-run sandbox run" "${SANDBOX[@]}" run -p "$W/project" -- true
	if command -v bwrap >/dev/null; then
		add_timed "bwrap" bwrap --unshare-all --ro-bind / / true
	else
		printf 'bench.sh: bwrap not found (install bubblewrap): skipped\n' >&2
	fi
	"${SANDBOX[@]}" up -p "$W/project-up" </dev/null >/dev/null 2>"$W/err-up" &&
		add_timed "umwelt-run sandbox exec" "${SANDBOX[@]}" exec -p "$W/project-up" -- true
	exec_target umwelt-run &&
		add_timed "umwelt-run exec" "$(cat "$W/bin-umwelt-run")" --root "$W/state-umwelt-run" exec exec-umwelt-run /bin/true
fi
if [[ " ${TIMED[*]} " == *" crun "* ]] && exec_target crun; then
	add_timed "crun exec" "$CRUN" --root "$W/state-crun" exec exec-crun /bin/true
fi
"${HF[@]}" || die "hyperfine failed"

# In a block, a command meets the state its own previous run left (crun
# exec's cgroup.procs writes find the last one's RCU grace period still
# running and measure 7-18 ms, 19-21 ms after other work): the same
# commands once per round, in turn, minus the shell's start, as in use.
python3 - "$W/commands" "${ROUNDS:-$RUNS}" >"$W/rounds.json" <<'EOF'
import json, statistics, subprocess, sys, time

raw = open(sys.argv[1], "rb").read().split(b"\0")[:-1]
cmds = [(raw[i].decode(), raw[i + 1].decode()) for i in range(0, len(raw), 2)]

def took(cmd):
    t = time.perf_counter()
    subprocess.run(["sh", "-c", cmd], stdin=subprocess.DEVNULL)
    return time.perf_counter() - t

times = {name: [] for name, _ in cmds}
shell = []
for _ in range(int(sys.argv[2])):
    shell.append(took(":"))
    for name, cmd in cmds:
        times[name].append(took(cmd))
base = statistics.median(shell) if shell else 0
json.dump({n: max(statistics.median(t) - base, 0) for n, t in times.items() if t}, sys.stdout)
EOF

# peak_rss NAME: max RSS in KiB of one `run`, the median of 5.
peak_rss() {
	local bin i
	bin=$(cat "$W/bin-$1")
	for i in 1 2 3 4 5; do
		if [[ -x /usr/bin/time ]]; then
			/usr/bin/time -f %M -o "$W/rss" "$bin" --root "$W/state-$1" run -b "$W/bundle" "bench-rss-$1-$i" >/dev/null 2>&1
			cat "$W/rss"
		else
			python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' \
				"$bin" --root "$W/state-$1" run -b "$W/bundle" "bench-rss-$1-$i"
		fi
	done | sort -n | sed -n 3p
}

: >"$W/rss.txt"
for name in "${TIMED[@]}"; do
	printf '%s %s\n' "$name" "$(peak_rss "$name")" >>"$W/rss.txt"
done

versions() {
	local name
	for name in "${TIMED[@]}"; do
		printf '%s: %s\n' "$name" "$("$(cat "$W/bin-$name")" --version 2>/dev/null | head -1)"
	done
}

REPRO="sudo scripts/bench.sh --runs $RUNS --warmup $WARMUP${ROUNDS:+ --rounds $ROUNDS} --write"
python3 - "$W/times.json" "$W/rss.txt" "$NOTE" "$REPRO" "$(versions)" "$WARMUP" "$W/rounds.json" "${ROUNDS:-$RUNS}" >"$W/report.md" <<'EOF'
import json, os, platform, sys, time

times = json.load(open(sys.argv[1]))["results"]
rss = dict(l.split() for l in open(sys.argv[2]) if len(l.split()) == 2)
note, repro, versions, warmup = sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
rounds = json.load(open(sys.argv[7]))

med = {}
rows = []
for r in times:
    name = r["command"]
    med[name] = r["median"]
    kib = rss.get(name[:-len(" run")]) if name.endswith(" run") else None
    rows.append("| %s | %.2f | %.2f ± %.2f | %.2f | %.2f | %s |" % (
        name, r["median"] * 1e3, r["mean"] * 1e3, r["stddev"] * 1e3,
        r["min"] * 1e3, r["max"] * 1e3, ("%.1f" % (int(kib) / 1024)) if kib else "—"))

def ratio(a, b, table):
    if a in table and b in table and float(table[b]) > 0:
        return "%.2fx" % (float(table[a]) / float(table[b]))
    return "— (%s not measured)" % (a if a not in table else b)

rss_runs = {k + " run": v for k, v in rss.items()}

print("Measured %s: %d cores, kernel %s; %d runs after %d warm-up runs each." % (
    time.strftime("%Y-%m-%d"), os.cpu_count(), platform.release(), len(times[0]["times"]), warmup))
if note:
    print("\nNote: %s." % note)
print()
print("| command | median ms | mean ± σ ms | min ms | max ms | peak RSS MiB |")
print("|---|---|---|---|---|---|")
print("\n".join(rows))
print()
if rounds:
    print("Interleaved, %s rounds of every command once, in turn (median ms): %s." % (
        sys.argv[8], "; ".join("%s %.2f" % (n, v * 1e3) for n, v in rounds.items())))
    print()
print("| ratio | median (hyperfine) | median (interleaved) | peak RSS | target |")
print("|---|---|---|---|---|")
for a, b, target in (("umwelt-run run", "crun run", "at most 0.6x; RSS below 1x"),
                     ("umwelt-run run", "runc run", ""),
                     ("umwelt-run sandbox run", "bwrap", "at most 1.3x"),
                     ("umwelt-run sandbox exec", "crun exec", "at most 0.5x"),
                     ("umwelt-run exec", "crun exec", "")):
    print("| %s / %s | %s | %s | %s | %s |" % (a, b, ratio(a, b, med),
                                               ratio(a, b, rounds) if rounds else "",
                                               ratio(a, b, rss_runs) if b in rss_runs else "",
                                               target))
print()
print("Runtimes: " + "; ".join(versions.splitlines()) + ".")
print()
print("Reproduce as root from the source tree, with umwelt-run built there "
      "(UMW_BUILDDIR=DIR for an out-of-tree build, or UMW_RUNTIME=PATH):")
print()
print("    " + repro)
EOF

printf '\n'
cat "$W/report.md"

if ((WRITE)); then
	bench_write_block bench "$W/report.md"
fi
