#!/bin/bash
# TLS termination with the umwelt CA, end to end on loopback, through the
# gateway's own TLS pieces (helpers/tls-term-proxy: the CA and trust bundle
# of netns/tls_ca.h and tls_trust.h, leaves and the server end of
# tls_leaf.h, the verified upstream end of tls_upstream.h): a "real" server
# (openssl s_server, with a certificate from a test CA) behind it; curl,
# Python, Node and git accept the leaf exactly when they are given the
# bundle (or, for Node, the CA) the way a sandbox's environment gives it;
# a ClientHello naming another host is refused; an upstream certificate the
# given trust does not vouch for, or one for another name, is refused. The
# whole test runs in a network namespace of its own, so its ports are its
# own and nothing reaches any other address.
T_NAME=tls-term
. "$(dirname "$0")/lib.sh"
t_require_root
if [[ -z ${UMW_TLS_TERM_NETNS:-} ]]; then
        exec unshare --net env UMW_TLS_TERM_NETNS=1 bash "$0" "$@"
fi
ip link set lo up || t_bail "cannot bring up lo in the test's network namespace"
t_setup

PROXY=$UMW_BUILDDIR/tests/integration/helpers/tls-term-proxy
[[ -x $PROXY ]] || t_bail "$PROXY missing (make check builds it)"
for tool in openssl curl; do
        command -v "$tool" >/dev/null || t_bail "$tool missing (scripts/setup.sh installs it)"
done
ROOTS=/etc/ssl/certs/ca-certificates.crt
[[ -r $ROOTS ]] || t_skip_all "$ROOTS missing (ca-certificates)"

W=$T_TMP/tls
mkdir -p "$W"
CA_DIR=$W/state/umwelt/ca
TRUST=$W/state/umwelt/trust
BUNDLE=$TRUST/ca-bundle.crt
UMWCA=$TRUST/umwelt-ca.crt
BGS=()
T_EXTRA_CLEANUP='for p in "${BGS[@]}"; do kill "$p" 2>/dev/null; done'

# The test internet's CA and the server certificate for test.example.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 \
        -keyout "$W/net-ca.key" -out "$W/net-ca.crt" -subj "/CN=umwelt test internet CA" \
        -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign \
        >/dev/null 2>&1 || t_bail "cannot make the test CA"
openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$W/srv.key" \
        -out "$W/srv.csr" -subj "/CN=test.example" >/dev/null 2>&1 || t_bail "server key"
printf 'subjectAltName=DNS:test.example\nextendedKeyUsage=serverAuth\n' >"$W/srv.ext"
openssl x509 -req -in "$W/srv.csr" -CA "$W/net-ca.crt" -CAkey "$W/net-ca.key" -CAcreateserial \
        -days 2 -extfile "$W/srv.ext" -out "$W/srv.crt" >/dev/null 2>&1 || t_bail "server cert"

openssl s_server -quiet -www -accept 127.0.0.1:9443 -cert "$W/srv.crt" -key "$W/srv.key" \
        </dev/null >"$W/s_server.log" 2>&1 &
BGS+=($!)

# start_proxy NAME PORT HOST UPSTREAM_CA: a proxy in front of s_server.
start_proxy() {
        local name=$1
        "$PROXY" "$CA_DIR" "$TRUST" "$2" "$3" 9443 "$4" >"$W/$name.out" 2>"$W/$name.err" </dev/null &
        BGS+=($!)
        local i
        for ((i = 0; i < 100; i++)); do
                [[ -s $W/$name.out ]] && return 0
                kill -0 "${BGS[-1]}" 2>/dev/null || break
                sleep 0.05
        done
        t_bail "proxy $name did not start: $(cat "$W/$name.err")"
}
for ((i = 0; i < 100; i++)); do
        (exec 3<>/dev/tcp/127.0.0.1/9443) 2>/dev/null && break
        sleep 0.05
done
start_proxy main 8443 test.example "$W/net-ca.crt"

# ---------------------------------------------------------------- the CA

t_eq "the CA directory is made 0700" 700 "$(stat -c %a "$CA_DIR")"
t_eq "the CA key is 0600" 600 "$(stat -c %a "$CA_DIR/ca.key")"
t_eq "the CA certificate is 0644" 644 "$(stat -c %a "$CA_DIR/ca.crt")"
t_match "the CA certificate is a CA with pathlen 0" \
        'CA:TRUE, pathlen:0' "$(openssl x509 -in "$CA_DIR/ca.crt" -noout -ext basicConstraints 2>&1)"
t_match "... an EC P-256 key" 'prime256v1|P-256' \
        "$(openssl x509 -in "$CA_DIR/ca.crt" -noout -text 2>&1 | grep -E 'ASN1 OID|NIST CURVE')"
key_sum=$(sha256sum <"$CA_DIR/ca.key")
start_proxy again 8446 test.example "$W/net-ca.crt"
t_eq "a second start keeps the CA's key" "$key_sum" "$(sha256sum <"$CA_DIR/ca.key")"

n_roots=$(grep -c 'BEGIN CERTIFICATE' "$ROOTS")
t_eq "the bundle is the host's roots and the umwelt CA" "$((n_roots + 1))" \
        "$(grep -c 'BEGIN CERTIFICATE' "$BUNDLE")"
t_run "... the umwelt CA last" cmp <(tail -c "$(stat -c %s "$CA_DIR/ca.crt")" "$BUNDLE") \
        "$CA_DIR/ca.crt"
t_run "the CA file for Node is the umwelt CA alone" cmp "$UMWCA" "$CA_DIR/ca.crt"
t_nomatch "the trust directory holds no key" 'ca\.key|PRIVATE' \
        "$(ls "$TRUST"; cat "$TRUST"/*)"

# ---------------------------------------------------------------- clients

RESOLVE=(--resolve test.example:8443:127.0.0.1)
URL=https://test.example:8443/
capture curl -sS -v --max-time 10 --cacert "$BUNDLE" "${RESOLVE[@]}" "$URL"
t_eq "curl with the bundle accepts the leaf" 0 "$T_RC" "$T_OUT"
t_match "... and gets the upstream's page through both TLS ends" 's_server' "$T_OUT"
t_match "... from a leaf the umwelt CA issued" 'issuer: O=umwelt; CN=umwelt sandbox CA' "$T_OUT"
t_match "... naming test.example" 'subjectAltName: host "test.example" matched' "$T_OUT"
t_match "... over HTTP/1.1 by ALPN" 'ALPN: server accepted http/1.1' "$T_OUT"
capture env CURL_CA_BUNDLE="$BUNDLE" curl -sS --max-time 10 "${RESOLVE[@]}" "$URL"
t_eq "curl with CURL_CA_BUNDLE accepts the leaf" 0 "$T_RC" "$T_OUT"
capture curl -sS --max-time 10 "${RESOLVE[@]}" "$URL"
t_eq "curl with the host's store alone refuses it (60)" 60 "$T_RC" "$T_OUT"

pyget='import socket, ssl
ctx = ssl.create_default_context()
with ctx.wrap_socket(socket.create_connection(("127.0.0.1", 8443), timeout=10),
                     server_hostname="test.example") as s:
    s.sendall(b"GET / HTTP/1.0\r\nHost: test.example\r\n\r\n")
    print(s.recv(100).split(b"\r\n")[0].decode())'
capture env SSL_CERT_FILE="$BUNDLE" "$PY" -c "$pyget"
t_match "python with SSL_CERT_FILE accepts the leaf" '^HTTP/1\.0 200' "$T_OUT"
capture env -u SSL_CERT_FILE "$PY" -c "$pyget"
t_match "python without it refuses the leaf" 'CERTIFICATE_VERIFY_FAILED' "$T_OUT"

if command -v node >/dev/null; then
        nodeget='require("https").get({host: "127.0.0.1", port: 8443, servername: "test.example",
                headers: {Host: "test.example"}}, (r) => { console.log("status " + r.statusCode); r.resume(); })
                .on("error", (e) => { console.log(e.code); process.exitCode = 1; });'
        capture env NODE_EXTRA_CA_CERTS="$UMWCA" node -e "$nodeget"
        t_eq "node with NODE_EXTRA_CA_CERTS (the CA alone) accepts the leaf" "status 200" "$T_OUT"
        capture env -u NODE_EXTRA_CA_CERTS node -e "$nodeget"
        t_eq "node without it refuses the leaf" UNABLE_TO_VERIFY_LEAF_SIGNATURE "$T_OUT"
else
        t_skip "node with NODE_EXTRA_CA_CERTS" "node missing"
        t_skip "node without it" "node missing"
fi

if command -v git >/dev/null; then
        gitls=(git -c http.curloptResolve=test.example:8443:127.0.0.1 ls-remote
                https://test.example:8443/project.git)
        capture env GIT_SSL_CAINFO="$BUNDLE" GIT_TERMINAL_PROMPT=0 "${gitls[@]}"
        t_nomatch "git with GIT_SSL_CAINFO gets past TLS (s_server is no git server)" \
                'certificate|SSL' "$T_OUT"
        t_match "... and reached the server" 'not valid|repository|HTTP' "$T_OUT"
        capture env -u GIT_SSL_CAINFO GIT_TERMINAL_PROMPT=0 "${gitls[@]}"
        t_match "git without it refuses the leaf" 'certificate' "$T_OUT"
else
        t_skip "git with GIT_SSL_CAINFO" "git missing"
        t_skip "git without it" "git missing"
fi

# ---------------------------------------------------------------- refusals

capture curl -sS --max-time 10 --cacert "$BUNDLE" --resolve evil.example:8443:127.0.0.1 \
        https://evil.example:8443/
t_eq "a ClientHello naming another host gets no leaf (35)" 35 "$T_RC" "$T_OUT"
t_match "... the terminating end refused its SNI" 'from the client: TLS handshake: callback failed' \
        "$(cat "$W/main.err")"

start_proxy wrongca 8444 test.example "$UMWCA"
capture curl -sS --max-time 10 --cacert "$BUNDLE" --resolve test.example:8444:127.0.0.1 \
        https://test.example:8444/
t_nomatch "an upstream its trust does not vouch for: the client gets no page" 's_server' "$T_OUT"
t_match "... the upstream end refused its certificate" \
        'to the upstream: TLS handshake: .*unable to get local issuer certificate' \
        "$(cat "$W/wrongca.err")"

start_proxy wrongname 8445 other.example "$W/net-ca.crt"
capture curl -sS --max-time 10 --cacert "$BUNDLE" --resolve other.example:8445:127.0.0.1 \
        https://other.example:8445/
t_nomatch "an upstream certificate for another name: the client gets no page" 's_server' "$T_OUT"
t_match "... the upstream end refused the name" 'to the upstream: .*hostname mismatch' \
        "$(cat "$W/wrongname.err")"

t_done
