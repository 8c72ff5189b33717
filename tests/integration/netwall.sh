#!/bin/bash
# run.umwelt.net=default-drop on the real kernel: the host sees exactly the
# ruleset in the container's network namespace; through a veth the test
# wires to a peer namespace of its own (never the host's network), the peer,
# private, CGNAT, metadata, ULA and public-looking addresses that a control
# container without the wall reaches are unreachable with it, while lo
# answers; a uid 0 workload with every capability but CAP_NET_ADMIN cannot
# delete, flush or open the table; the same as the unprivileged user; a
# namespace joined by path; refusals that leave nothing; podman with
# --annotation; and the sandbox face.
T_NAME=netwall
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$HERE/lib.sh"
t_require_root
for tool in nft nsenter ip unshare runuser; do
        command -v "$tool" >/dev/null || t_bail "$tool missing (scripts/setup.sh installs it)"
done
# podman keeps state at fixed paths: in a mount namespace of this file's own
# they are empty tmpfs (as in podman.sh), and every mount goes with it.
if [[ -z ${UMW_NETWALL_PRIVATE_NS:-} ]]; then
        export UMW_NETWALL_PRIVATE_NS=1
        exec unshare --mount --propagation private -- bash "$0" "$@"
fi
t_setup

EXPECTED='table inet umwelt {
	chain input {
		type filter hook input priority filter; policy drop;
		ip saddr 10.0.0.0/8 drop
		ip saddr 172.16.0.0/12 drop
		ip saddr 192.168.0.0/16 drop
		ip saddr 100.64.0.0/10 drop
		ip saddr 169.254.0.0/16 drop
		ip6 saddr fc00::/7 drop
		ip6 saddr fe80::/10 drop
		iif "lo" accept
	}

	chain forward {
		type filter hook forward priority filter; policy drop;
	}

	chain output {
		type filter hook output priority filter; policy drop;
		ip daddr 10.0.0.0/8 drop
		ip daddr 172.16.0.0/12 drop
		ip daddr 192.168.0.0/16 drop
		ip daddr 100.64.0.0/10 drop
		ip daddr 169.254.0.0/16 drop
		ip6 daddr fc00::/7 drop
		ip6 daddr fe80::/10 drop
		oif "lo" accept
	}
}'

TAMPER=$T_TMP/nft-tamper
cc -static -O2 -o "$TAMPER" "$UMW_SRCDIR/tests/integration/helpers/nft-tamper.c" ||
        t_bail "cannot build the nft-tamper helper"

# ruleset_of PID: the ruleset of that process's network namespace, read on
# the host's side.
ruleset_of() { nsenter -t "$1" -n nft list ruleset 2>&1; }

# Every capability this machine can hand out but CAP_NET_ADMIN, by name.
CAPS=$("$PY" - <<'EOF'
import re
names = {int(n): c for c, n in re.findall(r"#define (CAP_[A-Z_]+)\s+(\d+)\s*$",
                                           open("/usr/include/linux/capability.h").read(), re.M)}
bnd = int(next(l.split()[1] for l in open("/proc/self/status") if l.startswith("CapBnd:")), 16)
print(",".join(n for i, n in sorted(names.items()) if bnd >> i & 1 and n != "CAP_NET_ADMIN"))
EOF
)
# set_caps BUNDLE: uid 0 with CAPS in every set but ambient.
set_caps() {
        cfg_set "$1" "c['process']['capabilities'] = {k: '$CAPS'.split(',') for k in ('bounding', 'effective', 'permitted', 'inheritable')}"
}
WALL='c.setdefault("annotations", {})["run.umwelt.net"] = "default-drop"'

# wb: walled, cb: the control, the same but for the annotation.
wb=$T_TMP/walled cb=$T_TMP/control
for b in "$wb" "$cb"; do
        make_bundle "$b"
        cp "$TAMPER" "$b/rootfs/bin/nft-tamper"
        set_caps "$b"
        cfg_set "$b" 'c["process"]["args"] = ["/bin/sleep", "1000"]'
done
cfg_set "$wb" "$WALL"

# start BUNDLE: run -d; T_RC, T_OUT, and PID of the init.
start() {
        new_id
        capture rt run -d --bundle "$1" "$T_LAST_ID"
        PID=$(state_field "$T_LAST_ID" pid)
}

# ---------------------------------------------------------------- the peer
# A network namespace of the test's own, held by a server that answers every
# TCP connection with "peer-ok", on addresses of each blocked kind and one
# that is in none of them.
PEER_V4=(10.231.0.1/24 172.16.231.1/24 192.168.231.1/24 100.64.231.1/24 169.254.169.254/32 198.51.100.1/24)
TARGETS=(10.231.0.1 172.16.231.1 192.168.231.1 100.64.231.1 169.254.169.254 198.51.100.1 fd31::1)
unshare --net "$PY" -c '
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
s.bind(("::", 8080))
s.listen(16)
while True:
    c, _ = s.accept()
    c.sendall(b"peer-ok\n")
    c.close()
' </dev/null >/dev/null 2>&1 &
PEER=$!
T_EXTRA_CLEANUP='kill $PEER 2>/dev/null; [[ -n ${UROOT:-} ]] && for i in $(urt list -q 2>/dev/null); do urt delete -f "$i" >/dev/null 2>&1; done; [[ -n ${P_TMP:-} ]] && pm_reset'
for _ in $(seq 50); do
        [[ $(stat -L -c %i "/proc/$PEER/ns/net" 2>/dev/null) != "$(host_ns net)" ]] && break
        sleep 0.1
done

# wire PID N: veth umwc<N> in PID's namespace to umwp<N> in the peer's, both
# made in place (the host's namespace never holds either), with a default
# route to the peer.
wire() {
        local pid=$1 n=$2 a
        ip link add name "umwc$n" netns "$pid" type veth peer name "umwp$n" netns "$PEER" || return 1
        for a in "${PEER_V4[@]}"; do
                nsenter -t "$PEER" -n ip addr add "$a" dev "umwp$n" || return 1
        done
        nsenter -t "$PEER" -n ip -6 addr add fd31::1/64 dev "umwp$n" nodad &&
                nsenter -t "$PEER" -n ip link set "umwp$n" up &&
                nsenter -t "$pid" -n ip addr add 10.231.0.2/24 dev "umwc$n" &&
                nsenter -t "$pid" -n ip -6 addr add fd31::2/64 dev "umwc$n" nodad &&
                nsenter -t "$pid" -n ip link set "umwc$n" up &&
                nsenter -t "$pid" -n ip route add default via 10.231.0.1 &&
                nsenter -t "$pid" -n ip -6 route add default via fd31::1
}

# unwire N: the pair goes with its peer end.
unwire() { nsenter -t "$PEER" -n ip link del "umwp$1" 2>/dev/null; }

# reach EXEC... -- TARGET: "peer-ok" when a TCP connection from inside gets
# the peer's answer.
reach() {
        local out
        out=$("$@" nc -w 2 "$TARGET" 8080 </dev/null 2>&1)
        [[ $out == peer-ok ]] && echo reached || echo "blocked ($out)"
}

# lo_answers EXEC...: a listener on 127.0.0.1 inside answers a client inside.
lo_answers() {
        "$@" sh -c 'nc -l -p 9000 -e echo lo-ok & sleep 0.3; nc -w 2 127.0.0.1 9000 </dev/null' 2>&1
}

# ---------------------------------------------------------------- as root

start "$cb"
t_eq "control: a container without the annotation starts" 0 "$T_RC" "$T_OUT"
cid=$T_LAST_ID
t_eq "control: its namespace has no ruleset" "" "$(ruleset_of "$PID")"
if wire "$PID" 1; then
        for TARGET in "${TARGETS[@]}"; do
                t_eq "control: $TARGET on the peer is reached" reached "$(reach rt exec "$cid")"
        done
        t_match "control: ping reaches the peer" "1 packets received" "$(rt exec "$cid" ping -c 1 -W 2 10.231.0.1 2>&1)"
else
        t_fail "control: wire a veth to the peer"
fi
unwire 1
rt delete -f "$cid" >/dev/null 2>&1

start "$wb"
t_eq "default-drop: the container starts" 0 "$T_RC" "$T_OUT"
wid=$T_LAST_ID wpid=$PID
t_eq "default-drop: the host sees exactly table inet umwelt" "$EXPECTED" "$(ruleset_of "$wpid")"
t_eq "default-drop: lo answers inside" lo-ok "$(lo_answers rt exec "$wid")"
if wire "$wpid" 2; then
        for TARGET in "${TARGETS[@]}"; do
                t_match "default-drop: $TARGET on the peer is not reached" "^blocked" "$(reach rt exec "$wid")"
        done
        t_nomatch "default-drop: ping does not reach the peer" " 1 packets received" "$(rt exec "$wid" ping -c 1 -W 2 10.231.0.1 2>&1)"
else
        t_fail "default-drop: wire a veth to the peer"
fi
unwire 2

# The tamper helper works where the caller may: a table made on the host's
# side in a namespace of its own is deleted.
t_eq "control: nft-tamper deletes a table where it may" "ok|" \
        "$(unshare --net sh -c "nft add table inet umwelt && '$TAMPER' delete; echo \"|\$(nft list tables)\"" 2>&1 | tr -d '\n')"
for action in delete flush accept; do
        t_eq "default-drop: uid 0 with every other capability cannot $action" \
                "error: Operation not permitted" "$(rt exec "$wid" nft-tamper "$action" 2>&1)"
done
t_eq "default-drop: ... and the table is intact" "$EXPECTED" "$(ruleset_of "$wpid")"
capture rt exec --cap CAP_NET_ADMIN "$wid" nft-tamper delete
t_eq "default-drop: exec --cap CAP_NET_ADMIN is refused (exit 3)" 3 "$T_RC" "$T_OUT"
t_match "... naming the wall" "exec: --cap: CAP_NET_ADMIN is refused" "$T_OUT"
printf '{"args": ["nft-tamper", "delete"], "cwd": "/", "capabilities": {"bounding": ["CAP_NET_ADMIN"]}}' >"$T_TMP/netadmin.json"
capture rt exec --process "$T_TMP/netadmin.json" "$wid"
t_eq "default-drop: exec of a process file with CAP_NET_ADMIN is refused (exit 3)" 3 "$T_RC" "$T_OUT"
t_eq "... and the table is still intact" "$EXPECTED" "$(ruleset_of "$wpid")"
rt delete -f "$wid" >/dev/null 2>&1

# ---------------------------------------------------------------- refusals

# refused NAME PYTHON REGEX: create of the walled bundle with PYTHON applied
# to its config exits 3 with one line matching REGEX and leaves nothing.
refused() {
        local name=$1 code=$2 re=$3 rb=$T_TMP/refused
        rm -rf "$rb"
        cp -a "$wb" "$rb"
        cfg_set "$rb" "$code"
        new_id
        capture rt create --bundle "$rb" "$T_LAST_ID"
        t_match "$name: exit 3, one line" "^3 [^
]*$re[^
]*$" "$T_RC $T_OUT"
        t_eq "$name: nothing left" "" "$(rt list -q)$(ls "$T_ROOT")"
}
refused "CAP_NET_ADMIN with default-drop" \
        'c["process"]["capabilities"]["ambient"] = ["CAP_NET_ADMIN"]' \
        'config.json: .process.capabilities: CAP_NET_ADMIN is refused with .annotations\["run.umwelt.net"\]'
refused "an unknown run.umwelt.net value" \
        'c["annotations"]["run.umwelt.net"] = "allow-all"' \
        'config.json: .annotations\["run.umwelt.net"\]: expected "default-drop", got "allow-all"'
refused "default-drop without a network namespace" 'drop_ns("network")' \
        '.annotations\["run.umwelt.net"\]: default-drop needs a network namespace'

# ---------------------------------------------------------------- joined by path

unshare --net sleep 1000 </dev/null >/dev/null 2>&1 &
HOLD=$!
unshare --net sleep 1000 </dev/null >/dev/null 2>&1 &
OTHER=$!
T_EXTRA_CLEANUP+="; kill $HOLD $OTHER 2>/dev/null"
sleep 0.2
jb=$T_TMP/joined
cp -a "$wb" "$jb"
cfg_set "$jb" "set_ns('network', '/proc/$HOLD/ns/net')"
start "$jb"
t_eq "joined by path: the container starts" 0 "$T_RC" "$T_OUT"
t_eq "joined by path: the joined namespace holds exactly the table" "$EXPECTED" "$(ruleset_of "$HOLD")"
start "$jb"
t_eq "joined by path: a second walled container joins the same namespace" 0 "$T_RC" "$T_OUT"
t_eq "... and the table is there once, unchanged" "$EXPECTED" "$(ruleset_of "$HOLD")"

nsenter -t "$OTHER" -n nft add table inet umwelt
before=$(ruleset_of "$OTHER")
cfg_set "$jb" "set_ns('network', '/proc/$OTHER/ns/net')"
new_id
capture rt create --bundle "$jb" "$T_LAST_ID"
t_match "a namespace whose table inet umwelt differs: create fails (exit 1) naming nftables" \
        "^1 [^
]*run.umwelt.net=default-drop: table inet umwelt was in the network namespace already: nftables: read back: [^
]*$" "$T_RC $T_OUT"
t_eq "... nothing left" "" "$(rt list -q | grep -x "$T_LAST_ID")"
t_eq "... and the table found there is left as it was" "$before" "$(ruleset_of "$OTHER")"

# ---------------------------------------------------------------- rootless

USER_NAME=umwelt-test
if ! id -u "$USER_NAME" >/dev/null 2>&1; then
        useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$USER_NAME" ||
                t_bail "cannot create user $USER_NAME"
fi
U=$(id -u "$USER_NAME") G=$(id -g "$USER_NAME")
UROOT=$T_TMP/xdg
mkdir -m 700 "$UROOT"
chown "$U:$G" "$UROOT"
as_user() {
        runuser -u "$USER_NAME" -- env -i PATH=/usr/local/bin:/usr/bin:/bin XDG_RUNTIME_DIR="$UROOT" HOME="$UROOT" "$@"
}
urt() { as_user "$RT" --root "$UROOT/state" "$@"; }
ub=$T_TMP/rootless
mkdir "$ub"
cp -a "$wb/rootfs" "$ub/rootfs"
chown "$U:$G" "$ub"
(cd "$ub" && as_user "$RT" spec --rootless) || t_bail "spec --rootless as the user failed"
set_caps "$ub"
cfg_set "$ub" "$WALL
c['process']['terminal'] = False
c['process']['args'] = ['/bin/sleep', '1000']
c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': $U, 'size': 1}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': $G, 'size': 1}]
set_ns('network')"
chown "$U:$G" "$ub/config.json"
new_id
capture urt run -d --bundle "$ub" "$T_LAST_ID"
t_eq "rootless: the walled container starts" 0 "$T_RC" "$T_OUT"
uid_=$T_LAST_ID
upid=$(json_get "$(urt state "$uid_" 2>/dev/null)" 'j["pid"]')
t_eq "rootless: the host sees exactly table inet umwelt" "$EXPECTED" "$(ruleset_of "$upid")"
t_eq "rootless: lo answers inside" lo-ok "$(lo_answers urt exec "$uid_")"
if wire "$upid" 3; then
        for TARGET in 10.231.0.1 169.254.169.254 198.51.100.1 fd31::1; do
                t_match "rootless: $TARGET on the peer is not reached" "^blocked" "$(reach urt exec "$uid_")"
        done
else
        t_fail "rootless: wire a veth to the peer"
fi
unwire 3
for action in delete accept; do
        t_eq "rootless: uid 0 in the user namespace with every other capability cannot $action" \
                "error: Operation not permitted" "$(urt exec "$uid_" nft-tamper "$action" 2>&1)"
done
t_eq "rootless: ... and the table is intact" "$EXPECTED" "$(ruleset_of "$upid")"
urt delete -f "$uid_" >/dev/null 2>&1
cfg_set "$ub" 'c["process"]["capabilities"]["bounding"].append("CAP_NET_ADMIN")'
new_id
capture urt create --bundle "$ub" "$T_LAST_ID"
t_match "rootless: CAP_NET_ADMIN with default-drop is refused (exit 3)" \
        "^3 [^
]*CAP_NET_ADMIN is refused[^
]*$" "$T_RC $T_OUT"
t_eq "rootless: nothing left" "" "$(urt list -q 2>&1)"

# ---------------------------------------------------------------- the sandbox face

export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
proj=$T_TMP/proj
mkdir -p "$HOME" "$proj"
cp "$TAMPER" "$proj/nft-tamper"
"$RT" --root "$T_ROOT" sandbox run -p "$proj" -- /bin/sh -c \
        "touch $proj/started; sleep 3; /bin/busybox nc -l -p 9000 -e echo lo-ok & sleep 0.3; /bin/busybox nc -w 2 127.0.0.1 9000 </dev/null; $proj/nft-tamper delete" \
        >"$T_TMP/sbx.out" 2>"$T_TMP/sbx.err" </dev/null &
SBX=$!
wait_file "$proj/started" 100 || touch "$proj/started"
spid=
for id in $(rt list -q); do spid=$(state_field "$id" pid); done
t_eq "sandbox run: the host sees exactly table inet umwelt" "$EXPECTED" "$([[ -n $spid ]] && ruleset_of "$spid")"
kill -0 "$SBX" 2>/dev/null && wait "$SBX"
t_eq "sandbox run: lo answers; the workload cannot delete the table" \
        "lo-ok error: Operation not permitted" "$(tr '\n' ' ' <"$T_TMP/sbx.out" | sed 's/ $//')" \
        "$(cat "$T_TMP/sbx.err")"

# ---------------------------------------------------------------- podman

pm_reset() {
        pm rm -af -t 0 >/dev/null 2>&1
        pm rmi -af >/dev/null 2>&1
        pm system reset -f >/dev/null 2>&1
}
if ! command -v podman >/dev/null || ! command -v conmon >/dev/null; then
        t_skip "podman run --annotation run.umwelt.net=default-drop" "podman or conmon not installed"
        t_done
fi
for d in /var/lib/containers /run/containers; do
        mkdir -p "$d" && mount -t tmpfs -o mode=0700 umwt-netwall "$d" || t_bail "cannot mount a tmpfs on $d"
done
P_TMP=$T_TMP/podman
mkdir -p "$P_TMP/networks"
export CONTAINERS_CONF=$P_TMP/containers.conf CONTAINERS_STORAGE_CONF=$P_TMP/storage.conf
unset CONTAINER_HOST CONTAINER_CONNECTION
sed -e "s|@TMP@|$P_TMP|g" -e "s|@RUNTIME@|$RT|g" "$HERE/podman/containers.conf.in" >"$CONTAINERS_CONF"
cp "$HERE/podman/umwelt-test.json" "$P_TMP/networks/"
printf '[storage]\ndriver = "overlay"\ngraphroot = "%s/root"\nrunroot = "%s/runroot"\n' "$P_TMP" "$P_TMP" >"$CONTAINERS_STORAGE_CONF"
pm() { timeout -k 10 120 podman --root "$P_TMP/root" --runroot "$P_TMP/runroot" --runtime "$RT" "$@"; }
IMG=localhost/umwelt-netwall
tar -C "$wb/rootfs" -cf "$P_TMP/rootfs.tar" . && pm import -q "$P_TMP/rootfs.tar" "$IMG" >/dev/null 2>&1 ||
        t_bail "podman import failed"

# The gateway is the host's own end of the test bridge: nothing leaves the machine.
GW='gw=$(ip route | awk "/^default/ {print \$3}")
if ping -c 1 -W 2 "$gw" >/dev/null 2>&1; then echo gateway-reached; else echo gateway-blocked; fi
nc -l -p 9000 -e echo lo-ok & sleep 0.3; nc -w 2 127.0.0.1 9000 </dev/null'
t_eq "podman --network bridge without the annotation: the gateway answers (control)" \
        "gateway-reached lo-ok" "$(pm run --rm --network bridge "$IMG" sh -c "$GW" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
t_eq "podman --annotation run.umwelt.net=default-drop --network bridge: the gateway is walled off, lo answers" \
        "gateway-blocked lo-ok" "$(pm run --rm --annotation run.umwelt.net=default-drop --network bridge "$IMG" sh -c "$GW" 2>&1 | tr '\n' ' ' | sed 's/ $//')"
pm run -d --name umwt-netwall --annotation run.umwelt.net=default-drop --network bridge "$IMG" sleep 1000 >/dev/null 2>&1
ppid=$(pm inspect -f '{{.State.Pid}}' umwt-netwall 2>/dev/null)
t_eq "podman: the host sees exactly table inet umwelt in the container's namespace" "$EXPECTED" \
        "$([[ $ppid -gt 0 ]] && ruleset_of "$ppid")"
pm rm -f -t 0 umwt-netwall >/dev/null 2>&1
out=$(pm run --rm --annotation run.umwelt.net=default-drop --cap-add NET_ADMIN "$IMG" true 2>&1)
t_match "podman: --cap-add NET_ADMIN with the annotation is refused" "CAP_NET_ADMIN is refused" "$out"
pm_reset
t_done
