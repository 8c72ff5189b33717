#!/bin/bash
# The OCI lifecycle: create, start, state, list, ps, kill, delete, run, and
# the exit codes umwelt-run(1) documents for unknown and duplicate ids.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

b=$T_TMP/bundle
make_bundle "$b"
cfg_set "$b" 'c["root"]["readonly"] = False
c["process"]["args"] = ["/bin/sh", "-c", "echo started > /started; exec /bin/probe signals /signal"]
c["annotations"] = {"org.umwelt.test": "lifecycle"}'

# expect_code NAME WANT CMD...: WANT is our documented exit code; other
# runtimes only have to fail.
expect_code() {
        local name=$1 want=$2
        shift 2
        capture "$@"
        if is_umwelt; then
                t_eq "$name (exit $want)" "$want" "$T_RC" "command: $*" "$T_OUT"
        elif [[ $T_RC -ne 0 ]]; then
                t_ok "$name (fails: $T_RC)"
        else
                t_fail "$name" "command: $*" "expected failure, got 0" "$T_OUT"
        fi
}

# ---------------------------------------------------------------- create

new_id
id=$T_LAST_ID
t_run "create exits 0" rt create --bundle "$b" --pid-file "$T_TMP/pid" "$id"

st=$(rt state "$id" 2>&1)
t_eq "state after create is created" created "$(json_get "$st" 'j["status"]')" "$st"
t_eq "state id" "$id" "$(json_get "$st" 'j["id"]')"
t_eq "state bundle is the absolute bundle path" "$b" "$(json_get "$st" 'j["bundle"]')"
t_match "state ociVersion" '^1\.[0-9]+\.[0-9]+' "$(json_get "$st" 'j["ociVersion"]')"
t_eq "state carries the config's annotations" lifecycle \
        "$(json_get "$st" '(j.get("annotations") or {}).get("org.umwelt.test")')" "$st"
t_match "state created is an RFC 3339 time" '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+(Z|[+-][0-9:]+)$' \
        "$(json_get "$st" 'j.get("created")')" "$st"
pid=$(json_get "$st" 'j["pid"]')
t_match "state pid is a positive number" '^[1-9][0-9]*$' "$pid" "$st"
t_eq "pid file holds the state pid" "$pid" "$(cat "$T_TMP/pid" 2>/dev/null)"
if [[ -d /proc/$pid ]]; then t_ok "container process exists after create"; else t_fail "container process exists after create"; fi
t_eq "process has not run before start" no "$([[ -e $b/rootfs/started ]] && echo yes || echo no)"
t_eq "container process lives in the rootfs" "$pid" "$(procs_in "$b/rootfs")"

expect_code "create with a duplicate id" 5 rt create --bundle "$b" "$id"
t_eq "duplicate create leaves the first container alone" "created $pid" \
        "$(state_field "$id" status) $(state_field "$id" pid)"
t_eq "duplicate create leaves no extra process" "$pid" "$(procs_in "$b/rootfs" | tr '\n' ' ' | sed 's/ $//')"

ids=$(rt list -q 2>&1)
t_match "list -q names the container" "(^|$'\n')$id($'\n'|$)" "$ids"
lj=$(rt list --format json 2>&1)
t_eq "list --format json has the id and status" "created" \
        "$(json_get "$lj" '[x["status"] for x in j if x["id"] == "'"$id"'"][0]')" "$lj"

# ---------------------------------------------------------------- start

t_run "start exits 0" rt start "$id"
wait_file "$b/rootfs/started" 50
t_eq "process ran after start" started "$(cat "$b/rootfs/started" 2>/dev/null)"
t_eq "state after start is running" running "$(state_field "$id" status)"
t_eq "pid unchanged by start" "$pid" "$(state_field "$id" pid)"
expect_code "start of a running container" 6 rt start "$id"

ps=$(rt ps --format json "$id" 2>&1)
t_match "ps --format json lists the container pid" "(^|[^0-9])$pid([^0-9]|$)" "$ps"
t_eq "ps --format json is a JSON array of pids" true \
        "$(json_get "$ps" 'all(isinstance(p, int) for p in j) and '"$pid"' in j')" "$ps"

expect_code "delete of a running container without --force" 6 rt delete "$id"
t_eq "container still running after refused delete" running "$(state_field "$id" status)"

# ---------------------------------------------------------------- kill

t_run "kill TERM exits 0" rt kill "$id" TERM
wait_file "$b/rootfs/signal" 50
t_eq "process received SIGTERM" SIGTERM "$(cat "$b/rootfs/signal" 2>/dev/null)"
wait_status "$id" stopped 50
t_eq "state after the process exits is stopped" stopped "$(state_field "$id" status)"
t_run "delete of a stopped container exits 0" rt delete "$id"
expect_code "state after delete" 4 rt state "$id"
t_nomatch "list no longer names it" "(^|$'\n')$id($'\n'|$)" "$(rt list -q 2>&1)"
t_eq "no state left in --root" "" "$(ls -A "$T_ROOT" | grep -F "$id")"

# ---------------------------------------------------------------- unknown ids

expect_code "state of an unknown id" 4 rt state no-such-container
expect_code "start of an unknown id" 4 rt start no-such-container
expect_code "kill of an unknown id" 4 rt kill no-such-container TERM
expect_code "delete of an unknown id" 4 rt delete no-such-container
expect_code "delete --force of an unknown id exits 0 (runc, crun)" 0 rt delete --force no-such-container
expect_code "ps of an unknown id" 4 rt ps no-such-container

# ---------------------------------------------------------------- kill variants

new_id
id=$T_LAST_ID
rm -f "$b/rootfs/started" "$b/rootfs/signal"
rt create --bundle "$b" "$id" >/dev/null 2>&1
pid=$(state_field "$id" pid)
t_run "kill KILL of a created container exits 0" rt kill "$id" KILL
wait_status "$id" stopped 50
t_eq "killed created container is stopped" stopped "$(state_field "$id" status)"
rt delete "$id" >/dev/null 2>&1
t_eq "deleted container's process is gone" gone "$(proc_alive "$pid" && echo alive || echo gone)"
t_eq "process never ran" no "$([[ -e $b/rootfs/started ]] && echo yes || echo no)"

new_id
id=$T_LAST_ID
cfg_set "$b" 'c["process"]["args"] = ["/bin/sh", "-c", "probe sleep 1000 & exec probe sleep 1000"]'
rt run -d --bundle "$b" "$id" >/dev/null 2>&1 </dev/null
t_eq "run -d leaves the container running" running "$(state_field "$id" status)"
sleep 0.3
n=$(rt ps --format json "$id" 2>/dev/null)
t_eq "ps counts both processes" 2 "$(json_get "$n" 'len(j)')" "$n"
pids=$(procs_in "$b/rootfs")
t_eq "two processes run in the container" 2 "$(echo "$pids" | wc -w)" "$pids"
t_run "kill --all exits 0" rt kill --all "$id" KILL
wait_status "$id" stopped 50
sleep 0.2
alive=0
for p in $pids; do proc_alive "$p" && alive=$((alive + 1)); done
t_eq "kill --all killed every process" 0 "$alive" "pids: $pids"
rt delete -f "$id" >/dev/null 2>&1

new_id
id=$T_LAST_ID
rt run -d --bundle "$b" "$id" >/dev/null 2>&1 </dev/null
pid=$(state_field "$id" pid)
t_run "delete --force of a running container exits 0" rt delete --force "$id"
sleep 0.2
t_eq "delete --force killed the process" gone "$(proc_alive "$pid" && echo alive || echo gone)"
expect_code "force-deleted container is unknown" 4 rt state "$id"

# ---------------------------------------------------------------- run

# run_rc ARGS-AS-PYTHON-LIST: sets RC to the exit status of `run`.
run_rc() {
        new_id
        cfg_set "$b" "c['process']['args'] = $1"
        rt run --bundle "$b" "$T_LAST_ID" >/dev/null 2>&1 </dev/null
        RC=$?
}
run_rc '["/bin/probe", "exit", "0"]'
t_eq "run returns the exit status 0" 0 "$RC"
run_rc '["/bin/probe", "exit", "7"]'
t_eq "run returns the exit status 7" 7 "$RC"
# The container's init ignores signals it has no handler for, so the
# signal statuses are checked without a pid namespace.
cfg_set "$b" 'drop_ns("pid")'
run_rc '["/bin/sh", "-c", "kill -KILL $$"]'
t_eq "run returns 128+9 for SIGKILL" 137 "$RC"
run_rc '["/bin/sh", "-c", "kill -TERM $$"]'
t_eq "run returns 128+15 for SIGTERM" 143 "$RC"
cfg_set "$b" 'set_ns("pid")'
t_eq "run removes the container when it exits" "" "$(rt list -q 2>/dev/null)"
run_rc '["/bin/does-not-exist"]'
t_eq "run of a missing program fails" nonzero "$([[ $RC -ne 0 ]] && echo nonzero || echo "$RC")"
t_eq "failed run leaves no container" "" "$(rt list -q 2>/dev/null)"
rt delete -f "$T_LAST_ID" >/dev/null 2>&1

new_id
cfg_set "$b" 'c["process"]["args"] = ["/bin/sh", "-c", "echo out; echo err >&2; exit 3"]'
rt run --bundle "$b" "$T_LAST_ID" >"$T_TMP/out" 2>"$T_TMP/err" </dev/null
t_eq "run passes stdout through" out "$(cat "$T_TMP/out")"
t_eq "run passes stderr through" err "$(cat "$T_TMP/err")"

if rt run --help 2>&1 | grep -q -- --keep; then
        new_id
        id=$T_LAST_ID
        cfg_set "$b" 'c["process"]["args"] = ["/bin/probe", "exit", "4"]'
        rt run --keep --bundle "$b" "$id" >/dev/null 2>&1
        t_eq "run --keep returns the status" 4 $?
        t_eq "run --keep leaves a stopped container" stopped "$(state_field "$id" status)"
        rt delete "$id" >/dev/null 2>&1
else
        t_skip "run --keep" "runtime has no --keep"
        t_skip "run --keep leaves a stopped container" "runtime has no --keep"
fi

t_eq "nothing left in --root" "" "$(rt list -q 2>&1)"
t_done
