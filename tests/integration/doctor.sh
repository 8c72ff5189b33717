#!/bin/bash
# umwelt-run doctor: the host checks as root and as the unprivileged user the
# set-up makes, --json, a bad floor named, --deep proving the walls from
# inside a throwaway sandbox and leaving nothing behind, and the inside
# checks failing where the walls are missing (run on the host).
T_NAME=doctor
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user

export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
mkdir -p "$HOME" "$XDG_STATE_HOME"

t_keep_floor

CHECKS=("user namespaces" seccomp nf_tables policy cgroup)
INSIDE=(network home capabilities no_new_privs seccomp workspace "read-only root" environment
        "host sockets")

# line NAME: the report's line for check NAME in T_OUT.
line() { grep -E "^[a-zA-Z]+ +$1: " <<<"$T_OUT" | head -1; }

capture_split "$RT" --root "$T_ROOT" doctor
t_eq "doctor as root: exit 0" 0 "$T_RC" "$T_OUT" "$T_ERR"
for c in "${CHECKS[@]}"; do
        t_match "doctor as root: $c checked" "^(ok|optional) " "$(line "$c")" "$T_OUT"
done
t_match "doctor as root: the verdict" "everything a sandbox needs is here" "$T_OUT"

capture_split "$RT" --root "$T_ROOT" doctor --json
t_eq "doctor --json: one JSON document of checks" "ok True 0" "$("$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
fields = all(isinstance(c["name"], str) and isinstance(c["ok"], bool) and isinstance(c["needed"], bool)
             and isinstance(c["detail"], str) and (c["fix"] is None or isinstance(c["fix"], str))
             for c in d["checks"])
names = {c["name"] for c in d["checks"]}
print("ok" if fields and names >= set(sys.argv[1:]) else "bad", d["ok"], len(d) - 2)
' "${CHECKS[@]}" <<<"$T_OUT" 2>&1)" "$T_OUT"

capture_split "$RT" --root "$T_ROOT" doctor --bogus
t_eq "doctor --bogus: exit 2" 2 "$T_RC" "$T_ERR"
capture_split "$RT" --root "$T_ROOT" doctor --deep --inside
t_eq "doctor --deep --inside: exit 2" 2 "$T_RC" "$T_ERR"
capture_split "$RT" --root "$T_ROOT" doctor --workspace /tmp
t_eq "doctor --workspace without --inside: exit 2" 2 "$T_RC" "$T_ERR"

# A floor that is not root's alone is refused by sandbox run, so doctor
# fails naming it; so does one that does not parse.
bad_floor() {
        local name=$1 text=$2 owner=$3 mode=$4 want=$5
        floor "$text"
        chown "$owner" "$FLOOR"
        chmod "$mode" "$FLOOR"
        capture_split "$RT" --root "$T_ROOT" doctor
        restore_floor
        t_eq "$name: doctor exits 1" 1 "$T_RC" "$T_OUT" "$T_ERR"
        t_match "$name: the policy line names the floor" "^MISSING +policy: .*$want" "$(line policy)" "$T_OUT"
        t_match "$name: and says the fix" "fix: " "$(grep -A1 '^MISSING  *policy' <<<"$T_OUT")"
}
bad_floor "a floor owned by the user" 'egress = false' "$U:$G" 644 "$FLOOR: owned by uid $U"
bad_floor "a floor writable by others" 'egress = false' 0:0 666 "$FLOOR: writable by others"
bad_floor "a floor that does not parse" 'egress = maybe' 0:0 644 "$FLOOR:1:"

# --deep as root: every wall from inside, and nothing left behind.
mkdir -m 700 "$T_TMP/tmpdir"
bundles_before=$(ls -A /run/umwelt/bundles 2>/dev/null | grep -c doctor)
capture_split env TMPDIR="$T_TMP/tmpdir" "$RT" --root "$T_ROOT" doctor --deep
t_eq "doctor --deep as root: exit 0" 0 "$T_RC" "$T_OUT" "$T_ERR"
for c in "${INSIDE[@]}"; do
        t_match "doctor --deep as root: inside, $c" "^ok +inside: $c: " "$(line "inside: $c")" "$T_OUT"
done
t_match "... only lo" "interfaces: lo$" "$(line "inside: network")"
t_match "... seccomp refuses unshare with EPERM" "mode 2 .*Operation not permitted" "$(line "inside: seccomp")"
t_eq "... no temporary directory left" "" "$(ls -A "$T_TMP/tmpdir")"
t_eq "... no state left under the runtime root (the seccomp cache stays)" "" "$(ls -A "$T_ROOT" | grep -vx .seccomp)"
t_eq "... no audit log left" "" "$(ls -A "$XDG_STATE_HOME")"
t_eq "... no bundle left" "$bundles_before" "$(ls -A /run/umwelt/bundles 2>/dev/null | grep -c doctor)"
t_eq "... no process left" "" "$(pgrep -f -- 'doctor --inside')"

# Root through sudo: the sandbox runs as the caller, in a workspace of theirs.
capture_split env TMPDIR="$T_TMP/tmpdir" SUDO_UID="$U" SUDO_GID="$G" "$RT" --root "$T_ROOT" doctor --deep
t_eq "doctor --deep through sudo: exit 0" 0 "$T_RC" "$T_OUT" "$T_ERR"
t_match "... user namespaces probed as the caller" "^ok +user namespaces: uid $U " "$(line "user namespaces")"
t_eq "... no temporary directory left" "" "$(ls -A "$T_TMP/tmpdir")"
t_eq "... no state left under the runtime root (the seccomp cache stays)" "" "$(ls -A "$T_ROOT" | grep -vx .seccomp)"

capture_split env TMPDIR="$T_TMP/tmpdir" "$RT" --root "$T_ROOT" doctor --deep --json
t_eq "doctor --deep --json: the inside checks, all ok" "9 True" "$("$PY" -c '
import json, sys
d = json.loads(sys.stdin.read())
inside = [c for c in d["checks"] if c["name"].startswith("inside: ")]
print(len(inside), all(c["ok"] for c in inside) and d["ok"])' <<<"$T_OUT" 2>&1)" "$T_OUT"

# The inside checks fail where the walls are missing: here on the host.
"$PY" -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(4); time.sleep(60)' \
        "$T_TMP/host.sock" &
listener=$!
for _ in $(seq 50); do [[ -S $T_TMP/host.sock ]] && break || sleep 0.1; done
capture_split env -i PATH=/usr/bin:/bin HOME="$HOME" GITHUB_TOKEN=do-not-pass \
        "$RT" --root "$T_ROOT" doctor --inside --workspace /proc
kill "$listener"
wait "$listener" 2>/dev/null
t_eq "doctor --inside on the host: exit 1" 1 "$T_RC" "$T_OUT" "$T_ERR"
t_match "... reports root's capabilities" "^MISSING +capabilities: .*CapEff:" "$(line capabilities)" "$T_OUT"
t_match "... no no_new_privs" "^MISSING +no_new_privs: not set" "$(line no_new_privs)"
t_match "... no seccomp filter, unshare allowed" "^MISSING +seccomp: mode 0 .*allowed" "$(line seccomp)"
t_match "... a writable /" "^MISSING +read-only root: / writable" "$(line "read-only root")"
t_match "... the token in the environment" "^MISSING +environment: .*GITHUB_TOKEN" "$(line environment)"
t_match "... a HOME that is no fresh tmpfs" "^MISSING +home: .*not a fresh tmpfs" "$(line home)"
t_match "... a workspace it cannot write" "^MISSING +workspace: /proc: " "$(line workspace)"
t_match "... a host socket that takes a connection" "^MISSING +host sockets: reachable .*$T_TMP/host.sock" \
        "$(line "host sockets")"
if [[ $(ls /sys/class/net | wc -l) -gt 1 ]]; then
        t_match "... the host's interfaces" "^MISSING +network: interfaces: .*expected lo alone" "$(line network)"
else
        t_skip "... the host's interfaces" "this host has lo alone"
fi

# As the unprivileged user: the same, with its limits in a cgroup delegated
# to it as the host's cgroup version does it; without one doctor names the
# cgroup.
mkdir -m 700 "$T_TMP/utmp"
chown "$U:$G" "$T_TMP/utmp"
capture_split as_user "$RT" doctor
if [[ $T_RC -ne 0 ]]; then
        t_match "as the user without a delegated cgroup: the cgroup is named" \
                "^MISSING +cgroup: .*not delegated to uid $U" "$(line cgroup)" "$T_OUT"
        t_match "... with its fix" "Delegate=yes.*limits_best_effort" "$(grep -A1 '^MISSING  *cgroup' <<<"$T_OUT")"
        t_eq "... and nothing else is missing" 1 "$(grep -c '^MISSING' <<<"$T_OUT")" "$T_OUT"
else
        t_skip "as the user without a delegated cgroup" "a cgroup is delegated to uid $U already"
fi
capture_split as_user "$RT" --cgroup-manager disabled doctor
t_eq "as the user with --cgroup-manager disabled: exit 0" 0 "$T_RC" "$T_OUT" "$T_ERR"

if t_delegate_cgroups; then
        capture_split as_user "$RT" doctor
        t_eq "doctor as the user: exit 0" 0 "$T_RC" "$T_OUT" "$T_ERR"
        for c in "${CHECKS[@]}"; do
                t_match "doctor as the user: $c" "^(ok|optional) " "$(line "$c")" "$T_OUT"
        done
        capture_split as_user env TMPDIR="$T_TMP/utmp" "$RT" doctor --deep
        t_eq "doctor --deep as the user: exit 0" 0 "$T_RC" "$T_OUT" "$T_ERR"
        for c in "${INSIDE[@]}"; do
                t_match "doctor --deep as the user: inside, $c" "^ok +inside: $c: " "$(line "inside: $c")" "$T_OUT"
        done
        t_match "... the workspace was the user's" "^ok +inside: workspace: $T_TMP/utmp/umwelt-doctor-" "$(line "inside: workspace")"
        t_eq "... no temporary directory left" "" "$(ls -A "$T_TMP/utmp")"
        t_eq "... no container left" "" "$(as_user "$RT" list -q 2>&1)"
        t_eq "... no state left under the runtime root (the seccomp cache stays)" "" "$(ls -A "$XDG/umwelt-run" 2>/dev/null | grep -vx .seccomp)"
        t_eq "... no bundle left" "" "$(ls -A "$XDG/umwelt/bundles" 2>/dev/null)"
        t_eq "... no audit log left" "" "$(ls -A "$XDG/.local/state" 2>/dev/null)"
        if cgroup_v2_only; then
                t_eq "... no cgroup left" "" "$(find "$T_CG_USER" -mindepth 1 -type d 2>/dev/null)"
        else
                t_eq "... no cgroup left" "" "$(find "${T_DELEGATED[@]}" -mindepth 1 -type d)"
        fi
        # Only this test's: other tests may run as the same user meanwhile.
        t_eq "... no process left" "" "$(pgrep -u "$U" -f -- 'doctor --inside|umwelt-doctor-')"
else
        t_skip "doctor as the user with a delegated cgroup" "the host's cgroups are neither v1 nor pure v2"
fi
t_done
