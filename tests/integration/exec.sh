#!/bin/bash
# exec: a process joins a running container's namespaces, rootfs, caps,
# seccomp and no_new_privs; env, cwd, user, caps, --process, -d with a pid
# file, exit statuses; failures write no pid file.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

b=$T_TMP/bundle
make_bundle "$b"
echo in-rootfs >"$b/rootfs/marker"
mkdir -p "$b/rootfs/work"
cfg_set "$b" 'c["root"]["readonly"] = False
c["process"]["args"] = ["/bin/probe", "sleep", "1000"]
c["process"]["env"] = ["PATH=/bin", "FOO=config", "KEEP=1"]
c["process"]["noNewPrivileges"] = True
c["process"]["capabilities"] = {k: ["CAP_KILL", "CAP_CHOWN"] for k in ("bounding", "effective", "permitted")}
c["process"]["rlimits"] = [{"type": "RLIMIT_NOFILE", "soft": 321, "hard": 654}]
c["linux"]["namespaces"] = [{"type": t} for t in ("pid", "network", "ipc", "uts", "mount", "cgroup")]
c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "architectures": ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86"],
  "syscalls": [{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]}
c["hostname"] = "exec-box"'

new_id
id=$T_LAST_ID
capture rt run -d --bundle "$b" "$id"
pid=$(state_field "$id" pid)
[[ -n $pid ]] || t_bail "container did not start: $T_OUT"

# ex ARGS...: `rt exec` with stdout in T_OUT, stderr in T_ERR.
ex() {
        T_CAP=$((T_CAP + 1))
        rt exec "$@" >"$T_TMP/out.$T_CAP" 2>"$T_TMP/err.$T_CAP" </dev/null
        T_RC=$?
        T_OUT=$(cat "$T_TMP/out.$T_CAP")
        T_ERR=$(cat "$T_TMP/err.$T_CAP")
}

ex "$id" /bin/probe ns
t_eq "exec exits 0" 0 "$T_RC" "$T_ERR"
for k in pid net ipc uts mnt cgroup; do
        t_eq "exec joins the container's $k namespace" "$(stat -L -c %i "/proc/$pid/ns/$k")" \
                "$(awk -v n="$k" '$1 == n { print $2 }' <<<"$T_OUT")" "$T_OUT"
done
ex "$id" /bin/sh -c 'cat /marker; hostname'
t_eq "exec sees the container's rootfs and hostname" "in-rootfs exec-box" "$(echo $T_OUT)" "$T_ERR"

ex "$id" /bin/probe exit 5
t_eq "exec returns the process's exit status" 5 "$T_RC" "$T_ERR"
ex "$id" /bin/sh -c 'echo out; echo err >&2'
t_eq "exec passes stdout and stderr" "out|err" "$T_OUT|$T_ERR"
out=$(echo piped | rt exec "$id" /bin/cat 2>/dev/null)
t_eq "exec passes stdin" piped "$out"

# ---------------------------------------------------------------- what exec inherits

ex "$id" /bin/env
t_eq "exec inherits the config env" "FOO=config|KEEP=1|PATH=/bin" \
        "$(grep -v '^HOME=' <<<"$T_OUT" | sort | tr '\n' '|' | sed 's/|$//')" "$T_ERR"
ex -e FOO=override -e NEW=1 "$id" /bin/env
t_eq "exec -e overrides and adds to the config env (as runc)" "FOO=override|KEEP=1|NEW=1|PATH=/bin" \
        "$(grep -v '^HOME=' <<<"$T_OUT" | sort | tr '\n' '|' | sed 's/|$//')" "$T_ERR"
ex "$id" /bin/probe caps
t_eq "exec gets the config's bounding set" 0000000000000021 "$(awk '$1 == "CapBnd" { print $2 }' <<<"$T_OUT")" "$T_OUT" "$T_ERR"
t_eq "exec gets the config's effective set" 0000000000000021 "$(awk '$1 == "CapEff" { print $2 }' <<<"$T_OUT")"
ex "$id" /bin/sh -c 'probe status NoNewPrivs; probe syscall mkdir /tmp/x; probe rlimit NOFILE'
t_eq "exec gets no_new_privs, seccomp and rlimits of the config (as runc)" "NoNewPrivs 1|13|321 654" \
        "$(tr '\n' '|' <<<"$T_OUT" | sed 's/|$//')" "$T_ERR"
ex "$id" /bin/probe fds
t_eq "exec leaks no fd into the container" 0 "$T_RC" "$T_OUT"

# ---------------------------------------------------------------- options

ex --cwd /work "$id" /bin/probe cwd
t_eq "exec --cwd" /work "$T_OUT" "$T_ERR"
ex -u 1000:1001 "$id" /bin/probe ids
t_eq "exec -u UID:GID" "uid=1000 gid=1001 euid=1000 egid=1001" "$(cut -d' ' -f1-4 <<<"$T_OUT")" "$T_ERR"
ex -u 1234 "$id" /bin/probe ids
t_eq "exec -u UID alone means gid 0" "uid=1234 gid=0" "$(cut -d' ' -f1-2 <<<"$T_OUT")" "$T_ERR"
ex --cap CAP_NET_RAW "$id" /bin/probe caps
t_eq "exec --cap adds a capability to the config's (CAP_NET_RAW, bit 13; as runc)" 0000000000002021 \
        "$(awk '$1 == "CapEff" { print $2 }' <<<"$T_OUT")" "$T_OUT" "$T_ERR"
t_eq "... bounding and permitted too, not inheritable or ambient (CVE-2022-29162)" \
        "CapInh 0000000000000000 CapPrm 0000000000002021 CapBnd 0000000000002021 CapAmb 0000000000000000" \
        "$(awk '$1 != "CapEff" { printf "%s%s %s", sep, $1, $2; sep = " " }' <<<"$T_OUT")" "$T_OUT"

cat >"$T_TMP/process.json" <<'EOF'
{"terminal": false, "user": {"uid": 42, "gid": 43}, "args": ["/bin/sh", "-c", "probe cwd; probe ids; echo $PROC"],
 "env": ["PATH=/bin", "PROC=from-file"], "cwd": "/work", "capabilities": {"bounding": ["CAP_KILL"], "effective": [], "permitted": []}}
EOF
ex --process "$T_TMP/process.json" "$id"
t_eq "exec --process: cwd, user, env from the file" "/work|uid=42 gid=43|from-file" \
        "$(sed -n 1p <<<"$T_OUT")|$(sed -n 2p <<<"$T_OUT" | cut -d' ' -f1-2)|$(sed -n 3p <<<"$T_OUT")" "$T_OUT" "$T_ERR"

rm -f "$T_TMP/exec.pid"
start=$(date +%s%N)
ex -d --pid-file "$T_TMP/exec.pid" "$id" /bin/probe sleep 1000
elapsed=$((($(date +%s%N) - start) / 1000000))
t_eq "exec -d exits 0" 0 "$T_RC" "$T_ERR"
t_match "exec -d returns at once (${elapsed} ms)" '^[0-9]{1,4}$' "$elapsed"
epid=$(cat "$T_TMP/exec.pid" 2>/dev/null)
t_match "exec -d writes the pid file" '^[1-9][0-9]*$' "$epid"
if [[ -n $epid ]] && proc_alive "$epid"; then
        t_ok "exec -d: the pid is a live process"
        t_eq "exec -d: the process is in the container's pid namespace" \
                "$(stat -L -c %i "/proc/$pid/ns/pid")" "$(stat -L -c %i "/proc/$epid/ns/pid")"
        t_eq "exec -d: the process runs probe sleep" "/bin/probe sleep 1000" "$(tr '\0' ' ' <"/proc/$epid/cmdline" | sed 's/ $//')"
        kill -KILL "$epid"
else
        t_fail "exec -d: the pid is a live process" "pid file: $epid"
        t_skip "exec -d: the process is in the container's pid namespace" "no process"
        t_skip "exec -d: the process runs probe sleep" "no process"
fi

# ---------------------------------------------------------------- failures

rm -f "$T_TMP/fail.pid"
ex --pid-file "$T_TMP/fail.pid" "$id" /bin/no-such-program
t_eq "exec of a missing program fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_ERR"
t_eq "failed exec writes no pid file" no "$([[ -e $T_TMP/fail.pid ]] && echo yes || echo no)"
rm -f "$T_TMP/fail.pid"
ex -d --pid-file "$T_TMP/fail.pid" "$id" /bin/no-such-program
t_eq "exec -d of a missing program fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_ERR"
t_eq "failed exec -d writes no pid file" no "$([[ -e $T_TMP/fail.pid ]] && echo yes || echo no)"
ex --cwd /no/such/dir "$id" /bin/true
t_eq "exec with a missing cwd fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_ERR"
ex no-such-container /bin/true
if is_umwelt; then t_eq "exec into an unknown id exits 4" 4 "$T_RC" "$T_ERR"; else t_eq "exec into an unknown id fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)"; fi

rt kill "$id" KILL >/dev/null 2>&1
wait_status "$id" stopped 50
ex "$id" /bin/true
if is_umwelt; then t_eq "exec into a stopped container exits 6" 6 "$T_RC" "$T_ERR"; else t_eq "exec into a stopped container fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)"; fi
rt delete -f "$id" >/dev/null 2>&1

t_done
