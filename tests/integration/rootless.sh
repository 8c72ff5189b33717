#!/bin/bash
# Rootless: an unprivileged user runs a container from `spec --rootless`
# with a user namespace mapping only its own uid and gid.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

t_test_user
xdg=$XDG
rroot=$xdg/state
rb=$T_TMP/rootless-bundle
mkdir "$rb"
cp -a "$T_TMP/rootfs-template" "$rb/rootfs"
mkdir -p "$T_TMP/shared"
chown "$U:$G" "$rb" "$T_TMP/shared"

# urt ARGS...: the runtime as the user, with a --root the user owns.
urt() { as_user "$RT" --root "$rroot" "$@"; }
T_EXTRA_CLEANUP='for i in $(urt list -q 2>/dev/null); do urt delete -f "$i" >/dev/null 2>&1; done'

capture as_user sh -c "cd '$rb' && '$RT' spec --rootless"
t_eq "spec --rootless as the user" 0 "$T_RC" "$T_OUT"
t_eq "spec --rootless asks for a user namespace" True \
        "$(cfg_get "$rb" '"user" in [n["type"] for n in c["linux"]["namespaces"]]')"
cfg_set "$rb" "c['process']['terminal'] = False
c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': $U, 'size': 1}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': $G, 'size': 1}]
add_mount('/shared', 'bind', '$T_TMP/shared', ['rbind', 'rw'])"
mkdir -p "$rb/rootfs/shared"
chown "$U:$G" "$rb/config.json"

# urun ARGS...: run as the user; T_RC, T_OUT, T_ERR.
urun() {
        cfg_args "$rb" "$@"
        new_id
        T_CAP=$((T_CAP + 1))
        urt run --bundle "$rb" "$T_LAST_ID" >"$T_TMP/out.$T_CAP" 2>"$T_TMP/err.$T_CAP" </dev/null
        T_RC=$?
        T_OUT=$(cat "$T_TMP/out.$T_CAP")
        T_ERR=$(cat "$T_TMP/err.$T_CAP")
}

urun /bin/sh -c 'probe ids; cat /proc/self/uid_map /proc/self/gid_map; touch /shared/made-inside'
t_eq "rootless container runs" 0 "$T_RC" "$T_ERR"
t_eq "rootless: uid 0 inside" "uid=0 gid=0 euid=0 egid=0" "$(sed -n 1p <<<"$T_OUT" | cut -d' ' -f1-4)" "$T_OUT"
t_eq "rootless: uid_map maps 0 to the user" "0 $U 1" "$(sed -n 2p <<<"$T_OUT" | tr -s ' ' | sed 's/^ //')"
t_eq "rootless: gid_map maps 0 to the user's group" "0 $G 1" "$(sed -n 3p <<<"$T_OUT" | tr -s ' ' | sed 's/^ //')"
t_eq "rootless: a file made inside belongs to the user" "$U:$G" "$(stat -c %u:%g "$T_TMP/shared/made-inside" 2>&1)"

urun /bin/probe ns
for t in user:user network:net pid:pid mount:mnt ipc:ipc uts:uts; do
        inside=$(awk -v n="${t#*:}" '$1 == n { print $2 }' <<<"$T_OUT")
        want=$(cfg_get "$rb" "'new' if '${t%%:*}' in [n['type'] for n in c['linux']['namespaces'] if 'path' not in n] else 'host'")
        t_eq "rootless: ${t%%:*} namespace as the spec asks ($want)" "$want" \
                "$([[ -z $inside ]] && echo missing || { [[ $inside != "$(host_ns "${t#*:}")" ]] && echo new || echo host; })" "$T_OUT" "$T_ERR"
done

urun /bin/probe exit 9
t_eq "rootless: run returns the exit status" 9 "$T_RC" "$T_ERR"

cfg_args "$rb" /bin/probe sleep 1000
new_id
id=$T_LAST_ID
urt run -d --bundle "$rb" "$id" >/dev/null 2>&1 </dev/null
st=$(urt state "$id" 2>&1)
pid=$(json_get "$st" 'j["pid"]')
t_eq "rootless: state says running" running "$(json_get "$st" 'j["status"]')" "$st"
t_eq "rootless: the process runs as the user on the host" "$U" "$(awk '$1 == "Uid:" { print $2 }' "/proc/$pid/status" 2>/dev/null)"
t_eq "rootless: the state dir belongs to the user" "$U" "$(stat -c %u "$rroot" 2>&1)"
capture urt exec "$id" /bin/probe ids
t_eq "rootless: exec works" "uid=0 gid=0" "$(cut -d' ' -f1-2 <<<"$T_OUT")"
t_match "rootless: list shows it" "$id" "$(urt list -q 2>&1)"
t_run "rootless: kill" urt kill "$id" KILL
wait_status_u() { local n=50; while ((n-- > 0)); do [[ $(json_get "$(urt state "$id" 2>/dev/null)" 'j["status"]') == stopped ]] && return 0; sleep 0.1; done; return 1; }
wait_status_u
t_run "rootless: delete" urt delete "$id"
t_eq "rootless: nothing left" "" "$(urt list -q 2>&1)"

# The user cannot reach root's containers.
rootb=$T_TMP/root-bundle
make_bundle "$rootb"
cfg_set "$rootb" 'c["process"]["args"] = ["/bin/probe", "sleep", "1000"]'
new_id
rid=$T_LAST_ID
rt run -d --bundle "$rootb" "$rid" >/dev/null 2>&1 </dev/null
capture as_user "$RT" --root "$T_ROOT" kill "$rid" KILL
t_eq "rootless: the user cannot kill root's container" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_OUT"
sleep 0.2
t_eq "rootless: root's container still runs" running "$(state_field "$rid" status)"
rt delete -f "$rid" >/dev/null 2>&1

# A limit needs a cgroup delegated to the user. Nothing is delegated here: a
# memory limit is refused in one line naming the controller and the fix, and
# nothing is left; with --cgroup-manager disabled the container starts.
cfg_set "$rb" "c['linux']['resources'] = {'memory': {'limit': 67108864}}"
cfg_args "$rb" /bin/probe exit 0
new_id
capture urt create --bundle "$rb" "$T_LAST_ID"
t_match "rootless: a memory limit with nothing delegated is refused (exit 3, one line)" \
        "^3 [^
]*$rb/config.json: .linux.resources: [^
]*controller 'memory'[^
]*not delegated to uid $U[^
]*Delegate=[^
]*--cgroup-manager disabled[^
]*$" "$T_RC $T_OUT"
t_eq "rootless: the refused create leaves no state and no cgroup" "" \
        "$(urt list -q 2>&1; ls -A "$rroot" 2>/dev/null; find /sys/fs/cgroup -path "*$T_LAST_ID*" 2>/dev/null)"
new_id
capture urt --cgroup-manager disabled run --bundle "$rb" "$T_LAST_ID"
t_eq "rootless: with --cgroup-manager disabled it starts (without the limit)" 0 "$T_RC" "$T_OUT"
cfg_set "$rb" "c['linux'].pop('resources', None)"

# With a cgroup delegated as the host's version does it (v2: systemd's
# user@UID.service, the user's commands in a leaf of it): the user's limits
# hold, in a cgroup below the delegated one, removed by delete.
if t_delegate_cgroups; then
        cfg_set "$rb" "c['linux']['resources'] = {'memory': {'limit': 67108864}, 'pids': {'limit': 20}}"
        urun /bin/probe forks 100
        t_match "rootless, delegated: a fork loop stops at the pids limit of 20" '^forked 1[0-9]$' "$T_OUT" "$T_ERR"
        cfg_args "$rb" /bin/probe sleep 1000
        new_id
        id=$T_LAST_ID
        urt run -d --bundle "$rb" "$id" >/dev/null 2>&1 </dev/null
        pid=$(json_get "$(urt state "$id" 2>/dev/null)" 'j["pid"]')
        if cgroup_v2_only; then
                t_eq "rootless, delegated: the init is in a cgroup below the delegated one" \
                        "0::${T_CG_USER#/sys/fs/cgroup}/$id" "$(grep '^0::' "/proc/$pid/cgroup" 2>&1)"
                t_eq "rootless, delegated: its memory.max is the limit" 67108864 \
                        "$(cat "$T_CG_USER/$id/memory.max" 2>&1)"
        else
                t_eq "rootless, delegated: its memory limit is on the delegated hierarchy" 67108864 \
                        "$(cat "/sys/fs/cgroup/memory/umwelt-run-$U/$id/memory.limit_in_bytes" 2>&1)"
        fi
        urt kill "$id" KILL >/dev/null 2>&1
        wait_status_u
        t_run "rootless, delegated: delete" urt delete "$id"
        t_eq "rootless, delegated: delete removes its cgroup" "" \
                "$(find /sys/fs/cgroup -path "*$id*" 2>/dev/null)"
        cfg_set "$rb" "c['linux'].pop('resources', None)"
else
        t_skip "rootless with a delegated cgroup" "the host's cgroups are neither v1 nor pure v2"
fi

t_done
