# The network scene of the egress tests (sourced by egress.sh and
# relay-egress.sh, after lib.sh's t_setup and t_test_user): a "host" network
# namespace ($HOST) in which every umwelt-run of the test runs (`ip netns
# exec`), so the gateway it starts dials from there, joined by a veth pair
# to an "internet" namespace with HTTP and HTTPS servers (a certificate
# from a CA made here) at 11.0.0.10 and 11.0.0.11, addresses that exist
# only in it: no packet can leave the machine whatever a route says.
# /etc/netns/$HOST/* is bound over /etc in a mount namespace of its own (as
# `ip netns exec` does): the names come from hosts there, the resolver
# points nowhere, and the host's trust store (ssl/) holds the test CA, so
# the sandbox's trust bundle (host roots + umwelt CA) vouches for the
# servers. Both users' config puts the workspace in place.
INET_PY=$UMW_SRCDIR/tests/integration/helpers/gateway-inet.py
for tool in curl openssl ip ss nft nsenter runuser; do
        command -v $tool >/dev/null || t_bail "$tool missing (scripts/setup.sh installs it)"
done
HOST=umwt-eg$$
INET=$HOST-inet
ETC=/etc/netns/$HOST
# Root's state where the sandbox sees the host read-only (not under a tmpfs
# it gets): the CA's directory must be hidden there all the same.
RSTATE=/var/lib/umwt-egress-$$
SCENE_PIDS=()

t_keep_floor

# kill_pid PID: SIGKILL to that one process (never 0 or -1: a group).
kill_pid() { [[ $1 =~ ^[0-9]+$ && $1 -gt 1 ]] && kill -9 "$1" 2>/dev/null; }

scene_cleanup() {
        local p
        for p in "${SCENE_PIDS[@]}"; do
                kill -9 "$p" 2>/dev/null
                wait "$p" 2>/dev/null
        done
        for p in $(as_user "$RT" list -q 2>/dev/null); do
                as_user "$RT" kill "$p" KILL >/dev/null 2>&1
                as_user "$RT" delete -f "$p" >/dev/null 2>&1
        done
        for p in "$T_TMP"/gw.*; do
                [[ -e $p ]] && kill_pid "$(cat "$p")"
        done
        ip netns del "$INET" 2>/dev/null
        ip netns del "$HOST" 2>/dev/null
        rm -rf "$ETC" "$RSTATE"
        rmdir /etc/netns 2>/dev/null
        return 0
}
T_EXTRA_CLEANUP=scene_cleanup

# ------------------------------------------------------------- the scene

ip netns add "$INET" || t_bail "ip netns add $INET"
ip netns add "$HOST" || t_bail "ip netns add $HOST"
ip -n "$INET" link set lo up
ip -n "$HOST" link set lo up
ip -n "$HOST" link add gw0 type veth peer name in0 netns "$INET" || t_bail "veth"
ip -n "$HOST" addr add 11.0.0.1/8 dev gw0
ip -n "$HOST" link set gw0 up
ip -n "$HOST" route add default dev gw0
for a in 11.0.0.10/8 11.0.0.11/8 10.0.0.5/32; do
        ip -n "$INET" addr add "$a" dev in0
done
ip -n "$INET" link set in0 up

# The HTTPS server's certificate is its own root: the host's trust store in
# the scene holds it alone.
pki=$T_TMP/pki
mkdir -p "$pki"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$pki/srv.key" -out "$pki/srv.pem" -days 2 \
        -subj /CN=secure.example -addext subjectAltName=DNS:secure.example \
        >"$T_TMP/pki.log" 2>&1 || t_bail "openssl: $(cat "$T_TMP/pki.log")"
chmod 644 "$pki/srv.pem"

nsenter --net="/run/netns/$INET" -- "$PY" "$INET_PY" 11.0.0.10 11.0.0.11 "$pki/srv.pem" \
        "$pki/srv.key" "$T_TMP/inet.ready" 2>"$T_TMP/inet.err" &
SCENE_PIDS+=($!)
wait_file "$T_TMP/inet.ready" 100 || t_bail "the test internet did not start: $(cat "$T_TMP/inet.err")"

mkdir -p "$ETC/ssl/certs"
cat >"$ETC/hosts" <<'HOSTS'
127.0.0.1 localhost
::1 localhost
11.0.0.10 web.example other.example denied.example later.example
11.0.0.11 secure.example alt.example
10.0.0.5 private.example
127.0.0.1 loop.example
HOSTS
echo 'nameserver 127.0.0.1' >"$ETC/resolv.conf"
cp "$pki/srv.pem" "$ETC/ssl/certs/ca-certificates.crt"
[[ -e /etc/ssl/openssl.cnf ]] && cp /etc/ssl/openssl.cnf "$ETC/ssl/"
chmod -R a+rX "$ETC"


# host CMD...: CMD in the host namespace, with its /etc files bound over
# /etc in a mount namespace of its own, as `ip netns exec` does, but keeping
# /sys (ip netns exec mounts a new sysfs there, without the cgroup mounts).
host() {
        nsenter --net="/run/netns/$HOST" -- unshare --mount --propagation slave -- sh -c '
                for f in "$0"/*; do mount --bind "$f" "/etc/${f##*/}" || exit 1; done
                exec "$@"' "$ETC" "$@"
}
# rumw ARGS...: umwelt-run as root there; uumw: as the user. rsbx, usbx:
# their sandbox verb; raccept, uaccept DIR: the project's policy accepted.
rumw() {
        host env HOME="$T_TMP/rhome" XDG_STATE_HOME="$RSTATE" "$RT" --root "$T_ROOT" "$@"
}
uumw() {
        host runuser -u "$USER_NAME" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
                XDG_RUNTIME_DIR="$XDG" HOME="$XDG" "$RT" "$@"
}
rsbx() { rumw sandbox "$@"; }
usbx() { uumw sandbox "$@"; }
raccept() { rumw policy accept -p "$1" >/dev/null || t_fail "root: accept $1's policy"; }
uaccept() { uumw policy accept -p "$1" >/dev/null || t_fail "user: accept $1's policy"; }
mkdir -p "$T_TMP/rhome"
# These tests talk with the sandbox through files in its workspace (go,
# ready, logs), which review mode's overlay keeps apart in both directions:
# both users' config puts the workspace in place (what egress does is the
# same in either mode).
direct_mode() {
        mkdir -p "$1/.config/umwelt"
        printf '[workspace]\nmode = "direct"\n' >"$1/.config/umwelt/config.toml"
}
direct_mode "$T_TMP/rhome"
direct_mode "$XDG"
chown -R "$U:$G" "$XDG/.config"
