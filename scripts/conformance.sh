#!/bin/bash
# OCI conformance: opencontainers/runtime-tools' validation suite and crun's
# own tests (tests/test_*.py) against umwelt-run, crun and runc, in one run,
# on this host. Prints per suite and runtime the ok / not ok counts and
# writes every test's TAP output and the per-test failure lists under the
# results directory. CONFORMANCE.md says what the numbers mean.
#
# usage: scripts/conformance.sh [options] RUNTIME_TOOLS_DIR CRUN_DIR
#   RUNTIME_TOOLS_DIR  a checkout of opencontainers/runtime-tools with
#                      `make runtimetest validation-executables` done
#                      (GOFLAGS=-mod=vendor GOPROXY=off builds it offline)
#   CRUN_DIR           a checkout of containers/crun (only tests/ is used;
#                      the static init is built here from tests/init.c)
# options:
#   --umwelt PATH      umwelt-run to test (default: $UMW_BUILDDIR/umwelt-run,
#                      else ./umwelt-run); copied at the start, so a rebuild
#                      during the run does not change what is measured
#   --runtimes LIST    space-separated subset of "umwelt-run crun runc"
#   --suites LIST      subset of "runtime-tools crun"
#   --only GLOB        only the test files matching GLOB (e.g. 'hooks*',
#                      'test_exec.py') in each suite
#   --out DIR          results directory (default: ./conformance-results)
#   --timeout SECS     per test file (default 600)
#
# Needs root, python3, gcc with a static libc (and libseccomp.a, optional),
# util-linux (unshare), coreutils' timeout; crun and runc from Debian.
#
# Safe on a shared machine: it runs in a private mount namespace (where it
# hides a cgroup2 mount with controllers on a hybrid host, without which crun
# 1.8 refuses to start anything; the host keeps its mount), each runtime has a
# private --root under the results directory, each test file runs alone
# under a timeout (its process group killed after it), every container left
# in a runtime's root is deleted after the runtime's turn, and the host
# sysctls the suites can write (fs.mqueue.*, kernel.*, net.*, vm.*) are
# snapshot before and any changed value written back at the end (listed in
# sysctl-restored.txt): a runtime that writes a container's sysctl into the
# host must not leave it there.
set -euo pipefail

usage() {
	sed -n '/^# usage:/,/^# Needs/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
UMW=
RUNTIMES="umwelt-run crun runc"
SUITES="runtime-tools crun"
ONLY='*'
OUT=$PWD/conformance-results
TMO=600
while [ $# -gt 0 ]; do
	case $1 in
	--umwelt) UMW=$2; shift 2 ;;
	--runtimes) RUNTIMES=$2; shift 2 ;;
	--suites) SUITES=$2; shift 2 ;;
	--only) ONLY=$2; shift 2 ;;
	--out) OUT=$2; shift 2 ;;
	--timeout) TMO=$2; shift 2 ;;
	--in-ns) IN_NS=1; shift ;;
	-h | --help) usage ;;
	--*) usage ;;
	*) break ;;
	esac
done
[ $# -eq 2 ] || usage
RT_DIR=$(cd "$1" && pwd)
CRUN_DIR=$(cd "$2" && pwd)
[ "$(id -u)" = 0 ] || { echo "conformance.sh: needs root" >&2; exit 2; }
[ -x "$RT_DIR/runtimetest" ] || {
	echo "conformance.sh: $RT_DIR/runtimetest missing: run 'make runtimetest validation-executables' there" >&2
	exit 2
}
[ -f "$CRUN_DIR/tests/init.c" ] || { echo "conformance.sh: $CRUN_DIR/tests/init.c missing" >&2; exit 2; }
if [ -z "$UMW" ]; then
	UMW=${UMW_BUILDDIR:-.}/umwelt-run
fi
UMW=$(realpath "$UMW")
[ -x "$UMW" ] || { echo "conformance.sh: no umwelt-run at $UMW (--umwelt PATH)" >&2; exit 2; }

# Into a private mount namespace once; there, hide a cgroup2 mount that has
# controllers on a host that also mounts v1 hierarchies (hybrid).
if [ -z "${IN_NS:-}" ]; then
	exec unshare --mount --propagation private -- \
		bash ${CONF_TRACE:+-x} "$0" --in-ns --umwelt "$UMW" --runtimes "$RUNTIMES" --suites "$SUITES" \
		--only "$ONLY" --out "$OUT" --timeout "$TMO" "$RT_DIR" "$CRUN_DIR"
fi
NOTE=
if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null &&
	[ -n "$(cat /sys/fs/cgroup/unified/cgroup.controllers 2>/dev/null)" ]; then
	umount /sys/fs/cgroup/unified
	NOTE="cgroup2 mount /sys/fs/cgroup/unified hidden in the run's mount namespace"
fi

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
W=$OUT/work
rm -rf --one-file-system "$W"
mkdir -p "$W/bin"
cp "$UMW" "$W/bin/umwelt-run.real"

# Host sysctls: snapshot now, write back what changed at exit.
SNAP=$W/sysctl-before.json
sysctl_tool() {
	python3 - "$@" <<'EOF'
import json, os, stat, sys
mode, snap, log = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else None
trees = ["fs/mqueue", "kernel", "net", "vm"]
# Values the kernel changes by itself, or whose write is an action.
skip = ("kernel/ns_last_pid", "kernel/random/", "vm/drop_caches",
        "vm/compact_memory", "kernel/usermodehelper/", "net/ipv4/route/flush",
        "net/ipv6/route/flush", "kernel/printk_ratelimit")
def values():
    out = {}
    for t in trees:
        for d, _, files in os.walk("/proc/sys/" + t):
            for f in files:
                p = os.path.join(d, f)
                rel = p[len("/proc/sys/"):]
                if rel.startswith(skip):
                    continue
                try:
                    if not os.stat(p).st_mode & stat.S_IWUSR or \
                       not os.stat(p).st_mode & stat.S_IRUSR:
                        continue
                    with open(p) as fh:
                        out[rel] = fh.read()
                except OSError:
                    pass
    return out
if mode == "save":
    json.dump(values(), open(snap, "w"))
    sys.exit(0)
before, now, restored = json.load(open(snap)), values(), []
for k, v in before.items():
    if k in now and now[k] != v:
        try:
            with open("/proc/sys/" + k, "w") as fh:
                fh.write(v)
            restored.append("%s: %s -> %s" % (k.replace("/", "."), now[k].strip(), v.strip()))
        except OSError as e:
            restored.append("%s: %s -> %s FAILED (%s)" % (k.replace("/", "."), now[k].strip(), v.strip(), e))
with open(log, "w") as fh:
    fh.write("".join(r + "\n" for r in restored))
EOF
}
sysctl_tool save "$SNAP"

# Host cgroups: some of crun's tests make their own under the hierarchies'
# roots (test_delete freezes a container's init in /frozen, test_cgroup_setup
# nests /test/...), runtime-tools its /cgrouptest and testdir/. Every
# directory that is new since the start and named as the suites name theirs
# goes after each test file: thawed, its processes (the suites' containers)
# killed, removed deepest first (runtime-tools' containers are uuids). Other
# users' cgroups (umwelt's tests use umwt-*, bench.sh bench-*) stay.
CG_BEFORE=$W/cgroups-before.txt
cg_list() { find /sys/fs/cgroup -mindepth 2 -type d 2>/dev/null | sort; }
cg_list >"$CG_BEFORE"
cg_sweep() {
	local d p n
	local -a new=()
	mapfile -t new < <(cg_list | comm -13 "$CG_BEFORE" - |
		grep -E '^/sys/fs/cgroup/[^/]+/(.*/)?(test|frozen|cgrouptest|ocitest|crun|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-)[^/]*(/|$)' || true)
	[ ${#new[@]} -gt 0 ] || return 0
	for d in "${new[@]}"; do
		# Not a cgroup: a directory a runtime made on the tmpfs under the
		# hidden cgroup2 mount point (the host's /sys/fs/cgroup tmpfs).
		case $(stat -f -c %T "$d" 2>/dev/null) in
		cgroupfs | cgroup2fs) ;;
		*) rm -rf --one-file-system "$d" 2>/dev/null || true; continue ;;
		esac
		if [ -f "$d/freezer.state" ]; then echo THAWED >"$d/freezer.state" 2>/dev/null || true; fi
		if [ -r "$d/cgroup.procs" ]; then
			while read -r p; do kill -KILL "$p" 2>/dev/null || true; done <"$d/cgroup.procs"
		fi
	done
	for n in 1 2 3 4 5; do
		for d in $(printf '%s\n' "${new[@]}" | awk '{ print length, $0 }' | sort -rn | cut -d' ' -f2-); do
			if [ -d "$d" ]; then rmdir "$d" 2>/dev/null || true; fi
		done
		[ -n "$(for d in "${new[@]}"; do [ -d "$d" ] && echo "$d"; done)" ] || return 0
		sleep 0.2
	done
	for d in "${new[@]}"; do [ -d "$d" ] && echo "conformance.sh: cgroup $d stays (busy)" >&2; done
	return 0
}

# A runtime that makes no mount namespace (runtime-tools' linux_ns_itype
# asks for none) mounts the bundle's /proc, /sys and /dev in ours: they go
# before anything under the results directory is removed, and rm never
# crosses a mount point.
unmount_under() {
	local m
	for m in $(awk -v d="$1/" 'index($5, d) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
}

cleanup() {
	local rc=$?
	# Every step runs whatever the one before said: the sysctls last.
	set +e
	for rt in $RUNTIMES; do reap_containers "$rt"; done
	cg_sweep
	unmount_under "$W"
	rm -rf --one-file-system "$W/cwd-"* "$W/tmp"
	sysctl_tool restore "$SNAP" "$OUT/sysctl-restored.txt" || true
	if [ -s "$OUT/sysctl-restored.txt" ]; then
		echo "host sysctls written back (a runtime changed them): $OUT/sysctl-restored.txt" >&2
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

real_bin() {
	case $1 in
	umwelt-run) echo "$W/bin/umwelt-run.real" ;;
	crun) command -v crun ;;
	runc) command -v runc ;;
	esac
}

# Each runtime behind a wrapper that gives it a private --root. runc has no
# --cgroup-manager nor --config (crun's tests pass both; their config is the
# bundle's config.json, the test's cwd): the wrapper drops those.
for rt in $RUNTIMES; do
	bin=$(real_bin "$rt")
	[ -x "$bin" ] || { echo "conformance.sh: $rt not found" >&2; exit 2; }
	mkdir -p "$W/root-$rt"
	{
		echo '#!/bin/bash'
		if [ "$rt" = runc ]; then
			echo 'a=(); while [ $# -gt 0 ]; do case $1 in --cgroup-manager) shift 2 ;; --cgroup-manager=*) shift ;; --config) [ "$2" = config.json ] && shift 2 || { a+=("$1"); shift; } ;; *) a+=("$1"); shift ;; esac; done; set -- "${a[@]}"'
		fi
		echo "exec $bin --root $W/root-$rt \"\$@\""
	} >"$W/bin/$rt"
	chmod +x "$W/bin/$rt"
done

reap_containers() {
	local rt=$1 root=$W/root-$1 bin id p
	# crun's test_mounts starts `init check-feature` helpers outside any
	# container and may leave them: ours by their executable.
	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/exe" 2>/dev/null)" = "$W/init" ] && kill -KILL "${p#/proc/}" 2>/dev/null
	done
	bin=$(real_bin "$rt" 2>/dev/null) || return 0
	[ -d "$root" ] || return 0
	for id in $(ls "$root" 2>/dev/null); do
		[ -d "$root/$id" ] || continue
		timeout 30 "$bin" --root "$root" delete --force "$id" >/dev/null 2>&1 || true
	done
	# crun's tests keep their state in the test file's own --root.
	for root in "$W/cwd-$rt"/.testsuite-run-*/root; do
		[ -d "$root" ] || continue
		for id in $(ls "$root" 2>/dev/null); do
			[ -d "$root/$id" ] || continue
			timeout 30 "$bin" --root "$root" delete --force "$id" >/dev/null 2>&1 || true
		done
	done
}

# Run one test file: TAP into $2, a timeout, its whole process group killed.
run_file() {
	local tap=$1
	shift
	local rc=0 e
	timeout -k 10 "$TMO" "$@" >"$tap" 2>"$tap.stderr" </dev/null || rc=$?
	echo "$rc" >"$tap.rc"
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "not ok - TIMEOUT: the test file did not finish in ${TMO}s" >>"$tap"
	elif [ $rc != 0 ] && ! grep -q '^not ok' "$tap"; then
		# runtime-tools' util.Fatal: the file's verdict, after any results.
		e=$(grep -v '^#' "$tap.stderr" | head -1)
		echo "not ok - the test file failed (exit $rc): ${e:0:200}" >>"$tap"
	elif ! grep -qE '^(not )?ok' "$tap" && e=$(grep -m1 '"error": "[^"]' "$tap"); then
		# A file whose only output is an error diagnostic (runtime-tools'
		# hooks: "Hooks MUST be called in the listed order").
		echo "not ok - the test file reported an error: $(sed 's/^ *"error": //' <<<"${e:0:200}")" >>"$tap"
	elif ! grep -qE '^(not )?ok' "$tap"; then
		# No result, exit 0, no error: a file that checks by the runtime's
		# refusal (the *_fail files: create must fail) and got it.
		echo "ok - the test file passed (exit 0, no TAP result, no error)" >>"$tap"
	fi
}

# Counts of one TAP file set: "ok notok skip".
count() {
	cat "$@" 2>/dev/null | awk '
		/^ok/ { ok++; if (tolower($0) ~ /# *skip/) skip++ }
		/^not ok/ { nok++ }
		END { printf "%d %d %d\n", ok, nok, skip }'
}

failures() {
	local f
	for f in "$@"; do
		{ grep -E '^not ok' "$f" 2>/dev/null || true; } | sed "s|^|$(basename "${f%.tap}"): |"
	done
}

suite_runtime_tools() {
	local rt=$1 d=$OUT/runtime-tools/$rt t name
	mkdir -p "$d" "$W/tmp"
	for t in "$RT_DIR"/validation/*/*.t; do
		name=$(basename "$t" .t)
		# shellcheck disable=SC2053
		[[ $name == $ONLY || $name.t == $ONLY ]] || continue
		(cd "$RT_DIR" && TMPDIR=$W/tmp RUNTIME=$W/bin/$rt run_file "$d/$name.tap" "$t")
		reap_containers "$rt"
		cg_sweep
		unmount_under "$W/tmp"
	done
}

build_init() {
	[ -x "$W/init" ] && return 0
	local c=$W/init-build
	mkdir -p "$c"
	printf '#define HAVE_ERROR_H 1\n' >"$c/config.h"
	[ -f /usr/include/linux/ioprio.h ] && printf '#define HAVE_LINUX_IOPRIO_H 1\n' >>"$c/config.h"
	local seccomp=()
	if [ -f /usr/lib/x86_64-linux-gnu/libseccomp.a ] || [ -f /usr/lib/libseccomp.a ]; then
		printf '#define HAVE_SECCOMP 1\n' >>"$c/config.h"
		seccomp=(-lseccomp)
	fi
	gcc -static -g -O2 -I"$c" -o "$W/init" "$CRUN_DIR/tests/init.c" "${seccomp[@]}"
}

suite_crun() {
	local rt=$1 d=$OUT/crun/$rt t name cwd=$W/cwd-$1
	build_init
	mkdir -p "$d" "$cwd" "$W/tmp"
	for t in "$CRUN_DIR"/tests/test_*.py; do
		name=$(basename "$t")
		# shellcheck disable=SC2053
		[[ $name == $ONLY || ${name%.py} == $ONLY ]] || continue
		(cd "$cwd" && TMPDIR=$W/tmp OCI_RUNTIME=$W/bin/$rt INIT=$W/init \
			PYTHONPATH=$HERE/../tests/conformance run_file "$d/$name.tap" python3 "$t")
		reap_containers "$rt"
		cg_sweep
		unmount_under "$cwd"
		rm -rf --one-file-system "$cwd"/.testsuite-run-*
	done
}

echo "conformance: umwelt-run $("$W/bin/umwelt-run.real" --version 2>&1 | head -1), crun $(crun --version | head -1 | awk '{print $3}'), runc $(runc --version | head -1 | awk '{print $3}')"
echo "conformance: runtime-tools $(git -C "$RT_DIR" describe --always --long 2>/dev/null || echo '?'), crun tests $(git -C "$CRUN_DIR" rev-parse --short HEAD 2>/dev/null || echo '?')"
[ -z "$NOTE" ] || echo "conformance: $NOTE"
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
for s in $SUITES; do
	for rt in $RUNTIMES; do
		start=$(date +%s)
		case $s in
		runtime-tools) suite_runtime_tools "$rt" ;;
		crun) suite_crun "$rt" ;;
		*) echo "conformance.sh: unknown suite $s" >&2; exit 2 ;;
		esac
		read -r ok nok skip < <(count "$OUT/$s/$rt"/*.tap)
		failures "$OUT/$s/$rt"/*.tap >"$OUT/failures-$s-$rt.txt"
		printf '%-14s %-11s %5d ok (%d skip) %4d not ok  %4ds\n' \
			"$s" "$rt" "$ok" "$skip" "$nok" $(($(date +%s) - start)) | tee -a "$SUMMARY"
	done
done
echo "per-test failures: $OUT/failures-SUITE-RUNTIME.txt; TAP: $OUT/SUITE/RUNTIME/"
