#!/bin/bash
# Loopback ingress (netns/ingress.h) into a real sandbox: a server inside is
# reached from the host's 127.0.0.1 and [::1] and from no other address;
# listeners on loopback only; a refusal inside resets at once; a port in
# use is refused by name and leaves nothing; the sandbox still has no way
# out; an audit line per port; the forwarder ends with the sandbox. As root
# (sandbox run) and as the unprivileged user (a rootless container). The
# "no other address" part runs the forwarder in a network namespace of the
# test's own, joined by a veth to another: the machine's own interfaces are
# never touched.
T_NAME=ingress
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

HELPER=$UMW_BUILDDIR/tests/integration/helpers/ingress-start
[[ -x $HELPER ]] || t_bail "$HELPER missing (make check builds it)"
for tool in ss ip nsenter; do
        command -v "$tool" >/dev/null || t_bail "$tool missing (scripts/setup.sh installs iproute2, util-linux)"
done

export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
mkdir -p "$HOME" "$T_TMP/proj"
proj=$T_TMP/proj
TOKEN=ingress-$RANDOM$RANDOM
echo "$TOKEN" >"$proj/hello.txt"
AUDIT=$T_TMP/audit.jsonl
NS_H=umwt-ingh-$$
NS_C=umwt-ingc-$$
FWDS=()
BGS=()
T_EXTRA_CLEANUP='for p in "${FWDS[@]}" "${BGS[@]}"; do kill -9 "$p" 2>/dev/null; done
ip netns del "$NS_H" 2>/dev/null; ip netns del "$NS_C" 2>/dev/null'

# free_port: a port nothing uses on 127.0.0.1 nor on [::1].
free_port() {
        "$PY" - <<'EOF'
import random, socket
for _ in range(200):
    p = random.randint(20000, 60000)
    try:
        for fam, addr in ((socket.AF_INET, "127.0.0.1"), (socket.AF_INET6, "::1")):
            s = socket.socket(fam)
            s.bind((addr, p))
            s.close()
    except OSError:
        continue
    print(p)
    break
EOF
}

# nsrun CMD...: CMD in the network namespace IN when it is set.
nsrun() {
        if [[ -n ${IN:-} ]]; then ip netns exec "$IN" "$@"; else "$@"; fi
}

# fetch URL: the body, or ERR:<what failed>.
fetch() {
        nsrun "$PY" - "$1" <<'EOF'
import sys, urllib.request
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
try:
    print(opener.open(sys.argv[1], timeout=5).read().decode().strip())
except Exception as e:
    print("ERR:%s" % type(e).__name__)
EOF
}

# tcp_try HOST PORT: "connected", or the error's name.
tcp_try() {
        nsrun "$PY" - "$1" "$2" <<'EOF'
import socket, sys
try:
    socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=3).close()
    print("connected")
except OSError as e:
    print(type(e).__name__)
EOF
}

# after_request PORT: how a request to 127.0.0.1:PORT ends ("closed",
# "data", "timeout") and whether within two seconds ("fast"/"slow").
after_request() {
        "$PY" - "$1" <<'EOF'
import socket, sys, time
t = time.monotonic()
try:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    s.sendall(b"GET / HTTP/1.0\r\n\r\n")
    what = "data" if s.recv(100) else "closed"
except (ConnectionResetError, BrokenPipeError):
    what = "closed"
except socket.timeout:
    what = "timeout"
print(what, "fast" if time.monotonic() - t < 2 else "slow")
EOF
}

# listeners PORT: the local addresses listening on PORT, sorted, one line.
listeners() {
        nsrun ss -ltnH "sport = :$1" | awk '{ print $4 }' | sort | tr '\n' ' ' | sed 's/ $//'
}

# gone PID [TENTHS]: true once PID has exited.
gone() {
        local n=${2:-30}
        while ((n-- > 0)); do
                proc_alive "$1" || return 0
                sleep 0.1
        done
        return 1
}

# forwarders: how many forwarder processes run (zombies aside).
forwarders() { pgrep -xc -r S,R,D umwelt-ingress; }

# ---------------------------------------------------------------- as root

PORT=$(free_port)
P2=$(free_port)
P3=$(free_port)
[[ -n $PORT && -n $P2 && -n $P3 && $PORT != "$P2" && $P2 != "$P3" ]] || t_bail "no free port"

"$RT" --root "$T_ROOT" sandbox run -p "$proj" -- \
        python3 -m http.server "$PORT" --bind 127.0.0.1 --directory "$proj" \
        >"$T_TMP/sbx.out" 2>"$T_TMP/sbx.err" </dev/null &
BGS+=($!)
id=
for _ in $(seq 100); do
        id=$(rt list -q)
        [[ -n $id ]] && [[ $(state_field "$id" status) == running ]] && break
        sleep 0.05
done
SPID=$(state_field "$id" pid)
[[ -n $SPID ]] || t_bail "the sandbox did not start: $(cat "$T_TMP/sbx.err")"
for _ in $(seq 100); do
        [[ -n $(nsenter -t "$SPID" -n ss -ltnH "sport = :$PORT") ]] && break
        sleep 0.1
done

t_match "without the forwarder the host's loopback does not reach the server" "^ERR:" \
        "$(fetch "http://127.0.0.1:$PORT/hello.txt")"

capture_split "$HELPER" --audit "$AUDIT" --id "$id" "$SPID" "$PORT" "$P2"
t_eq "the forwarder starts" 0 "$T_RC" "$T_ERR"
FWD=$T_OUT
FWDS+=("$FWD")

t_eq "http://127.0.0.1:PORT on the host reaches the server inside" "$TOKEN" \
        "$(fetch "http://127.0.0.1:$PORT/hello.txt")"
t_eq "http://[::1]:PORT on the host reaches the server inside" "$TOKEN" \
        "$(fetch "http://[::1]:$PORT/hello.txt")"
t_eq "the listeners are 127.0.0.1 and [::1] only" "127.0.0.1:$PORT [::1]:$PORT" "$(listeners "$PORT")"
t_eq "... for each published port" "127.0.0.1:$P2 [::1]:$P2" "$(listeners "$P2")"
t_match "... and they are the forwarder's" "\"umwelt-ingress\",pid=$FWD," \
        "$(ss -ltnpH "sport = :$PORT")"
t_eq "the forwarder is in the sandbox's network namespace" "$(readlink "/proc/$SPID/ns/net")" \
        "$(readlink "/proc/$FWD/ns/net")"
t_match "the forwarder holds no capability, with no_new_privs" \
        "CapPrm: 0+ CapEff: 0+ CapBnd: 0+ CapAmb: 0+ NoNewPrivs: 1" \
        "$(grep -E '^(CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' "/proc/$FWD/status" | tr -s '\t' ' ' | tr '\n' ' ')"
t_eq "... and keeps no file of its starter's (epoll, pidfd, 4 sockets)" \
        "/dev/null /dev/null /dev/null anon_inode:[eventpoll] anon_inode:[pidfd] socket socket socket socket" \
        "$(for f in /proc/"$FWD"/fd/*; do readlink "$f"; done | sed 's/:\[[0-9]*\]$//' | sort | tr '\n' ' ' | sed 's/ $//')"
t_eq "a port nothing listens on inside: the client is reset at once" "closed fast" \
        "$(after_request "$P2")"

# A port in use on the host: refused in one line naming it, nothing left.
before=$(forwarders)
capture_split "$HELPER" "$SPID" "$PORT"
t_eq "a port the host already uses is refused (exit 1)" 1 "$T_RC" "$T_ERR"
t_match "... naming the port and the address" "port $PORT: cannot listen on 127.0.0.1:$PORT: Address already in use" "$T_ERR"
t_eq "... in one line" 1 "$(wc -l <<<"$T_ERR")"
t_eq "... with no process left" "$before" "$(forwarders)"
t_eq "... and the first forwarder's listeners untouched" "127.0.0.1:$PORT [::1]:$PORT" "$(listeners "$PORT")"
"$PY" -c 'import socket, sys, time
s = socket.socket(socket.AF_INET6); s.bind(("::1", int(sys.argv[1]))); s.listen()
print("ready", flush=True); time.sleep(60)' "$P3" >"$T_TMP/hold.out" &
BGS+=($!)
wait_file "$T_TMP/hold.out"
capture_split "$HELPER" "$SPID" "$P3"
t_match "[::1]:PORT in use is refused by name" "cannot listen on \[::1\]:$P3" "$T_ERR"
t_eq "... leaving no 127.0.0.1 listener behind" "[::1]:$P3" "$(listeners "$P3")"
t_eq "... and no process" "$before" "$(forwarders)"
kill "${BGS[-1]}"

log=$(grep '"event":"ingress"' "$AUDIT" 2>/dev/null)
t_eq "the audit log has one line per published port" 2 "$(grep -c . <<<"$log")" "$log"
t_match "... naming port, addresses, sandbox and forwarder" \
        "\"port\":\"$PORT\",\"listen\":\"127.0.0.1:$PORT \[::1\]:$PORT\",\"inside\":\"127.0.0.1:$PORT\",\"forwarder\":\"$FWD\",\"id\":\"$id\"" \
        "$log"
t_match "... and the second port" "\"port\":\"$P2\"" "$log"

# ---------------------------------------------------------------- no other address

# NS_H plays the host with a non-loopback address on a veth to NS_C.
ip netns add "$NS_H" && ip netns add "$NS_C" &&
        ip -n "$NS_H" link add vh type veth peer name vc netns "$NS_C" &&
        ip -n "$NS_H" addr add 192.0.2.1/24 dev vh && ip -n "$NS_C" addr add 192.0.2.2/24 dev vc &&
        ip -n "$NS_H" addr add 2001:db8::1/64 dev vh nodad &&
        ip -n "$NS_C" addr add 2001:db8::2/64 dev vc nodad &&
        ip -n "$NS_H" link set lo up && ip -n "$NS_H" link set vh up &&
        ip -n "$NS_C" link set lo up && ip -n "$NS_C" link set vc up ||
        t_bail "cannot set up the test network namespaces"
# A control listener on every address of NS_H proves the path through the veth.
PX=$(free_port)
ip netns exec "$NS_H" "$PY" -c 'import socket, sys
s = socket.socket(socket.AF_INET6); s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", int(sys.argv[1]))); s.listen()
while True: s.accept()[0].close()' "$PX" &
BGS+=($!)
capture_split ip netns exec "$NS_H" "$HELPER" "$SPID" "$PORT"
t_eq "a forwarder started in a test namespace" 0 "$T_RC" "$T_ERR"
FWDS+=("$T_OUT")
try_from() { IN=$1 tcp_try "$2" "$3"; }
for _ in $(seq 50); do
        [[ $(try_from "$NS_C" 192.0.2.1 "$PX") == connected ]] && break
        sleep 0.1
done
t_eq "there: 127.0.0.1:PORT reaches the server" "$TOKEN" \
        "$(IN=$NS_H fetch "http://127.0.0.1:$PORT/hello.txt")"
t_eq "there: the listeners are 127.0.0.1 and [::1] only" "127.0.0.1:$PORT [::1]:$PORT" \
        "$(IN=$NS_H listeners "$PORT")"
t_eq "control: the veth peer reaches a listener on 192.0.2.1" connected "$(try_from "$NS_C" 192.0.2.1 "$PX")"
t_eq "control: ... and on 2001:db8::1" connected "$(try_from "$NS_C" 2001:db8::1 "$PX")"
t_eq "the veth peer cannot reach the published port on 192.0.2.1" ConnectionRefusedError \
        "$(try_from "$NS_C" 192.0.2.1 "$PORT")"
t_eq "... nor on 2001:db8::1" ConnectionRefusedError "$(try_from "$NS_C" 2001:db8::1 "$PORT")"
t_eq "... nor does the namespace itself on its own 192.0.2.1" ConnectionRefusedError \
        "$(try_from "$NS_H" 192.0.2.1 "$PORT")"

# ---------------------------------------------------------------- still closed

capture rt exec "$id" python3 -c 'import socket
print(sorted(n for _, n in socket.if_nameindex()))
for addr in ("192.0.2.1", "2001:db8::1"):
    try:
        socket.create_connection((addr, '"$PX"'), timeout=3).close()
        print("connected")
    except OSError as e:
        print(type(e).__name__)'
t_eq "inside, after publishing: still no interface but lo, no way out" \
        "['lo'] OSError OSError" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_OUT"

# ---------------------------------------------------------------- the end

rt kill "$id" KILL >/dev/null 2>&1
wait "${BGS[0]}" 2>/dev/null
t_eq "the forwarder ends with the sandbox" yes "$(gone "$FWD" && echo yes)"
t_eq "... so does the one in the test namespace" yes "$(gone "${FWDS[1]}" && echo yes)"
t_eq "... and its listeners are gone" "" "$(listeners "$PORT")"
capture_split "$HELPER" "$SPID" "$PORT"
t_eq "a sandbox that has ended is refused (exit 6)" 6 "$T_RC" "$T_ERR"
t_eq "... leaving no listener" "" "$(listeners "$PORT")"

# ---------------------------------------------------------------- rootless

t_test_user
rb=$T_TMP/rootless-bundle
mkdir -p "$rb"
cp -a "$T_TMP/rootfs-template" "$rb/rootfs"
mkdir -p "$rb/rootfs/www"
echo "$TOKEN-rootless" >"$rb/rootfs/www/hello.txt"
chown "$U:$G" "$rb"
(cd "$rb" && "$RT" spec --rootless) || t_bail "spec --rootless failed"
RPORT=$(free_port)
cfg_set "$rb" "c['process']['terminal'] = False
c['process']['args'] = ['/bin/busybox', 'httpd', '-f', '-p', '127.0.0.1:$RPORT', '-h', '/www']
c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': $U, 'size': 1}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': $G, 'size': 1}]
c.setdefault('annotations', {})['run.umwelt.net'] = 'default-drop'
set_ns('network')"
chown -R "$U:$G" "$rb/config.json"
urt() { as_user "$RT" --root "$XDG/state" "$@"; }
T_EXTRA_CLEANUP+='; for i in $(urt list -q 2>/dev/null); do urt delete -f "$i" >/dev/null 2>&1; done'
capture urt run -d --bundle "$rb" ingress-rootless
t_eq "a rootless container with the default-drop wall runs" 0 "$T_RC" "$T_OUT"
RPID=$(json_get "$(urt state ingress-rootless)" "j['pid']")
for _ in $(seq 100); do
        [[ -n $(nsenter -t "$RPID" -n ss -ltnH "sport = :$RPORT") ]] && break
        sleep 0.1
done
capture_split as_user "$HELPER" "$RPID" "$RPORT"
t_eq "rootless: the user starts a forwarder" 0 "$T_RC" "$T_ERR"
RFWD=$T_OUT
FWDS+=("$RFWD")
t_eq "rootless: 127.0.0.1 reaches busybox httpd inside" "$TOKEN-rootless" \
        "$(fetch "http://127.0.0.1:$RPORT/hello.txt")"
t_eq "rootless: ... and [::1]" "$TOKEN-rootless" "$(fetch "http://[::1]:$RPORT/hello.txt")"
t_eq "rootless: the listeners are loopback only" "127.0.0.1:$RPORT [::1]:$RPORT" "$(listeners "$RPORT")"
t_eq "rootless: the forwarder runs as the user" "$U" "$(stat -c %u "/proc/$RFWD")"
t_eq "rootless: ... in the container's user and network namespaces" \
        "$(readlink "/proc/$RPID/ns/user" "/proc/$RPID/ns/net" || echo no container)" \
        "$(readlink "/proc/$RFWD/ns/user" "/proc/$RFWD/ns/net")"
urt kill ingress-rootless KILL >/dev/null 2>&1
t_eq "rootless: the forwarder ends with the container" yes "$(gone "$RFWD" && echo yes)"
t_eq "rootless: ... and its listeners are gone" "" "$(listeners "$RPORT")"
t_done
