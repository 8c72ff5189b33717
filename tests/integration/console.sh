#!/bin/bash
# The console socket: with process.terminal the runtime sends the pty master
# over --console-socket (SCM_RIGHTS); the process has the slave as stdio and
# controlling terminal, the configured size, and input typed on the master.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

# receiver.py SOCKET OUTFILE INPUT: accepts one connection, takes the fd,
# records the payload size and the fd's type, types INPUT, then copies what
# the container writes until the slave side closes.
cat >"$T_TMP/receiver.py" <<'EOF'
import array, os, socket, stat, sys, time
path, outfile, typed = sys.argv[1], sys.argv[2], sys.argv[3]
srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
srv.bind(path)
srv.listen(1)
srv.settimeout(30)
conn, _ = srv.accept()
fds = array.array("i")
msg, anc, flags, _ = conn.recvmsg(4096, socket.CMSG_SPACE(4 * fds.itemsize))
for level, typ, data in anc:
    if level == socket.SOL_SOCKET and typ == socket.SCM_RIGHTS:
        fds.frombytes(data[: len(data) - (len(data) % fds.itemsize)])
with open(outfile + ".meta", "w") as m:
    m.write("payload %d\nfds %d\n" % (len(msg), len(fds)))
    if fds:
        m.write("chr %d\n" % stat.S_ISCHR(os.fstat(fds[0]).st_mode))
        m.write("isatty %d\n" % os.isatty(fds[0]))
if not fds:
    sys.exit(1)
master = fds[0]
out = open(outfile, "wb")
sent = False
deadline = time.time() + 30
while time.time() < deadline:
    try:
        data = os.read(master, 4096)
    except OSError:  # EIO: the slave side is closed
        break
    if not data:
        break
    out.write(data)
    out.flush()
    if not sent and b"ready" in data:
        os.write(master, typed.encode() + b"\n")
        sent = True
EOF

b=$T_TMP/bundle
make_bundle "$b"
cfg_set "$b" 'c["process"]["terminal"] = True
c["process"]["consoleSize"] = {"height": 33, "width": 101}
c["process"]["args"] = ["/bin/sh", "-c", "probe tty; stty size; echo ready; read x; echo got:$x"]'

sock=$T_TMP/console.sock
out=$T_TMP/console.out
"$PY" "$T_TMP/receiver.py" "$sock" "$out" hello-tty &
recv_pid=$!
wait_file_sock() { local n=50; while ((n-- > 0)); do [[ -S $sock ]] && return 0; sleep 0.1; done; return 1; }
wait_file_sock || t_bail "console receiver did not start"

new_id
id=$T_LAST_ID
t_run "create with --console-socket" rt create --bundle "$b" --console-socket "$sock" "$id"
t_run "start" rt start "$id"
for _ in $(seq 100); do proc_alive "$recv_pid" || break; sleep 0.1; done
wait "$recv_pid"
t_eq "receiver got the fd and finished" 0 $?
meta=$(cat "$out.meta" 2>/dev/null)
t_eq "one fd over SCM_RIGHTS" 1 "$(awk '$1 == "fds" { print $2 }' <<<"$meta")" "$meta"
t_match "payload of at least one byte" '^[1-9][0-9]*$' "$(awk '$1 == "payload" { print $2 }' <<<"$meta")" "$meta"
t_eq "the fd is a terminal (a pty master)" "1 1" "$(awk '$1 == "chr" || $1 == "isatty" { printf "%s ", $2 }' <<<"$meta" | sed 's/ $//')" "$meta"
text=$(tr -d '\r' <"$out" 2>/dev/null)
t_match "stdin, stdout, stderr are the pty slave" $'0 /dev/pts/[0-9]+\n1 /dev/pts/[0-9]+\n2 /dev/pts/[0-9]+' "$text" "$text"
t_match "the pty is the controlling terminal" $'ctty yes' "$text"
t_match "consoleSize sets the window size" $'\n33 101\n' "$text"
t_match "input typed on the master reaches the process" $'\ngot:hello-tty' "$text"
wait_status "$id" stopped 50
rt delete -f "$id" >/dev/null 2>&1

# ---------------------------------------------------------------- exec -t

cfg_set "$b" 'c["process"]["terminal"] = False
c["process"]["args"] = ["/bin/probe", "sleep", "1000"]'
new_id
id=$T_LAST_ID
rt run -d --bundle "$b" "$id" >/dev/null 2>&1 </dev/null
rm -f "$sock" "$out" "$out.meta"
"$PY" "$T_TMP/receiver.py" "$sock" "$out" from-exec &
recv_pid=$!
wait_file_sock || t_bail "console receiver did not start"
capture rt exec -t --console-socket "$sock" "$id" /bin/sh -c 'probe tty; echo ready; read x; echo got:$x'
t_eq "exec -t --console-socket exits 0" 0 "$T_RC" "$T_OUT"
for _ in $(seq 100); do proc_alive "$recv_pid" || break; sleep 0.1; done
wait "$recv_pid"
text=$(tr -d '\r' <"$out" 2>/dev/null)
t_match "exec -t: stdio is a pty slave" $'0 /dev/pts/[0-9]+\n1 /dev/pts/[0-9]+\n2 /dev/pts/[0-9]+' "$text" "$text"
t_match "exec -t: input reaches the process" $'\ngot:from-exec' "$text"
rt delete -f "$id" >/dev/null 2>&1

# ---------------------------------------------------------------- errors

cfg_set "$b" 'c["process"]["terminal"] = True'
new_id
id=$T_LAST_ID
before=$(mount_count)
capture rt create --bundle "$b" --console-socket "$T_TMP/no-such.sock" "$id"
t_eq "create with a console socket nobody listens on fails" fails "$([[ $T_RC -ne 0 ]] && echo fails || echo ok)" "$T_OUT"
t_eq "failed create leaves no container" "" "$(rt list -q 2>/dev/null)"
t_eq "failed create leaves no process" "" "$(procs_in "$b/rootfs")"
t_eq "failed create leaves no mount" "$before" "$(mount_count)"

t_done
