#!/bin/bash
# Mounts: bind ro/rw, rbind, tmpfs options, proc, sysfs, mqueue, devpts,
# /dev, masked and read-only paths, a read-only root, and that nothing of it
# leaks into the host's mount namespace.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

# mi MOUNTINFO DEST: "OPTS FSTYPE SUPEROPTS" of the topmost mount at DEST.
mi() {
        awk -v d="$2" '$5 == d { for (i = 7; $i != "-"; i++); line = $6 " " $(i + 1) " " $(i + 3) } END { print line }' <<<"$1"
}
# has_opt OPTLIST OPT: true when the comma list contains OPT.
has_opt() { [[ ,$1, == *,$2,* ]]; }

b=$T_TMP/bundle
make_bundle "$b"
mkdir -p "$T_TMP"/{ro,rw,rb/sub} "$b/rootfs"/{ro,rw,rb,nb,t,tn,secretdir,secretdir2,rodir,file-target}
echo hostdata >"$T_TMP/ro/f"
echo secret >"$b/rootfs/secret"
echo secret >"$b/rootfs/secretdir/f"
echo secret >"$b/rootfs/secretdir2/f"
echo single-file >"$T_TMP/single"
rmdir "$b/rootfs/file-target" && touch "$b/rootfs/file-target"
mount -t tmpfs -o size=1m tmpfs "$T_TMP/rb/sub"
echo submount >"$T_TMP/rb/sub/f"
host_mounts_before=$(mount_count)

cfg_set "$b" "c['root']['readonly'] = False
add_mount('/ro', 'bind', '$T_TMP/ro', ['bind', 'ro'])
add_mount('/rw', 'bind', '$T_TMP/rw', ['bind', 'rw'])
add_mount('/rb', 'bind', '$T_TMP/rb', ['rbind'])
add_mount('/nb', 'bind', '$T_TMP/rb', ['bind'])
add_mount('/t', 'tmpfs', 'tmpfs', ['size=1m', 'mode=1770', 'nosuid', 'nodev'])
add_mount('/tn', 'tmpfs', 'tmpfs', ['noexec'])
add_mount('/file-target', 'bind', '$T_TMP/single', ['bind', 'ro'])
c['mounts'] = [m for m in c['mounts'] if m['destination'] != '/dev/mqueue']
add_mount('/dev/mqueue', 'mqueue', 'mqueue', ['nosuid', 'noexec', 'nodev'])
c['linux']['maskedPaths'] = ['/proc/kcore', '/secret', '/secretdir', '/secretdir2', '/does/not/exist']
c['linux']['readonlyPaths'] = ['/proc/sys', '/rodir', '/does/not/exist/either']"

run_in "$b" /bin/cat /proc/self/mountinfo
t_eq "container with many mounts runs" 0 "$T_RC" "$T_ERR"
MI=$T_OUT

# ---------------------------------------------------------------- bind

read -r opts fstype _ <<<"$(mi "$MI" /ro)"
t_eq "bind ro is read-only" yes "$(has_opt "$opts" ro && echo yes || echo no)" "$opts"
run_in "$b" /bin/sh -c 'cat /ro/f; probe open /ro/new w; probe open /ro/f w'
t_eq "bind ro: readable, writes fail with EROFS" "hostdata 30 30" "$(echo $T_OUT)" "$T_ERR"
[[ -e $T_TMP/ro/new ]] && t_fail "bind ro: nothing created on the host" || t_ok "bind ro: nothing created on the host"

read -r opts _ <<<"$(mi "$MI" /rw)"
t_eq "bind rw is read-write" yes "$(has_opt "$opts" rw && echo yes || echo no)" "$opts"
run_in "$b" /bin/sh -c 'echo from-container > /rw/out'
t_eq "bind rw: a write inside reaches the host dir" from-container "$(cat "$T_TMP/rw/out" 2>&1)" "$T_ERR"

run_in "$b" /bin/sh -c 'cat /rb/sub/f; ls /nb/sub | wc -l'
t_eq "rbind carries submounts, bind does not" "submount 0" "$(echo $T_OUT)" "$T_ERR"

run_in "$b" /bin/cat /file-target
t_eq "bind mount of a single file" single-file "$T_OUT" "$T_ERR"

# ---------------------------------------------------------------- tmpfs

read -r opts fstype sopts <<<"$(mi "$MI" /t)"
t_eq "tmpfs at /t" tmpfs "$fstype" "$(mi "$MI" /t)"
t_eq "tmpfs nosuid,nodev" yes "$(has_opt "$opts" nosuid && has_opt "$opts" nodev && echo yes || echo no)" "$opts"
t_eq "tmpfs size=1m" yes "$(has_opt "$sopts" size=1024k && echo yes || echo no)" "$sopts"
run_in "$b" /bin/sh -c 'stat -c %a /t; dd if=/dev/zero of=/t/big bs=1024 count=2048 2>/dev/null; echo $?'
t_eq "tmpfs mode=1770" 1770 "$(head -1 <<<"$T_OUT")" "$T_ERR"
t_eq "tmpfs size limit stops a 2 MiB write" 1 "$(tail -1 <<<"$T_OUT")" "$T_OUT"
run_in "$b" /bin/sh -c 'cp /bin/probe /tn/p && /tn/p exit 0; echo $?'
t_eq "noexec tmpfs refuses exec" 126 "$T_OUT" "$T_ERR"

# ---------------------------------------------------------------- special filesystems

t_eq "proc at /proc" proc "$(mi "$MI" /proc | cut -d' ' -f2)" "$MI"
read -r opts fstype _ <<<"$(mi "$MI" /sys)"
t_eq "sysfs at /sys" sysfs "$fstype"
t_eq "sysfs from the default config is read-only" yes \
        "$(has_opt "$opts" ro && echo yes || echo no)" "$opts" "$(cfg_get "$b" '[m for m in c["mounts"] if m["destination"] == "/sys"]')"
t_eq "mqueue at /dev/mqueue" mqueue "$(mi "$MI" /dev/mqueue | cut -d' ' -f2)"
t_eq "devpts at /dev/pts" devpts "$(mi "$MI" /dev/pts | cut -d' ' -f2)"
run_in "$b" /bin/sh -c 'for d in null zero full random urandom tty; do stat -c "%n %F %t:%T" /dev/$d; done; for l in ptmx fd stdin stdout stderr; do readlink /dev/$l; done; test -d /dev/shm && echo shm'
want="/dev/null character special file 1:3
/dev/zero character special file 1:5
/dev/full character special file 1:7
/dev/random character special file 1:8
/dev/urandom character special file 1:9
/dev/tty character special file 5:0
pts/ptmx
/proc/self/fd
/proc/self/fd/0
/proc/self/fd/1
/proc/self/fd/2
shm"
t_eq "/dev has the OCI default devices and links" "$want" "$T_OUT" "$T_ERR"
# A device path with a trailing slash names the same file (runc and crun strip it).
cfg_set "$b" 'c["linux"]["devices"] = [{"path": "/dev/umwelt-dev/", "type": "b", "major": 7, "minor": 200, "fileMode": 0o640, "uid": 12, "gid": 34}]'
run_in "$b" /bin/sh -c 'stat -c "%n %F %t:%T %a %u:%g" /dev/umwelt-dev'
t_eq "a device's trailing slash is dropped; its node made as asked" \
        "/dev/umwelt-dev block special file 7:c8 640 12:34" "$T_OUT" "$T_ERR"
cfg_set "$b" 'c["linux"]["devices"] = []'
run_in "$b" /bin/sh -c 'echo x > /dev/null && head -c 4 /dev/zero | wc -c'
t_eq "/dev/null and /dev/zero work" 4 "$T_OUT" "$T_ERR"

# ---------------------------------------------------------------- masked and read-only paths

run_in "$b" /bin/sh -c 'echo $(cat /secret | wc -c) $(ls -A /secretdir | wc -l); echo overwritten > /secret'
t_eq "masked file reads nothing, masked directory is empty" "0 0" "$T_OUT" "$T_ERR"
if [[ -e /proc/kcore ]]; then
        run_in "$b" /bin/sh -c 'cat /proc/kcore | wc -c'
        t_eq "masked /proc/kcore reads nothing" 0 "$T_OUT" "$T_ERR"
else
        t_skip "masked /proc/kcore reads nothing" "no /proc/kcore on this kernel"
fi
t_eq "masked file still intact on disk after a write inside" secret "$(cat "$b/rootfs/secret")"
# Masked directories share one read-only tmpfs: each is empty and refuses
# writes, so nothing passes from one to the other.
run_in "$b" /bin/sh -c 'ls -A /secretdir2 | wc -l; probe open /secretdir/x w; probe open /secretdir2/x w'
t_eq "a second masked directory is empty; both refuse writes (EROFS)" "0 30 30" "$(echo $T_OUT)" "$T_ERR"

run_in "$b" /bin/sh -c 'probe open /rodir/x w; probe open /proc/sys/kernel/hostname w; probe open /newfile w'
t_eq "readonly path and /proc/sys refuse writes (EROFS); the rest of the root is writable" "30 30 0" "$(echo $T_OUT)" "$T_ERR"
read -r opts _ <<<"$(mi "$MI" /proc/sys)"
t_eq "/proc/sys is a read-only mount" yes "$(has_opt "$opts" ro && echo yes || echo no)" "$opts"

# ---------------------------------------------------------------- read-only root

cfg_set "$b" 'c["root"]["readonly"] = True'
run_in "$b" /bin/sh -c 'probe open /newfile2 w; probe open /rw/ok w; probe open /t/ok w'
t_eq "read-only root refuses writes; rw mounts on it stay writable" "30 0 0" "$(echo $T_OUT)" "$T_ERR"
run_in "$b" /bin/cat /proc/self/mountinfo
t_eq "read-only root is a ro mount" yes "$(has_opt "$(mi "$T_OUT" / | cut -d' ' -f1)" ro && echo yes || echo no)" "$(mi "$T_OUT" /)"
[[ -e $b/rootfs/newfile2 ]] && t_fail "read-only root: nothing created" || t_ok "read-only root: nothing created"

# ---------------------------------------------------------------- host untouched

t_eq "no container mount leaks into the host" "$host_mounts_before" "$(mount_count)" \
        "$(grep -F "$T_TMP" /proc/self/mountinfo)"
t_eq "host sees no mount under the rootfs" "" "$(awk -v d="$b/rootfs" 'index($5, d) == 1' /proc/self/mountinfo)"

t_done
