#!/bin/bash
# Egress and ingress of the sandbox face, proven from inside real sandboxes
# (`umwelt-run sandbox run/up/exec`) as root and as the unprivileged user,
# in the network scene of helpers/netscene.sh.
T_NAME=egress
. "$(dirname "$0")/lib.sh"
t_require_root
GW=$UMW_BUILDDIR/umwelt-gateway
[[ -x $GW ]] || t_bail "$GW missing (build it)"
t_setup
t_test_user
SPY=/usr/bin/python3 # the host's, visible inside (pyenv shims live in /root)
. "$(dirname "$0")/helpers/netscene.sh"
floor 'egress = true' 'limits_best_effort = true'

RULES='allow = ["web.example", "secure.example", "private.example", "loop.example", "denied.example"]
deny = ["denied.example"]'
# project DIR [EXTRA TOML]: a project whose .umwelt.toml enables egress,
# accepted by root.
project() {
        mkdir -p "$1"
        printf '[egress]\nenabled = true\n%s\n%s\n' "$RULES" "${2:-}" >"$1/.umwelt.toml"
        raccept "$1"
}

# ------------------------------------------------------------- sandbox run

# What a workload tries, one result per line: an HTTP and an HTTPS request
# through the proxy the environment names (curl's own reading of it), a
# denied and an unmatched host, names that resolve to private and loopback
# addresses, a direct connection with the proxy variables unset, UDP, ICMP
# and a raw socket, and every address form of the list sent as it is.
INSIDE='
c() { rm -f /tmp/body; curl -sS --max-time 10 -o /tmp/body -w "%{http_code} %{http_connect}" "$@" 2>/tmp/err; echo " $(head -c 300 /tmp/body | tr "\n" " ")"; }
echo "http: $(c http://web.example/inside)"
echo "https: $(c https://secure.example/inside-tls)"
echo "denied: $(c http://denied.example/)"
echo "unmatched: $(c http://other.example/)"
echo "unmatched-tls: $(c https://other.example/)"
echo "private: $(c http://private.example/)"
echo "loopback: $(c http://loop.example/)"
echo "direct: $(env -u HTTP_PROXY -u http_proxy -u ALL_PROXY -u all_proxy curl -sS --max-time 3 http://11.0.0.10/ 2>&1 | head -c 200)"
echo "direct-noproxy: $(curl -sS --max-time 3 --noproxy "*" https://secure.example/ 2>&1 | head -c 200)"
echo "proxy-env: $HTTP_PROXY $HTTPS_PROXY $ALL_PROXY $NO_PROXY $http_proxy $https_proxy $all_proxy $no_proxy"
echo "trust: $SSL_CERT_FILE $CURL_CA_BUNDLE $NODE_EXTRA_CA_CERTS $REQUESTS_CA_BUNDLE $GIT_SSL_CAINFO"
echo "trust-files: $(ls /run/umwelt/tls | tr "\n" " ")"
echo "ca-dir: $(ls -A "$1" 2>/dev/null | tr "\n" " ")"
echo "ifaces: $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " ")"
'"$SPY"' - <<"PY"
import socket
def tryit(name, f):
    try:
        f()
        print(name + ": sent")
    except OSError as e:
        print(name + ": " + (e.strerror or str(e)))
def udp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.sendto(b"x", ("11.0.0.10", 53))
def icmp():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM, socket.IPPROTO_ICMP)
    s.sendto(b"\x08\x00\xf7\xff\x00\x00\x00\x00", ("11.0.0.10", 0))
def raw():
    socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)
tryit("udp", udp)
tryit("icmp", icmp)
tryit("raw", raw)
forms = ["2130706433", "0x7f000001", "0x7f.1", "017700000001", "127.1", "0", "0.0.0.0",
         "[::]", "[::1]", "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]",
         "[2002:7f00:1::]", "169.254.169.254", "2852039166", "[fd00:ec2::254]",
         "100.64.0.1", "100.100.100.200"]
for form in forms:
    for req in ("GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (form, form),
                "CONNECT %s:443 HTTP/1.1\r\nHost: %s:443\r\n\r\n" % (form, form)):
        s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
        s.sendall(req.encode())
        line = s.recv(200).decode("latin-1").split("\r\n")[0]
        print("form %s %s: %s" % (form, req.split()[0], line))
        s.close()
PY
'

# got KEY: the line "KEY: ..." of the last inside run, without the key.
got() { sed -n "s/^$1: //p" <<<"$T_OUT" | head -1; }

# check_inside WHO: the results of INSIDE (in T_OUT) and the egress log LOG.
check_inside() {
        local who=$1 f
        t_match "$who: an allowed host over HTTP" "^200 000 .*path=/inside" "$(got http)" "$T_ERR"
        t_match "$who: an allowed host over HTTPS, trusted through SSL_CERT_FILE/CURL_CA_BUNDLE" \
                "^200 200 .*path=/inside-tls" "$(got https)" "$T_ERR"
        t_match "$who: a denied host: 403 naming the rule" \
                '^403 000 .*denied by the egress rule "denied.example"' "$(got denied)"
        t_match "$who: an unmatched host: 403 naming the rule to ask for" \
                '^403 000 .*allow = \["other.example"\]' "$(got unmatched)"
        t_match "$who: ... over CONNECT too" "^000 403 " "$(got unmatched-tls)"
        t_match "$who: a name resolving to a private address: 403" "^403 000 .*10.0.0.5" "$(got private)"
        t_match "$who: a name resolving to loopback: 403" "^403 000 .*127.0.0.1" "$(got loopback)"
        t_match "$who: a direct connection with the proxy variables unset fails" \
                "Could not connect|Failed to connect|Couldn.t connect|unreachable" "$(got direct)"
        t_match "$who: ... and with --noproxy" \
                "Could not resolve|Failed to connect|Couldn.t connect|unreachable" "$(got direct-noproxy)"
        t_eq "$who: the proxy variables, both cases" \
                "http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1,::1 http://127.0.0.1:3128 http://127.0.0.1:3128 http://127.0.0.1:3128 localhost,127.0.0.1,::1" \
                "$(got proxy-env)"
        t_eq "$who: the trust variables" \
                "/run/umwelt/tls/ca-bundle.crt /run/umwelt/tls/ca-bundle.crt /run/umwelt/tls/umwelt-ca.crt /run/umwelt/tls/ca-bundle.crt /run/umwelt/tls/ca-bundle.crt" \
                "$(got trust)"
        t_eq "$who: the trust directory holds certificates, no key" "ca-bundle.crt umwelt-ca.crt " \
                "$(got trust-files)"
        t_eq "$who: nothing of the CA's directory is seen inside (empty, absent or out of reach)" "" "$(got ca-dir)"
        t_eq "$who: no interface but lo" "lo " "$(got ifaces)"
        t_match "$who: UDP fails" "unreachable" "$(got udp)"
        t_nomatch "$who: ICMP fails" "sent" "$(got icmp)"
        t_match "$who: a raw socket is refused" "not permitted" "$(got raw)"
        for f in 2130706433 0x7f000001 0x7f.1 017700000001 127.1 0 0.0.0.0 '\[::\]' '\[::1\]' \
                '\[::ffff:127.0.0.1\]' '\[::ffff:7f00:1\]' '\[64:ff9b::7f00:1\]' '\[2002:7f00:1::\]' \
                169.254.169.254 2852039166 '\[fd00:ec2::254\]' 100.64.0.1 100.100.100.200; do
                t_eq "$who: address form $f refused, plain and CONNECT" 2 \
                        "$(grep -cE "^form $f (GET|CONNECT): HTTP/1.1 403 " <<<"$T_OUT")" \
                        "$(grep -E "^form $f " <<<"$T_OUT")"
        done
        local want
        for want in '"host":"web.example","port":80,"path":"/inside".*"decision":"allow"' \
                '"method":"CONNECT","host":"secure.example".*"decision":"allow"' \
                '"host":"denied.example".*"decision":"deny","rule":"denied.example"' \
                '"host":"other.example","port":80.*"decision":"deny"' \
                '"host":"other.example","port":443.*"decision":"deny"' \
                '"host":"private.example".*"decision":"deny"' '"host":"loop.example".*"decision":"deny"' \
                '"host":"169.254.169.254".*"decision":"deny"'; do
                t_match "$who: the egress log has $want" "$want" "$(grep -E -- "$want" "$LOG")"
        done
        t_eq "$who: ... one line per request the gateway saw (2 allowed, 41 refused)" 43 \
                "$(grep -c '"event":"egress"' "$LOG")"
}

proj=$T_TMP/rproj
project "$proj"
capture_split rsbx run -p "$proj" -- sh -c "$INSIDE" sh "$RSTATE/umwelt/ca"
t_eq "root: sandbox run with egress exits 0" 0 "$T_RC" "$T_ERR"
LOG=$(ls "$RSTATE"/umwelt/*/egress.jsonl)
check_inside root
t_eq "root: the CA's key exists outside, 0600" 600 "$(stat -c %a "$RSTATE/umwelt/ca/ca.key")"
t_eq "root: no gateway left after run" "" "$(pgrep -f "umwelt-gateway .*--sandbox umwelt-rproj")"
t_eq "root: no bundle left after run" "" "$(ls -A /run/umwelt/bundles 2>/dev/null | grep rproj)"

mkdir -p "$T_TMP/closed"
capture_split rsbx run -p "$T_TMP/closed" -- sh -c '
        echo "ca: $(ls -A "$1" 2>/dev/null | tr "\n" " ")"; echo "tls: $(ls /run/umwelt/tls 2>&1)"
        echo "proxy: $HTTP_PROXY$https_proxy$SSL_CERT_FILE"
        curl -sS --max-time 3 -x http://127.0.0.1:3128 http://web.example/ >/dev/null 2>&1; echo "rc=$?"' \
        sh "$RSTATE/umwelt/ca"
t_eq "root: a sandbox without egress: the CA's directory is hidden there too" "ca: " "$(sed -n 1p <<<"$T_OUT")" "$T_ERR"
t_match "... no trust directory, no proxy variables, nothing at 3128" \
        "tls: .*No such file or directory proxy: +rc=7" "$(sed -n 2,4p <<<"$T_OUT" | tr '\n' ' ')"

# Socket activation: umwelt-run makes the listeners before the workload's
# first instruction, and the gateway is exec'd at the first connection.
# Proven with stand-ins for the gateway next to a copy of umwelt-run (found
# there first): one slow to start, one that fails at start; and the real
# one killed.
# wsbx DIR ARGS...: umwelt-run sandbox from $T_TMP/DIR as root.
wsbx() {
        local dir=$1
        shift
        host env HOME="$T_TMP/rhome" XDG_STATE_HOME="$RSTATE" "$T_TMP/$dir/umwelt-run" \
                --root "$T_ROOT" sandbox "$@"
}
# stand_in DIR SCRIPT: umwelt-run copied to $T_TMP/DIR beside an
# umwelt-gateway that is SCRIPT.
stand_in() {
        mkdir -p "$T_TMP/$1"
        cp "$RT" "$T_TMP/$1/umwelt-run"
        printf '#!/bin/sh\n%s\n' "$2" >"$T_TMP/$1/umwelt-gateway"
        chmod 755 "$T_TMP/$1/umwelt-gateway"
}
aproj=$T_TMP/aproj
project "$aproj"
# The real gateway a second late: it inherits the listeners through the
# wrapper's exec, and a file in the workspace says when it started.
stand_in slowgw "sleep 1; touch '$aproj/gateway-started'; exec '$GW' \"\$@\""
capture_split wsbx slowgw run -p "$aproj" -- "$SPY" -c '
import os, socket, sys
def ask(host, path):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
    s.sendall(("GET http://%s%s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n" % (host, path, host)).encode())
    return s
early = [ask("denied.example", "/"), ask("web.example", "/early"), ask("other.example", "/")]
print("gateway: " + ("started" if os.path.exists(sys.argv[1]) else "not started"))
for s in early:
    print("answer: " + s.recv(300).decode("latin-1").split("\r\n")[0])' "$aproj/gateway-started"
t_eq "root: requests made before the gateway started wait for it and are decided by the rules" \
        "gateway: not started|answer: HTTP/1.1 403 Forbidden|answer: HTTP/1.1 200 OK|answer: HTTP/1.1 403 Forbidden" \
        "$(tr '\n' '|' <<<"$T_OUT" | sed 's/|$//')" "$T_ERR"
alog=$(cat "$RSTATE"/umwelt/aproj-*/egress.jsonl 2>/dev/null)
t_match "... each logged: the denied host" '"host":"denied.example".*"decision":"deny"' "$alog"
t_match "... the allowed one" '"host":"web.example","port":80,"path":"/early".*"decision":"allow"' "$alog"
t_match "... and the unmatched one" '"host":"other.example".*"decision":"deny"' "$alog"

# A gateway that fails at start (the first connection starts it and is
# reset): the listeners close with it.
stand_in failgw "echo 'stand-in gateway: refusing to start' >&2; exit 1"
capture_split wsbx failgw run -p "$aproj" -- sh -c '
        curl -sS --max-time 5 http://web.example/ >/dev/null 2>&1; echo "first=$?"
        sleep 0.5
        curl -sS --max-time 5 http://web.example/ >/dev/null 2>&1; echo "proxy=$?"
        curl -sS --max-time 3 --noproxy "*" http://11.0.0.10/ >/dev/null 2>&1; echo "direct=$?"'
t_match "root: a gateway that fails at start leaves no way out" "^0 first=(7|52|56) proxy=7 direct=7$" \
        "$T_RC $(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_match "... and run says so, with the gateway's last words" \
        "egress: the gateway did not start.*stand-in gateway: refusing to start; the sandbox ran with no way out" "$T_ERR"
t_match "... in the audit log too" '"event":"egress-closed".*refusing to start' \
        "$(cat "$RSTATE"/umwelt/aproj-*/audit.jsonl 2>/dev/null)"

# A run that connects to nothing never starts its gateway.
rsbx run -p "$aproj" -- sh -c 'while [ ! -e "$0/idle-go" ]; do sleep 0.05; done' "$aproj" \
        >/dev/null 2>&1 </dev/null &
idle_run=$!
sleep 1
idle_gw=$(pgrep -f -- "umwelt-gateway .*--sandbox umwelt-aproj-")
touch "$aproj/idle-go"
wait "$idle_run"
t_eq "root: a run that makes no connection never starts its gateway" "" "$idle_gw"

# kill_during_run WHAT PGREP-ARGS...: a run whose first request goes out,
# then the gateway process pgrep finds is killed, then a second request:
# it must find the door shut, and run must say the gateway ended.
kill_during_run() {
        local what=$1 pid= run
        shift
        rm -f "$aproj/go"
        rsbx run -p "$aproj" -- sh -c '
                curl -sS --max-time 5 -o /dev/null http://web.example/; echo "first=$?"
                while [ ! -e "$0/go" ]; do sleep 0.05; done
                curl -sS --max-time 5 http://web.example/ >/dev/null 2>&1; echo "proxy=$?"' \
                "$aproj" >"$T_TMP/killed.out" 2>"$T_TMP/killed.err" </dev/null &
        run=$!
        for _ in $(seq 100); do
                pid=$(pgrep "$@") && break
                sleep 0.05
        done
        sleep 0.2
        kill_pid "$pid"
        touch "$aproj/go"
        wait "$run"
        t_eq "root: the $what killed during a run leaves no way out" "first=0 proxy=7" \
                "$(tr '\n' ' ' <"$T_TMP/killed.out" | sed 's/ $//')" \
                "$what $pid: $(cat "$T_TMP/killed.err")"
        t_match "... and run says so" "egress: the gateway ended during the run.*had no way out" \
                "$(cat "$T_TMP/killed.err")"
}

# The process umwelt-run started (the oldest of the three that share its
# command line), the monitor: its engine and signer die with it.
kill_during_run gateway -o -f -- "umwelt-gateway .*--sandbox umwelt-aproj-"
# Its engine instead (the process that parses the sandbox's bytes, the one
# an attacker would take down): the monitor ends after it, and run must say
# so whether it had ended by the time run looked or was still on its way out.
kill_during_run engine -n -x umwelt-engine

# TLS termination from inside a real sandbox: a path rule decides each
# request in the tunnel; the ClientHello must name the CONNECT host, and a
# Host header inside must name it too.
tproj=$T_TMP/tproj
mkdir -p "$tproj"
printf '[egress]\nenabled = true\nallow = ["secure.example/allowed/*", "alt.example"]\n' >"$tproj/.umwelt.toml"
raccept "$tproj"
capture_split rsbx run -p "$tproj" -- /bin/sh -c '
        code() { curl -sS --max-time 5 -o /dev/null -w "%{http_code}" "$@" 2>/dev/null; echo; }
        code https://secure.example/allowed/x
        code https://secure.example/other
        code -H "Host: web.example" https://secure.example/allowed/y
        code --connect-to secure.example:443:alt.example:443 https://secure.example/allowed/z'
line() { sed -n "$1p" <<<"$T_OUT"; }
t_eq "root: a path rule allows its path over HTTPS (TLS terminated, the leaf trusted)" 200 "$(line 1)" "$T_OUT" "$T_ERR"
t_eq "... and refuses the sibling path" 403 "$(line 2)"
t_eq "... and a Host header that differs from the SNI" 403 "$(line 3)"
t_eq "... and a ClientHello whose SNI differs from the CONNECT host gets no answer" 000 "$(line 4)"
log=$(cat "$RSTATE"/umwelt/tproj-*/egress.jsonl 2>/dev/null)
t_match "... the log has the allowed path" '"host":"secure.example".*"path":"/allowed/x".*"decision":"allow"' "$log"
t_match "... and the refused sibling" '"host":"secure.example".*"path":"/other".*"decision":"deny"' "$log"
t_match "... and the refused SNI" '"method":"CONNECT","host":"alt.example".*"decision":"deny"' "$log"

# ------------------------------------------------------------- up, exec, reload

# live_process WHO PROJECT OUT: a process in the running sandbox (sbx WHO:
# rsbx or usbx) that asks for later.example, waits for PROJECT/go, and asks
# again; LIVE_PID once its first answer is in OUT.
live_process() {
        "$1" exec -p "$2" -- sh -c '
                c() { curl -sS --max-time 10 -o /dev/null -w "%{http_code}" "$@"; echo; }
                echo "before: $(c http://later.example/)"
                while [ ! -e "$0/go" ]; do sleep 0.1; done
                echo "after: $(c http://later.example/)"' "$2" >"$3" 2>&1 </dev/null &
        LIVE_PID=$!
        for _ in $(seq 100); do grep -q before "$3" && break; sleep 0.1; done
}

# serve WHO PROJECT PORT TEXT: a web server in the running sandbox on
# 127.0.0.1:PORT with PROJECT/site/marker holding TEXT; returns once the
# host's loopback reaches it.
serve() {
        mkdir -p "$2/site" && echo "$4" >"$2/site/marker" && chown -R --reference="$2" "$2/site"
        "$1" exec -p "$2" -- "$SPY" -m http.server "$3" --bind 127.0.0.1 --directory "$2/site" \
                >"$T_TMP/server.$3" 2>&1 </dev/null &
        SCENE_PIDS+=($!)
        for _ in $(seq 100); do
                host curl -s --max-time 1 -o /dev/null "http://127.0.0.1:$3/marker" && return
                sleep 0.1
        done
}
# listeners NS-CMD PORT: the listening addresses on PORT, sorted, one line.
listeners() { "${@:1:$#-1}" ss -Hltn "sport = :${!#}" | awk '{print $4}' | sort | tr '\n' ' ' | sed 's/ $//'; }

# json_of TEXT EXPR: EXPR on the JSON document TEXT (as json_get).
rstatus() { rsbx status -p "$1" --json 2>/dev/null; }
live() { [[ -n $1 && $1 != 0 ]] && proc_alive "$1"; }

rup=$T_TMP/rup
project "$rup"
capture_split rsbx up -p "$rup" --publish 18080 --json
t_eq "root: sandbox up with egress and --publish" 0 "$T_RC" "$T_ERR"
st=$(rstatus "$rup")
GWPID=$(json_get "$st" "j['gateway_pid']")
INIT=$(json_get "$st" "j['pid']")
echo "$GWPID" >"$T_TMP/gw.root"
t_eq "root: status --json shows egress, its gateway and the published port" "true [18080]" \
        "$(json_get "$st" "j['egress']") $(json_get "$st" "j['published']")" "$st"
t_match "... a live gateway pid" "^[1-9]" "$GWPID"
t_match "status as text too" "egress: +on \(gateway pid $GWPID\).*published: 18080 \(127.0.0.1 and ::1\)" \
        "$(rsbx status -p "$rup" 2>&1 | tr '\n' ' ')"
t_eq "root: the gateway listens in the sandbox's network namespace, loopback only" \
        "127.0.0.1:3128 [::1]:3128" "$(listeners nsenter --net="/proc/$INIT/ns/net" 3128)"
t_eq "... and not in the host's" "" "$(host ss -Hltn 'sport = :3128')"

# A rule added while a process runs applies to its next request.
live_process rsbx "$rup" "$T_TMP/live.out"
t_eq "root: a host not yet allowed: 403" "before: 403" "$(grep before "$T_TMP/live.out")" "$(cat "$T_TMP/live.out")"
printf '[egress]\nenabled = true\nallow = ["web.example", "secure.example", "later.example", "denied.example"]\ndeny = ["denied.example"]\n' \
        >"$rup/.umwelt.toml"
raccept "$rup"
capture_split rsbx reload -p "$rup"
t_eq "root: sandbox reload" "0 sandbox umwelt-rup-$(cut -d- -f3 <<<"$(json_get "$st" "j['id']")") : egress rules reloaded (4 allow, 1 deny)" \
        "$T_RC $(sed 's/:/ :/' <<<"$T_OUT")" "$T_ERR"
touch "$rup/go"
wait "$LIVE_PID"
t_eq "... the running process's next request is allowed" "after: 200" \
        "$(grep after "$T_TMP/live.out")" "$(cat "$T_TMP/live.out")"
RAUDIT=$(ls "$RSTATE"/umwelt/rup-*/audit.jsonl)
t_match "... the reload is audited" '"event":"egress-rules".*"allow":"web.example, secure.example, later.example' \
        "$(grep egress-rules "$RAUDIT" | tail -1)"

# Rules that do not read cannot be accepted; changed and not accepted,
# they close egress.
printf '[egress]\nenabled = true\nallow = ["web example"]\n' >"$rup/.umwelt.toml"
capture_split rumw policy accept -p "$rup"
t_eq "root: rules that do not read are not accepted: exit 3" 3 "$T_RC" "$T_ERR"
t_match "... naming the file and rule" "not accepted.*\.umwelt\.toml.*egress\.allow\[0\]" "$T_ERR"
capture_split rsbx reload -p "$rup"
t_eq "root: reload of rules not accepted: exit 3" 3 "$T_RC" "$T_ERR"
t_match "... egress closed, saying how to accept" "egress closed.*\.umwelt\.toml: changed since it was accepted.*policy accept -p" "$T_ERR"
capture_split rsbx exec -p "$rup" -- curl -sS --max-time 10 -o /dev/null -w "%{http_code}" http://web.example/
t_eq "... a host allowed before is refused now" 403 "$T_OUT" "$T_ERR"
project "$rup"
capture_split rsbx reload -p "$rup" --json
t_eq "... and a good reload opens it again" "0 true" "$T_RC $(json_get "$T_OUT" "j['egress']")" "$T_ERR"

# Ingress: a server inside, reachable from the host's loopback only.
serve rsbx "$rup" 18080 inside-served
t_eq "root: a published port: the server inside answers on the host's 127.0.0.1" inside-served \
        "$(host curl -sS --max-time 5 http://127.0.0.1:18080/marker 2>&1)"
t_eq "... and on [::1]" inside-served "$(host curl -sS --max-time 5 'http://[::1]:18080/marker' 2>&1)"
t_eq "... ss shows the listeners on loopback only" "127.0.0.1:18080 [::1]:18080" \
        "$(listeners host 18080)"
nsenter --net="/run/netns/$INET" curl -sS --max-time 3 http://11.0.0.1:18080/marker >/dev/null 2>&1
t_eq "... not reachable at the host's other address" 1 "$([[ $? -ne 0 ]] && echo 1)"
t_match "... the published port is audited" '"event":"ingress".*18080' \
        "$(grep '"event":"ingress"' "$RAUDIT" | grep 18080 | head -1)"

# The workload cannot change its walls.
RULESET=$(nsenter --net="/proc/$INIT/ns/net" nft list table inet umwelt 2>&1)
capture_split rsbx exec -p "$rup" -- sh -c '
        nft flush ruleset; echo "flush=$?"; nft delete table inet umwelt; echo "delete=$?"
        ip route add default dev lo; echo "route=$?"; ip link set lo down; echo "link=$?"' 2>&1
t_eq "root: nft flush, delete table, a route, lo down: each refused inside" \
        "flush=1 delete=1 route=2 link=2" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "... the ruleset read from the host is unchanged" "$RULESET" \
        "$(nsenter --net="/proc/$INIT/ns/net" nft list table inet umwelt 2>&1)"
t_match "... and it is the default-drop one" "chain output .*policy drop" "$(tr '\n' ' ' <<<"$RULESET")"

# The gateway killed mid-transfer: no way out.
rsbx exec -p "$rup" -- sh -c 'date +%s.%N; curl -sS --max-time 30 -o /dev/null http://web.example/slow/200; echo "rc=$?"; date +%s.%N' \
        >"$T_TMP/slow.out" 2>&1 </dev/null &
slow_pid=$!
for _ in $(seq 50); do
        [[ -n $(nsenter --net="/proc/$INIT/ns/net" ss -Htn state established 'dport = :3128') ]] && break
        sleep 0.1
done
sleep 0.5
date +%s.%N >>"$T_TMP/slow.kill"
kill_pid "$GWPID"
wait "$slow_pid"
t_match "root: a transfer when the gateway is killed fails" "rc=(18|52|56)" "$(cat "$T_TMP/slow.out")" "killed at $(cat "$T_TMP/slow.kill")"
capture_split rsbx exec -p "$rup" -- sh -c '
        curl -sS --max-time 5 http://web.example/ >/dev/null 2>&1; echo "proxy=$?"
        curl -sS --max-time 3 --noproxy "*" http://11.0.0.10/ >/dev/null 2>&1; echo "direct=$?"
        curl -sS --max-time 3 --noproxy "*" http://11.0.0.1:3128/ >/dev/null 2>&1; echo "host=$?"'
t_eq "... the next request, a direct one and one to the host's side: all fail to connect" \
        "proxy=7 direct=7 host=7" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "... the ruleset still stands" "$RULESET" "$(nsenter --net="/proc/$INIT/ns/net" nft list table inet umwelt 2>&1)"
st=$(rstatus "$rup")
t_eq "... status says no gateway" "true 0" "$(json_get "$st" "j['egress']") $(json_get "$st" "j['gateway_pid']")" "$st"
t_match "... and as text: closed" "gateway not running: closed" "$(rsbx status -p "$rup" 2>&1)"
capture_split rsbx reload -p "$rup"
t_eq "... reload says it cannot reopen it (exit 6)" 6 "$T_RC" "$T_ERR"

capture_split rsbx down -p "$rup"
t_eq "root: down" 0 "$T_RC" "$T_ERR"
t_eq "... no forwarder listens any more" "" "$(host ss -Hltn 'sport = :18080')"

# down and gc end the gateway.
capture_split rsbx up -p "$rup"
t_eq "root: up again" 0 "$T_RC" "$T_ERR"
st=$(rstatus "$rup")
GWPID=$(json_get "$st" "j['gateway_pid']")
echo "$GWPID" >"$T_TMP/gw.root"
capture_split rsbx down -p "$rup"
t_eq "root: down ends the gateway" "0 gone" "$T_RC $(live "$GWPID" || echo gone)" "$T_ERR"
capture_split rsbx up -p "$rup"
st=$(rstatus "$rup")
GWPID=$(json_get "$st" "j['gateway_pid']")
echo "$GWPID" >"$T_TMP/gw.root"
kill_pid "$(json_get "$st" "j['pid']")"
for _ in $(seq 50); do live "$GWPID" || break; sleep 0.1; done
t_eq "root: the init killed, its gateway ends with it" gone "$(live "$GWPID" || echo gone)"
capture_split rsbx gc
t_match "... and gc removes what the dead sandbox left" "^0 removed umwelt-rup" "$T_RC $T_OUT" "$T_ERR"


# ------------------------------------------------------------- rootless

uproj=$T_TMP/uproj
project "$uproj"
chown -R "$U:$G" "$uproj"
uaccept "$uproj"
capture_split usbx run -p "$uproj" -- sh -c "$INSIDE" sh "$XDG/.local/state/umwelt/ca"
t_eq "user: sandbox run with egress exits 0" 0 "$T_RC" "$T_ERR"
LOG=$(ls "$XDG"/.local/state/umwelt/uproj-*/egress.jsonl)
check_inside user
t_eq "user: no gateway left after run" "" "$(pgrep -u "$U" -f umwelt-gateway)"

capture_split usbx up -p "$uproj" --publish 18090 --json
t_eq "user: sandbox up with egress and --publish" 0 "$T_RC" "$T_ERR"
UGW=$(json_get "$T_OUT" "j['gateway_pid']")
echo "$UGW" >"$T_TMP/gw.user"
t_eq "user: the gateway runs as the user" "$U" "$(stat -c %u "/proc/$UGW" 2>&1)"
serve usbx "$uproj" 18090 user-served
t_eq "user: a published port answers on the host's 127.0.0.1 and [::1]" "user-served user-served" \
        "$(host curl -sS --max-time 5 http://127.0.0.1:18090/marker 2>&1) $(host curl -sS --max-time 5 'http://[::1]:18090/marker' 2>&1)"
t_eq "... on loopback only" "127.0.0.1:18090 [::1]:18090" "$(listeners host 18090)"
live_process usbx "$uproj" "$T_TMP/ulive.out"
printf '[egress]\nenabled = true\nallow = ["later.example"]\n' >"$uproj/.umwelt.toml"
uaccept "$uproj"
capture_split usbx reload -p "$uproj"
t_eq "user: reload" 0 "$T_RC" "$T_ERR"
touch "$uproj/go"
wait "$LIVE_PID"
t_eq "user: a rule added while a process runs applies to its next request" "before: 403 after: 200" \
        "$(tr '\n' ' ' <<<"$(cat "$T_TMP/ulive.out")" | sed 's/ $//')"
capture_split usbx down -p "$uproj"
t_eq "user: down" 0 "$T_RC" "$T_ERR"
t_eq "... the gateway, the forwarder and the container are gone" "gone  " \
        "$(live "$UGW" || echo gone) $(host ss -Hltn 'sport = :18090') $(as_user "$RT" list -q 2>&1)"

# ------------------------------------------------------------- refusals

# refused NAME RC REGEX WHO ARGS...: a sandbox that must not start.
refused() {
        local name=$1 rc=$2 re=$3 who=$4
        shift 4
        capture_split "$who" "$@"
        t_eq "$name: exit $rc" "$rc" "$T_RC" "$T_OUT" "$T_ERR"
        t_match "... naming why" "$re" "$T_ERR"
        t_eq "... nothing left: no container, no bundle, no gateway" "" \
                "$(rt list -q)$(ls /run/umwelt/bundles 2>/dev/null | grep -E 'rproj|rup|bad')$(pgrep -f 'umwelt-gateway .*--sandbox umwelt-(rproj|rup|bad)')"
}

if [[ -e $(dirname "$(command -v umwelt-run 2>/dev/null || echo /usr/local/bin/x)")/umwelt-gateway ]]; then
        t_skip "no gateway binary: refused" "an installed umwelt-gateway would be found"
else
        mkdir -p "$T_TMP/lonely"
        cp "$RT" "$T_TMP/lonely/umwelt-run"
        lonely() {
                host env HOME="$T_TMP/rhome" XDG_STATE_HOME="$RSTATE" "$T_TMP/lonely/umwelt-run" \
                        --root "$T_ROOT" sandbox "$@"
        }
        refused "no gateway binary next to umwelt-run or in bindir" 1 \
                "umwelt-gateway is not next to umwelt-run \($T_TMP/lonely\)" lonely run -p "$proj" -- true
fi

bad=$T_TMP/bad
project "$bad"
printf '[egress]\nenabled = true\nallow = ["web.example/public/*"]\n' >"$bad/.umwelt.toml"
mkdir -p "$T_TMP/badstate/umwelt/ca"
chmod 777 "$T_TMP/badstate/umwelt/ca"
badumw() {
        host env HOME="$T_TMP/rhome" XDG_STATE_HOME="$T_TMP/badstate" "$RT" --root "$T_ROOT" "$@"
}
badca() { badumw sandbox "$@"; }
badumw policy accept -p "$bad" >/dev/null
refused "a path rule with a CA that cannot be used" 3 "needs TLS termination: umwelt CA: .*0777" \
        badca run -p "$bad" -- true
printf '[egress]\nenabled = true\nallow = ["web.example"]\n' >"$bad/.umwelt.toml"
badumw policy accept -p "$bad" >/dev/null
raccept "$bad"
capture_split badca run -p "$bad" -- curl -sS -o /dev/null -w "%{http_code}" http://web.example/
t_eq "... host rules alone go on without it" "0 200" "$T_RC $T_OUT" "$T_ERR"
capture_split badca run -p "$bad" -- /bin/sh -c 'grep -c "BEGIN CERTIFICATE" "$SSL_CERT_FILE"; wc -c <"$NODE_EXTRA_CA_CERTS"'
t_eq "... the trust bundle holding the host's roots alone" \
        "$(host grep -c 'BEGIN CERTIFICATE' /etc/ssl/certs/ca-certificates.crt) 0" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"

floor 'egress = false' 'limits_best_effort = true'
refused "egress where the floor forbids it" 3 "\.umwelt\.toml:2:[0-9]+: egress\.enabled: egress is not allowed" \
        rsbx run -p "$bad" -- true
floor 'egress = true' 'ingress = false'
refused "--publish where the floor forbids it" 3 "--publish 18081: publishing ports is not allowed" \
        rsbx up -p "$bad" --publish 18081
t_match "... audited as a refusal" '"event":"refusal","port":"18081"' \
        "$(cat "$RSTATE"/umwelt/bad-*/audit.jsonl)"
floor 'egress = true'
refused "--publish 0" 2 "--publish: expected a port number" rsbx up -p "$bad" --publish 0
refused "the same port twice" 2 "--publish 18081: the port is published already" \
        rsbx up -p "$bad" --publish 18081 --publish 18081
refused "--publish on run" 2 "unknown option '--publish'" rsbx run -p "$bad" --publish 18081 -- true

t_done
