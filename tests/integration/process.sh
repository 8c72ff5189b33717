#!/bin/bash
# The process: capabilities, no_new_privs, rlimits, user/groups/umask, cwd,
# env, args, stdio, hostname/domainname, sysctl, oom_score_adj.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

b=$T_TMP/bundle
make_bundle "$b"
cfg_set "$b" 'c["root"]["readonly"] = False'

# field OUTPUT FIELD: value of one "Field value" line of probe output.
field() { awk -v f="$2" '$1 == f { print $2 }' <<<"$1"; }

# ---------------------------------------------------------------- capabilities

# CAP_CHOWN=0, CAP_KILL=5, CAP_NET_BIND_SERVICE=10.
cfg_set "$b" 'c["process"]["capabilities"] = {
  "bounding": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
  "permitted": ["CAP_CHOWN", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
  "effective": ["CAP_CHOWN", "CAP_KILL"],
  "inheritable": ["CAP_KILL", "CAP_NET_BIND_SERVICE"],
  "ambient": ["CAP_NET_BIND_SERVICE"]}'
run_in "$b" /bin/probe caps
t_eq "caps: container runs" 0 "$T_RC" "$T_ERR"
t_eq "caps: bounding set as configured" 0000000000000421 "$(field "$T_OUT" CapBnd)" "$T_OUT"
t_eq "caps: inheritable set as configured" 0000000000000420 "$(field "$T_OUT" CapInh)"
t_eq "caps: ambient set as configured" 0000000000000400 "$(field "$T_OUT" CapAmb)"
# Root's execve recomputes permitted from the bounding set (no file caps
# needed for uid 0), so effective == permitted == bounding | inheritable.
t_eq "caps: uid 0 permitted after exec" 0000000000000421 "$(field "$T_OUT" CapPrm)"
t_eq "caps: uid 0 effective after exec" 0000000000000421 "$(field "$T_OUT" CapEff)"

cfg_set "$b" 'c["process"]["user"] = {"uid": 1000, "gid": 1000}'
run_in "$b" /bin/probe caps
t_eq "caps: non-root keeps only the ambient set as permitted" 0000000000000400 "$(field "$T_OUT" CapPrm)" "$T_OUT" "$T_ERR"
t_eq "caps: non-root effective is the ambient set" 0000000000000400 "$(field "$T_OUT" CapEff)"
t_eq "caps: non-root bounding as configured" 0000000000000421 "$(field "$T_OUT" CapBnd)"

cfg_set "$b" 'c["process"]["capabilities"] = {}
c["process"]["user"] = {"uid": 0, "gid": 0}'
run_in "$b" /bin/probe caps
t_eq "caps: empty capability object drops everything, even for root" \
        "0000000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000" \
        "$(awk '{ print $2 }' <<<"$T_OUT" | tr '\n' ' ' | sed 's/ $//')" "$T_OUT" "$T_ERR"
run_in "$b" /bin/sh -c 'chown 1 /tmp; echo $?'
t_eq "caps: without CAP_CHOWN root cannot chown" 1 "$(tail -1 <<<"$T_OUT")" "$T_ERR"

cfg_set "$b" 'del c["process"]["capabilities"]'
run_in "$b" /bin/probe caps
t_eq "caps: no capabilities field means none" 0000000000000000 "$(field "$T_OUT" CapEff)" "$T_OUT" "$T_ERR"

# ---------------------------------------------------------------- no_new_privs

cfg_set "$b" 'c["process"]["noNewPrivileges"] = True'
run_in "$b" /bin/probe status NoNewPrivs
t_eq "noNewPrivileges true sets NoNewPrivs" "NoNewPrivs 1" "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["noNewPrivileges"] = False'
run_in "$b" /bin/probe status NoNewPrivs
t_eq "noNewPrivileges false leaves NoNewPrivs 0" "NoNewPrivs 0" "$T_OUT" "$T_ERR"

# ---------------------------------------------------------------- rlimits

cfg_set "$b" 'c["process"]["rlimits"] = [
  {"type": "RLIMIT_NOFILE", "soft": 123, "hard": 456},
  {"type": "RLIMIT_CORE", "soft": 0, "hard": 0},
  {"type": "RLIMIT_NPROC", "soft": 77, "hard": 88}]'
run_in "$b" /bin/sh -c 'probe rlimit NOFILE; probe rlimit CORE; probe rlimit NPROC'
t_eq "rlimits NOFILE, CORE, NPROC as configured" "123 456|0 0|77 88" "$(tr '\n' '|' <<<"$T_OUT" | sed 's/|$//')" "$T_ERR"
cfg_set "$b" 'c["process"]["rlimits"] = []'
run_in "$b" /bin/probe rlimit NOFILE
t_eq "no rlimits: NOFILE inherited from the runtime" "$("$PROBE" rlimit NOFILE)" "$T_OUT" "$T_ERR"

# ---------------------------------------------------------------- user, groups, umask

cfg_set "$b" 'c["process"]["user"] = {"uid": 1000, "gid": 1001, "additionalGids": [10, 20], "umask": 23}'
run_in "$b" /bin/probe ids
t_eq "uid, gid, additional gids, umask" "uid=1000 gid=1001 euid=1000 egid=1001 groups=10,20 umask=0027" "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["user"] = {"uid": 0, "gid": 0}'
run_in "$b" /bin/probe ids
t_eq "root with no additional gids has no groups; default umask 0022" "uid=0 gid=0 euid=0 egid=0 groups= umask=0022" "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["user"] = {"uid": 65534, "gid": 65534}'
run_in "$b" /bin/sh -c 'echo x > /root/f; echo $?'
t_eq "nobody cannot write to a root-only dir" 1 "$(tail -1 <<<"$T_OUT")"
cfg_set "$b" 'c["process"]["user"] = {"uid": 0, "gid": 0}'

# ---------------------------------------------------------------- cwd, env, args, stdio

mkdir -p "$b/rootfs/work/dir"
cfg_set "$b" 'c["process"]["cwd"] = "/work/dir"'
run_in "$b" /bin/probe cwd
t_eq "cwd as configured" /work/dir "$T_OUT" "$T_ERR"
run_in "$b" /bin/sh -c 'probe open rel w; ls /work/dir'
t_eq "relative paths resolve against cwd" "0
rel" "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["cwd"] = "/"'

cfg_set "$b" 'c["process"]["env"] = ["PATH=/bin", "FOO=bar baz", "EMPTY=", "HOME=/home/x"]'
run_in "$b" /bin/env
t_eq "env is exactly the configured one" "EMPTY=|FOO=bar baz|HOME=/home/x|PATH=/bin" \
        "$(sort <<<"$T_OUT" | tr '\n' '|' | sed 's/|$//')" "$T_ERR"
run_in "$b" probe exit 3
t_eq "args[0] is looked up in the configured PATH" 3 "$T_RC" "$T_ERR"

run_in "$b" /bin/sh -c 'printf "%s|" "$@"' sh "a b" "" 'c"d' '$HOME'
t_eq "args pass through unchanged" 'a b||c"d|$HOME|' "$T_OUT" "$T_ERR"

cfg_args "$b" /bin/cat
new_id
out=$(printf 'line1\nline2\n' | rt run --bundle "$b" "$T_LAST_ID" 2>/dev/null)
t_eq "stdin passes through run" "line1
line2" "$out"

# HOME from the container's /etc/passwd when env has none; "/" without an
# entry; a HOME in env wins.
cfg_set "$b" 'c["process"]["env"] = ["PATH=/bin"]'
run_in "$b" /bin/sh -c 'echo "$HOME"'
t_eq "HOME of uid 0 from /etc/passwd" /root "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["user"] = {"uid": 4321, "gid": 4321}'
run_in "$b" /bin/sh -c 'echo "$HOME"'
t_eq "HOME is / for a uid without a passwd entry" / "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["user"] = {"uid": 0, "gid": 0}; c["process"]["env"] = ["PATH=/bin", "HOME=/given"]'
run_in "$b" /bin/sh -c 'echo "$HOME"'
t_eq "a HOME in env is kept" /given "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["env"] = ["PATH=/bin"]'
cfg_args "$b" /bin/sleep 1000
new_id
rt run -d --bundle "$b" "$T_LAST_ID" >/dev/null 2>&1 </dev/null
capture_split rt exec "$T_LAST_ID" /bin/sh -c 'echo "$HOME"'
t_eq "exec: HOME of uid 0 from /etc/passwd" /root "$T_OUT" "$T_ERR"
rt delete -f "$T_LAST_ID" >/dev/null 2>&1

# A cwd the image lacks is made.
cfg_set "$b" 'c["process"]["cwd"] = "/not/there/yet"'
run_in "$b" /bin/sh -c 'pwd'
t_eq "a missing cwd is created" "0 /not/there/yet" "$T_RC $T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["cwd"] = "/not/there/either"; c["root"]["readonly"] = True'
run_in "$b" /bin/sh -c 'pwd'
t_eq "a missing cwd is created in a read-only root" "0 /not/there/either" "$T_RC $T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["cwd"] = "/"; c["root"]["readonly"] = False'

# A non-root process reopens its stdio by name when it is a pipe of the
# caller's (conmon's, a shim's): podman run --user 1000 ... >/dev/stdout.
cfg_set "$b" 'c["process"]["user"] = {"uid": 1000, "gid": 1000}'
cfg_args "$b" /bin/sh -c 'echo out >/dev/stdout && echo err >/proc/self/fd/2'
new_id
out=$(rt run --bundle "$b" "$T_LAST_ID" 2>&1 </dev/null | cat)
t_eq "uid 1000 reopens its stdout and stderr pipes" "out
err" "$out"
f=$T_TMP/stdout-file
: >"$f"
chmod 600 "$f"
new_id
rt run --bundle "$b" "$T_LAST_ID" >"$f" 2>/dev/null </dev/null
t_eq "a file given as stdout is not chowned" "0:0 600" "$(stat -c '%u:%g %a' "$f")"
cfg_set "$b" 'c["process"]["user"] = {"uid": 0, "gid": 0}'

# ---------------------------------------------------------------- uts, sysctl, oom

cfg_set "$b" 'c["hostname"] = "box1"; c["domainname"] = "example.test"'
run_in "$b" /bin/probe hostname
t_eq "hostname and domainname" "box1 example.test" "$T_OUT" "$T_ERR"

host_fwd=$(cat /proc/sys/net/ipv4/ip_forward)
want_fwd=$((1 - host_fwd))
cfg_set "$b" "c['linux']['sysctl'] = {'net.ipv4.ip_forward': '$want_fwd', 'net.core.somaxconn': '1234', 'kernel.msgmax': '12345'}"
run_in "$b" /bin/sh -c 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/net/core/somaxconn /proc/sys/kernel/msgmax'
t_eq "sysctls applied in the container's namespaces" "$want_fwd 1234 12345" "$(echo $T_OUT)" "$T_ERR"
t_eq "host ip_forward untouched" "$host_fwd" "$(cat /proc/sys/net/ipv4/ip_forward)"
cfg_set "$b" 'c["linux"].pop("sysctl")'

host_oom=$(cat /proc/$$/oom_score_adj)
cfg_set "$b" 'c["process"]["oomScoreAdj"] = 500'
run_in "$b" /bin/cat /proc/self/oom_score_adj
t_eq "oomScoreAdj" 500 "$T_OUT" "$T_ERR"
t_eq "host oom_score_adj untouched" "$host_oom" "$(cat /proc/$$/oom_score_adj)"

# systemd socket activation, as runc and crun take it: LISTEN_FDS (and a
# LISTEN_PID that is the runtime's, or none) hands fd 3 on and says so; a
# LISTEN_PID of another process hands nothing on.
echo activated >"$T_TMP/listen-fd"
cfg_args "$b" /bin/sh -c 'echo $LISTEN_FDS $LISTEN_PID; cat <&3'
new_id
out=$(env LISTEN_FDS=1 "$RT" --root "$T_ROOT" run --bundle "$b" "$T_LAST_ID" 3<"$T_TMP/listen-fd" 2>&1 </dev/null)
t_eq "LISTEN_FDS=1: fd 3 and LISTEN_FDS=1 LISTEN_PID=1 reach the workload" "1 1 activated" "$(echo $out)"
new_id
out=$(env LISTEN_FDS=1 LISTEN_PID=1 "$RT" --root "$T_ROOT" run --bundle "$b" "$T_LAST_ID" 3<"$T_TMP/listen-fd" 2>&1 </dev/null)
t_match "LISTEN_FDS for another pid: nothing is handed on" "^ .*3: Bad file descriptor" "$(echo " $out")"

t_done
