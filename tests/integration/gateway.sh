#!/bin/bash
# umwelt-gateway from the sandbox's side. The whole scene lives in network
# namespaces this test makes, joined by a veth pair, so no packet can leave
# the machine whatever a route says: an "internet" namespace with HTTP and
# HTTPS servers (a certificate from a CA made here) at addresses that exist
# only in it, the gateway's own namespace with a veth into it, and a
# "sandbox" namespace with nothing but lo, where the gateway puts its
# listeners on 127.0.0.1:3128 and [::1]:3128. Names come from --hosts.
# Every request is made from inside the sandbox namespace. Where a rule
# needs the path or method of an HTTPS request, the gateway terminates TLS
# with a umwelt CA made for the test (in a temporary XDG_STATE_HOME); the
# sandbox's curl trusts it through the bundle a sandbox gets.
T_NAME=gateway
. "$(dirname "$0")/lib.sh"
t_require_root
GW=$UMW_BUILDDIR/umwelt-gateway
INET_PY=$UMW_SRCDIR/tests/integration/helpers/gateway-inet.py
CA_MAKER=$UMW_BUILDDIR/tests/integration/helpers/tls-term-proxy
[[ -x $GW ]] || t_bail "$GW missing (build it)"
[[ -x $CA_MAKER ]] || t_bail "$CA_MAKER missing (make check builds it)"
for tool in curl openssl ip; do
        command -v $tool >/dev/null || t_bail "$tool missing (scripts/setup.sh installs it)"
done
t_setup

NS=umwt-gw$$
INET=$NS-inet GWNS=$NS-gw SBX=$NS-sbx
SCENE_PIDS=()
scene_cleanup() {
        local p ns
        for p in "${SCENE_PIDS[@]}"; do
                kill -9 "$p" 2>/dev/null
                wait "$p" 2>/dev/null
        done
        for ns in "$INET" "$GWNS" "$SBX"; do
                ip netns del "$ns" 2>/dev/null
        done
}
T_EXTRA_CLEANUP=scene_cleanup

# in_ns NS CMD...: CMD in that network namespace. What runs in the
# background is started with nsenter itself, so that $! is its pid (ip netns
# exec, or a function, would fork and leave a child behind a kill).
in_ns() {
        local ns=$1
        shift
        nsenter --net="/run/netns/$ns" -- "$@"
}

# ------------------------------------------------------------- the scene

for ns in "$INET" "$GWNS" "$SBX"; do
        ip netns add "$ns" || t_bail "ip netns add $ns"
        ip -n "$ns" link set lo up
done
ip -n "$GWNS" link add gw0 type veth peer name in0 netns "$INET" || t_bail "veth"
ip -n "$GWNS" addr add 11.0.0.1/8 dev gw0
ip -n "$GWNS" link set gw0 up
ip -n "$GWNS" route add default dev gw0
for a in 11.0.0.10/8 11.0.0.11/8 11.0.0.12/8 10.0.0.5/32 198.51.100.10/32; do
        ip -n "$INET" addr add "$a" dev in0
done
ip -n "$INET" link set in0 up

# A test CA and a server certificate for the HTTPS names.
pki=$T_TMP/pki
mkdir -p "$pki"
(
        cd "$pki" &&
                openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.pem -days 2 \
                        -subj /CN=umwelt-test-ca &&
                openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr \
                        -subj /CN=secure.example &&
                printf 'subjectAltName=DNS:%s\n' 'secure.example,DNS:other.example,DNS:inspect.example,DNS:tlspath.example,DNS:tlsmethod.example' >ext &&
                openssl x509 -req -in srv.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 \
                        -extfile ext -out srv.pem &&
                openssl req -x509 -newkey rsa:2048 -nodes -keyout rogue-ca.key -out rogue-ca.pem \
                        -days 2 -subj /CN=untrusted-ca &&
                openssl req -newkey rsa:2048 -nodes -keyout rogue.key -out rogue.csr \
                        -subj /CN=rogue.example &&
                printf 'subjectAltName=DNS:rogue.example\n' >rogue.ext &&
                openssl x509 -req -in rogue.csr -CA rogue-ca.pem -CAkey rogue-ca.key \
                        -CAcreateserial -days 2 -extfile rogue.ext -out rogue.pem
) >"$T_TMP/pki.log" 2>&1 || t_bail "openssl: $(cat "$T_TMP/pki.log")"

nsenter --net="/run/netns/$INET" -- "$PY" "$INET_PY" 11.0.0.10 11.0.0.11 "$pki/srv.pem" "$pki/srv.key" \
        "$T_TMP/inet.ready" 2>"$T_TMP/inet.err" &
SCENE_PIDS+=($!)
wait_file "$T_TMP/inet.ready" 100 || t_bail "the test internet did not start: $(cat "$T_TMP/inet.err")"
# An HTTPS server whose certificate comes from a CA the gateway does not trust.
nsenter --net="/run/netns/$INET" -- openssl s_server -quiet -www -accept 11.0.0.12:443 \
        -cert "$pki/rogue.pem" -key "$pki/rogue.key" </dev/null >"$T_TMP/rogue.log" 2>&1 &
SCENE_PIDS+=($!)

# The user's umwelt CA and the sandbox's trust bundle, made as a sandbox's
# start makes them (tls_ca_open creating, tls_trust_write): the helper
# makes both, says ready, and is stopped. The gateway only opens the CA.
export XDG_STATE_HOME=$T_TMP/state
CA_DIR=$XDG_STATE_HOME/umwelt/ca
BUNDLE=$XDG_STATE_HOME/umwelt/trust/ca-bundle.crt
nsenter --net="/run/netns/$GWNS" -- "$CA_MAKER" "$CA_DIR" "${BUNDLE%/*}" 9 ca.example 9 \
        "$pki/ca.pem" >"$T_TMP/ca.out" 2>&1 </dev/null &
ca_pid=$!
wait_file "$T_TMP/ca.out" 100
kill "$ca_pid"
wait "$ca_pid" 2>/dev/null
[[ -s $CA_DIR/ca.key && -s $BUNDLE ]] || t_bail "no umwelt CA: $(cat "$T_TMP/ca.out")"

cat >"$T_TMP/hosts" <<'HOSTS'
# the gateway's only resolver in this test
11.0.0.10 web.example other.example denied.example paths.example methods.example later.example
11.0.0.11 secure.example inspect.example tlspath.example tlsmethod.example
11.0.0.12 rogue.example
10.0.0.5 private.example
127.0.0.1 loop.example
11.0.0.10 mixed.example
10.0.0.5 mixed.example
198.51.100.10 testnet.example
HOSTS

POLICY=$T_TMP/policy.toml
write_policy() {
        cat >"$POLICY" <<POL
[egress]
enabled = true
allow = ["web.example", "secure.example", "private.example", "loop.example", "mixed.example",
         "testnet.example", "paths.example/public/*", "inspect.example/api/**",
         "inspect.example/big/*", "tlspath.example/allowed/*", "GET tlsmethod.example",
         "GET rogue.example", "GET,HEAD methods.example", "denied.example", "nowhere.example" $1]
deny = ["denied.example"]
POL
}
write_policy ""
LOG=$T_TMP/egress.jsonl

# start_gateway PORT ARGS...: a gateway in its namespace, listening in the
# sandbox's on PORT (by default), with the test's hosts file and log;
# returns once it says it is ready. GW_PID is its pid. GW_POLICY: another
# policy file than POLICY. GW_PRE (an array)
# runs before everything (a mount namespace), GW_AS between nsenter and the
# gateway (another uid).
GW_PRE=() GW_AS=()
start_gateway() {
        local port=$1 fifo=$T_TMP/ready.$1 line=
        shift
        rm -f "$fifo"
        mkfifo "$fifo"
        "${GW_PRE[@]}" nsenter --net="/run/netns/$GWNS" -- "${GW_AS[@]}" "$GW" --port "$port" \
                --policy "${GW_POLICY:-$POLICY}" --sandbox gwtest --ready-fd 3 "$@" \
                3>"$fifo" 2>>"$T_TMP/gw.err" </dev/null &
        GW_PID=$!
        SCENE_PIDS+=($GW_PID)
        read -r -t 10 line <"$fifo"
        [[ $line == ready ]]
}
GW_ARGS=(--netns "/run/netns/$SBX" --log "$LOG" --hosts "$T_TMP/hosts" --upstream-ca "$pki/ca.pem")

start_gateway 3128 "${GW_ARGS[@]}" || t_bail "the gateway did not start: $(cat "$T_TMP/gw.err")"
MAIN_GW=$GW_PID

# ------------------------------------------------------------- helpers

# A python prelude: tunnel(HOST, TIMEOUT) opens a CONNECT tunnel to HOST:443
# through the gateway on 127.0.0.1:3128 and returns the socket and the
# answer's head; anything but 200 ends the script.
PY_TUNNEL='
import socket, sys
def tunnel(host, timeout):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=timeout)
    s.sendall(b"CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (host.encode(), host.encode()))
    head = b""
    while b"\r\n\r\n" not in head and (b := s.recv(1)):
        head += b
    if not head.startswith(b"HTTP/1.1 200 "):
        sys.exit("no tunnel: %r" % head)
    return s, head
'

# pcurl ARGS...: curl in the sandbox through the gateway; T_CODE is the
# status (the CONNECT status for https), T_BODY the body, T_ERR stderr.
pcurl() {
        local proxy=${PROXY:-http://127.0.0.1:3128}
        in_ns "$SBX" curl -sS --max-time 10 --cacert "${CACERT:-$pki/ca.pem}" -x "$proxy" \
                -o "$T_TMP/body" -w '%{http_code} %{http_connect}' "$@" \
                >"$T_TMP/code" 2>"$T_TMP/curl.err" </dev/null
        T_RC=$?
        T_CODE=$(cat "$T_TMP/code")
        T_BODY=$(cat "$T_TMP/body" 2>/dev/null)
        T_ERR=$(cat "$T_TMP/curl.err")
        rm -f "$T_TMP/body"
}

# raw TEXT [PORT]: TEXT (\r and \n written as such) sent as is from the
# sandbox; T_RESP is the whole answer up to the close.
raw() {
        T_RESP=$(in_ns "$SBX" "$PY" -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[2])), timeout=10)
s.sendall(sys.argv[1].replace("\\r", "\r").replace("\\n", "\n").encode("latin-1"))
data = b""
try:
    while True:
        c = s.recv(65536)
        if not c:
            break
        data += c
except OSError as e:
    data += ("\n[%s]" % e).encode()
sys.stdout.write(data.decode("latin-1"))
' "$1" "${2:-3128}" 2>&1)
}

# log_line REGEX: the first egress log line matching REGEX, waited for (the
# line is written when the request is over, the client may be quicker).
log_line() {
        local n=30 l
        while ((n-- > 0)); do
                l=$(grep -E -m1 -- "$1" "$LOG" 2>/dev/null) && { printf '%s\n' "$l"; return 0; }
                sleep 0.1
        done
        return 1
}

# reload_gw: SIGHUP to the main gateway, waiting for its egress-reload line.
reload_gw() {
        local n m=30
        n=$(grep -c '"event":"egress-reload"' "$LOG")
        kill -HUP "$MAIN_GW"
        while ((m-- > 0)) && (($(grep -c '"event":"egress-reload"' "$LOG") == n)); do
                sleep 0.1
        done
}

# ------------------------------------------------------------- tests

t_eq "the listener is in the sandbox namespace on 127.0.0.1 and ::1 only" \
        "127.0.0.1:3128 [::1]:3128" \
        "$(in_ns "$SBX" ss -Hltn | awk '{print $4}' | sort | tr '\n' ' ' | sed 's/ $//')"
t_eq "... and not in the gateway's own" "" "$(in_ns "$GWNS" ss -Hltn | awk '{print $4}')"

pcurl -H 'Authorization: Bearer SECRET-AUTH-1' -H 'Cookie: sid=SECRET-COOKIE-1' \
        -H 'Proxy-Authorization: Basic SECRET-PROXY-1' http://web.example/hello?q=SECRET-QUERY
t_eq "an allowed host over HTTP" "200 000" "$T_CODE" "$T_ERR"
t_match "... reaches the server with its path" "path=/hello\?q=SECRET-QUERY" "$T_BODY"
t_match "... the Authorization goes to the server (end to end)" "header:authorization=Bearer SECRET-AUTH-1" "$T_BODY"
t_nomatch "... Proxy-Authorization does not (hop by hop)" "proxy-authorization" "$T_BODY"
t_nomatch "... an HTTP/1.1 request goes up without Connection (kept alive)" "header:connection" "$T_BODY"
line=$(log_line '"path":"/hello"')
t_match "... logged: method, host, port, path, address, decision, rule, status, bytes, duration" \
        '"sandbox":"gwtest","method":"GET","host":"web.example","port":80,"path":"/hello","address":"11.0.0.10","decision":"allow","rule":"web.example","status":200,"bytes_up":[1-9][0-9]*,"bytes_down":[1-9][0-9]*,"duration_ms":[0-9]+' \
        "$line"
t_nomatch "... without an Authorization, Cookie or Proxy-Authorization value or the query" \
        "SECRET" "$(cat "$LOG")"

pcurl -I http://web.example/head
t_eq "HEAD over HTTP" "200 000" "$T_CODE" "$T_ERR"

pcurl http://web.example/chunked
t_match "a chunked response passes whole" "path=/chunked" "$T_BODY" "$T_ERR"
t_nomatch "... without the hop-by-hop field the server's Connection names" "X-Hop" \
        "$(in_ns "$SBX" curl -sS -D - -o /dev/null --max-time 10 -x http://127.0.0.1:3128 http://web.example/x 2>&1)"

head -c 300000 /dev/urandom >"$T_TMP/upload"
pcurl --data-binary @"$T_TMP/upload" http://web.example/upload
t_match "a request body (Content-Length) is streamed to the server" "body_bytes=300000" "$T_BODY" "$T_ERR"
pcurl -H 'Transfer-Encoding: chunked' --data-binary @"$T_TMP/upload" http://web.example/upload-chunked
t_match "... and a chunked one" "body_bytes=300000" "$T_BODY" "$T_ERR"
pcurl http://web.example/big/5000000
t_eq "a 5 MB response body is streamed" 5000000 "$(in_ns "$SBX" curl -sS --max-time 20 -x http://127.0.0.1:3128 http://web.example/big/5000000 | wc -c)"

pcurl https://secure.example/tls
t_eq "an allowed host over HTTPS (CONNECT)" "200 200" "$T_CODE" "$T_ERR"
t_match "... the server answers through the tunnel" "path=/tls" "$T_BODY"
line=$(log_line '"method":"CONNECT","host":"secure.example"')
t_match "... logged with port 443, the address and bytes both ways" \
        '"port":443,"address":"11.0.0.11","decision":"allow","rule":"secure.example","status":200,"bytes_up":[1-9][0-9]*,"bytes_down":[1-9][0-9]*' "$line"

# A tunnel's bytes, counted: a raw server reads to the client's FIN (the
# client's half-close through the tunnel), then answers and closes (the
# server's); the log says exactly what went each way.
in_ns "$INET" "$PY" -c '
import hashlib, socket, sys
ls = socket.create_server(("11.0.0.10", 443))
ls.settimeout(20)
open(sys.argv[1], "w").close()
s, _ = ls.accept()
s.settimeout(20)
h, n = hashlib.sha256(), 0
while (b := s.recv(1 << 16)):
    h.update(b)
    n += len(b)
s.sendall(b"d" * 2000000)
s.close()
print(n, h.hexdigest())' "$T_TMP/sized.ready" >"$T_TMP/sized.server" 2>&1 &
sized_pid=$!
wait_file "$T_TMP/sized.ready" 50
in_ns "$SBX" "$PY" -c "$PY_TUNNEL"'
import hashlib, os, ssl
i, o = ssl.MemoryBIO(), ssl.MemoryBIO()
try:
    ssl.create_default_context().wrap_bio(i, o, server_hostname="web.example").do_handshake()
except ssl.SSLWantReadError:
    pass
up = o.read() + os.urandom(3000000)
s, head = tunnel("web.example", 20)
s.sendall(up)
s.shutdown(socket.SHUT_WR)
n = 0
while (b := s.recv(1 << 16)):
    n += len(b)
print(len(up), hashlib.sha256(up).hexdigest(), n, len(head))' >"$T_TMP/sized.client" 2>&1
wait "$sized_pid"
read -r sent sent_sum got head_len <"$T_TMP/sized.client"
t_eq "a tunnel carries every byte up, to the client's half-close" "${sent:-?} ${sent_sum:-?}" \
        "$(cat "$T_TMP/sized.server")" "$(cat "$T_TMP/sized.client")"
t_eq "... and the answer after it, to the server's close" 2000000 "${got:-?}"
t_match "... logged to the byte both ways" \
        "\"host\":\"web.example\",\"port\":443,.*\"bytes_up\":${sent:-x},\"bytes_down\":$((${head_len:-0} + 2000000))," \
        "$(log_line '"method":"CONNECT","host":"web.example","port":443')"

# tunnel_cc NETNS_PATH: through the gateway on 127.0.0.1:3128 there, a TLS
# tunnel to secure.example held open while ss says whether the gateway's
# listener, its side of the tunnel and the client's side send with Reno:
# "listener BOOL gateway BOOL client BOOL".
tunnel_cc() {
        nsenter --net="$1" -- "$PY" -c "$PY_TUNNEL"'
import ssl, subprocess
s, head = tunnel("secure.example", 10)
port = s.getsockname()[1]
t = ssl.create_default_context(cafile=sys.argv[1]).wrap_socket(s, server_hostname="secure.example")
ss = lambda f, o="-tinH": subprocess.run(["ss", o, f], capture_output=True, text=True).stdout.split()
print("listener", "reno" in ss("sport = :3128", "-tlinH"),
      "gateway", "reno" in ss("sport = :3128 and dport = :%d" % port),
      "client", "reno" in ss("dport = :3128 and sport = :%d" % port))
t.close()' "$pki/ca.pem" 2>&1
}
# The gateway's side of an open tunnel (the sandbox's loopback) sends with
# Reno, which does not pace, from its first byte: the listener it was
# accepted from has it (BBR, once started on a socket, leaves it paced even
# after a switch); the client's own socket keeps its algorithm.
CLIENT_RENO=$([[ $(in_ns "$SBX" sysctl -n net.ipv4.tcp_congestion_control) == reno ]] && echo True || echo False)
t_eq "a tunnel's loopback side sends with Reno (no pacing), the client's socket as it was" \
        "listener True gateway True client $CLIENT_RENO" "$(tunnel_cc "/run/netns/$SBX")"

PROXY='http://[::1]:3128' pcurl http://web.example/v6
t_eq "the [::1] listener serves too" "200 000" "$T_CODE" "$T_ERR"

pcurl http://web.example/a -o /dev/null http://web.example/b
t_eq "two requests on one kept-alive connection" "200 000200 000" "$T_CODE" "$T_ERR"
t_match "... each its own log line" '"path":"/b"' "$(log_line '"path":"/b"')"
t_match "... over one connection" "Re-using existing connection|Reusing existing connection" \
        "$(in_ns "$SBX" curl -sv --max-time 10 -x http://127.0.0.1:3128 -o /dev/null -o /dev/null http://web.example/c http://web.example/d 2>&1)"
pcurl http://web.example/e -o /dev/null http://other.example/f
t_eq "... where each request is decided: the second is refused" "200 000403 000" "$T_CODE" "$T_ERR"

# The upstream pool: plain-HTTP connections the gateway keeps to the
# servers. The server tells which connection a request came on (peer=) and
# how many requests that connection carried (served=).
peer_of() { grep -m1 '^peer=' <<<"$1"; }
# t_neq NAME OTHER GOT: GOT is a connection, and not OTHER.
t_neq() {
        if [[ -n $3 && $3 != "$2" ]]; then
                t_ok "$1"
        else
                t_fail "$1" "expected other than: $2" "got: $3"
        fi
}
pcurl http://web.example/pool/1
first=$(peer_of "$T_BODY")
pcurl http://web.example/pool/2
t_eq "two requests to an allowed host, on two client connections: one upstream connection" \
        "$first" "$(peer_of "$T_BODY")" "$T_BODY"
t_match "... which carried both" "served=([2-9]|[1-9][0-9]+)" "$T_BODY"
t_match "... each logged" '"path":"/pool/2".*"address":"11.0.0.10"' "$(log_line '"path":"/pool/2"')"
pcurl http://paths.example/public/pool
t_neq "another host at the same address and port: never the pooled connection" "$first" \
        "$(peer_of "$T_BODY")"
pcurl http://web.example/pool/3
t_eq "... while the first host's is still there for it" "$first" "$(peer_of "$T_BODY")"
pcurl -0 http://web.example/pool/http10
t_match "an HTTP/1.0 request goes up asking the server to close" "header:connection=close" "$T_BODY"
pcurl http://web.example/pool/4
t_neq "... and its connection is not kept" "$first" "$(peer_of "$T_BODY")"
pcurl http://methods.example/pool
mfirst=$(peer_of "$T_BODY")
mserved=$(grep -m1 '^served=' <<<"$T_BODY")
pcurl -X DELETE http://methods.example/pool-denied
t_eq "a request the rules refuse after an allowed one to the same host: 403" "403 000" "$T_CODE" "$T_ERR"
t_match "... logged as denied" '"method":"DELETE","host":"methods.example".*"decision":"deny".*"status":403' \
        "$(log_line '"path":"/pool-denied"')"
pcurl http://methods.example/pool-after
t_eq "... and it never reached the server on the pooled connection" "$mfirst served=$((${mserved#served=} + 1))" \
        "$(peer_of "$T_BODY") $(grep -m1 '^served=' <<<"$T_BODY")" "$T_BODY"
pcurl http://web.example/idle-close/1
closing=$(peer_of "$T_BODY")
sleep 0.6
pcurl http://web.example/idle-close/2
t_eq "a pooled connection the server closed while idle: the next request still gets through" \
        "200 000" "$T_CODE" "$T_ERR"
t_neq "... on a new connection" "$closing" "$(peer_of "$T_BODY")"
sleep 0.6 # until the server has closed that one too
# Many requests from parallel clients over kept-alive connections, then
# every one of them a whole line in the log.
in_ns "$SBX" "$PY" -c '
import http.client, sys, threading
bad = []
def client(t):
    c = http.client.HTTPConnection("127.0.0.1", 3128, timeout=10)
    for i in range(40):
        c.request("GET", "http://web.example/many/%d/%d" % (t, i), headers={"Host": "web.example"})
        r = c.getresponse()
        r.read()
        if r.status != 200:
            bad.append(r.status)
ts = [threading.Thread(target=client, args=(t,)) for t in range(8)]
[t.start() for t in ts]
[t.join() for t in ts]
print("ok" if not bad else bad)
' >"$T_TMP/many.out" 2>&1
t_eq "320 requests from 8 kept-alive clients at once" ok "$(cat "$T_TMP/many.out")"
n=30
while ((n-- > 0)) && (($(grep -c '"path":"/many/' "$LOG") < 320)); do
        sleep 0.1
done
t_eq "... one log line each" 320 "$(grep -c '"path":"/many/' "$LOG")"
t_eq "... each of them whole JSON" 320 "$("$PY" -c 'import json, sys
print(sum(1 for l in open(sys.argv[1]) if "/many/" in l and json.loads(l)["event"] == "egress"))' "$LOG")"
t_eq "... over at most a connection per client upstream" 1 \
        "$(($(in_ns "$INET" ss -Htn state established '( sport = :80 )' | wc -l) <= 8 + 4))"

pcurl http://denied.example/
t_eq "a host on the deny list: 403" "403 000" "$T_CODE" "$T_ERR"
t_match "... naming the rule" 'denied by the egress rule "denied.example"' "$T_BODY"
t_match "... logged as denied by it" '"decision":"deny","rule":"denied.example"' \
        "$(log_line '"host":"denied.example"')"

pcurl http://other.example/
t_eq "an unmatched host: 403" "403 000" "$T_CODE" "$T_ERR"
t_match "... naming the rule to ask for" 'allow = \["other.example"\]' "$T_BODY"
pcurl https://other.example/
t_eq "... over CONNECT too" "000 403" "$T_CODE" "$T_ERR"

pcurl http://paths.example/public/file
t_eq "a path rule allows its path (plain HTTP)" "200 000" "$T_CODE" "$T_ERR"
pcurl http://paths.example/private/file
t_eq "... and refuses its sibling" "403 000" "$T_CODE" "$T_ERR"
pcurl http://paths.example/public/../private/file --path-as-is
t_match "... and a dot-dot way around it" "^4[0-9][0-9] 000$" "$T_CODE" "$T_ERR"
pcurl http://methods.example/m
t_eq "a method rule allows GET" "200 000" "$T_CODE" "$T_ERR"
pcurl -X DELETE http://methods.example/m
t_eq "... and refuses DELETE" "403 000" "$T_CODE" "$T_ERR"

# ------------------------------------------------------------- TLS termination

t_eq "the umwelt CA's key is 0600" 600 "$(stat -c %a "$CA_DIR/ca.key")"
t_eq "... in a directory 0700" 700 "$(stat -c %a "$CA_DIR")"
mkdir -p "$T_TMP/proj"
# The sandbox face covers the CA's directory with an empty tmpfs wherever
# it would be visible; under /tmp it would not be, but the cover still
# shows as an empty directory.
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$T_TMP/proj" -- /bin/sh -c \
        "cat '$CA_DIR/ca.key' '$CA_DIR/ca.crt' 2>/dev/null; ls -A '$CA_DIR' 2>/dev/null; ls -A \$HOME/.local/state 2>/dev/null; echo end"
t_eq "... which a sandbox cannot see: nothing of the CA's directory" "end" "$T_OUT" "$T_ERR"
CACERT=$BUNDLE pcurl -v -H 'Authorization: Bearer SECRET-TLS-AUTH' -H 'Cookie: sid=SECRET-TLS-COOKIE' \
        https://tlspath.example/allowed/x?q=SECRET-TLS-QUERY
t_eq "a path rule over HTTPS allows its path, TLS terminated" "200 200" "$T_CODE" "$T_ERR"
t_match "... the client verified the umwelt CA's leaf with the sandbox's bundle" \
        'issuer: O=umwelt; CN=umwelt sandbox CA' "$T_ERR"
t_match "... for the host it asked for" 'subjectAltName: host "tlspath.example" matched' "$T_ERR"
t_match "... the server got the request in origin form" "path=/allowed/x\?q=SECRET-TLS-QUERY" "$T_BODY"
t_match "... with the Host the client sent" "header:host=tlspath.example" "$T_BODY"
t_match "... and the Authorization (end to end)" "header:authorization=Bearer SECRET-TLS-AUTH" "$T_BODY"
line=$(log_line '"path":"/allowed/x"')
t_match "... logged with method, host, path, address and the rule" \
        '"method":"GET","host":"tlspath.example","port":443,"path":"/allowed/x","address":"11.0.0.11","decision":"allow","rule":"tlspath.example/allowed/\*","tls":"terminated","status":200,"bytes_up":[1-9]' \
        "$line"
t_match "... and the CONNECT that opened the tunnel" \
        '"method":"CONNECT","host":"tlspath.example","port":443,"decision":"allow","rule":"tlspath.example/allowed/\*","tls":"terminated","status":200' \
        "$(log_line '"method":"CONNECT","host":"tlspath.example"')"
t_nomatch "... no Authorization or Cookie value and no query in the log" "SECRET-TLS" "$(cat "$LOG")"
CACERT=$BUNDLE pcurl https://tlspath.example/other
t_eq "... and refuses a sibling path with 403 inside the tunnel" "403 200" "$T_CODE" "$T_ERR"
t_match "... naming the rule to ask for" 'allow = \["tlspath.example/other"\]' "$T_BODY"
t_match "... logged with the refused path" '"path":"/other","decision":"deny","reason":"no rule","tls":"terminated","status":403' \
        "$(log_line '"path":"/other"')"
CACERT=$BUNDLE pcurl https://tlspath.example/allowed/../other --path-as-is
t_match "... and a dot-dot way around it" "^4[0-9][0-9] 200$" "$T_CODE" "$T_ERR"

CACERT=$BUNDLE pcurl https://tlsmethod.example/m
t_eq "a method rule over HTTPS allows GET" "200 200" "$T_CODE" "$T_ERR"
t_match "... which reaches the server" "method=GET" "$T_BODY"
CACERT=$BUNDLE pcurl -d x=1 https://tlsmethod.example/m
t_eq "... and refuses POST" "403 200" "$T_CODE" "$T_ERR"
t_match "... logged" '"method":"POST","host":"tlsmethod.example".*"decision":"deny"' \
        "$(log_line '"method":"POST","host":"tlsmethod.example"')"

in_ns "$SBX" curl -sS -v --max-time 10 --cacert "$BUNDLE" -x http://127.0.0.1:3128 \
        -w '%{http_code}\n' -o /dev/null https://tlspath.example/allowed/first \
        -o "$T_TMP/second" https://tlspath.example/second >"$T_TMP/ka.out" 2>"$T_TMP/ka.err" </dev/null
t_eq "one kept-alive TLS connection: the first path allowed, its sibling refused" \
        "200 403" "$(tr '\n' ' ' <"$T_TMP/ka.out" | sed 's/ $//')" "$(cat "$T_TMP/ka.err")"
t_match "... over one connection" "Re-using existing connection|Reusing existing connection" \
        "$(cat "$T_TMP/ka.err")"
t_eq "... one CONNECT for both" 1 "$(grep -c '^> CONNECT' "$T_TMP/ka.err")"
t_match "... the refusal is the gateway's" "no egress rule allows" "$(cat "$T_TMP/second")"

CACERT=$BUNDLE pcurl https://tlspath.example/new/x
t_eq "a path not yet allowed over HTTPS: 403" "403 200" "$T_CODE" "$T_ERR"
write_policy ', "tlspath.example/new/*"'
in_ns "$SBX" "$PY" -c '
import http.client, os, signal, ssl, sys, time
bundle, gw, log = sys.argv[1], int(sys.argv[2]), sys.argv[3]
def reloads():
    return open(log).read().count("\"event\":\"egress-reload\"")
c = http.client.HTTPSConnection("127.0.0.1", 3128, timeout=10,
                                context=ssl.create_default_context(cafile=bundle))
c.set_tunnel("tlspath.example", 443)
def get(path):
    c.request("GET", path)
    r = c.getresponse()
    r.read()
    return r.status
first = get("/allowed/a")
sock, n = c.sock, reloads()
os.kill(gw, signal.SIGHUP)
for _ in range(30):
    if reloads() > n:
        break
    time.sleep(0.1)
second = get("/new/x")
print(first, second, "same connection" if c.sock is sock else "another connection")
' "$BUNDLE" "$MAIN_GW" "$LOG" >"$T_TMP/live.out" 2>&1
t_eq "... allowed after SIGHUP on the next request of a tunnel opened before it" \
        "200 200 same connection" "$(cat "$T_TMP/live.out")"
write_policy ""
reload_gw

head -c 300000 /dev/urandom >"$T_TMP/upload-tls"
CACERT=$BUNDLE pcurl --data-binary @"$T_TMP/upload-tls" https://inspect.example/api/upload
t_match "a request body is streamed through both TLS ends" "body_bytes=300000" "$T_BODY" "$T_ERR"
t_eq "... and a 5 MB response" 5000000 "$(in_ns "$SBX" curl -sS --max-time 20 --cacert "$BUNDLE" \
        -x http://127.0.0.1:3128 https://inspect.example/big/5000000 | wc -c)"

CACERT=$BUNDLE pcurl -H 'Host: secure.example' https://tlspath.example/allowed/x
t_eq "a Host field that differs from the SNI inside the tunnel: 403" "403 200" "$T_CODE" "$T_ERR"
t_match "... saying which" "request is for secure.example:443, but this TLS connection is to tlspath.example:443" "$T_BODY"
t_match "... logged" '"reason":"Host field differs from the TLS server name"' \
        "$(log_line 'differs from the TLS server name')"
in_ns "$SBX" openssl s_client -proxy 127.0.0.1:3128 -connect tlspath.example:443 \
        -servername secure.example -CAfile "$BUNDLE" </dev/null >"$T_TMP/sclient" 2>&1
t_match "a terminated CONNECT with a different SNI gets no leaf" "no peer certificate available" \
        "$(cat "$T_TMP/sclient")"

CACERT=$BUNDLE pcurl https://rogue.example/
t_eq "an upstream whose certificate the host's trust does not vouch for: 502" "502 200" "$T_CODE" "$T_ERR"
t_match "... saying why" "TLS to rogue.example:443 \(11.0.0.12\) failed.*certificate" "$T_BODY"
t_nomatch "... and nothing of the server's page" "s_server" "$T_BODY"
t_match "... logged" '"host":"rogue.example".*"reason":"upstream TLS handshake: the peer.s certificate: [^"]*issuer' \
        "$(log_line '"method":"GET","host":"rogue.example"')"

# Domain fronting: the tunnel's name is allowed, the TLS name is another.
in_ns "$SBX" openssl s_client -proxy 127.0.0.1:3128 -connect secure.example:443 \
        -servername other.example -CAfile "$pki/ca.pem" </dev/null >"$T_TMP/sclient" 2>&1
t_match "CONNECT with a different SNI: no TLS session" "no peer certificate available" "$(cat "$T_TMP/sclient")"
t_match "... logged as refused" '"decision":"deny".*"reason":"SNI other.example differs from the CONNECT host"' \
        "$(log_line 'SNI other.example')"
pcurl --connect-to secure.example:443:secure.example:443 -H 'Host: other.example' https://secure.example/ok
t_eq "(the same tunnel with the matching SNI works)" "200 200" "$T_CODE" "$T_ERR"
in_ns "$SBX" openssl s_client -proxy 127.0.0.1:3128 -connect secure.example:443 -noservername \
        -CAfile "$pki/ca.pem" </dev/null >"$T_TMP/sclient" 2>&1
t_match "CONNECT with no SNI to a named host: refused" '"reason":"ClientHello without SNI"' \
        "$(log_line 'without SNI')"
raw 'CONNECT web.example:80 HTTP/1.1\r\nHost: web.example:80\r\n\r\nGET / HTTP/1.1\r\nHost: web.example\r\n\r\n'
t_nomatch "a CONNECT that carries no TLS: nothing comes back from the server" "path=" "$T_RESP"
t_match "... logged as refused" '"reason":"not TLS after CONNECT"' "$(log_line 'not TLS')"

for h in private.example loop.example mixed.example testnet.example; do
        pcurl "http://$h/"
        t_eq "$h resolves to a non-public address: 403" "403 000" "$T_CODE" "$T_ERR"
done
t_match "... naming the address and its class" "10.0.0.5, a private address" \
        "$(pcurl http://private.example/; echo "$T_BODY")"
t_match "... logged" '"host":"loop.example".*"decision":"deny".*"reason":"address 127.0.0.1 is loopback"' \
        "$(log_line '"host":"loop.example"')"
pcurl https://private.example/
t_eq "... over CONNECT too" "000 403" "$T_CODE" "$T_ERR"

pcurl http://nowhere.example/
t_eq "an allowed name that does not resolve: 502" "502 000" "$T_CODE" "$T_ERR"

for form in 2130706433 0x7f000001 0x7f.1 017700000001 127.1 0 0.0.0.0 '[::]' '[::1]' \
        '[::ffff:127.0.0.1]' '[::ffff:7f00:1]' '[64:ff9b::7f00:1]' '[2002:7f00:1::]' \
        169.254.169.254 2852039166 '[fd00:ec2::254]' 100.64.0.1 100.100.100.200; do
        raw "GET http://$form/ HTTP/1.1\r\nHost: $form\r\nConnection: close\r\n\r\n"
        t_match "address form $form over HTTP: 403" "^HTTP/1.1 403 " "$T_RESP"
        raw "CONNECT $form:443 HTTP/1.1\r\nHost: $form:443\r\n\r\n"
        t_match "... and over CONNECT" "^HTTP/1.1 403 " "$T_RESP"
done
t_match "2130706433 is logged as the address it is" '"host":"127.0.0.1"' "$(log_line '"host":"127.0.0.1"')"
raw 'GET http://user@web.example/ HTTP/1.1\r\nHost: web.example\r\n\r\n'
t_match "userinfo in the URI: 400" "^HTTP/1.1 400 " "$T_RESP"
raw 'GET http://web.example/ HTTP/1.1\r\nHost: other.example\r\n\r\n'
t_match "a Host field that differs from the absolute URI: refused" "^HTTP/1.1 40[03] " "$T_RESP"
t_match "... logged" '"decision":"deny","reason":"[^"]*Host[^"]*differs' "$(log_line 'Host[^"]*differs')"
raw 'GET http://web.example/ HTTP/1.1\r\nHost: web.example:8080\r\n\r\n'
t_match "... also by port" "^HTTP/1.1 40[03] " "$T_RESP"
raw 'GET / HTTP/1.1\r\nHost: web.example\r\n\r\n'
t_match "an origin-form request (no proxy in the client): 400" "^HTTP/1.1 400 " "$T_RESP"
raw "GET http://web.example/ HTTP/1.1\r\nHost: web.example\r\nX-Long: $(head -c 20000 /dev/zero | tr '\0' a)\r\n\r\n"
t_match "an over-long header: 431" "^HTTP/1.1 431 " "$T_RESP"
raw "GET http://web.example/ HTTP/1.1\r\nHost: web.example\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
t_match "Content-Length with Transfer-Encoding: 400" "^HTTP/1.1 400 " "$T_RESP"

pcurl http://later.example/
t_eq "a host not yet allowed: 403" "403 000" "$T_CODE" "$T_ERR"
write_policy ', "later.example"'
reload_gw
pcurl http://later.example/
t_eq "allowed on the next request after SIGHUP" "200 000" "$T_CODE" "$T_ERR"
t_match "... the reload is logged" '"event":"egress-reload","sandbox":"gwtest","result":"ok"' \
        "$(log_line egress-reload)"
printf '[egress]\nallow = [42]\n' >"$POLICY"
reload_gw
pcurl http://web.example/
t_eq "a policy that does not read refuses everything" "403 000" "$T_CODE" "$T_ERR"
write_policy ""
reload_gw
pcurl http://web.example/
t_eq "... until it reads again" "200 000" "$T_CODE" "$T_ERR"

# The system's resolver (getaddrinfo in the gateway's worker threads), in a
# private mount namespace whose /etc/hosts is the test's file and whose
# resolv.conf names a server nobody runs.
echo 'nameserver 127.0.0.1' >"$T_TMP/resolv.conf"
GW_PRE=(unshare -m -- sh -c 'mount --bind "$1" /etc/hosts && mount --bind "$2" /etc/resolv.conf &&
        shift 2 && exec "$@"' sh "$T_TMP/hosts" "$T_TMP/resolv.conf")
if start_gateway 3130 --netns "/run/netns/$SBX" --log "$LOG"; then
        PROXY=http://127.0.0.1:3130 pcurl http://web.example/resolver
        t_eq "with the system's resolver: an allowed host" "200 000" "$T_CODE" "$T_ERR"
        PROXY=http://127.0.0.1:3130 pcurl http://mixed.example/
        t_eq "... a name with a private address among its addresses: 403" "403 000" "$T_CODE" "$T_ERR"
        PROXY=http://127.0.0.1:3130 pcurl http://nowhere.example/
        t_eq "... a name it cannot resolve: 502" "502 000" "$T_CODE" "$T_ERR"
        kill -TERM "$GW_PID"
        wait "$GW_PID"
        t_eq "... and it stops cleanly (its threads joined)" 0 "$?" "$(cat "$T_TMP/gw.err")"
else
        t_fail "the gateway with the system's resolver starts" "$(cat "$T_TMP/gw.err")"
fi
GW_PRE=()

# Rootless: a sandbox network namespace owned by an unprivileged user's user
# namespace, and a gateway running as that user, which must enter the user
# namespace (in a child) to make its listeners there, with the user's own
# umwelt CA (made as the user, by the helper listening on an ephemeral
# loopback port of the test's namespace for the moment it runs).
t_test_user
as_user env XDG_STATE_HOME="$XDG/state" "$CA_MAKER" "$XDG/state/umwelt/ca" "$XDG/state/umwelt/trust" \
        0 ca.example 9 "$pki/ca.pem" >"$T_TMP/uca.out" 2>&1 </dev/null &
ca_pid=$!
wait_file "$T_TMP/uca.out" 100
# The helper itself: runuser, between it and $!, passes no SIGTERM on.
pkill -TERM -u "$U" -f -- "$CA_MAKER $XDG/state/umwelt/ca"
wait "$ca_pid" 2>/dev/null
setpriv --reuid="$U" --regid="$G" --clear-groups -- unshare --user --map-root-user --net -- \
        sh -c 'ip link set lo up && echo $$ >"$1" && exec sleep 600' sh "$XDG/usbx.pid" \
        2>"$T_TMP/usbx.err" </dev/null &
SCENE_PIDS+=($!)
if ! wait_file "$XDG/usbx.pid" 50; then
        t_skip "rootless gateway" "no unprivileged user namespace: $(cat "$T_TMP/usbx.err")"
else
        upid=$(cat "$XDG/usbx.pid")
        GW_AS=(setpriv --reuid="$U" --regid="$G" --clear-groups -- env XDG_STATE_HOME="$XDG/state")
        if start_gateway 3128 --netns-pid "$upid" --log "$XDG/egress.jsonl" --hosts "$T_TMP/hosts" \
                --upstream-ca "$pki/ca.pem"; then
                t_eq "a gateway as an unprivileged user" "$U" "$(stat -c %u "/proc/$GW_PID")"
                t_eq "... listens in the user's sandbox namespace" "127.0.0.1:3128 [::1]:3128" \
                        "$(nsenter --net="/proc/$upid/ns/net" -- ss -Hltn | awk '{print $4}' | sort | tr '\n' ' ' | sed 's/ $//')"
                nsenter --net="/proc/$upid/ns/net" -- curl -sS --max-time 10 -x http://127.0.0.1:3128 \
                        http://web.example/rootless >"$T_TMP/rootless.out" 2>&1
                t_match "... and serves it" "path=/rootless" "$(cat "$T_TMP/rootless.out")"
                t_match "... logging to the user's log" '"path":"/rootless"' "$(cat "$XDG/egress.jsonl")"
                nsenter --net="/proc/$upid/ns/net" -- curl -sS --max-time 10 -x http://127.0.0.1:3128 \
                        --cacert "$XDG/state/umwelt/trust/ca-bundle.crt" \
                        https://tlspath.example/allowed/rootless >"$T_TMP/rootless.out" 2>&1
                t_match "... and terminates TLS with the user's CA" "path=/allowed/rootless" \
                        "$(cat "$T_TMP/rootless.out")"
                t_eq "... and its tunnels' loopback side sends with Reno too (any user may choose it)" \
                        "listener True gateway True client $CLIENT_RENO" "$(tunnel_cc "/proc/$upid/ns/net")"
        else
                t_fail "a gateway as an unprivileged user starts" "$(cat "$T_TMP/gw.err")"
        fi
        GW_AS=()
fi

# Listeners handed over by the caller (what umwelt-run does): made in the
# sandbox's namespace by a process that goes back to its own before it
# execs the gateway with --listen-fd.
rm -f "$T_TMP/ready.fd"
mkfifo "$T_TMP/ready.fd"
nsenter --net="/run/netns/$GWNS" -- "$PY" -c '
import ctypes, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
home = os.open("/proc/self/ns/net", os.O_RDONLY)
def enter(fd):
    if libc.setns(fd, 0x40000000) != 0:
        raise OSError(ctypes.get_errno(), "setns")
enter(os.open(sys.argv[1], os.O_RDONLY))
s = socket.socket()
s.bind(("127.0.0.1", 3131))
s.listen(16)
enter(home)
os.set_inheritable(s.fileno(), True)
os.execv(sys.argv[2], [sys.argv[2], "--listen-fd", str(s.fileno())] + sys.argv[3:])
' "/run/netns/$SBX" "$GW" --policy "$POLICY" --log "$LOG" --hosts "$T_TMP/hosts" --ready-fd 3 \
        3>"$T_TMP/ready.fd" 2>>"$T_TMP/gw.err" </dev/null &
FD_GW=$!
SCENE_PIDS+=($FD_GW)
read -r -t 10 line <"$T_TMP/ready.fd"
PROXY=http://127.0.0.1:3131 pcurl http://web.example/fd
t_eq "a gateway serving a listener it was given (--listen-fd)" "200 000" "$T_CODE" "$T_ERR $(cat "$T_TMP/gw.err")"
kill -TERM "$FD_GW"
wait "$FD_GW"
t_eq "... gone with it" "" "$(in_ns "$SBX" ss -Hltn 'sport = :3131')"

# A gateway started for a process's namespace (--netns-pid, as the sandbox
# face starts it) ends with that process, even when nobody stops it.
unshare --net -- sleep 600 </dev/null >/dev/null 2>&1 &
owner=$!
SCENE_PIDS+=($owner)
if start_gateway 3134 --netns-pid "$owner" --log "$LOG" --hosts "$T_TMP/hosts"; then
        owned_gw=$GW_PID
        kill -9 "$owner"
        wait "$owner" 2>/dev/null
        n=50
        while ((n-- > 0)) && kill -0 "$owned_gw" 2>/dev/null; do
                sleep 0.1
        done
        if kill -0 "$owned_gw" 2>/dev/null; then
                t_fail "a gateway whose --netns-pid process ended exits" "still running"
        else
                wait "$owned_gw"
                t_eq "a gateway whose --netns-pid process ended exits cleanly" 0 "$?"
        fi
        t_match "... saying why" "umwelt-gateway: .*the sandbox's process has ended: stopping" \
                "$(cat "$T_TMP/gw.err")"
else
        t_fail "a gateway for --netns-pid starts" "$(cat "$T_TMP/gw.err")"
fi

# Bad input: one line, the documented exit code, no listener left behind.
gw_fails() {
        local want=$1 name=$2
        shift 2
        capture nsenter --net="/run/netns/$GWNS" -- "$GW" "$@"
        t_eq "$name: exit $want" "$want" "$T_RC" "$T_OUT"
        t_eq "... one line" 1 "$(wc -l <<<"$T_OUT")" "$T_OUT"
}
printf '[egress]\nallow = [42]\n' >"$T_TMP/bad1.toml"
printf '[egress]\nallow = ["ok.example", "exa mple.com"]\n' >"$T_TMP/bad2.toml"
printf '[egress]\nalow = ["x.example"]\n' >"$T_TMP/bad3.toml"
printf '10.0.0.1 good.example\nnot-an-address x.example\n' >"$T_TMP/bad.hosts"
gw_fails 2 "no arguments"
gw_fails 2 "no policy" --netns "/run/netns/$SBX" --log "$LOG"
gw_fails 2 "an unknown option" --bogus
gw_fails 2 "two network namespaces" --netns "/run/netns/$SBX" --netns-pid 1 --policy "$POLICY" --log "$LOG"
gw_fails 2 "--listen-fd that is not a listening socket" --listen-fd 9 --policy "$POLICY" --log "$LOG" 9<"$POLICY"
gw_fails 2 "--owner-pidfd that is not a pidfd" --owner-pidfd 9 --policy "$POLICY" --log "$LOG" 9<"$POLICY"
gw_fails 3 "a rule list with a number" --netns "/run/netns/$SBX" --port 3132 --policy "$T_TMP/bad1.toml" --log "$LOG"
t_match "... naming the file and line" "bad1.toml:2:" "$T_OUT"
gw_fails 3 "a rule that is no rule" --netns "/run/netns/$SBX" --port 3132 --policy "$POLICY" --policy "$T_TMP/bad2.toml" --log "$LOG"
t_match "... naming the file and the rule" 'bad2.toml.*egress.allow\[1\]' "$T_OUT"
gw_fails 3 "an unknown key in [egress]" --netns "/run/netns/$SBX" --port 3132 --policy "$T_TMP/bad3.toml" --log "$LOG"
gw_fails 3 "a bad hosts file" --netns "/run/netns/$SBX" --port 3132 --policy "$POLICY" --log "$LOG" --hosts "$T_TMP/bad.hosts"
t_match "... naming the file and line" "bad.hosts:2:" "$T_OUT"
gw_fails 1 "a network namespace that is not there" --netns "$T_TMP/nonexistent" --policy "$POLICY" --log "$LOG"
XDG_STATE_HOME=$T_TMP/nostate gw_fails 3 "a path rule without the umwelt CA" \
        --netns "/run/netns/$SBX" --port 3132 "${GW_ARGS[@]:2}" --policy "$POLICY"
t_match "... naming the rule and the CA" \
        'egress rule "paths.example/public/\*" needs TLS termination: umwelt CA: .*/nostate/umwelt/ca does not exist' "$T_OUT"
printf '[egress]\nallow = ["web.example"]\n' >"$T_TMP/plain.toml"
GW_POLICY=$T_TMP/plain.toml XDG_STATE_HOME=$T_TMP/nostate start_gateway 3133 --netns "/run/netns/$SBX" --log "$LOG" \
        --hosts "$T_TMP/hosts"
t_eq "... a policy that needs no TLS termination starts without the CA" 0 "$?" "$(cat "$T_TMP/gw.err")"
kill -TERM "$GW_PID"
wait "$GW_PID"
chmod 644 "$CA_DIR/ca.key"
gw_fails 3 "a CA key others may read" --netns "/run/netns/$SBX" --port 3132 "${GW_ARGS[@]:2}" --policy "$POLICY"
t_match "... naming the key" "ca.key" "$T_OUT"
chmod 600 "$CA_DIR/ca.key"
gw_fails 3 "an --upstream-ca that is not there" --netns "/run/netns/$SBX" --port 3132 \
        --log "$LOG" --policy "$POLICY" --upstream-ca "$T_TMP/nonexistent.pem"
t_match "... naming it" "upstream-ca .*nonexistent.pem: No such file" "$T_OUT"
gw_fails 3 "an --upstream-ca without a certificate" --netns "/run/netns/$SBX" --port 3132 \
        --log "$LOG" --policy "$POLICY" --upstream-ca "$T_TMP/hosts"
t_eq "... and nothing listens on the port those tried" "" "$(in_ns "$SBX" ss -Hltn 'sport = :3132')"

# Limits: a second gateway with a cap of 2 connections and short timeouts.
start_gateway 3129 "${GW_ARGS[@]}" --max-connections 2 --header-timeout 1 || t_bail "second gateway: $(cat "$T_TMP/gw.err")"
SMALL_GW=$GW_PID
in_ns "$SBX" "$PY" -c '
import socket, sys, time
held = [socket.create_connection(("127.0.0.1", 3129)) for _ in range(2)]
time.sleep(0.3)
s = socket.create_connection(("127.0.0.1", 3129), timeout=5)
print(s.recv(200).decode().splitlines()[0])
' >"$T_TMP/cap" 2>&1
t_eq "beyond the connection cap: 503" "HTTP/1.1 503 Service Unavailable" "$(cat "$T_TMP/cap")"
sleep 1.5
raw 'GET http://web.example/ HTTP/1.1\r\nHost: web.ex' 3129
t_match "a request head that does not finish in time: 408" "^HTTP/1.1 408 " "$T_RESP"

# The door closes with the gateway.
nsenter --net="/run/netns/$SBX" -- curl -sS --max-time 20 -x http://127.0.0.1:3129 -o /dev/null http://web.example/slow/200 \
        >/dev/null 2>"$T_TMP/killed.err" &
curl_pid=$!
sleep 0.5
kill -9 "$SMALL_GW"
wait "$curl_pid"
t_eq "a transfer when the gateway is killed fails" 1 "$([[ $? -ne 0 ]] && echo 1)" "$(cat "$T_TMP/killed.err")"
pcurl http://web.example/ 
PROXY=http://127.0.0.1:3129 pcurl http://web.example/
t_match "... and nothing listens any more" "Failed to connect|Connection refused|Couldn't connect" "$T_ERR"

t_eq "no direct route out of the sandbox" "" "$(in_ns "$SBX" ip route show)"
in_ns "$SBX" curl -sS --max-time 3 --noproxy '*' http://11.0.0.10/ >/dev/null 2>&1
t_eq "... a direct connection fails" 1 "$([[ $? -ne 0 ]] && echo 1)"

kill -TERM "$MAIN_GW"
wait "$MAIN_GW"
t_eq "SIGTERM stops the gateway cleanly" 0 "$?" "$(cat "$T_TMP/gw.err")"
t_eq "every line of the egress log is whole JSON" "" \
        "$("$PY" -c 'import json,sys
for n, l in enumerate(open(sys.argv[1]), 1):
    try:
        json.loads(l)
    except Exception as e:
        print(n, e)' "$LOG")"
t_done
