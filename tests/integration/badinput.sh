#!/bin/bash
# Bad input: each mistake gets one line on stderr naming the file and the
# JSON path, the documented exit code (umwelt-run(1): 2 usage, 3 config,
# 4 unknown id, 5 duplicate id), and leaves nothing behind: no state in
# --root, no mount, no process.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

good=$T_TMP/good
make_bundle "$good"
b=$T_TMP/bundle

# fresh_bundle: a copy of the good bundle to break.
fresh_bundle() {
        rm -rf "$b"
        cp -a "$good" "$b"
}

# expect_bad NAME CODE MUST-MENTION... : runs create on $b and checks the
# exit code (ours) or failure (others), the one-line message naming each
# MUST-MENTION string (ours), and that nothing is left.
expect_bad() {
        local name=$1 code=$2 before word
        shift 2
        new_id
        before=$(mount_count)
        T_CAP=$((T_CAP + 1))
        rt create --bundle "$b" "$T_LAST_ID" >"$T_TMP/out.$T_CAP" 2>"$T_TMP/err.$T_CAP" </dev/null
        local rc=$? err
        err=$(cat "$T_TMP/err.$T_CAP")
        if is_umwelt; then
                t_eq "$name: exit $code" "$code" "$rc" "$err"
                t_eq "$name: one line on stderr" 1 "$(grep -c . <<<"$err")" "$err"
                for word in "$@"; do
                        t_match "$name: message names '$word'" "$(printf '%s' "$word" | sed 's/[][\.*^$()+?{}|]/\\&/g')" "$err"
                done
        else
                t_eq "$name: fails" fails "$([[ $rc -ne 0 ]] && echo fails || echo "ok")" "$err"
        fi
        t_eq "$name: no state left in --root" "" "$(ls -A "$T_ROOT" | grep -F "$T_LAST_ID")"
        t_eq "$name: no container listed" "" "$(rt list -q 2>/dev/null | grep -F "$T_LAST_ID")"
        t_eq "$name: no mount left" "$before" "$(mount_count)"
        t_eq "$name: no process left" "" "$(procs_in "$b/rootfs")"
        rt delete -f "$T_LAST_ID" >/dev/null 2>&1
}

fresh_bundle
printf '{"ociVersion": "1.0.2", "process": {"args": ["/bin/true"' >"$b/config.json"
expect_bad "truncated JSON" 3 config.json

fresh_bundle
printf '{"ociVersion": "1.0.2",, }' >"$b/config.json"
expect_bad "malformed JSON" 3 config.json

fresh_bundle
rm "$b/config.json"
expect_bad "missing config.json" 3 config.json

fresh_bundle
cfg_set "$b" 'c["process"]["args"] = "/bin/true"'
expect_bad "process.args not an array" 3 config.json process.args

fresh_bundle
cfg_set "$b" 'c["process"]["args"] = []'
expect_bad "process.args empty" 3 config.json process.args

fresh_bundle
cfg_set "$b" 'c["process"]["user"]["uid"] = "root"'
expect_bad "process.user.uid a string" 3 config.json process.user.uid

fresh_bundle
cfg_set "$b" 'c["process"]["user"]["uid"] = -1'
expect_bad "process.user.uid negative" 3 config.json process.user.uid

fresh_bundle
cfg_set "$b" 'c["linux"]["namespaces"].append({"type": "bogus"})'
expect_bad "unknown namespace type" 3 config.json "linux.namespaces[$(cfg_get "$b" 'len(c["linux"]["namespaces"]) - 1')].type"

fresh_bundle
cfg_set "$b" 'c["process"]["capabilities"]["bounding"].append("CAP_BOGUS")'
expect_bad "unknown capability" 3 config.json process.capabilities.bounding CAP_BOGUS

fresh_bundle
cfg_set "$b" 'c["process"]["rlimits"] = [{"type": "RLIMIT_BOGUS", "soft": 1, "hard": 1}]'
expect_bad "unknown rlimit" 3 config.json "process.rlimits[0].type"

fresh_bundle
cfg_set "$b" 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_BOGUS", "syscalls": []}'
expect_bad "unknown seccomp action" 3 config.json linux.seccomp.defaultAction

fresh_bundle
cfg_set "$b" 'c["mounts"].append({"destination": "/x", "type": "tmpfs", "source": "tmpfs", "options": 7})'
expect_bad "mount options not an array" 3 config.json "mounts[$(cfg_get "$b" 'len(c["mounts"]) - 1')].options"

fresh_bundle
cfg_set "$b" 'c["root"]["path"] = "no-such-rootfs"'
expect_bad "missing rootfs" 3 root.path no-such-rootfs

fresh_bundle
cfg_set "$b" 'del c["root"]'
expect_bad "no root object" 3 config.json root

# Checks made after parsing, by the parts that build the container: each
# names the config by the path it was read from, as spec_load's do.
fresh_bundle
cfg_set "$b" 'drop_ns("mount")'
expect_bad "no mount namespace" 3 "$b/config.json: .linux.namespaces"

fresh_bundle
cfg_set "$b" 'c["linux"]["cgroupsPath"] = "../escape"'
expect_bad "cgroupsPath climbing out" 3 "$b/config.json: .linux.cgroupsPath"

fresh_bundle
cfg_set "$b" 'c["linux"]["rootfsPropagation"] = "ro"'
expect_bad "rootfsPropagation not a propagation" 3 "$b/config.json: .linux.rootfsPropagation"

fresh_bundle
cfg_set "$b" 'c["annotations"] = {"run.umwelt.init": "bogus"}'
expect_bad "run.umwelt.init not pause" 3 "$b/config.json: .annotations[\"run.umwelt.init\"]"

fresh_bundle
cfg_set "$b" 'c["hostname"] = "h"; drop_ns("uts")'
expect_bad "hostname without a uts namespace" 3 "$b/config.json: .hostname"

fresh_bundle
cfg_set "$b" 'c["mounts"].append({"destination": "/x", "source": "none"})'
expect_bad "mount without a type or bind" 3 "$b/config.json: .mounts[/x]"

fresh_bundle
cfg_set "$b" "add_mount('/x', 'bind', '$T_TMP/no-such-source', ['bind'])"
new_id
before=$(mount_count)
capture rt create --bundle "$b" "$T_LAST_ID"
t_eq "bind from a missing source fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_OUT"
t_match "bind from a missing source: message names the source" "no-such-source" "$T_OUT"
t_eq "bind from a missing source: nothing left" "|$before|" "$(ls -A "$T_ROOT" | grep -F "$T_LAST_ID")|$(mount_count)|$(procs_in "$b/rootfs")"
rt delete -f "$T_LAST_ID" >/dev/null 2>&1

# Unknown fields are for other tools (OCI: ignore them).
fresh_bundle
cfg_set "$b" 'c["x-unknown"] = {"a": 1}; c["process"]["x-other"] = True'
run_in "$b" /bin/probe exit 0
t_eq "unknown properties are ignored" 0 "$T_RC" "$T_ERR"

# ---------------------------------------------------------------- ids and usage

# expect_code NAME CODE MUST-MENTION CMD...
expect_code() {
        local name=$1 code=$2 word=$3
        shift 3
        T_CAP=$((T_CAP + 1))
        "$@" >"$T_TMP/out.$T_CAP" 2>"$T_TMP/err.$T_CAP" </dev/null
        local rc=$? err
        err=$(cat "$T_TMP/err.$T_CAP")
        if is_umwelt; then
                t_eq "$name: exit $code" "$code" "$rc" "$err"
                t_eq "$name: one line on stderr" 1 "$(grep -c . <<<"$err")" "$err"
                [[ -n $word ]] && t_match "$name: message names '$word'" "$word" "$err"
        else
                t_eq "$name: fails" fails "$([[ $rc -ne 0 ]] && echo fails || echo ok)" "$err"
        fi
}

for verb in state start delete ps; do
        expect_code "$verb of an unknown id" 4 no-such-id rt "$verb" no-such-id
done
expect_code "kill of an unknown id" 4 no-such-id rt kill no-such-id TERM
expect_code "exec into an unknown id" 4 no-such-id rt exec no-such-id /bin/true

fresh_bundle
cfg_set "$b" 'c["process"]["args"] = ["/bin/probe", "sleep", "1000"]'
new_id
id=$T_LAST_ID
rt create --bundle "$b" "$id" >/dev/null 2>&1 </dev/null
pid=$(state_field "$id" pid)
before=$(mount_count)
expect_code "duplicate id" 5 "$id" rt create --bundle "$b" "$id"
t_eq "duplicate id: the first container is untouched" "created $pid" "$(state_field "$id" status) $(state_field "$id" pid)"
t_eq "duplicate id: no second process" "$pid" "$(procs_in "$b/rootfs")"
t_eq "duplicate id: no mount left" "$before" "$(mount_count)"
rt delete -f "$id" >/dev/null 2>&1

expect_code "create without an id" 2 "" rt create --bundle "$b"
expect_code "unknown verb" 2 frobnicate rt frobnicate
expect_code "unknown option" 2 "--no-such-option" rt state --no-such-option x
expect_code "invalid container id" 2 "" rt create --bundle "$b" "../escape"
t_eq "invalid id created nothing outside --root" no "$([[ -e $(dirname "$T_ROOT")/escape ]] && echo yes || echo no)"

t_done
