#!/bin/bash
# PID 1 of the cgroup2-vm.sh guest once vm-init has built its root: makes the
# machine a pure cgroup v2 host as a systemd machine is (cgroup2 alone on
# /sys/fs/cgroup, the controllers enabled below the root), runs the chosen
# integration tests with tests/run.sh and leaves their TAP, logs and exit
# statuses in /run/umw-out (the host's output share), then powers off.
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LANG=C.UTF-8
OUT=/run/umw-out

# note MESSAGE: a line on the console, which the host keeps for failures.
note() { echo "umw-vm: $*"; }

# halt: powers the guest off; qemu exits with it.
halt() {
        sync
        echo o >/proc/sysrq-trigger
        sleep 10
}

# setup_machine: what an init system does before the tests run: cgroup2,
# ptys, shm, loopback, a modprobe for the kernel's module requests.
setup_machine() {
        mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup || return 1
        echo '+cpu +cpuset +io +memory +pids' >/sys/fs/cgroup/cgroup.subtree_control || return 1
        mkdir -p /dev/pts /dev/shm /dev/mqueue
        mount -t devpts -o newinstance,ptmxmode=0666,mode=620,gid=5 devpts /dev/pts
        ln -sf pts/ptmx /dev/ptmx
        ln -sfn /proc/self/fd /dev/fd
        ln -sf /proc/self/fd/0 /dev/stdin
        ln -sf /proc/self/fd/1 /dev/stdout
        ln -sf /proc/self/fd/2 /dev/stderr
        mount -t tmpfs -o nosuid,nodev tmpfs /dev/shm
        mount -t mqueue mqueue /dev/mqueue
        mount -t tmpfs -o mode=1777 tmpfs /var/tmp
        mkdir -p /run/umw-bin
        ln -s /bin/busybox /run/umw-bin/modprobe
        echo /run/umw-bin/modprobe >/proc/sys/kernel/modprobe
        ip link set lo up || return 1
        hostname umw-vm
        # As systemd: init's own processes in a leaf, so the root's children
        # may take controllers.
        mkdir -p /sys/fs/cgroup/init.scope
        echo $$ >/sys/fs/cgroup/init.scope/cgroup.procs
}

if ! setup_machine; then
        note "FATAL: machine set-up failed"
        halt
fi
note "booted in $(cut -d" " -f1 /proc/uptime) s: $(uname -r), cgroup2 controllers: $(cat /sys/fs/cgroup/cgroup.subtree_control)"
cd "$UMW_BUILDDIR" || { note "FATAL: no build dir $UMW_BUILDDIR"; halt; }
# The runner's own per-file timeout, and what the host measures.
start=$(date +%s)
UMW_TESTS=$UMW_VM_TESTS UMW_TAP_DIR=$OUT UMW_TEST_TIMEOUT=$UMW_VM_FILE_TIMEOUT \
        bash "$UMW_SRCDIR/tests/run.sh" >"$OUT/run.out" 2>&1 </dev/null
echo $? >"$OUT/run.status"
note "tests ran in $(($(date +%s) - start)) s (guest clock)"
halt
