#!/bin/bash
# linux.sysctl never reaches the host: a key is written only through a
# namespace of the container's own. A key whose namespace the container
# shares with the caller (the IPC, network or UTS one, absent or joined by
# the caller's own path), or that no namespace holds (vm.*), is refused at
# create with exit 3 and one line naming the key, and the host's value stays.
# As root (who could write the host's value) and as the unprivileged user.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

# The keys the cases try, and the host's values, put back at exit should a
# runtime under test write them.
keys="fs.mqueue.queues_max net.core.somaxconn kernel.domainname vm.swappiness kernel.msgmax"
declare -A host
for k in $keys; do host[$k]=$(sysctl -n "$k"); done
T_EXTRA_CLEANUP='for k in $keys; do [[ $(sysctl -n "$k") == "${host[$k]}" ]] || sysctl -q -w "$k=${host[$k]}"; done'

# other KEY: a value the host does not have.
other() {
        case $1 in
        kernel.domainname) echo "umwelt-sysctl-$$" ;;
        *) echo $((${host[$1]%% *} + 7)) ;;
        esac
}

# refused WHO NAME KEY WORD CFG-PYTHON: create with only KEY set (after
# CFG-PYTHON) is refused with exit 3 and one line naming KEY and WORD, the
# host's value is unchanged, and no state is left.
refused() {
        local who=$1 name=$2 key=$3 word=$4 code=$5 b=$T_TMP/$1-bundle
        cfg_set "$b" "$code; c['linux']['sysctl'] = {'$key': '$(other "$key")'}"
        new_id
        if [[ $who == root ]]; then
                capture_split rt create --bundle "$b" "$T_LAST_ID"
        else
                capture_split urt create --bundle "$b" "$T_LAST_ID"
        fi
        if is_umwelt; then
                t_eq "$who: $name: exit 3" 3 "$T_RC" "$T_ERR"
                t_eq "$who: $name: one line" 1 "$(grep -c . <<<"$T_ERR")" "$T_ERR"
                t_match "$who: $name: names the key and the namespace" "linux\.sysctl\.$key: .*$word" "$T_ERR"
        else
                t_eq "$who: $name: refused" refused "$([[ $T_RC -ne 0 ]] && echo refused || echo created)"
        fi
        t_eq "$who: $name: the host's $key unchanged" "${host[$key]}" "$(sysctl -n "$key")"
        if [[ $who == root ]]; then
                t_eq "$who: $name: no state left" "" "$(ls -A "$T_ROOT" | grep -F "$T_LAST_ID")"
                rt delete -f "$T_LAST_ID" >/dev/null 2>&1
        else
                t_eq "$who: $name: no state left" "" "$(urt list -q 2>/dev/null | grep -F "$T_LAST_ID")"
                urt delete -f "$T_LAST_ID" >/dev/null 2>&1
        fi
}

cases() {
        local who=$1 b=$T_TMP/$1-bundle
        refused "$who" "mqueue key with the host's ipc namespace" fs.mqueue.queues_max ipc "drop_ns('ipc')"
        refused "$who" "ipc key with the host's ipc namespace" kernel.msgmax ipc "drop_ns('ipc')"
        refused "$who" "net key with the host's network namespace" net.core.somaxconn network "drop_ns('network')"
        # Root names this shell's; the user the runtime's own (/proc/self).
        local own=/proc/$$/ns/net
        [[ $who == root ]] || own=/proc/self/ns/net
        refused "$who" "net key in the caller's network namespace joined by path" net.core.somaxconn \
                network "set_ns('network', '$own')"
        refused "$who" "uts key with the host's uts namespace" kernel.domainname uts "drop_ns('uts')"
        refused "$who" "a key no namespace holds" vm.swappiness "no namespace" \
                "set_ns('ipc'); set_ns('network'); set_ns('uts')"
        # The control: the same keys with namespaces of its own are written
        # inside, and the host's stay.
        cfg_set "$b" "set_ns('ipc'); set_ns('network'); set_ns('uts')
c['linux']['sysctl'] = {'fs.mqueue.queues_max': '$(other fs.mqueue.queues_max)', 'net.core.somaxconn': '$(other net.core.somaxconn)'}
c['process']['args'] = ['/bin/cat', '/proc/sys/fs/mqueue/queues_max', '/proc/sys/net/core/somaxconn']"
        new_id
        if [[ $who == root ]]; then
                capture_split rt run --bundle "$b" "$T_LAST_ID"
        else
                capture_split urt run --bundle "$b" "$T_LAST_ID"
        fi
        if [[ $who == root ]]; then
                t_eq "$who: own namespaces: the values inside" \
                        "$(other fs.mqueue.queues_max) $(other net.core.somaxconn)" "$(echo $T_OUT)" "$T_ERR"
        else
                # A user namespace owns neither key's limits above the host's.
                t_eq "$who: own namespaces: runs" 0 "$T_RC" "$T_ERR"
        fi
        t_eq "$who: own namespaces: the host's values stay" \
                "${host[fs.mqueue.queues_max]} ${host[net.core.somaxconn]}" \
                "$(sysctl -n fs.mqueue.queues_max) $(sysctl -n net.core.somaxconn)"
}

make_bundle "$T_TMP/root-bundle"
cases root

t_test_user
urt() { as_user "$RT" --root "$XDG/state" "$@"; }
ub=$T_TMP/user-bundle
mkdir "$ub"
cp -a "$T_TMP/rootfs-template" "$ub/rootfs"
chown "$U:$G" "$ub"
as_user sh -c "cd '$ub' && '$RT' spec --rootless" || t_bail "spec --rootless failed"
cfg_set "$ub" "c['process']['terminal'] = False
c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': $U, 'size': 1}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': $G, 'size': 1}]"
chown "$U:$G" "$ub/config.json"
cases user

t_done
