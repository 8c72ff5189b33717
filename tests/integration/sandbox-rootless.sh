#!/bin/bash
# sandbox run as the unprivileged user the set-up makes (rootless: a user
# namespace maps only that user), and the layers above the project: the
# preset's limits proved from inside (as root and through a cgroup delegated
# to the user), refused without delegation unless the host floor allows best
# effort, and a bad floor or user config refused by name.
T_NAME=sandbox-rootless
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user

t_keep_floor
floor ""

# Forks until the kernel refuses; prints how many children it made.
FORKS='
import os, time
n = 0
try:
    while n < 600:
        if os.fork() == 0:
            time.sleep(5)
            os._exit(0)
        n += 1
except OSError:
    pass
print(n)'

proj=$T_TMP/proj
mkdir -p "$proj/.git"
echo '[core]' >"$proj/.git/config"
chown -R "$U:$G" "$proj"
mkdir -p "$T_TMP/home"

capture_split env HOME="$T_TMP/home" XDG_STATE_HOME="$T_TMP/state" \
        "$RT" --root "$T_ROOT" sandbox run -p "$proj" --preset review -- python3 -c "$FORKS"
t_eq "as root, the review preset's pids limit holds inside (511 children of 512)" 511 "$T_OUT" "$T_ERR"

# Memory and CPU, read off the host while the sandbox waits for a line on
# its stdin (forcing an OOM kill here takes seconds of reclaim).
mkfifo "$T_TMP/hold"
env HOME="$T_TMP/home" XDG_STATE_HOME="$T_TMP/state" "$RT" --root "$T_ROOT" \
        sandbox run -p "$proj" --preset review -- /bin/sh -c 'read x' <"$T_TMP/hold" >/dev/null 2>&1 &
exec 9>"$T_TMP/hold"
for _ in $(seq 100); do
        id=$("$RT" --root "$T_ROOT" list -q)
        [[ -n $id ]] && [[ $(state_field "$id" status) == running ]] && break
        sleep 0.05
done
pid=$(state_field "$id" pid)
cg() { sed -n "s/^[0-9]*:$1:\(.*\)/\1/p" "/proc/$pid/cgroup"; }
if cgroup_v2_only; then
        t_eq "as root, the review preset's memory limit is on the sandbox's cgroup" $((2 << 30)) \
                "$(cat "/sys/fs/cgroup$(cg "")/memory.max" 2>&1)"
        t_eq "... and its CPU quota (1 CPU)" "100000 100000" "$(cat "/sys/fs/cgroup$(cg "")/cpu.max" 2>&1)"
else
        t_eq "as root, the review preset's memory limit is on the sandbox's cgroup" $((2 << 30)) \
                "$(cat "/sys/fs/cgroup/memory$(cg memory)/memory.limit_in_bytes" 2>&1)"
        t_eq "... and its CPU quota (1 CPU)" "100000 100000" \
                "$(cat "/sys/fs/cgroup/cpu$(cg cpu)/cpu.cfs_quota_us" "/sys/fs/cgroup/cpu$(cg cpu)/cpu.cfs_period_us" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
fi
exec 9>&-
wait

# usbx ARGS... -- CMD...: sandbox run as the user, with credentials in its
# environment; T_RC, T_OUT, T_ERR.
usbx() {
        capture_split as_user env GITHUB_TOKEN=do-not-pass SSH_AUTH_SOCK=/x "$RT" sandbox run -p "$proj" "$@"
}
nothing_left() {
        t_eq "$1: no container left" "" "$(as_user "$RT" list -q 2>&1)"
        t_eq "$1: no bundle left" "" "$(ls -A "$XDG/umwelt/bundles" 2>/dev/null)"
}

usbx -- /bin/true
t_eq "rootless without a delegated cgroup: refused (exit 3)" 3 "$T_RC" "$T_ERR"
t_match "... naming the cgroup to delegate" "not delegated to uid $U .*umwelt-run-$U" "$T_ERR"
t_eq "... in one line" 1 "$(wc -l <<<"$T_ERR")" "$T_ERR"
# The config reached the runtime as a memfd: named for the project, never
# as the /proc/self/fd/N that no longer exists when the line is read.
t_match "... naming the project's composed config" "^umwelt-run: the sandbox config composed for $proj: \.linux\.resources: " "$T_ERR"
t_nomatch "... not a descriptor" "/proc/self/fd/" "$T_ERR"
nothing_left "refused start"

floor 'limits_best_effort = true'
usbx -- /bin/sh -c 'id -u'
t_eq "rootless with a floor allowing best-effort limits: runs" "0 $U" "$T_RC $T_OUT" "$T_ERR"
t_match "... and says the limits are best-effort" "best-effort" "$T_ERR"
floor ""

# Delegation as the host's cgroup version has it (v1: a directory per
# controller the user owns; v2: systemd's user@UID.service).
if t_delegate_cgroups; then
        # In place (direct mode): the made file and .git/config looked at on the host.
        usbx --preset review --workspace direct -- /bin/sh -c '
                id -u; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " "; echo
                grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t" " " | tr "\n" " "; echo
                { ls -A /home; ls -A /root; } 2>/dev/null | wc -l
                env | grep -cE "TOKEN|SSH_AUTH"
                touch "$0/made" && echo ws-ok; touch /usr/x 2>/dev/null || echo root-ro
                echo x >>"$0/.git/config" 2>/dev/null || echo cfg-ro
                python3 -c "$1"' "$proj" "$FORKS"
        t_eq "rootless, delegated: the sandbox starts" 0 "$T_RC" "$T_ERR"
        line() { sed -n "$1p" <<<"$T_OUT"; }
        t_eq "rootless: runs as the user" "$U" "$(line 1)"
        t_eq "rootless: no network interface but lo" "lo " "$(line 2)"
        t_match "rootless: no capability in any set, no_new_privs, seccomp" \
                "CapInh: 0+ CapPrm: 0+ CapEff: 0+ CapBnd: 0+ CapAmb: 0+ NoNewPrivs: 1 Seccomp: 2" "$(line 3)"
        t_eq "rootless: no home directory visible" 0 "$(line 4)"
        t_eq "rootless: no credential in the environment" 0 "$(line 5)"
        t_eq "rootless: workspace writable, / read-only, .git/config read-only" \
                "ws-ok root-ro cfg-ro" "$(line 6) $(line 7) $(line 8)"
        # sh and python3 count: 510 children of 512.
        t_eq "rootless: the pids limit holds inside" 510 "$(line 9)"
        t_eq "rootless: the made file belongs to the user" "$U" "$(stat -c %u "$proj/made")"
        t_eq "rootless: the sandbox's cgroup is gone after" "" \
                "$(find "$T_CG_USER" -mindepth 1 -type d 2>&1)"
        nothing_left "rootless run"
else
        t_skip "rootless with delegation" "the host's cgroups are neither v1 nor pure v2"
fi

# Bad layers above the project: refused by name, nothing started.
refused() {
        local name=$1 want=$2
        usbx -- /bin/sh -c 'echo STARTED'
        t_eq "$name: exit 3" 3 "$T_RC" "$T_ERR"
        t_match "$name: names it" "$want" "$T_ERR"
        t_eq "$name: nothing started" "" "$T_OUT"
}
floor 'limits_best_effort = true'
chown "$U" "$FLOOR"
refused "a floor not owned by root" "$FLOOR"
chown 0 "$FLOOR"
chmod 666 "$FLOOR"
refused "a floor writable by others" "$FLOOR"
chmod 777 /etc/umwelt
chmod 644 "$FLOOR"
refused "a floor in a directory writable by others" "/etc/umwelt"
floor $'limits_best_effort = true\ngrant_roots = "/srv"'
refused "a floor with a wrong type" "$FLOOR:2:15"

floor 'limits_best_effort = true'
mkdir -p "$XDG/.config/umwelt"
chown -R "$U:$G" "$XDG/.config"
printf 'preset = "dev"\ncolour = "blue"\n' >"$XDG/.config/umwelt/config.toml"
refused "a user config with an unknown key" "config.toml:2:1: .*colour"
printf 'grant_roots = ["/etc"]\n' >"$XDG/.config/umwelt/config.toml"
refused "user grant_roots outside the floor's" "config.toml.*/etc"
rm -f "$XDG/.config/umwelt/config.toml"
t_done
