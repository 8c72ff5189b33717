# Shared helpers for the integration tests: TAP output, a private --root per
# test file, busybox bundles, config.json edits and cleanup. Source it from
# bash; it does not change shell options for the caller beyond `set -u`.
#
# Environment:
#   UMW_RUNTIME   runtime binary to test (default $UMW_BUILDDIR/umwelt-run);
#                 UMW_RUNTIME=/usr/bin/crun checks the tests themselves.
#   UMW_BUILDDIR  build directory (default: the source tree)
#   UMW_SRCDIR    source directory (default: two levels above this file)
#   UMW_PROBE     static probe binary (default: built helper, else compiled
#                 into the test's temp dir)
#   UMW_RUNTIME_BIN  the real runtime binary when UMW_RUNTIME is a wrapper
#                 script (security.sh checks the container cannot reach it)
#   UMW_KEEP=1    keep the temp dir of a test file for inspection

set -u

UMW_SRCDIR=${UMW_SRCDIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
UMW_BUILDDIR=${UMW_BUILDDIR:-$UMW_SRCDIR}
RT=${UMW_RUNTIME:-$UMW_BUILDDIR/umwelt-run}
[[ $RT == */* ]] || RT=$(command -v "$RT" || echo "$RT")
[[ -e $RT ]] && RT=$(realpath -s "$RT")
PY=${UMW_PYTHON:-$(command -v python3 || echo /usr/bin/python3)}
T_NAME=$(basename "$0" .sh)

# True when the runtime under test is ours: tests of our documented exit codes
# and messages only mean something there.
is_umwelt() { [[ $(basename "$RT") == umwelt-run* ]]; }

# ---------------------------------------------------------------- TAP

T_N=0
T_FAILED=0
T_FAILED_NAMES=()

t_diag() {
        local line
        for line in "$@"; do
                while IFS= read -r l; do printf '# %s\n' "$l"; done <<<"$line"
        done
}

t_ok() {
        T_N=$((T_N + 1))
        printf 'ok %d - %s\n' "$T_N" "$1"
}

# t_fail NAME [DIAGNOSTIC...]
t_fail() {
        T_FAILED_NAMES+=("$1")
        T_N=$((T_N + 1))
        T_FAILED=$((T_FAILED + 1))
        printf 'not ok %d - %s\n' "$T_N" "$1"
        shift
        [[ $# -gt 0 ]] && t_diag "$@"
        return 0
}

# t_skip NAME REASON
t_skip() {
        T_N=$((T_N + 1))
        printf 'ok %d - %s # SKIP %s\n' "$T_N" "$1" "$2"
}

# capture CMD...: runs CMD with stdin from /dev/null and its output going to
# a file, not a pipe (a container inherits create's stdio and would keep a
# pipe open); sets T_RC and T_OUT (stdout and stderr together).
T_CAP=0
capture() {
        T_CAP=$((T_CAP + 1))
        local f=$T_TMP/capture.$T_CAP
        "$@" >"$f" 2>&1 </dev/null
        T_RC=$?
        T_OUT=$(cat "$f")
        return $T_RC
}

# capture_split CMD...: as capture, but T_OUT is stdout and T_ERR stderr.
capture_split() {
        T_CAP=$((T_CAP + 1))
        "$@" >"$T_TMP/out.$T_CAP" 2>"$T_TMP/err.$T_CAP" </dev/null
        T_RC=$?
        T_OUT=$(cat "$T_TMP/out.$T_CAP")
        T_ERR=$(cat "$T_TMP/err.$T_CAP")
        return $T_RC
}

# run_in BUNDLE ARG...: sets process.args, runs the bundle as a new
# container and sets T_RC, T_OUT (its stdout) and T_ERR (its stderr).
run_in() {
        local b=$1
        shift
        cfg_args "$b" "$@"
        new_id
        capture_split rt run --bundle "$b" "$T_LAST_ID"
}

# t_run NAME CMD...: ok when CMD exits 0; its output is shown on failure.
t_run() {
        local name=$1
        shift
        if capture "$@"; then
                t_ok "$name"
        else
                t_fail "$name" "command: $*" "exit status: $T_RC" "$T_OUT"
        fi
}

# t_run_fails NAME CMD...: ok when CMD exits non-zero.
t_run_fails() {
        local name=$1
        shift
        if ! capture "$@"; then
                t_ok "$name"
        else
                t_fail "$name" "command: $*" "expected failure, got exit status 0" "$T_OUT"
        fi
}

# t_eq NAME EXPECTED ACTUAL [DIAGNOSTIC...]
t_eq() {
        local name=$1 want=$2 got=$3
        shift 3
        if [[ "$want" == "$got" ]]; then
                t_ok "$name"
        else
                t_fail "$name" "expected: $want" "got:      $got" "$@"
        fi
}

# t_match NAME REGEX ACTUAL [DIAGNOSTIC...] (bash extended regex)
t_match() {
        local name=$1 re=$2 got=$3
        shift 3
        if [[ "$got" =~ $re ]]; then
                t_ok "$name"
        else
                t_fail "$name" "expected to match: $re" "got: $got" "$@"
        fi
}

# t_nomatch NAME REGEX ACTUAL [DIAGNOSTIC...]
t_nomatch() {
        local name=$1 re=$2 got=$3
        shift 3
        if [[ "$got" =~ $re ]]; then
                t_fail "$name" "expected NOT to match: $re" "got: $got" "$@"
        else
                t_ok "$name"
        fi
}

# Sanitizer reports from a process no test reads: the relay a start
# spawns detached writes to RELAYDIR/relay.log. What this test's run
# appended there (T_RELAY_LOG_AT, its size at t_setup) must have none.
ROOT_RELAY_LOG=/run/umwelt/relay/relay.log
T_RELAY_LOG_AT=
relay_log_size() { stat -c %s "$ROOT_RELAY_LOG" 2>/dev/null || echo 0; }
t_no_sanitizer_reports() {
        [[ -n $T_RELAY_LOG_AT ]] || return 0
        local found
        found=$(tail -c +$((T_RELAY_LOG_AT + 1)) "$ROOT_RELAY_LOG" 2>/dev/null |
                grep -m3 -E 'runtime error:|ERROR: (Address|Leak)Sanitizer')
        t_eq "no sanitizer report in $ROOT_RELAY_LOG" "" "$found"
}

# t_done: prints the plan and exits non-zero when something failed.
t_done() {
        t_no_sanitizer_reports
        printf '1..%d\n' "$T_N"
        [[ $T_FAILED -eq 0 ]]
        exit
}

# t_skip_all REASON: the whole file is skipped (a TAP skip plan).
t_skip_all() {
        printf '1..0 # SKIP %s\n' "$1"
        exit 0
}

t_bail() {
        printf 'Bail out! %s\n' "$1"
        exit 1
}

# ---------------------------------------------------------------- set-up

t_require_root() {
        [[ $(id -u) -eq 0 ]] || t_skip_all "needs root (run 'sudo make check' for integration tests)"
}

[[ -x /bin/busybox ]] || t_bail "/bin/busybox missing (install busybox-static)"
[[ -x $PY ]] || t_bail "python3 missing (needed to edit config.json)"

T_IDS=()
T_TMP=
T_ROOT=

# Unmounts whatever a broken runtime left under DIR on the host, deepest first.
umount_under() {
        local dir=$1 m
        while read -r m; do
                umount -l "$m" 2>/dev/null
        done < <(awk -v d="$dir" '$5 == d || index($5, d "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r)
}

t_cleanup() {
        local id
        [[ -n ${T_EXTRA_CLEANUP:-} ]] && eval "$T_EXTRA_CLEANUP"
        if [[ -n $T_ROOT && -x $RT ]]; then
                for id in "${T_IDS[@]}" $("$RT" --root "$T_ROOT" list -q 2>/dev/null); do
                        "$RT" --root "$T_ROOT" kill "$id" KILL >/dev/null 2>&1
                        "$RT" --root "$T_ROOT" delete -f "$id" >/dev/null 2>&1
                done
        fi
        undelegate_cgroups
        restore_floor
        for d in "$T_TMP" "$T_ROOT"; do
                [[ -n $d && -d $d ]] || continue
                umount_under "$d"
                if [[ ${UMW_KEEP:-0} == 1 ]]; then
                        printf '# kept %s\n' "$d"
                else
                        rm -rf --one-file-system "$d"
                fi
        done
        return 0
}

t_setup() {
        [[ -x $RT ]] || t_bail "runtime $RT is not executable (build it, or set UMW_RUNTIME)"
        T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/umwt-$T_NAME.XXXXXX") || t_bail "mktemp failed"
        # Containers with a user namespace run as other uids on the host.
        chmod 755 "$T_TMP"
        local rundir=/run
        [[ -w /run ]] || rundir=$T_TMP
        T_ROOT=$(mktemp -d "$rundir/umwt-root-$T_NAME.XXXXXX") || t_bail "mktemp failed"
        trap t_cleanup EXIT
        trap 'exit 130' INT TERM
        T_RELAY_LOG_AT=$(relay_log_size)
        PROBE=${UMW_PROBE:-$UMW_BUILDDIR/tests/integration/helpers/probe}
        if [[ ! -x $PROBE ]]; then
                PROBE=$T_TMP/probe
                cc -static -O2 -o "$PROBE" "$UMW_SRCDIR/tests/integration/helpers/probe.c" ||
                        t_bail "cannot build the probe helper"
        fi
        make_rootfs_template "$T_TMP/rootfs-template"
}

# t_test_user: the unprivileged user the tests run as (made on first use):
# USER_NAME, U, G, a runtime dir XDG owned by it, and as_user CMD... running
# CMD as that user with HOME=XDG and nothing else of our environment.
t_test_user() {
        USER_NAME=umwelt-test
        if ! id -u "$USER_NAME" >/dev/null 2>&1; then
                useradd --system --no-create-home --home-dir /nonexistent \
                        --shell /usr/sbin/nologin "$USER_NAME" || t_bail "cannot create user $USER_NAME"
        fi
        command -v runuser >/dev/null || t_bail "runuser missing (util-linux)"
        U=$(id -u "$USER_NAME")
        G=$(id -g "$USER_NAME")
        XDG=$T_TMP/xdg
        mkdir -p -m 700 "$XDG"
        chown "$U:$G" "$XDG"
}
as_user() {
        (
                # Where the user's own processes live on a systemd v2 host
                # (t_delegate_cgroups); root moves the subshell, as systemd
                # would start it there.
                [[ -n $T_CG_SCOPE ]] && echo "$BASHPID" >"$T_CG_SCOPE/cgroup.procs"
                exec runuser -u "$USER_NAME" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
                        XDG_RUNTIME_DIR="$XDG" HOME="$XDG" "$@"
        )
}

# t_buckets: the "path TAB bucket TAB reason" lines of a deliver review's
# JSON on stdin.
t_buckets() {
        "$PY" -c '
import json, sys
for c in json.load(sys.stdin)["changes"]:
    print("%s\t%s\t%s" % (c["path"], c["bucket"], c["reason"] or ""))'
}
# t_bucket WHO LINES PATH BUCKET [REASON-REGEX]: PATH is in BUCKET among
# t_buckets' LINES, for a reason matching REASON-REGEX.
t_bucket() {
        local who=$1 got=$2 line
        line=$(P=$3 awk -F'\t' '$1 == ENVIRON["P"] {print $2 "\t" $3}' <<<"$got")
        t_match "$who: $3 is $4" "^$4"$'\t'".*${5:-}" "$line" "$got"
}

# t_keep_floor: the host floor (/etc/umwelt) belongs to the machine, and
# other tests use it: saved now, put back by restore_floor and at exit.
# floor LINE...: a root-owned floor of those lines (none without lines).
FLOOR=/etc/umwelt/floor.toml
T_FLOOR_SAVED=
t_keep_floor() {
        T_FLOOR_SAVED=$T_TMP/etc-umwelt
        [[ -e /etc/umwelt ]] && cp -a /etc/umwelt "$T_FLOOR_SAVED"
}
restore_floor() {
        [[ -n $T_FLOOR_SAVED ]] || return 0
        rm -rf /etc/umwelt
        [[ -e $T_FLOOR_SAVED ]] && cp -a "$T_FLOOR_SAVED" /etc/umwelt
        return 0
}
floor() {
        rm -rf /etc/umwelt
        [[ $# -eq 0 || -z $1 ]] && return 0
        mkdir -m 755 /etc/umwelt
        printf '%s\n' "$@" >"$FLOOR"
        chmod 644 "$FLOOR"
}

# cgroup_v2_only: true on a pure cgroup v2 host (cgroup2 on /sys/fs/cgroup).
cgroup_v2_only() { [[ $(stat -f -c %T /sys/fs/cgroup 2>/dev/null) == cgroup2fs ]]; }

# t_delegate_cgroups: delegates cgroups to the test user, removed at exit;
# sets T_CG_USER, the directory the user's containers' cgroups go in (on v1,
# the one below the pids hierarchy). On a cgroup v1 host: a directory
# umwelt-run-UID per controller the presets limit, owned by the user. On a
# pure v2 host, what systemd makes for user@UID.service (Delegate=yes):
# user.slice/user-UID.slice/user@UID.service with memory, pids and cpu
# enabled down to it, the directory and its cgroup.procs, subtree_control
# and threads the user's, and as_user's commands in a leaf of it
# (umwelt-test.scope: a cgroup with processes can give its children no
# controller). Fails on a hybrid host's unified hierarchy alone.
T_DELEGATED=()
T_CG_SCOPE=
T_CG_USER=
t_delegate_cgroups() {
        local c d
        if cgroup_v2_only; then
                local slice=/sys/fs/cgroup/user.slice/user-$U.slice
                local svc=$slice/user@$U.service
                mkdir -p "$svc/umwelt-test.scope" || return 1
                T_DELEGATED+=("$svc" "$slice")
                for d in /sys/fs/cgroup /sys/fs/cgroup/user.slice "$slice"; do
                        echo '+memory +pids +cpu' >"$d/cgroup.subtree_control" || return 1
                done
                chown "$U:$G" "$svc" "$svc"/cgroup.{procs,subtree_control,threads} || return 1
                chown -R "$U:$G" "$svc/umwelt-test.scope" || return 1
                T_CG_SCOPE=$svc/umwelt-test.scope
                T_CG_USER=$svc/umwelt-run
                return 0
        fi
        [[ $(stat -f -c %T /sys/fs/cgroup) == tmpfs && -d /sys/fs/cgroup/pids ]] || return 1
        for c in memory cpu pids; do
                d=/sys/fs/cgroup/$c/umwelt-run-$U
                mkdir -p "$d" && chown -R "$U:$G" "$d" && T_DELEGATED+=("$d")
        done
        T_CG_USER=/sys/fs/cgroup/pids/umwelt-run-$U
}
undelegate_cgroups() {
        local d
        T_CG_SCOPE=
        for d in "${T_DELEGATED[@]}"; do
                [[ -d $d ]] && find "$d" -depth -mindepth 1 -type d -exec rmdir {} + 2>/dev/null
                rmdir "$d" 2>/dev/null
        done
        return 0
}

# rt ARGS...: the runtime under test, with this file's private state root.
rt() { "$RT" --root "$T_ROOT" "$@"; }

# new_id: a container id unique to this file, remembered for cleanup.
T_SEQ=0
new_id() {
        T_SEQ=$((T_SEQ + 1))
        T_LAST_ID="umwt-$T_NAME-$$-$T_SEQ"
        T_IDS+=("$T_LAST_ID")
}

# ---------------------------------------------------------------- bundles

make_rootfs_template() {
        local r=$1 a
        mkdir -p "$r"/{bin,dev,etc,proc,sys,tmp,mnt,run,root,var/tmp}
        chmod 1777 "$r/tmp"
        cp /bin/busybox "$r/bin/busybox"
        for a in $(/bin/busybox --list); do
                [[ $a == busybox || -e $r/bin/$a ]] || ln -s busybox "$r/bin/$a"
        done
        cp "$PROBE" "$r/bin/probe"
        printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/false\n' >"$r/etc/passwd"
        printf 'root:x:0:\nnobody:x:65534:\n' >"$r/etc/group"
}

# make_bundle DIR [spec options...]: a busybox bundle with the runtime's own
# default config.json, made non-interactive (terminal false) and running
# `probe exit 0`. Tests set what they depend on with cfg_set.
make_bundle() {
        local b=$1
        shift
        mkdir -p "$b"
        cp -a "$T_TMP/rootfs-template" "$b/rootfs"
        rm -f "$b/config.json"
        (cd "$b" && "$RT" spec "$@") || t_bail "'$RT spec $*' failed"
        cfg_set "$b" 'c["process"]["terminal"] = False; c["process"]["args"] = ["/bin/probe", "exit", "0"]'
}

# cfg_set BUNDLE PYTHON: runs PYTHON with the parsed config.json as `c` and
# writes it back. Helpers available in PYTHON: add_mount(dest, type, source,
# options), set_ns(type, path=None), drop_ns(type).
cfg_set() {
        local b=$1 code=$2
        "$PY" - "$b/config.json" "$code" <<'EOF' || t_bail "cfg_set failed: $code"
import json, sys
path, code = sys.argv[1], sys.argv[2]
with open(path) as f:
    c = json.load(f)
def add_mount(dest, type, source, options=None):
    m = {"destination": dest, "type": type, "source": source}
    if options is not None:
        m["options"] = options
    c.setdefault("mounts", []).append(m)
def drop_ns(type):
    l = c.setdefault("linux", {}).setdefault("namespaces", [])
    l[:] = [n for n in l if n["type"] != type]
def set_ns(type, path=None):
    drop_ns(type)
    n = {"type": type}
    if path is not None:
        n["path"] = path
    c["linux"]["namespaces"].append(n)
exec(code)
with open(path + ".tmp", "w") as f:
    json.dump(c, f, indent=1)
import os
os.rename(path + ".tmp", path)
EOF
}

# cfg_get BUNDLE PYTHON-EXPR: prints the value of an expression on `c`.
cfg_get() {
        "$PY" -c 'import json,sys; c=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' \
                "$1/config.json" "$2"
}

# cfg_args BUNDLE ARG...: sets process.args.
cfg_args() {
        local b=$1
        shift
        "$PY" - "$b/config.json" "$@" <<'EOF'
import json, sys
p = sys.argv[1]
c = json.load(open(p))
c["process"]["args"] = sys.argv[2:]
json.dump(c, open(p, "w"), indent=1)
EOF
}

# json_get JSON PYTHON-EXPR: evaluates an expression on the parsed document `j`.
json_get() {
        "$PY" -c 'import json,sys; j=json.loads(sys.argv[1]); v=eval(sys.argv[2]); print(json.dumps(v) if isinstance(v,(dict,list,bool)) or v is None else v)' "$1" "$2" 2>/dev/null
}

# state_field ID FIELD: one field of `rt state ID`.
state_field() {
        local s
        s=$(rt state "$1" 2>/dev/null) || return 1
        json_get "$s" "j.get('$2')"
}

# wait_status ID STATUS [TENTHS]: polls `state` until the status matches.
wait_status() {
        local id=$1 want=$2 n=${3:-50}
        while ((n-- > 0)); do
                [[ $(state_field "$id" status) == "$want" ]] && return 0
                sleep 0.1
        done
        return 1
}

# wait_file FILE [TENTHS]: polls until FILE exists and is non-empty.
wait_file() {
        local f=$1 n=${2:-50}
        while ((n-- > 0)); do
                [[ -s $f ]] && return 0
                sleep 0.1
        done
        return 1
}

# host_ns TYPE: the inode of the test's own namespace of that type.
host_ns() { stat -L -c %i "/proc/self/ns/$1"; }

# The host uid root's sandboxes run as (umwelt-run(1), sandbox run): the
# first of root's range in /etc/subuid, else 0x70000000.
sandbox_root_id() {
        awk -F: '($1 == "root" || $1 == "0") && $3 > 0 { print $2; f = 1; exit } END { if (!f) print 1879048192 }' \
                /etc/subuid 2>/dev/null || echo 1879048192
}

# mount_count: number of mounts in the test's own mount namespace.
mount_count() { wc -l </proc/self/mountinfo; }

# procs_in DIR: pids of live processes whose root directory is DIR (compared
# by device and inode: a path would read "/" from another mount namespace).
procs_in() {
        local want p
        want=$(stat -L -c %d:%i "$1") || return 0
        for p in /proc/[0-9]*; do
                [[ $(stat -L -c %d:%i "$p/root" 2>/dev/null) == "$want" ]] &&
                        proc_alive "${p#/proc/}" && echo "${p#/proc/}"
        done
        return 0
}

# proc_alive PID: true when PID exists and is not a zombie.
proc_alive() {
        local st
        st=$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) || return 1
        [[ -n $st && $st != Z && $st != X ]]
}
