#!/bin/bash
# seccomp: a denied call returns the configured errno, argument comparisons,
# a default-deny list, the kill action, and a filter that holds for a
# process without no_new_privs or capabilities.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

b=$T_TMP/bundle
make_bundle "$b"
cfg_set "$b" 'c["root"]["readonly"] = False'
ARCHES='["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]'

# seccomp PYTHON-LIST-OF-RULES [DEFAULT-ACTION]: sets linux.seccomp.
seccomp() {
        cfg_set "$b" "c['linux']['seccomp'] = {'defaultAction': '${2:-SCMP_ACT_ALLOW}', 'architectures': $ARCHES, 'syscalls': $1}"
}

seccomp '[{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13},
          {"names": ["getcwd", "uname"], "action": "SCMP_ACT_ERRNO", "errnoRet": 95},
          {"names": ["keyctl"], "action": "SCMP_ACT_ERRNO"}]'
run_in "$b" /bin/sh -c 'probe status Seccomp; for s in mkdir mkdirat getcwd uname keyctl getpid; do probe syscall $s; done'
t_eq "filter installed (Seccomp 2)" "Seccomp 2" "$(head -1 <<<"$T_OUT")" "$T_OUT" "$T_ERR"
set -- $(tail -n +2 <<<"$T_OUT")
t_eq "mkdir returns the configured errno 13" 13 "${1:-}" "$T_OUT"
t_eq "mkdirat, not in the list, is allowed" 0 "${2:-}"
t_eq "getcwd in a multi-name rule returns 95" 95 "${3:-}"
t_eq "uname in a multi-name rule returns 95" 95 "${4:-}"
t_eq "ERRNO without errnoRet returns EPERM" 1 "${5:-}"
t_eq "getpid is allowed" 0 "${6:-}"

# Argument comparisons: personality(8) denied, personality(0xffffffff) (a
# query) allowed; socket(AF_INET) denied, socket(AF_UNIX) allowed;
# MASKED_EQ on unshare's CLONE_NEWUSER bit.
seccomp '[{"names": ["personality"], "action": "SCMP_ACT_ERRNO", "errnoRet": 77,
           "args": [{"index": 0, "value": 8, "op": "SCMP_CMP_EQ"}]},
          {"names": ["socket"], "action": "SCMP_ACT_ERRNO", "errnoRet": 97,
           "args": [{"index": 0, "value": 2, "op": "SCMP_CMP_EQ"}]},
          {"names": ["unshare"], "action": "SCMP_ACT_ERRNO", "errnoRet": 99,
           "args": [{"index": 0, "value": 268435456, "valueTwo": 268435456, "op": "SCMP_CMP_MASKED_EQ"}]}]'
run_in "$b" /bin/sh -c 'probe syscall personality 8; probe syscall personality 0xffffffff; probe syscall socket 2; probe syscall socket 1; probe syscall unshare 0x10000000; probe syscall unshare 0x14000000; probe syscall unshare 0x04000000'
set -- $T_OUT
t_eq "personality(8) matches SCMP_CMP_EQ: errno 77" 77 "${1:-}" "$T_OUT" "$T_ERR"
t_eq "personality(0xffffffff) does not match: allowed" 0 "${2:-}"
t_eq "socket(AF_INET) denied with 97" 97 "${3:-}"
t_eq "socket(AF_UNIX) allowed" 0 "${4:-}"
t_eq "unshare(CLONE_NEWUSER) matches MASKED_EQ: errno 99" 99 "${5:-}"
t_eq "unshare(CLONE_NEWUSER|CLONE_NEWIPC) matches MASKED_EQ too" 99 "${6:-}"
t_eq "unshare(CLONE_NEWUTS... 0x04000000) without the bit is not filtered (EPERM from caps)" 1 "${7:-}"

# Default deny with an allow list.
seccomp '[{"names": ["execve", "brk", "arch_prctl", "set_tid_address", "set_robust_list", "rseq",
                     "prlimit64", "mprotect", "mmap", "munmap", "readlink", "readlinkat", "getrandom",
                     "write", "writev", "exit", "exit_group", "newfstatat", "fstat", "uname",
                     "rt_sigaction", "rt_sigprocmask", "close", "futex", "openat", "read", "getpid"],
           "action": "SCMP_ACT_ALLOW"}]' SCMP_ACT_ERRNO
cfg_set "$b" 'c["linux"]["seccomp"]["defaultErrnoRet"] = 38'
run_in "$b" /bin/probe syscall getcwd
t_eq "default action with defaultErrnoRet 38 denies getcwd" 38 "$T_OUT" "$T_ERR"
run_in "$b" /bin/probe syscall getpid
t_eq "allow-listed getpid works under a default-deny filter" 0 "$T_OUT" "$T_ERR"

# SCMP_ACT_KILL: the process dies of SIGSYS; run reports 128+31.
seccomp '[{"names": ["keyctl"], "action": "SCMP_ACT_KILL"}]'
run_in "$b" /bin/probe syscall keyctl
t_eq "SCMP_ACT_KILL kills with SIGSYS (run exits 159)" 159 "$T_RC" "$T_OUT" "$T_ERR"

# The filter must hold when the process has neither no_new_privs nor any
# capability left (the runtime has to install it while it still can).
seccomp '[{"names": ["mkdir"], "action": "SCMP_ACT_ERRNO", "errnoRet": 13}]'
cfg_set "$b" 'c["process"]["noNewPrivileges"] = False
c["process"]["capabilities"] = {}
c["process"]["user"] = {"uid": 1000, "gid": 1000}'
run_in "$b" /bin/sh -c 'probe status Seccomp; probe status NoNewPrivs; probe syscall mkdir /tmp/x'
t_eq "filter installed without no_new_privs for an unprivileged user" "Seccomp 2|NoNewPrivs 0|13" \
        "$(tr '\n' '|' <<<"$T_OUT" | sed 's/|$//')" "$T_ERR"

# Without linux.seccomp there is no filter.
cfg_set "$b" 'c["linux"].pop("seccomp")
c["process"]["user"] = {"uid": 0, "gid": 0}'
run_in "$b" /bin/probe status Seccomp
t_eq "no seccomp config: no filter" "Seccomp 0" "$T_OUT" "$T_ERR"

# A listener named: refused, not run without it (crun's test_seccomp waited
# forever on its socket for a notify fd umwelt-run never sent).
cfg_set "$b" "c['linux']['seccomp'] = {'defaultAction': 'SCMP_ACT_ALLOW', 'listenerPath': '$T_TMP/listener'}"
run_in "$b" /bin/true
t_eq "seccomp listenerPath is refused (exit 3)" 3 "$T_RC" "$T_ERR"
t_match "the refusal names listenerPath" "listenerPath" "$T_ERR"
cfg_set "$b" "c['linux'].pop('seccomp')"

t_done
