#!/bin/bash
# sandbox-seccomp: the sandbox's default seccomp profile (policy/
# seccomp_profile.c, printed by helpers/print-profile) in a container, proved
# from inside: each denied family returns EPERM, calls the profile does not
# know return ENOSYS, the x32 and i386 entry points kill, ordinary work runs.
# A run without the profile shows the answers come from the filter.
. "$(dirname "$0")/lib.sh"
t_require_root
UNISTD=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
[[ $(uname -m) == x86_64 && -r $UNISTD ]] || t_skip_all "needs x86-64 and its asm/unistd_64.h"
PRINT_PROFILE=$UMW_BUILDDIR/tests/integration/helpers/print-profile
[[ -x $PRINT_PROFILE ]] || t_bail "$PRINT_PROFILE missing (make check builds it)"
t_setup

"$PRINT_PROFILE" >"$T_TMP/profile.json" || t_bail "print-profile failed"

# nr NAME: the x86-64 system call number, from the kernel's header.
nr() {
        local n
        n=$(awk -v n="__NR_$1" '$1 == "#define" && $2 == n { print $3 }' "$UNISTD")
        [[ -n $n ]] || t_bail "no __NR_$1 in $UNISTD"
        echo "$n"
}

b=$T_TMP/bundle
make_bundle "$b"
# As a sandbox runs: no capability, no_new_privs.
cfg_set "$b" 'c["process"]["capabilities"] = {}
c["process"]["noNewPrivileges"] = True
add_mount("/tmp", "tmpfs", "tmpfs", ["nosuid", "nodev"])'
with_profile() { cfg_set "$b" "c['linux']['seccomp'] = json.load(open('$T_TMP/profile.json'))"; }
without_profile() { cfg_set "$b" 'c["linux"].pop("seccomp", None)'; }

# Each case: LABEL|EXPECTED-ERRNO|SYSCALL ARGS... (0: the call succeeded).
CASES=()
case_add() { CASES+=("$1|$2|$3"); }
for s in mount umount2 pivot_root move_mount open_tree fsopen fsconfig fsmount fspick \
        mount_setattr chroot; do
        case_add "$s (mount family)" 1 "$(nr "$s") 0 0 0 0 0"
done
case_add "unshare(CLONE_NEWUSER)" 1 "$(nr unshare) 0x10000000"
case_add "setns" 1 "$(nr setns) -1 0"
case_add "clone(CLONE_NEWUSER)" 1 "$(nr clone) 0x10000011 0 0 0 0"
case_add "clone(CLONE_NEWNET, CLONE_NEWNS)" 1 "$(nr clone) 0x40020011 0 0 0 0"
case_add "clone3 (flags unreadable: ENOSYS, glibc falls back)" 38 "$(nr clone3) 0 0"
case_add "bpf" 1 "$(nr bpf) 0 0 0"
case_add "perf_event_open" 1 "$(nr perf_event_open) 0 0 -1 -1 0"
for s in add_key request_key keyctl; do case_add "$s (keyring)" 1 "$(nr "$s") 0 0 0 0"; done
case_add "userfaultfd" 1 "$(nr userfaultfd) 0"
for s in io_uring_setup io_uring_enter io_uring_register; do
        case_add "$s" 1 "$(nr "$s") 1 0 0 0"
done
for s in kexec_load kexec_file_load init_module finit_module delete_module; do
        case_add "$s" 1 "$(nr "$s") -1 0 0 0"
done
case_add "ioctl(TIOCSTI)" 1 "$(nr ioctl) 0 0x5412 0"
case_add "ioctl(TIOCSTI) with high bits set" 1 "$(nr ioctl) 0 0x100005412 0"
case_add "ioctl(TIOCLINUX)" 1 "$(nr ioctl) 0 0x541C 0"
case_add "ioctl(FIONREAD) reaches the kernel (EBADF)" 9 "$(nr ioctl) -1 0x541B 0"
case_add "socket(AF_PACKET)" 1 "$(nr socket) 17 3 0"
case_add "socket(AF_PACKET) with high bits set" 1 "$(nr socket) 0x100000011 2 0"
case_add "socket(AF_INET, SOCK_RAW)" 1 "$(nr socket) 2 0x80003 1"
case_add "socket(AF_INET6, SOCK_RAW)" 1 "$(nr socket) 10 3 58"
case_add "socket(AF_INET, SOCK_PACKET)" 1 "$(nr socket) 2 10 0"
case_add "socket(AF_INET, SOCK_STREAM) allowed" 0 "$(nr socket) 2 1 0"
case_add "socket(AF_UNIX) allowed" 0 "$(nr socket) 1 1 0"
case_add "socket(AF_NETLINK, SOCK_RAW) allowed" 0 "$(nr socket) 16 3 0"
case_add "socket(AF_ALG), a family the profile does not know" 38 "$(nr socket) 38 5 0"
case_add "personality query allowed" 0 "$(nr personality) 0xffffffff"
case_add "personality(READ_IMPLIES_EXEC)" 1 "$(nr personality) 0x400000"
case_add "mknod(S_IFCHR)" 1 "$(nr mknod) 0 0x2000 0"
case_add "mknod(S_IFBLK)" 1 "$(nr mknod) 0 0x6000 0"
case_add "mknodat(S_IFCHR)" 1 "$(nr mknodat) -100 0 0x2000 0"
case_add "mknodat(S_IFBLK) with high bits set" 1 "$(nr mknodat) -100 0 0x100006000 0"
case_add "mknodat(S_IFIFO) reaches the kernel (EFAULT)" 14 "$(nr mknodat) -100 0 0x1000 0"
case_add "ptrace reaches the kernel (ESRCH)" 3 "$(nr ptrace) 2 0 0 0"
for s in acct swapon swapoff reboot settimeofday clock_settime open_by_handle_at \
        name_to_handle_at lookup_dcookie quotactl vhangup iopl ioperm nfsservctl syslog \
        sethostname modify_ldt; do
        case_add "$s" 1 "$(nr "$s") 0 0 0 0"
done
case_add "a number past the kernel's table" 38 "1000"
# mseal (462, Linux 6.10) is newer than the profile: it fails safe.
case_add "mseal, newer than the profile" 38 "462 0 0 0"

# picked LABEL [PREFIX...]: true when there is no PREFIX or LABEL starts with one.
picked() {
        local label=$1 p
        shift
        [[ $# -eq 0 ]] && return 0
        for p in "$@"; do [[ $label == "$p"* ]] && return 0; done
        return 1
}

# run_cases [PREFIX...]: runs the cases (all, or those whose label starts
# with a PREFIX) in one container; sets RAN to their indexes and GOT to their
# answers.
run_cases() {
        local script= i
        RAN=()
        for i in "${!CASES[@]}"; do
                picked "${CASES[$i]%%|*}" "$@" || continue
                RAN+=("$i")
                script+="probe nr ${CASES[$i]##*|}; "
        done
        run_in "$b" /bin/sh -c "$script"
        mapfile -t GOT <<<"$T_OUT"
}

with_profile
run_in "$b" /bin/sh -c 'probe status Seccomp; probe status NoNewPrivs'
t_eq "the profile is loaded" "Seccomp 2|NoNewPrivs 1" "$(tr '\n' '|' <<<"$T_OUT" | sed 's/|$//')" \
        "$T_ERR"
run_cases
t_eq "every case answered" "${#CASES[@]}" "${#GOT[@]}" "$T_OUT" "$T_ERR"
for i in "${!CASES[@]}"; do
        IFS='|' read -r label want call <<<"${CASES[$i]}"
        t_eq "$label: errno $want" "$want" "${GOT[$i]:-}" "probe nr $call"
done
PROFILED=("${GOT[@]}")

# Without the profile the same calls answer differently: the answers above
# are the filter's. (Not the clone cases: unfiltered, they would fork.)
without_profile
run_cases keyctl chroot io_uring_setup "ioctl(TIOCSTI)" "socket(AF_ALG)" mseal lookup_dcookie \
        clone3 open_tree "mknodat(S_IFCHR)"
t_eq "every control case answered" "${#RAN[@]}" "${#GOT[@]}" "$T_OUT" "$T_ERR"
for k in "${!RAN[@]}"; do
        i=${RAN[$k]}
        label=${CASES[$i]%%|*}
        if [[ ${GOT[$k]:-} != "${PROFILED[$i]}" ]]; then
                t_ok "without the profile, $label answers ${GOT[$k]:-}, not ${PROFILED[$i]}"
        else
                t_fail "without the profile, $label answers differently" "both: ${GOT[$k]:-}"
        fi
done

# Only the native architecture: an x32 call (the 0x40000000 bit) and a call
# through the i386 entry point kill the process (SIGSYS: run exits 159).
# Without the profile the same calls return (x32 is disabled on many kernels:
# ENOSYS).
with_profile
run_in "$b" /bin/probe nr $((0x40000000 | $(nr getpid)))
t_eq "x32 getpid kills with SIGSYS" 159 "$T_RC" "$T_OUT" "$T_ERR"
run_in "$b" /bin/probe int80 20
t_eq "i386 getpid (int 0x80) kills with SIGSYS" 159 "$T_RC" "$T_OUT" "$T_ERR"
without_profile
run_in "$b" /bin/probe nr $((0x40000000 | $(nr getpid)))
t_eq "without the profile x32 getpid returns" 0 "$T_RC" "$T_OUT" "$T_ERR"
run_in "$b" /bin/probe int80 20
t_eq "without the profile i386 getpid returns" 0 "$T_RC" "$T_OUT" "$T_ERR"

# Ordinary work: a shell, pipes, subshells, background jobs, fork.
with_profile
run_in "$b" /bin/sh -c 'ls /bin >/dev/null && cat /etc/passwd | wc -l && echo "$(echo sub)" &&
        (sleep 0 &) && wait && probe forks 3 && date >/tmp/d && cat /tmp/d >/dev/null && echo done'
t_eq "sh, ls, cat, pipes, subshells and fork work" "2|sub|forked 3|done" \
        "$(tr '\n' '|' <<<"$T_OUT" | sed 's/|$//')" "exit status $T_RC" "$T_ERR"

# The host's toolchain under the profile, as the sandbox gives it: /usr and
# /etc read-only, a tmpfs to work in. Threads and posix_spawn go through
# clone3's ENOSYS to clone; strace needs ptrace.
missing=
for tool in cc python3 git strace; do [[ -x /usr/bin/$tool ]] || missing+=" $tool"; done
h=$T_TMP/host
if [[ -n $missing || ! -L /bin ]]; then
        t_skip "a host toolchain works under the profile" "needs a merged /usr with$missing"
else
        make_bundle "$h"
        rm -rf "$h/rootfs" && mkdir -p "$h/rootfs"/{usr,etc,tmp,proc,dev,sys}
        for l in bin sbin lib lib64; do ln -s "usr/$l" "$h/rootfs/$l"; done
        cfg_set "$h" "add_mount('/usr', 'bind', '/usr', ['rbind', 'ro'])
add_mount('/etc', 'bind', '/etc', ['rbind', 'ro'])
add_mount('/tmp', 'tmpfs', 'tmpfs', ['nosuid', 'nodev'])
c['process']['capabilities'] = {}
c['process']['env'].append('HOME=/tmp')
c['linux']['seccomp'] = json.load(open('$T_TMP/profile.json'))"
        run_in "$h" /bin/sh -c 'cd /tmp &&
printf "#include <pthread.h>\nstatic void *f(void *a) { return a; }\nint main(void) { pthread_t t; pthread_create(&t, 0, f, 0); return pthread_join(t, 0); }\n" >t.c &&
cc -pthread -o t t.c && ./t && echo cc &&
python3 -c "import os, subprocess; subprocess.run([\"true\"], check=True); os.waitpid(os.posix_spawn(\"/bin/true\", [\"true\"], {}), 0); print(\"python\")" &&
git init -q r && git -C r -c user.name=u -c user.email=u@e commit -q --allow-empty -m m && git -C r log --oneline | wc -l &&
strace -f -o /dev/null ./t && echo strace'
        t_eq "a host toolchain works under the profile (cc, threads, python, git, strace)" \
                "cc|python|1|strace" "$(tr '\n' '|' <<<"$T_OUT" | sed 's/|$//')" "exit status $T_RC" \
                "$T_ERR"
fi

t_done
