#!/bin/bash
# Host unix sockets (issue 11, hole 3): connect() needs no write on the
# mount, so a socket the host listens on is reachable through a read-only
# view of it. The host listens (stream and datagram) under /srv, /var/lib,
# /mnt, /run, /tmp, /etc, /opt and in the workspace; from inside root's and
# the unprivileged user's sandbox on the host's root, connect() to each must
# fail, while a socket the sandbox binds itself still works; doctor --deep
# tries the host's sockets from inside and finds none reachable.
T_NAME=hostsock
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
floor 'limits_best_effort = true'

tag=umwt-hostsock-$$
made=(/srv/$tag /var/lib/$tag /mnt/$tag /run/$tag /etc/$tag /opt/$tag)
cleanup_host() {
        [[ -n ${server:-} ]] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
        rm -rf "${made[@]}"
        t_cleanup
}
trap cleanup_host EXIT

proj=$T_TMP/proj
mkdir -p "$proj" "${made[@]}" "$T_TMP/h"
chmod 755 "${made[@]}"
socks=()
for d in "${made[@]}" "$T_TMP/h" "$proj"; do socks+=("$d/s"); done
dgram=/etc/$tag/d

# The host's listeners, world-connectable (0777), until killed.
"$PY" - "$dgram" "${socks[@]}" <<'PY' &
import os, socket, sys, time
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
d.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777)
keep = [d]
for p in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(p); os.chmod(p, 0o777); s.listen(8); keep.append(s)
open(sys.argv[1] + ".ready", "w").write("1")
time.sleep(600)
PY
server=$!
wait_file "$dgram.ready" 100 || t_bail "the host's listeners did not start"

# Inside: each path's fate, "PATH ok" or "PATH ERRNO-NAME"; then the
# sandbox's own socket in /tmp.
PROBE_PY='
import errno, socket, sys
for p in sys.argv[2:]:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(p); print(p, "ok")
    except OSError as e:
        print(p, errno.errorcode.get(e.errno, e.errno))
d = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    d.sendto(b"x", sys.argv[1]); print(sys.argv[1], "ok")
except OSError as e:
    print(sys.argv[1], errno.errorcode.get(e.errno, e.errno))
own = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
own.bind("/tmp/own.sock"); own.listen(1)
c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
c.connect("/tmp/own.sock"); print("own ok")'

check() {
        local who=$1
        shift
        capture_split "$@" sandbox run -p "$proj" -- python3 -c "$PROBE_PY" "$dgram" "${socks[@]}"
        t_eq "$who: the probe ran" 0 "$T_RC" "$T_ERR"
        t_eq "$who: connect() to none of the host's sockets succeeds" "" \
                "$(grep ' ok$' <<<"$T_OUT" | grep -v '^own ok')" "$T_OUT"
        t_eq "$who: ... each of the $((${#socks[@]} + 1)) was tried" $((${#socks[@]} + 1)) \
                "$(grep -c "^/" <<<"$T_OUT")" "$T_OUT"
        t_eq "$who: a socket the sandbox binds itself works" "own ok" "$(tail -n 1 <<<"$T_OUT")"
}

# doctor --deep: its inside check tries every socket of the host's
# /proc/net/unix (these among them) and finds none reachable.
deep() {
        local who=$1
        shift
        capture_split "$@" doctor --deep --json
        t_eq "$who: doctor --deep: no host socket reachable from inside" "True 1" \
                "$("$PY" -c 'import json, re, sys
c = [c for c in json.load(sys.stdin)["checks"] if c["name"] == "inside: host sockets"]
print(c[0]["ok"] if c else "absent",
      int(int(re.search(r"\((\d+) tried\)", c[0]["detail"]).group(1)) >= int(sys.argv[1])) if c else "")' \
                        $((${#socks[@]} + 1)) <<<"$T_OUT" 2>&1)" "$T_OUT"
}

check root env HOME="$T_TMP/h" XDG_STATE_HOME="$T_TMP/state" "$RT" --root "$T_ROOT"
deep root env HOME="$T_TMP/h" "$RT" --root "$T_ROOT"
chown -R "$U:$G" "$proj"
check user as_user "$RT"
deep user as_user "$RT"

t_done
