#!/bin/bash
# Namespaces: each one new, shared with the host when absent from the config,
# joined by path, a user namespace with id mappings, a time namespace with
# offsets.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

b=$T_TMP/bundle
make_bundle "$b"
ALL='["pid", "network", "ipc", "uts", "mount", "cgroup"]'
cfg_set "$b" "c['linux']['namespaces'] = [{'type': t} for t in $ALL]"

# ns_of OUTPUT NAME: the inode `probe ns` printed for NAME.
ns_of() { awk -v n="$2" '$1 == n { print $2 }' <<<"$1"; }

declare -A kname=([pid]=pid [network]=net [ipc]=ipc [uts]=uts [mount]=mnt [cgroup]=cgroup [user]=user [time]=time)

run_in "$b" /bin/probe ns
t_eq "probe ns runs" 0 "$T_RC" "$T_ERR"
nsout=$T_OUT
for t in pid network ipc uts mount cgroup; do
        k=${kname[$t]}
        inside=$(ns_of "$nsout" "$k")
        if [[ -n $inside && $inside != none && $inside != "$(host_ns "$k")" ]]; then
                t_ok "new $t namespace differs from the host's"
        else
                t_fail "new $t namespace differs from the host's" "inside: $inside host: $(host_ns "$k")" "$nsout"
        fi
done
t_eq "no user namespace requested: the host's" "$(host_ns user)" "$(ns_of "$nsout" user)"

# Without a namespace entry the container shares the runtime's.
for t in ipc uts network cgroup; do
        cfg_set "$b" "c['linux']['namespaces'] = [{'type': x} for x in $ALL if x != '$t']
if '$t' == 'uts': c.pop('hostname', None)"
        run_in "$b" /bin/probe ns
        t_eq "absent $t namespace is the host's" "$(host_ns "${kname[$t]}")" "$(ns_of "$T_OUT" "${kname[$t]}")" "$T_ERR"
done
cfg_set "$b" "c['linux']['namespaces'] = [{'type': x} for x in $ALL if x != 'uts']
c['hostname'] = 'not-the-host'"
run_in "$b" /bin/hostname
t_eq "a hostname without a uts namespace is refused" "3 $(hostname)" "$T_RC $(hostname)" "$T_OUT" "$T_ERR"
# The init fails after GO, often before create's next message: its error
# (exit 3) is what create reports, never the broken pipe (exit 1).
codes=
for i in $(seq 20); do
        run_in "$b" /bin/hostname
        codes+=$T_RC
done
t_eq "the init's refusal is create's exit code every time" "$(printf '3%.0s' $(seq 20))" "$codes" "$T_ERR"
cfg_set "$b" "c['linux']['namespaces'] = [{'type': t} for t in $ALL]
c['hostname'] = 'ns-test'"

# A new network namespace has lo up (podman --network none: 127.0.0.1).
run_in "$b" /bin/cat /sys/class/net/lo/flags
t_eq "lo is up in a new network namespace" 0x9 "$T_OUT" "$T_ERR"

# pid namespace: the process is pid 1 and sees only its own processes.
run_in "$b" /bin/sh -c 'echo $$; set -- /proc/[0-9]*; echo $#'
t_eq "process is pid 1 in a new pid namespace and alone" "1 1" "$(echo $T_OUT)" "$T_ERR"

# uts namespace: hostname set inside does not reach the host.
host_before=$(hostname)
cfg_set "$b" 'for k in ("bounding", "effective", "permitted"): c["process"]["capabilities"][k].append("CAP_SYS_ADMIN")'
run_in "$b" /bin/sh -c 'hostname changed-inside && hostname'
cfg_set "$b" 'for k in ("bounding", "effective", "permitted"): c["process"]["capabilities"][k].remove("CAP_SYS_ADMIN")'
t_eq "hostname changes inside the uts namespace" changed-inside "$T_OUT" "$T_ERR"
t_eq "host hostname untouched" "$host_before" "$(hostname)"

# ---------------------------------------------------------------- join by path

a=$T_TMP/bundle-a
make_bundle "$a"
cfg_set "$a" "c['linux']['namespaces'] = [{'type': t} for t in $ALL]
c['hostname'] = 'first'
c['process']['args'] = ['/bin/probe', 'sleep', '1000']"
new_id
ida=$T_LAST_ID
rt run -d --bundle "$a" "$ida" >/dev/null 2>&1 </dev/null
pida=$(state_field "$ida" pid)
if [[ -z $pida ]]; then
        t_fail "first container runs" "$(rt state "$ida" 2>&1)"
else
        t_ok "first container runs"
        cfg_set "$b" "c['linux']['namespaces'] = [{'type': t} for t in $ALL if t not in ('network', 'uts', 'ipc')]
c['linux']['namespaces'] += [{'type': 'network', 'path': '/proc/$pida/ns/net'},
                             {'type': 'uts', 'path': '/proc/$pida/ns/uts'},
                             {'type': 'ipc', 'path': '/proc/$pida/ns/ipc'}]
c.pop('hostname', None)"
        run_in "$b" /bin/probe ns
        t_eq "joined network namespace by path" "$(stat -L -c %i "/proc/$pida/ns/net")" "$(ns_of "$T_OUT" net)" "$T_ERR"
        t_eq "joined uts namespace by path" "$(stat -L -c %i "/proc/$pida/ns/uts")" "$(ns_of "$T_OUT" uts)" "$T_ERR"
        t_eq "joined ipc namespace by path" "$(stat -L -c %i "/proc/$pida/ns/ipc")" "$(ns_of "$T_OUT" ipc)" "$T_ERR"
        t_eq "pid namespace still new" no "$([[ $(ns_of "$T_OUT" pid) == "$(stat -L -c %i "/proc/$pida/ns/pid")" ]] && echo yes || echo no)"
        run_in "$b" /bin/hostname
        t_eq "joined uts namespace has the first container's hostname" first "$T_OUT" "$T_ERR"
        # CRI-O sets the pod's name on every container that joins its uts.
        cfg_set "$b" "c['hostname'] = 'pod-name'"
        run_in "$b" /bin/hostname
        t_eq "hostname set in a uts namespace joined by path" "0 pod-name" "$T_RC $T_OUT" "$T_ERR"
        cfg_set "$b" "c.pop('hostname', None)"

        cfg_set "$b" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'network']
c['linux']['namespaces'].append({'type': 'network', 'path': '/proc/$pida/ns/uts'})"
        run_in "$b" /bin/probe ns
        t_eq "joining a namespace path of the wrong type fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo "ran: $T_OUT")"
        cfg_set "$b" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'network']
c['linux']['namespaces'].append({'type': 'network', 'path': '$T_TMP/not-a-namespace'})"
        touch "$T_TMP/not-a-namespace"
        run_in "$b" /bin/probe ns
        t_eq "joining a path that is not a namespace fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo "ran: $T_OUT")"
        # The user namespace is joined at start: its type is checked at create.
        cfg_set "$b" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'network']
c['linux']['namespaces'] += [{'type': 'network'}, {'type': 'user', 'path': '/proc/$pida/ns/uts'}]"
        new_id
        capture_split rt create --bundle "$b" "$T_LAST_ID"
        t_eq "create refuses a user namespace path of another type" 3 "$T_RC" "$T_ERR"
        t_match "the refusal names the path" "/proc/$pida/ns/uts is not a user namespace" "$T_ERR"
        rt delete -f "$T_LAST_ID" >/dev/null 2>&1
        cfg_set "$b" "c['linux']['namespaces'] = [n for n in c['linux']['namespaces'] if n['type'] != 'user']"
fi
rt delete -f "$ida" >/dev/null 2>&1
cfg_set "$b" "c['linux']['namespaces'] = [{'type': t} for t in $ALL]"

# ---------------------------------------------------------------- user namespace

u=$T_TMP/bundle-user
make_bundle "$u"
mkdir -p "$T_TMP/share" "$u/rootfs/share"
chown 100000:100000 "$T_TMP/share"
cfg_set "$u" "c['linux']['namespaces'] = [{'type': t} for t in $ALL + ['user']]
c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]
c['root']['readonly'] = True
for k in ('bounding', 'effective', 'permitted'): c['process']['capabilities'][k].append('CAP_CHOWN')
c['mounts'] = [m for m in c['mounts'] if m['destination'] not in ('/sys', '/sys/fs/cgroup')]
add_mount('/share', 'bind', '$T_TMP/share', ['rbind', 'rw'])"
run_in "$u" /bin/sh -c 'probe ids; touch /share/made-inside; mkdir /share/dir-inside; chown 1000:2000 /share/dir-inside; cat /proc/self/uid_map /proc/self/gid_map'
t_eq "user namespace container runs" 0 "$T_RC" "$T_ERR"
t_eq "uid 0 inside" "uid=0 gid=0 euid=0 egid=0" "$(head -1 <<<"$T_OUT" | cut -d' ' -f1-4)" "$T_OUT"
t_eq "uid_map inside" "0 100000 65536" "$(sed -n 2p <<<"$T_OUT" | tr -s ' ' | sed 's/^ //')"
t_eq "gid_map inside" "0 100000 65536" "$(sed -n 3p <<<"$T_OUT" | tr -s ' ' | sed 's/^ //')"
t_eq "file made by uid 0 inside is owned by 100000 outside" "100000:100000" \
        "$(stat -c %u:%g "$T_TMP/share/made-inside" 2>&1)"
t_eq "chown 1000:2000 inside is 101000:102000 outside" "101000:102000" \
        "$(stat -c %u:%g "$T_TMP/share/dir-inside" 2>&1)"
run_in "$u" /bin/probe ns
t_eq "user namespace is new" yes "$([[ -n $(ns_of "$T_OUT" user) && $(ns_of "$T_OUT" user) != "$(host_ns user)" ]] && echo yes || echo no)" "$T_OUT" "$T_ERR"
run_in "$u" /bin/sh -c 'stat -c %u:%g /bin/busybox'
t_eq "host root's files show as the overflow id" "65534:65534" "$T_OUT" "$T_ERR"
run_in "$u" /bin/probe caps
t_eq "caps in the user namespace follow the config" "$(cfg_get "$u" 'len(c["process"]["capabilities"]["effective"]) > 0')" \
        "$([[ $(awk '$1 == "CapEff" { print $2 }' <<<"$T_OUT") != 0000000000000000 ]] && echo True || echo False)" "$T_OUT"
cfg_set "$u" "c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 1000}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 1000}]"
run_in "$u" /bin/sh -c 'mkdir /share/d2 && chown 5000 /share/d2; echo $?'
t_eq "chown to an unmapped uid fails inside" 1 "$(tail -1 <<<"$T_OUT")" "$T_ERR"

# ---------------------------------------------------------------- idmapped mounts

# The OCI "idmap"/"ridmap" mount options (podman --userns with :idmap,
# Kubernetes hostUsers: false): the source's host-root files show as the
# container's 0 and what the container's 0 writes is host root's, from a
# source below a directory only the host's root may search.
mkdir -m 700 "$T_TMP/rootonly"
mkdir -p "$T_TMP/rootonly/vol/sub" "$u/rootfs/vol"
(umask 077 && echo root-file >"$T_TMP/rootonly/vol/secret")
cfg_set "$u" "c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': 100000, 'size': 65536}]
add_mount('/vol', 'bind', '$T_TMP/rootonly/vol', ['rbind', 'rw', 'idmap'])"
run_in "$u" /bin/sh -c 'stat -c %u:%g /vol/secret; cat /vol/secret; echo x >/vol/made; mkdir /vol/sub/d'
t_eq "idmap: a host-root file in the bind shows as the container's 0 and is readable" \
        "0:0 root-file" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "... what the container's 0 makes there is the host's 0" "0:0 0:0" \
        "$(stat -c %u:%g "$T_TMP/rootonly/vol/made" "$T_TMP/rootonly/vol/sub/d" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
t_eq "features: idmap and ridmap among the mount options, idmap mounts enabled" "True True True" \
        "$("$RT" features | "$PY" -c 'import json, sys; j = json.load(sys.stdin); o = j["mountOptions"]
print("idmap" in o, "ridmap" in o, j["linux"]["mountExtensions"]["idmap"]["enabled"])' 2>&1)"
cfg_set "$u" "c['mounts'][-1]['uidMappings'] = c['linux']['uidMappings']
c['mounts'][-1]['gidMappings'] = c['linux']['gidMappings']
c['mounts'][-1]['options'] = ['rbind', 'ro', 'ridmap']"
run_in "$u" /bin/sh -c 'stat -c %u:%g /vol/secret; touch /vol/ro 2>/dev/null || echo ro'
t_eq "ridmap with mount uidMappings equal to the container's (podman's form), read-only" \
        "0:0 ro" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
# A mount's own mapping, other than the container's: through a user
# namespace made for that mount (as crun does): disk 0 shows as what its
# mapping gives 0, host 100005 here, which the container sees as its 5.
# owner_through_own_map BUNDLE HOSTID: the last mount mapped 0 -> HOSTID
# (10 ids) for uids and gids; what the container sees as /vol/secret's owner.
owner_through_own_map() {
        cfg_set "$1" "m = [{'containerID': 0, 'hostID': $2, 'size': 10}]
c['mounts'][-1]['uidMappings'] = m
c['mounts'][-1]['gidMappings'] = m"
        run_in "$1" /bin/sh -c 'stat -c %u:%g /vol/secret'
}
owner_through_own_map "$u" 100005
t_eq "a mount's own mapping other than the container's: its files show through it" "5:5" \
        "$T_OUT" "$T_ERR"
cfg_set "$u" "del c['mounts'][-1]['gidMappings']"
run_in "$u" /bin/true
t_eq "a mount's own mapping with uidMappings alone: refused (exit 3)" 3 "$T_RC" "$T_ERR"
t_match "... naming the mount" "mounts\[/vol\]: an idmapped mount's own mapping needs both" "$T_ERR"
cfg_set "$u" "del c['mounts'][-1]['uidMappings']
c['mounts'][-1]['options'] = ['idmap=uids=0-1-1']"
run_in "$u" /bin/true
t_eq "idmap with a value: refused (exit 3)" 3 "$T_RC" "$T_ERR"
cfg_set "$u" "c['mounts'][-1] = {'destination': '/vol', 'type': 'tmpfs', 'source': 'tmpfs', 'options': ['idmap']}"
run_in "$u" /bin/true
t_eq "idmap on a mount that is not a bind: refused (exit 3)" 3 "$T_RC" "$T_ERR"
cfg_set "$b" "add_mount('/vol', 'bind', '$T_TMP/rootonly/vol', ['rbind', 'idmap'])"
mkdir -p "$b/rootfs/vol"
run_in "$b" /bin/true
t_eq "idmap without a user namespace or a mapping of its own: refused (exit 3)" 3 "$T_RC" "$T_ERR"
# Without a user namespace the mount's own mapping is the one: host root's
# file shows as 1000 (crun's mount-idmapped-mounts-without-userns).
owner_through_own_map "$b" 1000
t_eq "idmap with its own mapping and no user namespace: host 0 shows as 1000" "1000:1000" \
        "$T_OUT" "$T_ERR"
cfg_set "$b" "c['mounts'] = c['mounts'][:-1]"

# A plain bind (no idmap) of a source below a directory only the host's
# root may search, into a container with a user namespace (podman's named
# volumes): umwelt-run clones it, the container's ids need not reach it,
# and without CAP_SYS_ADMIN its read-only flag is not the container's to
# lift (with it, a user namespace's root may remount its binds, as under
# runc and crun).
cfg_set "$u" "c['mounts'][-1] = {'destination': '/vol', 'type': 'bind', 'source': '$T_TMP/rootonly/vol', 'options': ['rbind', 'ro']}"
run_in "$u" /bin/sh -c 'ls /vol | tr "\n" " "; mount -o remount,rw,bind /vol 2>/dev/null || echo kept-ro'
t_eq "userns: a bind below a root-only directory is there, read-only" \
        "made secret sub kept-ro" "$(tr '\n' ' ' <<<"$T_OUT" | tr -s ' ' | sed 's/ $//')" "$T_ERR"
cfg_set "$u" "c['mounts'] = c['mounts'][:-1]"

# ---------------------------------------------------------------- time namespace

if [[ -e /proc/self/ns/time ]]; then
        cfg_set "$b" "c['linux']['namespaces'] = [{'type': t} for t in $ALL + ['time']]
c['linux']['timeOffsets'] = {'monotonic': {'secs': 864000, 'nanosecs': 0}, 'boottime': {'secs': 1728000, 'nanosecs': 0}}"
        run_in "$b" /bin/probe time
        mono=$(awk '{ print $2 }' <<<"$T_OUT")
        boot=$(awk '{ print $4 }' <<<"$T_OUT")
        read -r hm hb < <("$PROBE" time | awk '{ print $2, $4 }')
        d1=$((mono - hm))
        d2=$((boot - hb))
        # The host's clocks are read after the container's, in whole seconds: the
        # difference may come out a second or two short of the offset.
        t_match "monotonic clock offset by 10 days" '^(86399[89]|86400[0-5])$' "$d1" "$T_OUT" "$T_ERR"
        t_match "boottime clock offset by 20 days" '^(172799[89]|172800[0-5])$' "$d2" "$T_OUT"
        run_in "$b" /bin/probe ns
        t_eq "time namespace is new" yes "$([[ $T_RC -eq 0 && $(ns_of "$T_OUT" time) != "$(host_ns time)" ]] && echo yes || echo no)" "$T_OUT"
else
        t_skip "time namespace offsets" "kernel has no time namespaces"
fi

t_done
