# What the tests that drive umwelt-relay share (sourced after lib.sh's
# t_setup and t_test_user). The test sets WHO (root or user); S ARGS...
# runs umwelt-run as WHO and relay_launch PIDFILE the relay as WHO, in the
# background, its pid written to PIDFILE by the process that then execs it,
# with --timeout 60 --idle 0 (never idle; the user's config sets a shorter
# timeout where a test wants one). A test whose relay must live elsewhere
# (relay-egress.sh: in its network scene) defines both again after this.
RELAY=${UMW_RELAY:-$(dirname "$RT")/umwelt-relay}
[[ -x $RELAY ]] || t_bail "umwelt-relay $RELAY is not executable"
RELAY_PID=
RELAY_PIDFILE=$XDG/relay.pid

# U_ CMD...: CMD as the test user, its home apart from its runtime
# directory (the runtime directory is never granted: a home inside it
# would be too).
UHOME=$T_TMP/uhome
U_() {
        runuser -u "$USER_NAME" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
                XDG_RUNTIME_DIR="$XDG" HOME="$UHOME" "$@"
}

WHO=root
# S ARGS...: umwelt-run as WHO.
S() {
        if [[ $WHO == root ]]; then
                env HOME="$T_TMP/home" XDG_STATE_HOME="$T_TMP/state" "$RT" --root "$T_ROOT" "$@"
        else
                U_ "$RT" "$@"
        fi
}
state_home() { if [[ $WHO == root ]]; then echo "$T_TMP/state"; else echo "$UHOME/.local/state"; fi; }
# as_who CMD...: CMD as WHO, outside every sandbox.
as_who() { if [[ $WHO == root ]]; then "$@"; else U_ "$@"; fi; }

# relay_launch PIDFILE: the relay as WHO; root's reads the user's policy and
# writes the project's audit log where the face does: the same environment.
# RELAY_ENV: more NAME=VALUE for it.
relay_launch() {
        local run='echo $$ >"$1" && exec "$2" --timeout 60 --idle 0'
        if [[ $WHO == root ]]; then
                env HOME="$T_TMP/home" XDG_STATE_HOME="$T_TMP/state" ${RELAY_ENV:-} \
                        sh -c "$run" sh "$1" "$RELAY" 2>>"$T_TMP/relay-root.log" &
        else
                U_ ${RELAY_ENV:-} sh -c "$run" sh "$1" "$RELAY" 2>>"$T_TMP/relay-user.log" &
        fi
}

relay_dir() { if [[ $WHO == root ]]; then echo /run/umwelt/relay; else echo "$XDG/umwelt/relay"; fi; }

# relay_locked: RELAY_PID holds a flock (/proc/locks: looking, unlike
# flock -n, takes nothing a starting relay could find held).
relay_locked() { awk -v p="$RELAY_PID" '$2 == "FLOCK" && $5 == p { f = 1 } END { exit !f }' /proc/locks; }

# start_relay: a relay of the test's own, once one a previous test started
# has ended (it ends 30 s after its last sandbox); back when it listens.
start_relay() {
        local lock stale
        lock=$(relay_dir)/lock
        for _ in $(seq 400); do
                [[ -e $lock ]] && ! flock -n "$lock" true && { sleep 0.1; continue; }
                break
        done
        stale=$(stat -c %i "$(relay_dir)/control.sock" 2>/dev/null)
        rm -f "$RELAY_PIDFILE"
        relay_launch "$RELAY_PIDFILE"
        for _ in $(seq 100); do [[ -s $RELAY_PIDFILE ]] && break; sleep 0.05; done
        RELAY_PID=$(cat "$RELAY_PIDFILE" 2>/dev/null)
        # Ours, listening: its lock held (a control.sock may be a killed
        # relay's) and the socket renamed into place, which it does once it
        # listens.
        for _ in $(seq 200); do
                kill -0 "$RELAY_PID" 2>/dev/null || break
                relay_locked && [[ $(stat -c %i "$(relay_dir)/control.sock" 2>/dev/null) != "$stale" ]] && break
                sleep 0.05
        done
}
stop_relay() {
        [[ -n $RELAY_PID ]] && kill "$RELAY_PID" 2>/dev/null
        for _ in $(seq 100); do kill -0 "$RELAY_PID" 2>/dev/null || break; sleep 0.05; done
        RELAY_PID=
}

# pending_field ID FIELD: a member of pending request ID, from relay pending --json.
pending_field() {
        S relay pending --json 2>/dev/null |
                "$PY" -c 'import json,sys
for l in sys.stdin:
    d = json.loads(l)
    if d.get("id") == sys.argv[1]: print(d.get(sys.argv[2], ""))' "$1" "$2"
}
# wait_pending: the id of the newest pending request, once there is one.
wait_pending() {
        local id
        for _ in $(seq 100); do
                id=$(S relay pending --json 2>/dev/null | "$PY" -c 'import json,sys
ids = [int(json.loads(l)["id"]) for l in sys.stdin]
print(max(ids) if ids else "")')
                [[ -n $id ]] && { echo "$id"; return 0; }
                sleep 0.05
        done
        return 1
}
# no_sanitizer_reports LOG...: a test's own relays' logs hold no report.
no_sanitizer_reports() {
        t_eq "no sanitizer report from the test's own relays" "" \
                "$(grep -h -m3 -E 'runtime error:|ERROR: (Address|Leak)Sanitizer' "$@" 2>/dev/null)"
}
