#!/bin/bash
# Host actions (umwelt.toml(5), "HOST ACTIONS") from inside real sandboxes,
# root's and the unprivileged user's: an action runs and its output and
# status come back; ask = false runs without asking, an asked one only once
# approved and a denied one never (a marker file proves it); the argv run is
# the one the human was shown (a table changed in between runs nothing);
# values outside the table's lists, unknown actions and parameters are
# refused without asking; a value's shell characters are passed literally;
# the timeout kills the whole tree, a daemonised child too; output over the
# limit is cut and said; the environment is the table's alone; the table is
# invisible and unwritable inside, and refused when it is not root's alone;
# a relay killed during an action leaves no process of it.
T_NAME=host-actions
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
floor 'limits_best_effort = true'

TABLE=/etc/umwelt/host-actions.toml
[[ -e $TABLE ]] && cp -p "$TABLE" "$T_TMP/table.saved"
actions_cleanup() {
        [[ -n $RELAY_PID ]] && kill "$RELAY_PID" 2>/dev/null
        for p in "$T_TMP"/home/aproj "$UHOME"/aproj; do
                [[ -d $p ]] || continue
                "$RT" --root "$T_ROOT" sandbox down -p "$p" >/dev/null 2>&1
                U_ "$RT" sandbox down -p "$p" >/dev/null 2>&1
        done
        if [[ -e $T_TMP/table.saved ]]; then cp -p "$T_TMP/table.saved" "$TABLE"; else rm -f "$TABLE"; fi
        pkill_ours
}
T_EXTRA_CLEANUP=actions_cleanup

. "$(dirname "$0")/helpers/relay-lib.sh"
# The relay's own environment holds what must never reach an action.
RELAY_ENV="SSH_AUTH_SOCK=/tmp/agent.sock GH_TOKEN=not-for-actions"

# Unique arguments, so that what an action left running can be found (and
# only ours is ever killed: by these arguments, as the test's own).
SLOW=3000.25
LONG=3001.25
left() { pgrep -f "sleep ($SLOW|$LONG)" | tr '\n' ' '; }
pkill_ours() {
        local p
        for p in $(left); do kill -KILL "$p"; done
        return 0
}

# table: the host actions for this test; MARKS the files an action may touch.
table() {
        mkdir -p /etc/umwelt
        cat >"$TABLE" <<EOF
[[action]]
name = "hello"
description = "say hello"
argv = ["/bin/echo", "hello", "{who}"]
ask = false
[action.params]
who = ["world", "a;b \$(id) \`id\` |x"]

[[action]]
name = "env"
argv = ["/usr/bin/env"]
ask = false

[[action]]
name = "mark"
description = "touch a marker"
argv = ["/usr/bin/touch", "{file}"]
[action.params]
file = [$MARKS]

[[action]]
name = "slow"
argv = ["/bin/sh", "-c", "setsid sleep $SLOW & sleep $SLOW"]
timeout = "300ms"
ask = false

[[action]]
name = "long"
argv = ["/bin/sh", "-c", "setsid sleep $LONG & sleep $LONG"]
timeout = "60s"
ask = false

[[action]]
name = "loud"
argv = ["/usr/bin/seq", "1", "50000"]
output_limit = 1000
ask = false

[[action]]
name = "fail"
argv = ["/bin/sh", "-c", "echo oops >&2; exit 3"]
ask = false

[[action]]
name = "elsewhere"
argv = ["/bin/true"]
projects = ["/nonexistent"]
ask = false
EOF
        chmod 644 "$TABLE"
}
MARKS="\"$T_TMP/home/marks/a\", \"$T_TMP/home/marks/b\", \"$UHOME/marks/a\", \"$UHOME/marks/b\""

# act ARGS...: request action ARGS from inside, captured.
act() { capture S sandbox exec -p "$PROJ" -- ./umw request action "$@"; }

scene() {
        WHO=$1
        local home
        if [[ $WHO == root ]]; then home=$T_TMP/home; else home=$UHOME; fi
        PROJ=$home/aproj
        MARK=$home/marks
        mkdir -p "$PROJ" "$MARK"
        cp "$RT" "$PROJ/umw"
        [[ $WHO == user ]] && chown -R "$U:$G" "$home"
        table
        start_relay
        capture S sandbox up -p "$PROJ" --workspace direct
        t_eq "$WHO: sandbox up" 0 "$T_RC" "$T_OUT"

        capture S sandbox exec -p "$PROJ" -- ./umw relay actions
        t_eq "$WHO: relay actions inside lists what this project is offered" \
                "hello env mark slow long loud fail" \
                "$(grep -E '^[a-z]' <<<"$T_OUT" | cut -d' ' -f1 | tr '\n' ' ' | sed 's/ $//')" "$T_OUT"
        t_match "$WHO: ... with the values a parameter takes" "--param who=world\|a;b" "$T_OUT"

        act hello --param who=world --why "greet"
        t_eq "$WHO: an ask = false action runs at once: its output and status" "0 hello world" \
                "$T_RC $T_OUT"
        act hello --param 'who=a;b $(id) `id` |x' --why "quote"
        t_eq "$WHO: a value's shell characters are passed literally" 'hello a;b $(id) `id` |x' \
                "$T_OUT"
        act fail --why "fails"
        t_eq "$WHO: the action's exit status and stderr come back" "3 oops" "$T_RC $T_OUT"
        act env --why "environment"
        t_eq "$WHO: the environment is the table's alone (nothing of the relay's)" \
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8" \
                "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')"

        local what
        for what in "hello --param who=x" "hello --param who=world --param extra=1" "hello" \
                "nosuch" "elsewhere"; do
                # shellcheck disable=SC2086
                act $what --why "refused"
                t_eq "$WHO: action $what is refused without asking (exit 9)" "9 " \
                        "$T_RC $(S relay pending --json 2>&1)" "$T_OUT"
        done
        act hello --param $'who=world\nid' --why "newline"
        t_eq "$WHO: a value with a newline is refused before it is sent (exit 2)" 2 "$T_RC" "$T_OUT"

        # Asked: runs only once approved, exactly what was shown.
        S sandbox exec -p "$PROJ" -- ./umw request action mark --param "file=$MARK/a" \
                --why "mark it" >"$T_TMP/req" 2>&1 &
        local req=$! id
        id=$(wait_pending)
        t_eq "$WHO: an asked action waits, showing its argv" "mark /usr/bin/touch $MARK/a" \
                "$(pending_field "$id" action) $(pending_field "$id" argv | tr -d "[]',")"
        t_eq "$WHO: ... and has not run" absent "$([[ -e $MARK/a ]] && echo present || echo absent)"
        capture S relay approve "$id" --remember
        t_match "$WHO: ... --remember is refused for an action" "remember keeps grants" "$T_OUT"
        capture S relay approve "$id"
        wait "$req"
        t_eq "$WHO: ... approved, it runs" "0 present" \
                "$? $([[ -e $MARK/a ]] && echo present || echo absent)" "$(cat "$T_TMP/req")"

        S sandbox exec -p "$PROJ" -- ./umw request action mark --param "file=$MARK/b" \
                --why "denied" >"$T_TMP/req" 2>&1 &
        req=$!
        id=$(wait_pending)
        capture S relay deny "$id"
        wait "$req"
        t_eq "$WHO: a denied action never runs (exit 7)" "7 absent" \
                "$? $([[ -e $MARK/b ]] && echo present || echo absent)"

        S sandbox exec -p "$PROJ" -- ./umw request action mark --param "file=$MARK/b" \
                --why "changed" >"$T_TMP/req" 2>&1 &
        req=$!
        id=$(wait_pending)
        sed -i 's|argv = \["/usr/bin/touch", "{file}"\]|argv = ["/usr/bin/touch", "{file}", "/tmp/also"]|' "$TABLE"
        capture S relay approve "$id"
        wait "$req"
        t_eq "$WHO: the table changed after the request was shown: nothing runs" "1 absent" \
                "$? $([[ -e $MARK/b ]] && echo present || echo absent)" "$(cat "$T_TMP/req")"
        t_match "$WHO: ... and the human is told" "table changed" "$T_OUT"
        table

        # Bounds: time and output.
        act slow --why "too slow"
        t_eq "$WHO: the timeout kills the action (exit 124)" 124 "$T_RC" "$T_OUT"
        t_match "$WHO: ... and says so" "killed at its timeout" "$T_OUT"
        t_eq "$WHO: ... with the child it daemonised (setsid)" "" "$(left)"
        act loud --why "loud" --json
        t_eq "$WHO: output over the limit is cut at it, its size and the cut said" \
                "0 1000 $(seq 1 50000 | wc -c) True" \
                "$T_RC $(json_get "$T_OUT" "len(j['stdout']), j['stdout_bytes'], j['stdout_cut']" | tr -d '(),')"
        capture_split S sandbox exec -p "$PROJ" -- ./umw request action loud --why "loud"
        t_match "$WHO: ... and without --json the cut is said" "stdout was cut at 1000 bytes" "$T_ERR"

        # The table inside: not there, even after it was replaced by a
        # rename (sed -i above) while the sandbox ran; unwritable.
        t_eq "$WHO: the table is invisible inside" "" \
                "$(S sandbox exec -p "$PROJ" -- cat "$TABLE" 2>/dev/null)"
        S sandbox exec -p "$PROJ" -- sh -c "echo x >'$TABLE'" >/dev/null 2>&1
        t_eq "$WHO: ... and unwritable" "" "$(grep -c '^x$' "$TABLE" | grep -v '^0$')"

        t_match "$WHO: the audit log has the start and end, with sizes and hashes" \
                'relay-action-start.*action=hello.*argv=/bin/echo hello world by=table.*relay-action-end.*exit_status=0.*stdout_bytes=12 stdout_sha256=[0-9a-f]{64}' \
                "$(S sandbox log -p "$PROJ" 2>&1 | tr '\n' ' ')"

        # The relay killed during an action: none of the action is left.
        S sandbox exec -p "$PROJ" -- ./umw request action long --why "the relay dies" \
                >"$T_TMP/req" 2>&1 &
        req=$!
        for _ in $(seq 100); do [[ $(left | wc -w) -ge 2 ]] && break; sleep 0.05; done
        local during
        during=$(left | wc -w)
        kill -KILL "$RELAY_PID"
        wait "$req"
        local after=x
        for _ in $(seq 100); do
                after=$(left)
                [[ -z $after ]] && break
                sleep 0.05
        done
        t_eq "$WHO: a relay SIGKILLed during an action leaves none of it" "running, then " \
                "$([[ $during -ge 2 ]] && echo running), then $after"
        for _ in $(seq 100); do kill -0 "$RELAY_PID" 2>/dev/null || break; sleep 0.05; done
        RELAY_PID=
        capture S sandbox down -p "$PROJ"
}

scene root
scene user

# The table must be root's alone, and every error is named where it stands.
WHO=root
PROJ=$T_TMP/home/aproj
start_relay
capture S sandbox up -p "$PROJ" --workspace direct
table
chmod 664 "$TABLE"
act hello --param who=world --why "group-writable"
t_match "a group-writable table refuses every action (exit 9)" "^9 .*not writable by group" \
        "$T_RC $T_OUT"
chmod 644 "$TABLE"
chown "$U" "$TABLE"
capture S relay actions
t_match "a table a user owns is refused, on the host too" "owned by root" "$T_OUT"
capture "$RT" doctor
t_match "... and doctor says so" "host actions: $TABLE: expected a regular file owned by root" "$T_OUT"
chown 0 "$TABLE"
printf '[[action]]\nname = "x"\nargv = ["true"]\n' >"$TABLE"
act x --why "relative"
t_match "a table with a relative argv[0] is refused, naming where" \
        "^9 .*host-actions.toml:3:8: 'argv': expected an absolute path" "$T_RC $T_OUT"
table
capture S relay actions --json
t_eq "relay actions on the host lists every action for this user, with its projects" \
        "8 /nonexistent" \
        "$(json_get "$T_OUT" "len(j['actions'])") $(json_get "$T_OUT" "[a for a in j['actions'] if a['name'] == 'elsewhere'][0]['projects'][0]")" \
        "$T_OUT"
capture S sandbox down -p "$PROJ"
stop_relay
no_sanitizer_reports "$T_TMP"/relay-*.log
t_done
