#!/bin/bash
# Escapes that runtimes have had: the host runtime binary reachable from the
# container (CVE-2019-5736), fds leaking in (CVE-2024-21626), cwd outside the
# rootfs, mount destinations that are symlinks out of the rootfs
# (CVE-2021-30465 family), a /dev/null symlink, a /proc symlink.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

# The binary the container must never reach: UMW_RUNTIME_BIN when the
# runtime is started through a wrapper script.
RT_BIN=${UMW_RUNTIME_BIN:-$RT}
RT_DEVINO=$(stat -L -c %d:%i "$RT_BIN")
RT_SUM=$(sha256sum <"$RT_BIN")

b=$T_TMP/bundle
make_bundle "$b"
cfg_set "$b" 'c["root"]["readonly"] = False'

# ---------------------------------------------------------------- CVE-2019-5736

# While a container is created but not started its init is the runtime. A
# process holding CAP_SYS_PTRACE (no user namespace: over the host) gets past
# the init being undumpable, so it must never join a pid namespace whose
# init is the host's binary. A container without a user namespace of its own
# and with a pid namespace of its own waits as the runtime itself (it execs
# its workload through the sealed trampoline, trampoline.h): a second
# container or an exec with CAP_SYS_PTRACE that would join it is refused
# until start, and after start nothing inside is the host's binary.
a=$T_TMP/bundle-a
make_bundle "$a"
cfg_set "$a" 'c["process"]["args"] = ["/bin/probe", "sleep", "1000"]'
new_id
ida=$T_LAST_ID
rt create --bundle "$a" "$ida" >/dev/null 2>&1 </dev/null
pida=$(state_field "$ida" pid)
if [[ -z $pida ]]; then
        t_fail "created container for the exe watch" "$(rt state "$ida" 2>&1)"
else
        cfg_set "$b" "set_ns('pid', '/proc/$pida/ns/pid')
for k in ('bounding', 'effective', 'permitted'): c['process']['capabilities'][k].append('CAP_SYS_PTRACE')"
        cfg_args "$b" /bin/probe watch-exe "$RT_DEVINO" 3
        new_id
        idb=$T_LAST_ID
        rt run -d --bundle "$b" "$idb" >"$T_TMP/watch1.out" 2>&1 </dev/null
        t_eq "CAP_SYS_PTRACE container joining the pid ns of an init that is the runtime: refused" 6 $? "$(cat "$T_TMP/watch1.out")"
        t_match "the refusal names the waiting init" "waits for start" "$(cat "$T_TMP/watch1.out")"
        rt delete -f "$idb" >/dev/null 2>&1
        rt exec --cap CAP_SYS_PTRACE "$ida" /bin/probe exit 0 >"$T_TMP/exec1.out" 2>&1 </dev/null
        t_eq "exec with --cap CAP_SYS_PTRACE into an init that is the runtime: refused" 6 $? "$(cat "$T_TMP/exec1.out")"
        rt start "$ida" >/dev/null 2>&1 </dev/null
        cfg_set "$b" "c['process']['args'] = ['/bin/probe', 'watch-exe', '$RT_DEVINO', '1']"
        new_id
        idb=$T_LAST_ID
        out=$(rt run --bundle "$b" "$idb" 2>&1 </dev/null)
        t_eq "after start, a CAP_SYS_PTRACE container joining its pid ns finds no process exposing the host binary" \
                "seen 0 writable 0" "$(grep '^seen' <<<"$out")" "$out"
        rt delete -f "$idb" >/dev/null 2>&1
        cfg_set "$b" 'set_ns("pid")'
        cfg_set "$b" 'for k in ("bounding", "effective", "permitted"): c["process"]["capabilities"][k].remove("CAP_SYS_PTRACE")'
fi
rt delete -f "$ida" >/dev/null 2>&1

# A container whose own processes hold CAP_SYS_PTRACE: exec into it (with
# its capabilities) waits for its start; then an exec'd watcher finds no
# process that is the host binary.
cfg_set "$a" 'for k in ("bounding", "effective", "permitted"): c["process"]["capabilities"][k].append("CAP_SYS_PTRACE")'
new_id
ida=$T_LAST_ID
rt create --bundle "$a" "$ida" >/dev/null 2>&1 </dev/null
out=$(rt exec "$ida" /bin/probe watch-exe "$RT_DEVINO" 1 2>&1 </dev/null)
t_eq "CAP_SYS_PTRACE container: exec before start is refused" 6 $? "$out"
rt start "$ida" >/dev/null 2>&1 </dev/null
out=$(rt exec "$ida" /bin/probe watch-exe "$RT_DEVINO" 1 2>&1 </dev/null)
t_eq "CAP_SYS_PTRACE container: the host binary is not reachable from inside" "seen 0 writable 0" "$(grep '^seen' <<<"$out")" "$out"
rt delete -f "$ida" >/dev/null 2>&1
cfg_set "$a" 'for k in ("bounding", "effective", "permitted"): c["process"]["capabilities"][k].remove("CAP_SYS_PTRACE")'

wait_file_grep() { local n=80; while ((n-- > 0)); do grep -q '^seen [0-9]* writable' "$1" 2>/dev/null && return 0; sleep 0.1; done; return 1; }

# exec: the watcher is the container's init; the runtime enters its pid
# namespace ten times.
cfg_set "$b" "c['process']['args'] = ['/bin/probe', 'watch-exe', '$RT_DEVINO', '4']
for k in ('bounding', 'effective', 'permitted'): c['process']['capabilities'][k].append('CAP_SYS_PTRACE')"
new_id
id=$T_LAST_ID
rt run -d --bundle "$b" "$id" >"$T_TMP/watch2.out" 2>&1 </dev/null
for _ in $(seq 10); do rt exec "$id" /bin/true >/dev/null 2>&1 </dev/null; done
wait_file_grep "$T_TMP/watch2.out"
res=$(grep '^seen [0-9]* writable' "$T_TMP/watch2.out")
t_match "exec: host runtime binary not writable from inside" 'writable 0$' "$res" "$(cat "$T_TMP/watch2.out")"
t_eq "exec: host runtime binary not even reachable" "seen 0 writable 0" "$res"
rt delete -f "$id" >/dev/null 2>&1
cfg_set "$b" 'for k in ("bounding", "effective", "permitted"): c["process"]["capabilities"][k].remove("CAP_SYS_PTRACE")'
t_eq "host runtime binary unchanged" "$RT_SUM" "$(sha256sum <"$RT_BIN")"

# A container in a user namespace of its own (0 mapped to itself, as root's
# sandbox has it): exec joins it without a sealed copy. Its root holds every
# capability there, CAP_SYS_PTRACE included; each umwelt-run image that shows
# up while exec enters must refuse it both /proc/PID/exe and PTRACE_ATTACH
# (undumpable, its memory made in the host's user namespace).
u=$T_TMP/bundle-userns
make_bundle "$u"
cfg_set "$u" "set_ns('user')
c['linux']['uidMappings'] = [{'containerID': 0, 'hostID': 0, 'size': 1}]
c['linux']['gidMappings'] = [{'containerID': 0, 'hostID': 0, 'size': 1}]
c['process']['args'] = ['/bin/probe', 'sleep', '1000']
import re
every = [l.strip() for l in open('/usr/include/linux/capability.h') if re.match(r'#define CAP_[A-Z_]+\s+[0-9]+\s*$', l)]
every = [l.split()[1] for l in every]
for k in ('bounding', 'effective', 'permitted'): c['process']['capabilities'][k] = every"
new_id
idu=$T_LAST_ID
rt run -d --bundle "$u" "$idu" >"$T_TMP/userns.out" 2>&1 </dev/null
pidu=$(state_field "$idu" pid)
eff=$(rt exec "$idu" /bin/probe caps 2>&1 | awk '$1 == "CapEff" { print $2 }')
t_eq "user namespace container: its processes hold CAP_SYS_PTRACE there" 1 "$(((0x${eff:-0} >> 19) & 1))" "$eff $(cat "$T_TMP/userns.out")"
rt exec "$idu" /bin/probe watch-runtime "$RT_DEVINO" 4 >"$T_TMP/watch3.out" 2>&1 </dev/null &
watcher=$!
sleep 0.5
for _ in $(seq 20); do rt exec "$idu" /bin/true >/dev/null 2>&1 </dev/null; done
wait "$watcher"
res=$(grep '^runtime' "$T_TMP/watch3.out")
t_match "user namespace exec: the joining runtime was caught from inside and refused" 'denied [1-9][0-9]* ' "$res" "$(cat "$T_TMP/watch3.out")"
t_match "user namespace exec: its exe and ptrace never reached" 'breached 0$' "$res" "$(cat "$T_TMP/watch3.out")"
# The control: the same watcher in the container's pid and mount namespaces
# but the host's user namespace (CAP_SYS_PTRACE over the runtime) gets through.
nsenter -t "$pidu" -p -m -- /bin/probe watch-runtime "$RT_DEVINO" 3 >"$T_TMP/watch4.out" 2>&1 </dev/null &
watcher=$!
sleep 0.5
for _ in $(seq 10); do rt exec "$idu" /bin/true >/dev/null 2>&1 </dev/null; done
wait "$watcher"
t_match "control: a watcher with CAP_SYS_PTRACE over the host reaches the unsealed runtime" 'breached [1-9]' "$(grep '^runtime' "$T_TMP/watch4.out")" "$(cat "$T_TMP/watch4.out")"
rt delete -f "$idu" >/dev/null 2>&1
t_eq "host runtime binary unchanged after the user namespace execs" "$RT_SUM" "$(sha256sum <"$RT_BIN")"

# ---------------------------------------------------------------- CVE-2024-21626

run_in "$b" /bin/probe fds
t_eq "run: no fd but 0, 1, 2 reaches the process" "0:" "$T_RC:$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["args"] = ["/bin/probe", "sleep", "100"]'
new_id
id=$T_LAST_ID
rt run -d --bundle "$b" "$id" >/dev/null 2>&1 </dev/null
capture rt exec "$id" /bin/probe fds
t_eq "exec: no fd but 0, 1, 2 reaches the process" "0:" "$T_RC:$T_OUT"
rt delete -f "$id" >/dev/null 2>&1

# A cwd through /proc/self/fd/N would land on whatever fd the runtime had
# open (its cgroup dir, its state dir): it must fail or stay inside.
leaked=
for n in 3 4 5 6 7 8 9; do
        cfg_set "$b" "c['process']['cwd'] = '/proc/self/fd/$n'"
        run_in "$b" /bin/sh -c 'probe cwd; ls -a . | head -3'
        [[ $T_RC -eq 0 && ( $T_OUT == *unreachable* || -z $T_OUT ) ]] && leaked+="fd $n: $T_OUT; "
        [[ $T_RC -eq 0 && $T_OUT != /* ]] && leaked+="fd $n: $T_OUT; "
done
t_eq "cwd /proc/self/fd/N never leaves the rootfs" "" "$leaked"

# ---------------------------------------------------------------- cwd escapes

mkdir -p "$T_TMP/outside"
touch "$T_TMP/outside/HOST-MARKER"
cfg_set "$b" 'c["process"]["cwd"] = "/../../../../../"'
run_in "$b" /bin/sh -c 'probe cwd; ls'
t_nomatch "cwd /../../.. stays in the rootfs" 'HOST-MARKER|unreachable' "$T_OUT" "$T_OUT" "$T_ERR"
t_eq "cwd /../../.. is the container's /" "/" "$(head -1 <<<"$T_OUT")" "$T_ERR"

ln -s "$T_TMP/outside" "$b/rootfs/escape"
cfg_set "$b" 'c["process"]["cwd"] = "/escape"'
run_in "$b" /bin/sh -c 'probe cwd; ls; probe open ./created-by-container w'
t_nomatch "cwd through a symlink to a host path stays in the rootfs" 'HOST-MARKER|unreachable' "$T_OUT" "$T_OUT" "$T_ERR"
t_eq "nothing created in the host dir the symlink names" "HOST-MARKER" "$(ls "$T_TMP/outside")"

ln -s ../../../../../../../.. "$b/rootfs/up"
cfg_set "$b" 'c["process"]["cwd"] = "/up/tmp"'
run_in "$b" /bin/sh -c 'probe cwd; ls /tmp'
t_nomatch "cwd through a relative symlink climbing out stays in the rootfs" "HOST-MARKER|unreachable|umwt-" "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["process"]["cwd"] = "/"'

# ---------------------------------------------------------------- mount destination symlinks

# /mnt in the rootfs is an absolute symlink to a host dir: a tmpfs for /mnt
# must land inside the rootfs, and writes there never reach the host dir.
mkdir -p "$T_TMP/outside-mnt"
rmdir "$b/rootfs/mnt"
ln -s "$T_TMP/outside-mnt" "$b/rootfs/mnt"
mkdir -p "$T_TMP/src"
echo from-src >"$T_TMP/src/f"
ln -s "$T_TMP/outside" "$b/rootfs/bindlink"
mkdir -p "$T_TMP/outside-rel"
ln -s ../../../../../../../..$T_TMP/outside-rel "$b/rootfs/rellink"
cfg_set "$b" "add_mount('/mnt', 'tmpfs', 'tmpfs', ['size=1m'])
add_mount('/bindlink', 'bind', '$T_TMP/src', ['bind', 'rw'])
add_mount('/rellink', 'tmpfs', 'tmpfs', ['size=1m'])
add_mount('/../../../../../..$T_TMP/outside/dotdot', 'tmpfs', 'tmpfs', ['size=1m'])"
mkdir -p "$T_TMP/outside/dotdot"
run_in "$b" /bin/sh -c 'echo x > /mnt/written-in-tmpfs; echo y > /bindlink/written-via-bind; echo z > /rellink/written-rel; cat /bindlink/f; grep -c tmpfs /proc/self/mountinfo'
t_eq "tmpfs on an absolute symlink: nothing written to the host dir" "" "$(ls -A "$T_TMP/outside-mnt")"
t_eq "tmpfs on a relative symlink climbing out: nothing written to the host dir" "" "$(ls -A "$T_TMP/outside-rel")"
t_eq "bind on a symlink: host dir the link names untouched" "HOST-MARKER dotdot" "$(ls "$T_TMP/outside" | tr '\n' ' ' | sed 's/ $//')"
t_eq "no tmpfs from the container on the host dirs" "" \
        "$(awk -v d="$T_TMP/outside" 'index($5, d) == 1' /proc/self/mountinfo)" # also outside-mnt, outside-rel
if [[ $T_RC -eq 0 ]]; then
        t_eq "bind through a symlink shows the source" from-src "$(sed -n 1p <<<"$T_OUT")" "$T_OUT"
else
        t_skip "bind through a symlink shows the source" "runtime refused symlinked destinations: $T_ERR"
fi
rm -f "$b/rootfs/mnt" && mkdir "$b/rootfs/mnt"
cfg_set "$b" 'c["mounts"] = c["mounts"][:-4]'

# ---------------------------------------------------------------- /dev/null symlink

# Without a /dev tmpfs the runtime works on the rootfs's own /dev, where
# /dev/null is a symlink to a host file.
echo victim-data >"$T_TMP/victim"
v=$T_TMP/bundle-dev
make_bundle "$v"
cfg_set "$v" 'c["root"]["readonly"] = False
c["mounts"] = [m for m in c["mounts"] if not m["destination"].startswith("/dev")]
c["linux"]["maskedPaths"] = ["/secret"]'
echo secret >"$v/rootfs/secret"
ln -s "$T_TMP/victim" "$v/rootfs/dev/null"
run_in "$v" /bin/sh -c 'echo pwned > /dev/null; echo pwned > /secret; stat -L -c "%F %t:%T" /dev/null; cat /secret | wc -c'
t_eq "host file behind a /dev/null symlink untouched" victim-data "$(cat "$T_TMP/victim")" "$T_OUT" "$T_ERR"
if [[ $T_RC -eq 0 ]]; then
        t_eq "/dev/null is the real device" "character special file 1:3" "$(sed -n 1p <<<"$T_OUT")" "$T_OUT"
        t_eq "masked path reads nothing" 0 "$(sed -n 2p <<<"$T_OUT")"
else
        t_ok "/dev/null symlink refused: $(head -1 <<<"$T_ERR")"
        t_skip "masked path reads nothing" "container refused"
fi
t_eq "masked file on disk unchanged" secret "$(cat "$v/rootfs/secret")"

# ---------------------------------------------------------------- /proc symlink

rmdir "$v/rootfs/proc" && ln -s "$T_TMP/outside-proc" "$v/rootfs/proc"
mkdir -p "$T_TMP/outside-proc"
rm -f "$v/rootfs/dev/null"
run_in "$v" /bin/sh -c 'test -r /proc/self/status && echo proc-ok'
t_eq "proc over a symlinked /proc is refused (CVE-2019-19921)" fails \
        "$([[ $T_RC -ne 0 ]] && echo fails || echo "ran: $T_OUT")" "$T_ERR"
t_eq "host dir named by the /proc symlink untouched" "" "$(ls -A "$T_TMP/outside-proc")"

t_done
