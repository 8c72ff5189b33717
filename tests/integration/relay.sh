#!/bin/bash
# umwelt-relay from inside real sandboxes, as root and as the unprivileged
# user the set-up makes: a grant approved on the host appears in a process
# started before it (read-only: EROFS; rw: writes land with the host's
# owner), revoke takes it away, deny and time-out grant nothing, what the
# policy never allows is refused without asking (never-granted, outside
# the grant roots, a symlink out, the workspace itself), an approval is
# bound to the request's hash, the control socket is out of reach from
# inside and refuses a peer in another user namespace, and bad or flooding
# requests get answers while the relay keeps serving within bounded memory.
T_NAME=relay
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
# Rootless sandboxes here have no delegated cgroup.
floor 'limits_best_effort = true'

relay_cleanup() {
        [[ -n $RELAY_PID ]] && kill "$RELAY_PID" 2>/dev/null
        for p in "$T_TMP"/home/proj "$UHOME"/proj "$T_TMP"/home/other "$UHOME"/other; do
                [[ -d $p ]] || continue
                "$RT" --root "$T_ROOT" sandbox down -p "$p" >/dev/null 2>&1
                U_ "$RT" sandbox down -p "$p" >/dev/null 2>&1
        done
}
T_EXTRA_CLEANUP=relay_cleanup

. "$(dirname "$0")/helpers/relay-lib.sh"

# Raw protocol from inside: RAW LINE... sends each line on one connection
# and prints the answers; FLOOD N opens N connections in a burst and sends
# N bad lines on one, printing how many answers came back.
read -r -d '' RAWPY <<'EOF'
import socket, sys
def conn():
    s = socket.socket(socket.AF_UNIX)
    s.connect("/run/umwelt/relay.sock")
    return s
if sys.argv[1] == "raw":
    s = conn()
    f = s.makefile("rb")
    for line in sys.argv[2:]:
        s.sendall(line.encode() + b"\n")
        print(f.readline().decode().rstrip())
elif sys.argv[1] == "flood":
    n = int(sys.argv[2])
    held = []
    refused = 0
    for _ in range(n):
        try:
            held.append(conn())
        except OSError:
            refused += 1
    for s in held:
        s.close()
    s = conn()
    s.sendall(b"garbage\n" * n)
    s.shutdown(socket.SHUT_WR)
    got = b""
    try:
        while d := s.recv(65536):
            got += d
    except ConnectionResetError:
        pass  # the relay stops reading a connection that sends only garbage
    print("answered" if got.count(b"\n") > 0 else "unanswered")
elif sys.argv[1] == "control":
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(sys.argv[2])
        s.sendall(b'{"v":1,"op":"pending"}\n')
        s.settimeout(2)
        print("answered" if s.recv(100) else "closed")
    except (BrokenPipeError, ConnectionResetError):
        print("closed")
    except OSError as e:
        print("unreachable %s" % e.strerror)
EOF

relay_rss() { awk '/^VmRSS:/ {print $2}' "/proc/$RELAY_PID/status"; }
# relay_abstract: the abstract names (@...) of the relay's unix sockets.
relay_abstract() {
        local inodes
        inodes=$(ls -l "/proc/$RELAY_PID/fd" 2>/dev/null | sed -n 's/.*socket:\[\([0-9]*\)\]$/\1/p' | tr '\n' ' ')
        [[ -n $inodes ]] || { echo "no socket found"; return; }
        awk -v want=" $inodes" 'NR > 1 && index(want, " " $7 " ") && $8 ~ /^@/ {print $8}' /proc/net/unix
}

scene() {
        WHO=$1
        local proj home data
        if [[ $WHO == root ]]; then home=$T_TMP/home; else home=$UHOME; fi
        proj=$home/proj
        data=$home/data
        mkdir -p "$proj" "$data/sub" "$home/.ssh" "$home/std/a" "$home/.config/umwelt" "$home/rem"
        touch "$home/std/a/g" "$home/rem/g"
        printf '[relay]\ntimeout = 4\nallow_ro = ["%s/std/*"]\n' "$home" >"$home/.config/umwelt/config.toml"
        echo granted-content >"$data/f"
        ln -sfn /etc "$data/link-out"
        cp "$RT" "$proj/umw"
        printf '%s\n' "$RAWPY" >"$proj/raw.py"
        [[ $WHO == user ]] && chown -R "$U:$G" "$proj" "$home"
        start_relay
        t_eq "$WHO: the relay runs" yes "$([[ -n $RELAY_PID ]] && kill -0 "$RELAY_PID" && echo yes)" \
                "$(cat "$T_TMP"/relay-*.log 2>/dev/null)"
        capture S sandbox up -p "$proj" --workspace direct
        t_eq "$WHO: sandbox up" 0 "$T_RC" "$T_OUT"

        # A process that started before the grant.
        S sandbox exec -p "$proj" -- /bin/sh -c \
                'for i in $(seq 200); do [ -e "$1/f" ] && break; sleep 0.05; done
                 cat "$1/f"; echo x >"$1/new" 2>&1 || echo refused' sh "$data" \
                >"$T_TMP/$WHO-waiter" 2>&1 &
        local waiter=$!
        S sandbox exec -p "$proj" -- ./umw request grant "$data" --why "read the data" \
                >"$T_TMP/$WHO-req" 2>&1 &
        local req=$!
        local id
        id=$(wait_pending)
        t_eq "$WHO: the request waits for a human" "grant ro $data read the data" \
                "$(pending_field "$id" kind) $(pending_field "$id" mode) $(pending_field "$id" path) $(pending_field "$id" why)"
        t_eq "$WHO: nothing is mounted before the approval" "absent" \
                "$(S sandbox exec -p "$proj" -- /bin/sh -c "test -e '$data/f' && echo present || echo absent")"
        capture S relay approve "$id"
        t_eq "$WHO: relay approve" 0 "$T_RC" "$T_OUT"
        wait "$req"
        t_eq "$WHO: request grant exits 0 once approved" 0 "$?" "$(cat "$T_TMP/$WHO-req")"
        wait "$waiter"
        t_eq "$WHO: the process started before sees the path, read-only" \
                "granted-content"$'\n'"refused" "$(grep -v 'Read-only' "$T_TMP/$WHO-waiter")" \
                "$(cat "$T_TMP/$WHO-waiter")"
        t_match "$WHO: ... a write is EROFS" "Read-only file system" "$(cat "$T_TMP/$WHO-waiter")"
        t_eq "$WHO: request status lists it" "grant ro $data" \
                "$(S sandbox exec -p "$proj" -- ./umw request status 2>&1)"
        capture S sandbox exec -p "$proj" -- ./umw request grant "$data" --why again
        t_eq "$WHO: the same grant again is refused without asking (exit 9)" 9 "$T_RC" "$T_OUT"
        # Another sandbox of the same user: the relay knows it by its own
        # socket, and it holds nothing of the first's.
        mkdir -p "$home/other"
        cp "$RT" "$home/other/umw"
        [[ $WHO == user ]] && chown -R "$U:$G" "$home/other"
        capture S sandbox up -p "$home/other" --workspace direct
        t_eq "$WHO: another sandbox up" 0 "$T_RC" "$T_OUT"
        t_eq "$WHO: another sandbox's status is its own (empty)" "" \
                "$(S sandbox exec -p "$home/other" -- ./umw request status 2>&1)"
        t_eq "$WHO: ... and the grant is not in it" "absent" \
                "$(S sandbox exec -p "$home/other" -- /bin/sh -c "test -e '$data/f' && echo present || echo absent")"
        capture S sandbox exec -p "$home/other" -- ./umw request revoke "$data"
        t_eq "$WHO: ... nor can it revoke the first's" 9 "$T_RC" "$T_OUT"
        capture S sandbox down -p "$home/other"

        capture S sandbox exec -p "$proj" -- ./umw request revoke "$data"
        t_eq "$WHO: revoke" 0 "$T_RC" "$T_OUT"
        t_eq "$WHO: ... the path is gone inside" "absent" \
                "$(S sandbox exec -p "$proj" -- /bin/sh -c "test -e '$data/f' && echo present || echo absent")"

        # rw: exactly its subtree, with the host's owner.
        S sandbox exec -p "$proj" -- ./umw request grant "$data/sub" --rw --why "write output" \
                >"$T_TMP/$WHO-req" 2>&1 &
        req=$!
        id=$(wait_pending)
        capture S relay approve "$id"
        wait "$req"
        t_eq "$WHO: a rw grant is approved" 0 "$?" "$(cat "$T_TMP/$WHO-req")"
        S sandbox exec -p "$proj" -- /bin/sh -c "echo out >'$data/sub/w'" >/dev/null 2>&1
        local owner
        if [[ $WHO == root ]]; then owner=0; else owner=$U; fi
        t_eq "$WHO: ... a write lands on the host with the host's owner" "out $owner" \
                "$(cat "$data/sub/w" 2>&1) $(stat -c %u "$data/sub/w" 2>&1)"

        # deny, and nobody answering.
        S sandbox exec -p "$proj" -- ./umw request grant "$data" --why "denied one" \
                >"$T_TMP/$WHO-req" 2>&1 &
        req=$!
        id=$(wait_pending)
        capture S relay deny "$id" --why "not today"
        wait "$req"
        t_eq "$WHO: a denied request exits 7" 7 "$?" "$(cat "$T_TMP/$WHO-req")"
        t_match "$WHO: ... with the human's reason" "denied: not today" "$(cat "$T_TMP/$WHO-req")"
        capture S sandbox exec -p "$proj" -- ./umw request grant "$data" --why "nobody answers"
        t_eq "$WHO: an unanswered request times out (exit 8)" 8 "$T_RC" "$T_OUT"
        t_eq "$WHO: ... and neither granted anything" "absent" \
                "$(S sandbox exec -p "$proj" -- /bin/sh -c "test -e '$data/f' && echo present || echo absent")"

        # Refused without asking: nothing becomes pending.
        local path
        for path in "$home/.ssh" /etc "$data/link-out" "$proj" "$(dirname "$proj")"; do
                capture S sandbox exec -p "$proj" -- ./umw request grant "$path" --why x
                t_eq "$WHO: grant $path is refused without asking (exit 9)" "9 " \
                        "$T_RC $(S relay pending --json 2>&1)" "$T_OUT"
        done

        # A standing rule of the user's: granted without asking, read-only.
        capture S sandbox exec -p "$proj" -- ./umw request grant "$home/std/a" --why standing
        t_eq "$WHO: a grant a standing rule allows is given without asking" "0 " \
                "$T_RC $(S relay pending --json 2>&1)" "$T_OUT"
        t_eq "$WHO: ... and is there" "present" \
                "$(S sandbox exec -p "$proj" -- /bin/sh -c "test -e '$home/std/a/g' && echo present")"
        capture S sandbox exec -p "$proj" -- ./umw request grant "$home/std" --why "not below it"
        t_eq "$WHO: ... the rule's glob holds: its parent is asked (and times out)" 8 "$T_RC" "$T_OUT"
        t_match "$WHO: ... audited as allowed by the rule" 'decision=allowed by=rule rule='"$home"'/std/\*' \
                "$(S sandbox log -p "$proj" 2>&1)"
        capture S sandbox exec -p "$proj" -- ./umw request revoke "$home/std/a"

        # The approval is for the inode asked about: a directory renamed
        # over the name while the human decides is not what gets mounted.
        S sandbox exec -p "$proj" -- ./umw request grant "$data" --why "swapped" \
                >"$T_TMP/$WHO-req" 2>&1 &
        req=$!
        id=$(wait_pending)
        mv "$data" "$data.asked" && mkdir "$data" && echo swapped-in >"$data/f"
        [[ $WHO == user ]] && chown -R "$U:$G" "$data"
        capture S relay approve "$id"
        wait "$req"
        t_eq "$WHO: a path swapped while pending is refused at the approval (exit 1)" 1 "$?" \
                "$(cat "$T_TMP/$WHO-req") / $T_OUT"
        t_match "$WHO: ... naming it" "no longer the directory it was when asked" \
                "$(cat "$T_TMP/$WHO-req")"
        t_eq "$WHO: ... and mounted nothing" "absent" \
                "$(S sandbox exec -p "$proj" -- /bin/sh -c "test -e '$data/f' && echo present || echo absent")"
        rm -rf "$data" && mv "$data.asked" "$data"

        # The approval is bound to the hash of the request shown.
        S sandbox exec -p "$proj" -- ./umw request grant "$data" --why "hash" \
                >"$T_TMP/$WHO-req" 2>&1 &
        req=$!
        id=$(wait_pending)
        t_match "$WHO: approving with another hash is refused" "not the request shown" \
                "$(as_who /usr/bin/python3 - "$(relay_dir)/control.sock" "$id" <<'EOF' 2>&1
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(('{"v":1,"op":"approve","id":"%s","hash":"%s"}\n' % (sys.argv[2], "0" * 64)).encode())
print(s.recv(4096).decode())
EOF
)"
        capture S relay deny "$id"
        wait "$req"

        # The human side from inside: not there, and not by its host path.
        t_eq "$WHO: the control socket is not reachable from inside" \
                "unreachable No such file or directory" \
                "$(S sandbox exec -p "$proj" -- python3 raw.py control "$(relay_dir)/control.sock" 2>&1)"
        t_eq "$WHO: ... nor by an abstract name: the relay binds none" "" "$(relay_abstract)"
        if [[ $WHO == root ]]; then
                t_eq "$WHO: a peer in another user namespace is turned away" closed \
                        "$(unshare -U "$PY" "$proj/raw.py" control "$(relay_dir)/control.sock" 2>&1)"
        fi

        # Bad input and floods: answered, and the relay goes on.
        t_match "$WHO: a malformed request gets an error" '"status":"error".*required' \
                "$(S sandbox exec -p "$proj" -- python3 raw.py raw '{"v":1,"kind":"grant"}' 2>&1)"
        t_match "$WHO: an unknown kind gets an error" '"status":"error"' \
                "$(S sandbox exec -p "$proj" -- python3 raw.py raw '{"v":1,"kind":"sudo"}' 2>&1)"
        local before after
        before=$(relay_rss)
        t_eq "$WHO: a flood of 3000 connections, then of 3000 bad lines, is answered" answered \
                "$(S sandbox exec -p "$proj" -- python3 raw.py flood 3000 2>&1)"
        after=$(relay_rss)
        # AddressSanitizer keeps what is freed in quarantine: memory is
        # measured in a release build (scripts/bench-relay.sh).
        if ldd "$RELAY" 2>/dev/null | grep -q libasan; then
                t_skip "$WHO: ... and the relay's memory stays within 1 MiB of before" \
                        "an AddressSanitizer build (RSS ${before} kB -> ${after} kB)"
        else
                t_eq "$WHO: ... and the relay's memory stays within 1 MiB of before" yes \
                        "$([[ $((after - before)) -lt 1024 ]] && echo yes)" "RSS ${before} kB -> ${after} kB"
        fi
        capture S sandbox exec -p "$proj" -- ./umw request note "still serving"
        t_eq "$WHO: ... and still serves (a note)" 0 "$T_RC" "$T_OUT"
        t_match "$WHO: ... the note is in the central notes log, with its sandbox" \
                "relay-note.*\"workspace\":\"$proj\".*still serving" \
                "$(cat "$(state_home)"/umwelt/notes.jsonl 2>&1)"
        t_match "$WHO: the audit log has the requests, decisions and grants" \
                'relay-request.*relay-decision.*relay-grant.*relay-revoke.*relay-note' \
                "$(S sandbox log -p "$proj" 2>&1 | tr '\n' ' ')"

        # ingress: a port published live on the host's loopback, reaching
        # a server a process inside listens with.
        local port=$((20000 + RANDOM % 20000))
        S sandbox exec -p "$proj" -- python3 -c 'import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1])))
s.listen(4)
c, _ = s.accept()
c.sendall(b"from inside\n")' "$port" >/dev/null 2>&1 &
        local server=$!
        S sandbox exec -p "$proj" -- ./umw request ingress "$port" --why "a dev server" \
                >"$T_TMP/$WHO-req" 2>&1 &
        req=$!
        id=$(wait_pending)
        t_eq "$WHO: an ingress request waits for a human, showing its port" "ingress $port" \
                "$(pending_field "$id" kind) $(pending_field "$id" port)"
        capture S relay approve "$id" --remember
        t_match "$WHO: ... --remember is refused for a port (a grant's alone)" "remember keeps grants" \
                "$T_RC $T_OUT"
        capture S relay approve "$id"
        wait "$req"
        t_eq "$WHO: ... approved, request ingress exits 0" "0 0" "$T_RC $?" "$T_OUT $(cat "$T_TMP/$WHO-req")"
        t_eq "$WHO: ... the host's 127.0.0.1:$port reaches the server inside" "from inside" \
                "$("$PY" -c 'import socket, sys, time
for _ in range(50):
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
        d = s.recv(100)
        if d:
            print(d.decode().strip()); break
    except OSError:
        pass
    time.sleep(0.1)' "$port" 2>&1)"
        kill "$server" 2>/dev/null
        wait "$server" 2>/dev/null
        t_match "$WHO: ... status lists the port" "ingress $port" \
                "$(S sandbox exec -p "$proj" -- ./umw request status 2>&1)"
        capture S sandbox exec -p "$proj" -- ./umw request ingress "$port" --why again
        t_eq "$WHO: ... the same port again is refused without asking (exit 9)" 9 "$T_RC" "$T_OUT"
        capture S sandbox exec -p "$proj" -- ./umw request ingress 0 --why zero
        t_eq "$WHO: ... port 0 is a usage error" 2 "$T_RC" "$T_OUT"
        t_match "$WHO: ... the audit log has the request, the approval and the port" \
                "relay-request.*ingress.*relay-decision.*relay-ingress.*$port" \
                "$(S sandbox log -p "$proj" 2>&1 | tr '\n' ' ')"

        # SIGKILL: a pending request grants nothing; a restarted relay
        # knows the grants the killed one made, and revokes them.
        capture S sandbox exec -p "$proj" -- ./umw request grant "$home/std/a" --why "kept"
        t_eq "$WHO: a standing grant before the relay is killed" 0 "$T_RC" "$T_OUT"
        S sandbox exec -p "$proj" -- ./umw request grant "$data" --why "the relay dies" \
                >"$T_TMP/$WHO-req" 2>&1 &
        req=$!
        id=$(wait_pending)
        local lefthash
        lefthash=$(pending_field "$id" hash)
        kill -KILL "$RELAY_PID"
        wait "$req"
        t_eq "$WHO: a request pending when the relay is SIGKILLed fails" 1 "$?" \
                "$(cat "$T_TMP/$WHO-req")"
        t_eq "$WHO: ... and granted nothing" "absent" \
                "$(S sandbox exec -p "$proj" -- /bin/sh -c "test -e '$data/f' && echo present || echo absent")"
        for _ in $(seq 100); do kill -0 "$RELAY_PID" 2>/dev/null || break; sleep 0.05; done
        start_relay
        t_eq "$WHO: a restarted relay answers the sandbox, knowing its grants and ports" \
                "grant rw $data/sub"$'\n'"grant ro $home/std/a"$'\n'"ingress $port" \
                "$(S sandbox exec -p "$proj" -- ./umw request status 2>&1)"
        t_eq "$WHO: ... nothing is pending" "" "$(S relay pending --json 2>&1)"
        capture S sandbox exec -p "$proj" -- ./umw request ingress "$port" --why "after the restart"
        t_eq "$WHO: ... and refuses the port the killed one published (exit 9)" 9 "$T_RC" "$T_OUT"
        local left=
        for _ in $(seq 100); do
                left=$(grep -h "relay-decision.*$lefthash" "$(state_home)"/umwelt/*/audit.jsonl 2>/dev/null)
                [[ -n $left ]] && break
                sleep 0.05
        done
        t_match "$WHO: ... and audits what the killed one left pending as denied" \
                '"decision":"denied","by":"relay"' "$left"
        capture S sandbox exec -p "$proj" -- ./umw request revoke "$home/std/a"
        t_eq "$WHO: ... and revokes what the killed one granted" "0 absent" \
                "$T_RC $(S sandbox exec -p "$proj" -- /bin/sh -c "test -e '$home/std/a/g' && echo present || echo absent")" \
                "$T_OUT"

        # --remember: kept for the next start, outside the workspace.
        S sandbox exec -p "$proj" -- ./umw request grant "$home/rem" --why "every time" \
                >"$T_TMP/$WHO-req" 2>&1 &
        req=$!
        id=$(wait_pending)
        capture S relay approve "$id" --remember
        wait "$req"
        t_eq "$WHO: approve --remember grants" "0 0" "$T_RC $?" "$T_OUT $(cat "$T_TMP/$WHO-req")"

        local sid
        sid=$(json_get "$(S sandbox status -p "$proj" --json 2>/dev/null)" "j['id']")
        capture S sandbox down -p "$proj"
        t_eq "$WHO: sandbox down" 0 "$T_RC" "$T_OUT"
        t_eq "$WHO: ... its door is gone" "gone" \
                "$([[ -n $sid && ! -e $(relay_dir)/sandboxes/$sid ]] && echo gone)" "$sid"
        capture S sandbox up -p "$proj" --workspace direct
        t_eq "$WHO: the remembered grant is there at the next start, read-only" "present refused" \
                "$(S sandbox exec -p "$proj" -- /bin/sh -c "test -e '$home/rem/g' && echo present; touch '$home/rem/x' 2>/dev/null || echo refused" | tr '\n' ' ' | sed 's/ $//')" \
                "$T_OUT"
        t_eq "$WHO: ... kept in the project's state, not in the workspace" "ro $home/rem" \
                "$(cat "$(state_home)"/umwelt/*/relay-grants 2>&1)" "$(ls -a "$proj")"
        # A relay ended with SIGTERM denies what waits, and says so.
        S sandbox exec -p "$proj" -- ./umw request grant "$data" --why "the relay stops" \
                >"$T_TMP/$WHO-req" 2>&1 &
        req=$!
        id=$(wait_pending)
        lefthash=$(pending_field "$id" hash)
        kill -TERM "$RELAY_PID"
        wait "$req"
        t_eq "$WHO: a request waiting when the relay is stopped is denied (exit 7)" 7 "$?" \
                "$(cat "$T_TMP/$WHO-req")"
        t_match "$WHO: ... audited as denied by the relay" \
                '"decision":"denied","by":"relay","why":"the relay ended"' \
                "$(grep -h "relay-decision.*$lefthash" "$(state_home)"/umwelt/*/audit.jsonl 2>&1)"
        capture S sandbox down -p "$proj"
        stop_relay
}

scene root
scene user

# Socket activation as systemd does it (umwelt-relay.socket): the control
# socket made and listening before the relay, handed over as fd 3 with
# LISTEN_PID and LISTEN_FDS; the relay serves it rather than its own.
WHO=user
mkdir -p -m 700 "$XDG/umwelt/relay"
chown "$U:$G" "$XDG/umwelt" "$XDG/umwelt/relay"
rm -f "$RELAY_PIDFILE"
U_ /usr/bin/python3 -c '
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
try:
    os.unlink(sys.argv[1])  # as systemd does with a stale socket
except FileNotFoundError:
    pass
s.bind(sys.argv[1]); s.listen(8)
if s.fileno() != 3:
    os.dup2(s.fileno(), 3)
os.set_inheritable(3, True)  # dup2 onto itself would leave it close-on-exec
os.environ["LISTEN_FDS"] = "1"; os.environ["LISTEN_PID"] = str(os.getpid())
open(sys.argv[3], "w").write(str(os.getpid()))
os.execv(sys.argv[2], [sys.argv[2], "--idle", "0"])' "$XDG/umwelt/relay/control.sock" "$RELAY" \
        "$RELAY_PIDFILE" 2>>"$T_TMP/relay-user.log" &
for _ in $(seq 100); do [[ -s $RELAY_PIDFILE ]] && break; sleep 0.05; done
RELAY_PID=$(cat "$RELAY_PIDFILE")
ino=$(stat -c %i "$XDG/umwelt/relay/control.sock")
for _ in $(seq 100); do relay_locked && break; sleep 0.05; done
capture U_ "$RT" relay pending
t_eq "socket activation: the relay answers on the socket it was given" 0 "$T_RC" "$T_OUT" \
        "$(tail -5 "$T_TMP/relay-user.log" 2>&1)"
t_eq "... the very socket (not one it made)" "$ino" "$(stat -c %i "$XDG/umwelt/relay/control.sock")"
stop_relay
no_sanitizer_reports "$T_TMP"/relay-*.log
t_done
