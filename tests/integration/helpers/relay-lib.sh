# What the tests that drive umwelt-relay share (sourced by relay.sh and
# relay-egress.sh after lib.sh). The test sets WHO (root or user) and
# defines S ARGS... (umwelt-run as WHO) and relay_launch PIDFILE (the relay
# as WHO, in the background, its pid written to PIDFILE by the process that
# then execs it, with --timeout 60 --idle 0: never idle, and the user's
# config sets a shorter timeout where a test wants one).
RELAY=${UMW_RELAY:-$(dirname "$RT")/umwelt-relay}
[[ -x $RELAY ]] || t_bail "umwelt-relay $RELAY is not executable"
RELAY_PID=
RELAY_PIDFILE=$XDG/relay.pid

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
