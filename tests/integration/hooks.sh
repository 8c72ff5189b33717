#!/bin/bash
# Hooks: all six run, in order, with the state on stdin, their args and env;
# a failing createRuntime hook makes create fail and leaves nothing; a hook
# past its timeout is killed; an init whose `run` dies before start ends itself.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

# The hook log directory is bind-mounted into the container at its own host
# path, so a hook finds it whether it runs in the runtime's namespaces or
# the container's.
hl=$T_TMP/hl
mkdir -p "$hl"
cat >"$hl/hook.sh" <<'EOF'
#!/bin/sh
# hook.sh DIR NAME: record the state on stdin, argv and env, then the order.
dir=$1
name=$2
cat >"$dir/$name.json"
echo "$#:$*" >"$dir/$name.args"
echo "${HOOKVAR:-unset}" >"$dir/$name.env"
echo "$name" >>"$dir/order"
exit "${HOOK_EXIT:-0}"
EOF
chmod 755 "$hl/hook.sh"
# startContainer's path resolves in the container: give it the same file.
b=$T_TMP/bundle
make_bundle "$b"
mkdir -p "$b/rootfs$hl"

hook() { # hook NAME [EXIT [TIMEOUT]]: a python dict for one hook entry
        local h="{'path': '$hl/hook.sh', 'args': ['hook.sh', '$hl', '$1'], 'env': ['HOOKVAR=$1', 'HOOK_EXIT=${2:-0}']"
        [[ -n ${3:-} ]] && h+=", 'timeout': $3"
        echo "$h}"
}
cfg_set "$b" "add_mount('$hl', 'bind', '$hl', ['rbind', 'rw'])
c['process']['args'] = ['/bin/probe', 'sleep', '1000']
c['hooks'] = {n: [eval(h)] for n, h in [
  ('prestart', \"$(hook prestart)\"),
  ('createRuntime', \"$(hook createRuntime)\"),
  ('createContainer', \"$(hook createContainer)\"),
  ('startContainer', \"$(hook startContainer)\"),
  ('poststart', \"$(hook poststart)\"),
  ('poststop', \"$(hook poststop)\")]}"

order() { tr '\n' ' ' <"$hl/order" 2>/dev/null | sed 's/ $//'; }
hook_state() { json_get "$(cat "$hl/$1.json" 2>/dev/null)" "$2"; }

new_id
id=$T_LAST_ID
t_run "create with hooks" rt create --bundle "$b" "$id"
pid=$(state_field "$id" pid)
t_eq "create runs prestart, createRuntime, createContainer in order" \
        "prestart createRuntime createContainer" "$(order)"
t_run "start with hooks" rt start "$id"
sleep 0.3
t_eq "start runs startContainer then poststart" \
        "prestart createRuntime createContainer startContainer poststart" "$(order)"
rt kill "$id" KILL >/dev/null 2>&1
wait_status "$id" stopped 50
t_eq "poststop has not run before delete" "no" "$([[ -e $hl/poststop.json ]] && echo yes || echo no)"
t_run "delete with hooks" rt delete "$id"
t_eq "delete runs poststop last" \
        "prestart createRuntime createContainer startContainer poststart poststop" "$(order)"

for n in prestart createRuntime createContainer startContainer poststart poststop; do
        t_eq "$n: state on stdin has the id and bundle" "$id $b" \
                "$(hook_state "$n" 'j["id"] + " " + j["bundle"]')" "$(cat "$hl/$n.json" 2>&1)"
        t_eq "$n: args as configured" "2:$hl $n" "$(cat "$hl/$n.args" 2>&1)"
        t_eq "$n: env as configured" "$n" "$(cat "$hl/$n.env" 2>&1)"
done
for n in prestart createRuntime createContainer startContainer poststart; do
        t_eq "$n: state pid is the container's" "$pid" "$(hook_state "$n" 'j.get("pid")')"
done
t_eq "createRuntime: status creating" creating "$(hook_state createRuntime 'j["status"]')"
t_eq "prestart: status created (crun, runtime-tools hooks_stdin)" created "$(hook_state prestart 'j["status"]')"
t_eq "poststart: status running" running "$(hook_state poststart 'j["status"]')"
t_eq "poststop: status stopped" stopped "$(hook_state poststop 'j["status"]')"

# ---------------------------------------------------------------- failures

nothing_left() { # nothing_left WHAT MOUNTS-BEFORE
        t_eq "$1: no container listed" "" "$(rt list -q 2>/dev/null)"
        t_eq "$1: no state in --root" "" "$(ls -A "$T_ROOT")"
        t_eq "$1: no process left" "" "$(procs_in "$b/rootfs")"
        t_eq "$1: no mount left" "$2" "$(mount_count)"
}

rm -f "$hl"/*.json "$hl/order"
cfg_set "$b" "c['hooks']['createRuntime'][0]['env'] = ['HOOKVAR=createRuntime', 'HOOK_EXIT=3']"
new_id
before=$(mount_count)
capture rt create --bundle "$b" "$T_LAST_ID"
t_eq "failing createRuntime hook fails create" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_OUT"
t_match "the error names the hook" 'createRuntime|hook' "$T_OUT"
t_eq "no hook after the failing one runs but poststop" "prestart createRuntime" \
        "$(order | sed 's/ poststop$//')"
nothing_left "failed createRuntime" "$before"

rm -f "$hl"/*.json "$hl/order"
mark=30.$$
cfg_set "$b" "c['hooks'] = {'createRuntime': [{'path': '/bin/sleep', 'args': ['sleep', '$mark'], 'timeout': 1}]}"
new_id
before=$(mount_count)
start=$(date +%s)
capture rt create --bundle "$b" "$T_LAST_ID"
elapsed=$(($(date +%s) - start))
t_eq "hook past its timeout fails create" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_OUT"
t_match "create gives up after about the timeout (${elapsed}s)" '^[0-5]$' "$elapsed"
sleep 0.2
t_eq "timed-out hook process is killed" "" "$(pgrep -f "^sleep $mark\$")"
nothing_left "timed-out hook" "$before"

rm -f "$hl"/*.json "$hl/order"
cfg_set "$b" "c['hooks'] = {'createRuntime': [{'path': '$T_TMP/no-such-hook'}]}"
new_id
before=$(mount_count)
capture rt create --bundle "$b" "$T_LAST_ID"
t_eq "missing hook binary fails create" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_OUT"
nothing_left "missing hook" "$before"

cfg_set "$b" "c['hooks'] = {'poststop': [eval(\"$(hook poststop 1)\")]}
c['process']['args'] = ['/bin/probe', 'exit', '0']"
rm -f "$hl"/*.json "$hl/order"
new_id
rt run --bundle "$b" "$T_LAST_ID" >/dev/null 2>&1 </dev/null
t_eq "failing poststop hook still runs" poststop "$(order)"
t_eq "failing poststop hook does not keep the container" "" "$(rt list -q 2>/dev/null)"

cfg_set "$b" "c['hooks'] = {'poststop': [eval(\"$(hook poststop-a 1)\"), eval(\"$(hook poststop-b)\")]}"
rm -f "$hl/order"
new_id
rt run --bundle "$b" "$T_LAST_ID" >/dev/null 2>"$T_TMP/poststop.err" </dev/null
t_eq "a failing poststop hook does not skip the next" "poststop-a poststop-b" "$(order)"
t_match "the failing poststop hook is a warning" "poststop hook.*hook.sh" "$(cat "$T_TMP/poststop.err")"

# Hooks without env: the runtime's environment on its side (podman's
# hooks.d hooks find their tools by PATH), only its PATH in the container's.
printf '#!/bin/sh\necho "PATH=${PATH:-unset} MARK=${UMW_HOOK_MARK:-unset}" >"$1/$2.env"\n' >"$hl/env.sh"
chmod 755 "$hl/env.sh"
envhook() { echo "{'path': '$hl/env.sh', 'args': ['env.sh', '$hl', '$1']}"; }
cfg_set "$b" "c['hooks'] = {n: [eval(h)] for n, h in [
  ('prestart', \"$(envhook prestart)\"),
  ('startContainer', \"$(envhook startContainer)\"),
  ('poststop', \"$(envhook poststop)\")]}"
new_id
PATH=/usr/sbin:/usr/bin:/sbin:/bin UMW_HOOK_MARK=m rt run --bundle "$b" "$T_LAST_ID" >/dev/null 2>&1 </dev/null
for n in prestart poststop; do
        t_eq "$n without env gets the runtime's" "PATH=/usr/sbin:/usr/bin:/sbin:/bin MARK=m" "$(cat "$hl/$n.env" 2>&1)"
done
t_eq "startContainer without env gets the runtime's PATH only" \
        "PATH=/usr/sbin:/usr/bin:/sbin:/bin MARK=unset" "$(cat "$hl/startContainer.env" 2>&1)"

# A `run` killed between create and start: its createRuntime hook notes the
# init's pid and SIGKILLs the runtime (the hook's parent) before it sends GO.
# The init holds the other end of run's socket pair, reads its close and
# ends itself: no workload starts, no process waits forever; what the dead
# runtime made stays for `delete --force`.
cat >"$hl/kill-runtime.sh" <<'EOF'
#!/bin/sh
sed -n 's/.*"pid": *\([0-9]*\).*/\1/p' >"$1/init.pid"
kill -KILL "$PPID"
EOF
chmod 755 "$hl/kill-runtime.sh"
cfg_set "$b" "c['hooks'] = {'createRuntime': [{'path': '$hl/kill-runtime.sh', 'args': ['kill-runtime.sh', '$hl']}]}
c['process']['args'] = ['/bin/probe', 'open', '$hl/workload-ran', 'w']"
rm -f "$hl/init.pid" "$hl/workload-ran"
new_id
before=$(mount_count)
capture rt run --bundle "$b" "$T_LAST_ID"
t_eq "run killed before start: killed (137)" 137 "$T_RC" "$T_OUT"
init=$(cat "$hl/init.pid" 2>/dev/null)
t_match "the hook saw the init's pid" '^[0-9]+$' "$init"
for _ in $(seq 50); do
        [[ -n $init && -e /proc/$init ]] || break
        sleep 0.1
done
t_eq "the init ends itself when run dies before GO" gone \
        "$([[ -n $init && -e /proc/$init ]] && echo "alive: $(cat /proc/$init/status | sed -n 1,2p)" || echo gone)"
t_eq "the workload never ran" absent "$([[ -e $hl/workload-ran ]] && echo ran || echo absent)"
t_run "delete --force clears what the killed run left" rt delete --force "$T_LAST_ID"
nothing_left "run killed before start" "$before"

# A createContainer hook alone (the init waits for no other hook) runs in
# the container's cgroup: the init joins before it runs (it may join later
# only without such hooks). Before the pivot the hook still sees the host's
# cgroup mounts: it notes its pid and the pids the container's cgroup holds,
# both as its pid namespace numbers them.
cat >"$hl/cg.sh" <<'EOF'
#!/bin/sh
echo "$$" >"$1/cg.pid"
cat "/sys/fs/cgroup/pids/umwelt-run/$2/cgroup.procs" >"$1/cg.procs"
EOF
chmod 755 "$hl/cg.sh"
new_id
cfg_set "$b" "c['hooks'] = {'createContainer': [{'path': '$hl/cg.sh', 'args': ['cg.sh', '$hl', '$T_LAST_ID']}]}
c['process']['args'] = ['/bin/probe', 'sleep', '1000']"
before=$(mount_count)
if [[ -d /sys/fs/cgroup/pids/umwelt-run ]]; then
        t_run "create with only a createContainer hook" rt create --bundle "$b" "$T_LAST_ID"
        t_eq "the createContainer hook runs in the container's cgroup" yes \
                "$(grep -qx "$(cat "$hl/cg.pid" 2>/dev/null)" "$hl/cg.procs" 2>/dev/null && echo yes || echo no)" \
                "hook pid $(cat "$hl/cg.pid" 2>&1), cgroup: $(cat "$hl/cg.procs" 2>&1)"
        t_run "delete --force removes it" rt delete --force "$T_LAST_ID"
else
        t_skip "the createContainer hook runs in the container's cgroup" "no v1 pids hierarchy"
fi
nothing_left "createContainer hook" "$before"

t_done
