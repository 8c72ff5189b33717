#!/bin/bash
# cgroups: the limits of linux.resources enforced by the kernel (OOM kill,
# pids limit, CPU quota), pause/resume, kill --all, delete, update, device
# rules, and the refusals (a controller the host lacks, bad values, a
# cgroup that holds another container's processes) that leave nothing behind.
# On a cgroup v1 or hybrid host, and on a pure v2 one (cgroup2-vm.sh's guest),
# where the same limits are read from the v2 files.
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

CG=/sys/fs/cgroup
# V2: a pure cgroup v2 host; UNI: the cgroup2 hierarchy (on a hybrid host
# the unified one beside v1's).
V2=0
UNI=$CG/unified
if cgroup_v2_only; then
        V2=1
        UNI=$CG
        for c in memory pids cpu; do
                grep -qw "$c" "$CG/cgroup.controllers" || t_skip_all "the cgroup v2 root lacks the $c controller"
        done
else
        [[ -d $CG/memory && -d $CG/pids && -d $CG/cpuacct && -d $CG/freezer ]] ||
                t_skip_all "needs the cgroup v1 memory, pids, cpuacct and freezer hierarchies, or pure cgroup v2"
fi

b=$T_TMP/bundle
make_bundle "$b"

# limits PYTHON-RESOURCES ARG...: the bundle's linux.resources and process.args.
limits() {
        local res=$1
        shift
        cfg_set "$b" "c['linux']['resources'] = $res"
        cfg_args "$b" "$@"
}

# cg_dir HIERARCHY ID: the container's directory in a v1 hierarchy; on v2
# its one directory.
cg_dir() { if ((V2)); then echo "$CG/umwelt-run/$2"; else echo "$CG/$1/umwelt-run/$2"; fi; }

# cpu_usage ID: nanoseconds of CPU the container's cgroup used so far.
cpu_usage() {
        if ((V2)); then
                awk '$1 == "usage_usec" { print $2 "000" }' "$(cg_dir cpu "$1")/cpu.stat"
        else
                cat "$(cg_dir cpuacct "$1")/cpuacct.usage"
        fi
}

# cg_left ID: every hierarchy that still has the container's cgroup.
cg_left() { ls -d "$CG"/umwelt-run/"$1" "$CG"/*/umwelt-run/"$1" 2>/dev/null; }

# start_detached ID: runs the bundle detached.
start_detached() { rt run -d --bundle "$b" "$1" </dev/null >/dev/null 2>&1; }

# ---------------------------------------------------------------- limits

limits '{"memory": {"limit": 33554432}}' /bin/probe alloc 96
run_in "$b" /bin/probe alloc 96
t_eq "allocating past a 32 MiB limit is OOM-killed (exit 137)" 137 "$T_RC" "$T_OUT" "$T_ERR"
last=$(tail -n 1 <<<"$T_OUT")
n=${last#allocated }
if [[ $n =~ ^[0-9]+$ ]] && ((n >= 16 && n < 32)); then
        t_ok "the OOM kill comes at the limit (last step: $n MiB)"
else
        t_fail "the OOM kill comes at the limit" "last line: $last"
fi

limits '{"pids": {"limit": 20}}' /bin/probe forks 100
run_in "$b" /bin/probe forks 100
t_match "a fork loop stops at the pids limit of 20" '^forked 1[0-9]$' "$T_OUT" "$T_ERR"

limits '{"cpu": {"quota": 20000, "period": 100000}}' /bin/probe spin 30
new_id
cpu_id=$T_LAST_ID
start_detached "$cpu_id"
sleep 0.3
a=$(cpu_usage "$cpu_id")
sleep 2
z=$(cpu_usage "$cpu_id")
frac=$(awk -v a="$a" -v z="$z" 'BEGIN { printf "%.3f", (z - a) / 2e9 }')
if awk -v f="$frac" 'BEGIN { exit !(f >= 0.10 && f <= 0.35) }'; then
        t_ok "a busy loop under a 0.2 CPU quota gets about 0.2 CPU ($frac)"
else
        t_fail "a busy loop under a 0.2 CPU quota gets about 0.2 CPU" "measured: $frac CPU"
fi
rt delete -f "$cpu_id" >/dev/null 2>&1

# ---------------------------------------------------------------- pause, resume, kill, delete

limits '{}' /bin/sh -c '/bin/probe spin 120 & /bin/probe spin 120 & wait'
new_id
id=$T_LAST_ID
start_detached "$id"
sleep 0.3
pids=$(cat "$(cg_dir pids "$id")/cgroup.procs")
t_eq "the container has its three processes" 3 "$(wc -w <<<"$pids")"
t_run "pause exits 0" rt pause "$id"
t_eq "state says paused" paused "$(state_field "$id" status)"
if ((V2)); then
        t_match "cgroup.freeze froze it (cgroup.events)" 'frozen 1' "$(cat "$(cg_dir - "$id")/cgroup.events" 2>&1)"
else
        t_eq "the v1 freezer reads FROZEN" FROZEN "$(cat "$(cg_dir freezer "$id")/freezer.state")"
fi
if ((!V2)) && [[ -f $CG/unified/umwelt-run/$id/cgroup.events ]]; then
        t_match "the v2 cgroup.freeze froze it too" 'frozen 1' \
                "$(cat "$CG/unified/umwelt-run/$id/cgroup.events")"
fi
running=
for p in $pids; do
        grep -q '^State:.*R (running)' "/proc/$p/status" && running+=" $p"
done
t_eq "no process of a paused container is running" "" "$running"
a=$(cpu_usage "$id")
sleep 0.5
t_eq "a paused container uses no CPU" "$a" "$(cpu_usage "$id")"
expect_state=$(rt pause "$id" 2>&1)
t_match "pause of a paused container is refused" "is paused" "$expect_state"
t_run "resume exits 0" rt resume "$id"
t_eq "state says running after resume" running "$(state_field "$id" status)"
if ((V2)); then
        t_match "cgroup.events says thawed" 'frozen 0' "$(cat "$(cg_dir - "$id")/cgroup.events" 2>&1)"
else
        t_eq "the v1 freezer reads THAWED" THAWED "$(cat "$(cg_dir freezer "$id")/freezer.state")"
fi
a=$(cpu_usage "$id")
sleep 0.5
z=$(cpu_usage "$id")
if ((z > a)); then t_ok "a resumed container runs again"; else t_fail "a resumed container runs again" "$a -> $z"; fi

t_run "kill --all KILL exits 0" rt kill --all "$id" KILL
n=50
while ((n-- > 0)) && [[ -n $(cat "$(cg_dir pids "$id")/cgroup.procs" 2>/dev/null) ]]; do sleep 0.1; done
left=
for p in $pids; do proc_alive "$p" && left+=" $p"; done
t_eq "kill --all reaches every process" "" "$left"
t_run "delete exits 0" rt delete "$id"
t_eq "delete leaves no cgroup in any hierarchy" "" "$(cg_left "$id")"

new_id
id=$T_LAST_ID
start_detached "$id"
sleep 0.3
pids=$(cat "$(cg_dir pids "$id")/cgroup.procs")
rt pause "$id" >/dev/null 2>&1
t_run "delete --force of a paused container exits 0" rt delete -f "$id"
left=
for p in $pids; do proc_alive "$p" && left+=" $p"; done
t_eq "delete --force of a paused container kills every process" "" "$left"
t_eq "... and leaves no cgroup in any hierarchy" "" "$(cg_left "$id")"

capture rt pause "$id"
t_eq "pause of an unknown container exits 4" 4 "$T_RC" "$T_OUT"

# ---------------------------------------------------------------- update

limits '{"memory": {"limit": 67108864}}' /bin/probe sleep 60
new_id
id=$T_LAST_ID
start_detached "$id"
capture rt exec "$id" /bin/probe alloc 24
t_eq "under a 64 MiB limit, 24 MiB can be allocated" "0 allocated 24" "$T_RC $(tail -n 1 <<<"$T_OUT")"
t_run "update --memory 16m exits 0" rt update --memory 16m "$id"
if ((V2)); then
        t_eq "the new limit is in memory.max" 16777216 "$(cat "$(cg_dir memory "$id")/memory.max")"
else
        t_eq "the new limit is in memory.limit_in_bytes" 16777216 \
                "$(cat "$(cg_dir memory "$id")/memory.limit_in_bytes")"
fi
capture rt exec "$id" /bin/probe alloc 24
t_eq "after update, allocating 24 MiB is OOM-killed" 137 "$T_RC" "$T_OUT"
printf '{"pids": {"limit": 7}, "cpu": {"quota": 30000, "period": 100000}}' >"$T_TMP/res.json"
t_run "update --resources FILE exits 0" rt update --resources "$T_TMP/res.json" "$id"
if ((V2)); then
        t_eq "update --resources sets pids.max and the CPU quota" "7 30000 100000" \
                "$(cat "$(cg_dir pids "$id")/pids.max") $(cat "$(cg_dir cpu "$id")/cpu.max")"
else
        t_eq "update --resources sets pids.max and the CPU quota" "7 30000" \
                "$(cat "$(cg_dir pids "$id")/pids.max") $(cat "$(cg_dir cpu "$id")/cpu.cfs_quota_us")"
fi
t_run "update with runc's memory and cpuset flags exits 0" rt update --memory 32m --memory-swap 64m \
        --memory-reservation 8m --cpu-share 512 --cpuset-mems 0 "$id"
if ((V2)); then
        # v2 keeps swap apart (64m - 32m) and weighs CPU 1..10000 (512 shares: 20).
        t_eq "... each reaches its v2 file" "33554432 33554432 8388608 20 0" \
                "$(cd "$(cg_dir memory "$id")" && cat memory.max memory.swap.max memory.low cpu.weight \
                        cpuset.mems 2>&1 | tr '\n' ' ' | sed 's/ $//')"
else
        t_eq "... each reaches its file" "33554432 67108864 8388608 512 0" \
                "$(cd "$(cg_dir memory "$id")" && cat memory.limit_in_bytes memory.memsw.limit_in_bytes \
                        memory.soft_limit_in_bytes | tr '\n' ' ')$(cat "$(cg_dir cpu "$id")/cpu.shares" \
                        "$(cg_dir cpuset "$id")/cpuset.mems" | tr '\n' ' ' | sed 's/ $//')"
fi
capture rt update --blkio-weight 500 "$id"
# BFQ's weight (CFQ's blkio.weight went with Linux 5.0), where the kernel has
# it; v2's io.weight (1..10000: 500 is 4950) where the kernel has that.
if ((V2)) && [[ -e $(cg_dir io "$id")/io.weight ]]; then
        t_eq "update --blkio-weight sets io.weight" "0 default 4950" \
                "$T_RC $(cat "$(cg_dir io "$id")/io.weight")" "$T_OUT"
elif ((V2)); then
        t_match "update --blkio-weight without io.weight fails naming the file" "^[1-9].*io\.weight" "$T_RC $T_OUT"
elif [[ -e $(cg_dir blkio "$id")/blkio.bfq.weight ]]; then
        t_eq "update --blkio-weight sets blkio.bfq.weight" "0 500" \
                "$T_RC $(cat "$(cg_dir blkio "$id")/blkio.bfq.weight")" "$T_OUT"
else
        t_match "update --blkio-weight without BFQ fails naming the file" "^[1-9].*blkio" "$T_RC $T_OUT"
fi
capture rt update --pids-limit 0x10 "$id"
t_eq "update with a bad flag value exits 2" 2 "$T_RC" "$T_OUT"
printf '{"memory": {"limit": -7}}' >"$T_TMP/bad.json"
capture rt update --resources "$T_TMP/bad.json" "$id"
t_match "update with a bad value exits 3 naming the field" \
        "^3 .*bad.json: \.linux\.resources\.memory\.limit: expected" "$T_RC $T_OUT"
rt delete -f "$id" >/dev/null 2>&1

# ---------------------------------------------------------------- devices

# bpf_device_progs DIR: how many device programs are attached to the cgroup2
# directory DIR (BPF_PROG_QUERY; x86_64 numbers).
bpf_device_progs() {
        "$PY" - "$1" <<'PYEOF'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
cg = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
ids = ctypes.create_string_buffer(64 * 4)
attr = ctypes.create_string_buffer(struct.pack("=IIIIQI", cg, 6, 0, 0, ctypes.addressof(ids), 64), 128)
# BPF_PROG_QUERY of BPF_CGROUP_DEVICE.
if libc.syscall(ctypes.c_long(321), ctypes.c_long(16), attr, ctypes.c_long(128)) < 0:
    sys.exit("bpf: " + os.strerror(ctypes.get_errno()))
print(struct.unpack_from("=I", attr.raw, 24)[0])
PYEOF
}

# A device outside the rules, bound in and opened for writing (which needs
# no capability): the wall (v1's devices cgroup, v2's BPF program) refuses
# the open though the node is there.
limits '{}' /bin/sh -c '/bin/probe open /dev/kmsg w; /bin/probe open /dev/null rw'
cfg_set "$b" 'add_mount("/dev/kmsg", "bind", "/dev/kmsg", ["bind"])'
run_in "$b" /bin/sh -c '/bin/probe open /dev/kmsg w; /bin/probe open /dev/null rw'
t_eq "a bound-in device outside the default set is refused, /dev/null opens" "1 0" \
        "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
cfg_set "$b" 'c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/dev/kmsg"]'

limits '{"devices": [{"allow": False, "access": "rwm"}]}' /bin/sh -c \
        'echo x >/dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c'
new_id
id=$T_LAST_ID
cfg_args "$b" /bin/probe sleep 60
start_detached "$id"
if ((V2)); then
        t_eq "deny-all puts one device program on the v2 cgroup" 1 "$(bpf_device_progs "$(cg_dir - "$id")")"
else
        list=$(cat "$(cg_dir devices "$id")/devices.list" 2>&1)
        t_nomatch "deny-all removes the blanket device rule" '^a \*:\* rwm' "$list"
        t_match "the default device set stays allowed" 'c 1:3 rwm.*c 1:9 rwm.*c 136:\* rwm' "$(tr '\n' ' ' <<<"$list")"
fi
rt delete -f "$id" >/dev/null 2>&1
run_in "$b" /bin/sh -c 'echo x >/dev/null && head -c 4 /dev/zero | wc -c && head -c 4 /dev/urandom | wc -c'
t_eq "with devices denied, /dev/null, zero and urandom still work" "0 4 4" \
        "$T_RC $(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"

# ---------------------------------------------------------------- refusals

# refused NAME WANT-CODE REGEX: create must fail with that code and message
# and leave no state and no cgroup.
# Realtime CPU on v1: umwelt-run/ starts with rt_runtime_us 0, and a child
# may not have more than its parent; create gives the parents the budget.
rt_parent=$CG/cpu/umwelt-run/cpu.rt_runtime_us
if [[ -f $rt_parent ]] && echo 0 >"$rt_parent" 2>/dev/null; then
        limits '{"cpu": {"realtimeRuntime": 1000, "realtimePeriod": 100000}}' /bin/probe sleep 60
        new_id
        id=$T_LAST_ID
        capture rt run -d --bundle "$b" "$id"
        t_eq "cpu.realtimeRuntime on v1 under a parent with budget 0" \
                "0 1000 100000" "$T_RC $(cat "$(cg_dir cpu "$id")/cpu.rt_runtime_us" "$(cg_dir cpu "$id")/cpu.rt_period_us" 2>&1 | tr "\n" " " | sed "s/ $//")" "$T_OUT"
        rt delete -f "$id" >/dev/null 2>&1
        # The child's budget is released with its directory, not always at
        # once: the parent goes back to 0 as it was.
        for _ in $(seq 20); do echo 0 2>/dev/null >"$rt_parent" && break; sleep 0.1; done
else
        t_skip "cpu.realtimeRuntime on v1 under a parent with budget 0" "no v1 cpu rt_runtime_us"
fi

refused() {
        local name=$1 code=$2 re=$3
        new_id
        capture rt create --bundle "$b" "$T_LAST_ID"
        t_match "$name: exit $code and one line" "^$code $re$" "$T_RC $T_OUT"
        t_eq "$name: nothing left" "" "$(rt list -q 2>&1; cg_left "$T_LAST_ID")"
}

limits '{"unified": {"memory.high": "100M"}}' /bin/probe exit 0
unified_ctl=$(cat "$UNI/cgroup.controllers" 2>/dev/null)
if ! grep -qw memory <<<"$unified_ctl"; then
        refused "a v2 limit whose controller the unified hierarchy lacks" 3 \
                ".*memory\.high needs the cgroup controller 'memory', which is not available .*Delegate=memory.*--cgroup-manager disabled.*"
        new_id
        capture rt --cgroup-manager disabled run --bundle "$b" "$T_LAST_ID"
        t_eq "--cgroup-manager disabled starts it without the limit" 0 "$T_RC" "$T_OUT"
fi

limits '{"memory": {"limit": -5}}' /bin/probe exit 0
refused "a negative memory limit" 3 ".*config\.json: \.linux\.resources\.memory\.limit: expected .*"
limits '{"cpu": {"shares": 1}}' /bin/probe exit 0
refused "cpu shares of 1" 3 ".*\.linux\.resources\.cpu\.shares: expected .*"
limits '{"pids": {"limt": 5}}' /bin/probe exit 0
refused "an unknown resource field" 3 ".*\.linux\.resources\.pids\.limt: unknown resource field.*"
limits '{"devices": [{"allow": True, "access": "rwx"}]}' /bin/probe exit 0
refused "a device rule with access rwx" 3 ".*\.linux\.resources\.devices\[0\]\.access: expected .*"

# Another container's cgroup: the same cgroupsPath is refused, and the
# running container keeps its cgroup.
limits '{}' /bin/probe sleep 60
cfg_set "$b" 'c["linux"]["cgroupsPath"] = "/umwelt-run/umwt-cg-shared-'$$'"'
new_id
first=$T_LAST_ID
start_detached "$first"
new_id
capture rt create --bundle "$b" "$T_LAST_ID"
t_match "a cgroupsPath that holds another container's processes is refused (exit 5)" \
        "^5 .*already holds processes" "$T_RC $T_OUT"
t_eq "the refused create leaves the other container running in its cgroup" "running 1" \
        "$(state_field "$first" status) $(wc -l <"$(cg_dir memory umwt-cg-shared-$$)/cgroup.procs")"
rt delete -f "$first" >/dev/null 2>&1
t_eq "its delete removes the shared path" "" "$(cg_left umwt-cg-shared-$$)"
cfg_set "$b" 'c["linux"].pop("cgroupsPath", None)'

# ---------------------------------------------------------------- cgroup v2 on a hybrid host

hp=/sys/kernel/mm/hugepages/hugepages-2048kB
if [[ -d $hp ]] && grep -qw hugetlb <<<"$unified_ctl" && [[ ! -d $CG/hugetlb ]]; then
        root_had=$(grep -cw hugetlb "$UNI/cgroup.subtree_control")
        parent_had=$(grep -cw hugetlb "$UNI/umwelt-run/cgroup.subtree_control" 2>/dev/null)
        limits '{"hugepageLimits": [{"pageSize": "2MB", "limit": 4194304}]}' /bin/probe sleep 60
        new_id
        id=$T_LAST_ID
        start_detached "$id"
        t_eq "a hugetlb limit goes to the unified hierarchy (hugetlb.2MB.max)" 4194304 \
                "$(cat "$UNI/umwelt-run/$id/hugetlb.2MB.max" 2>&1)"
        rt delete -f "$id" >/dev/null 2>&1
        # Give the machine back the subtree_control it had.
        [[ $parent_had == 0 ]] && echo -hugetlb >"$UNI/umwelt-run/cgroup.subtree_control" 2>/dev/null
        [[ $root_had == 0 ]] && echo -hugetlb >"$UNI/cgroup.subtree_control" 2>/dev/null
else
        t_skip "a hugetlb limit goes to the unified hierarchy" "no v2-only hugetlb here"
fi

# ---------------------------------------------------------------- devices on cgroup v2 (BPF)

# bpf_open RESOURCES MODE: a container with the host's /dev/fuse (c 10:229,
# outside the default device set) bound in; between create and start its v1
# devices cgroup is opened to every device, so only the BPF device program on
# its cgroup2 directory stands between it and the device. Prints what
# `probe open /dev/fuse MODE` and `probe open /dev/null rw` printed.
bpf_open() {
        limits "$1" /bin/sh -c "/bin/probe open /dev/fuse $2; /bin/probe open /dev/null rw"
        cfg_set "$b" 'add_mount("/dev/fuse", "bind", "/dev/fuse", ["bind"])'
        new_id
        local id=$T_LAST_ID
        capture rt create --bundle "$b" "$id" || {
                echo "create failed: $T_OUT"
                return
        }
        local out=$T_TMP/capture.$T_CAP
        echo a >"$(cg_dir devices "$id")/devices.allow"
        rt start "$id" >/dev/null 2>&1
        wait_status "$id" stopped
        tr '\n' ' ' <"$out" | sed 's/ $//'
        rt delete -f "$id" >/dev/null 2>&1
        cfg_set "$b" 'c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/dev/fuse"]'
}

if [[ -d $CG/unified && -d $CG/devices && -c /dev/fuse ]]; then
        t_eq "cgroup v2: a device outside the rules is refused by the BPF program (EPERM)" \
                "1 0" "$(bpf_open '{}' r)"
        t_eq "cgroup v2: a device allowed for r opens for r, not for rw" "0 0 1 0" \
                "$(bpf_open '{"devices": [{"allow": True, "type": "c", "major": 10, "minor": 229, "access": "r"}]}' r) $(
                        bpf_open '{"devices": [{"allow": True, "type": "c", "major": 10, "minor": 229, "access": "r"}]}' rw)"
else
        t_skip "cgroup v2: device rules through the BPF program" "needs the unified, v1 devices hierarchies and /dev/fuse"
fi

# attach_exclusive DIR: attaches an allow-all device program to the cgroup2
# directory DIR without BPF_F_ALLOW_MULTI or _OVERRIDE, after which the kernel
# lets no cgroup below DIR have a device program of its own (x86_64 numbers).
attach_exclusive() {
        "$PY" - "$1" <<'PYEOF'
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
def bpf(cmd, attr):
    buf = ctypes.create_string_buffer(attr, 128)
    r = libc.syscall(ctypes.c_long(321), ctypes.c_long(cmd), buf, ctypes.c_long(128))
    if r < 0:
        sys.exit("bpf %d: %s" % (cmd, os.strerror(ctypes.get_errno())))
    return r
insns = ctypes.create_string_buffer(bytes.fromhex("b700000001000000" "9500000000000000"), 16)
lic = ctypes.create_string_buffer(b"none")
# BPF_PROG_LOAD of BPF_PROG_TYPE_CGROUP_DEVICE: r0 = 1; exit.
prog = bpf(5, struct.pack("=IIQQ", 15, 2, ctypes.addressof(insns), ctypes.addressof(lic)))
cg = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECTORY)
# BPF_PROG_ATTACH, BPF_CGROUP_DEVICE, no flags.
bpf(8, struct.pack("=IIII", cg, prog, 6, 0))
PYEOF
}

wall=umwt-bpf-wall-$$
if [[ -d $UNI && $(uname -m) == x86_64 ]] && mkdir "$UNI/$wall" &&
        attach_exclusive "$UNI/$wall"; then
        T_EXTRA_CLEANUP='for d in "$CG"/*/"$wall"; do rmdir "$d/ctr" "$d" 2>/dev/null; done'
        limits '{}' /bin/probe exit 0
        cfg_set "$b" 'c["linux"]["cgroupsPath"] = "/'$wall'/ctr"'
        new_id
        capture rt create --bundle "$b" "$T_LAST_ID"
        t_match "a device program that cannot be attached refuses create (exit 1), naming the wall" \
                "^1 .*device rules \(linux\.resources\.devices\) on cgroup v2: attach .*: Operation not permitted$" \
                "$T_RC $T_OUT"
        t_eq "... and leaves no container and no cgroup" "" \
                "$(rt list -q 2>&1; ls -d "$CG"/*/"$wall"/ctr 2>/dev/null)"
        cfg_set "$b" 'c["linux"].pop("cgroupsPath", None)'
else
        t_skip "a device program that cannot be attached refuses create" "no unified hierarchy to test in"
fi

# ---------------------------------------------------------------- born in its cgroup2 directory

# The init is cloned into its unified cgroup (clone3 with CLONE_INTO_CGROUP):
# no migration; the v1 hierarchies are joined afterwards.
if [[ -d $UNI ]]; then
        limits '{"memory": {"limit": 67108864}}' /bin/probe sleep 60
        new_id
        id=$T_LAST_ID
        if is_umwelt && command -v strace >/dev/null; then
                # Without -f: only create's own clone3, not the init's.
                strace -qq -o "$T_TMP/clone3.$id" -e trace=clone3 "$RT" --root "$T_ROOT" \
                        create --bundle "$b" "$id" </dev/null >/dev/null 2>&1
                t_match "create clones the init with CLONE_INTO_CGROUP into its unified cgroup" \
                        'flags=[A-Z_|]*CLONE_INTO_CGROUP.*\) = [1-9]' "$(cat "$T_TMP/clone3.$id" 2>&1)"
        else
                rt create --bundle "$b" "$id" </dev/null >/dev/null 2>&1
                t_skip "create clones the init with CLONE_INTO_CGROUP" "needs umwelt-run and strace"
        fi
        pid=$(state_field "$id" pid)
        t_match "the init is in its unified cgroup's cgroup.procs" "^$pid\$" \
                "$(cat "$UNI/umwelt-run/$id/cgroup.procs" 2>&1)"
        t_eq "/proc/PID/cgroup's 0:: line names the container's path" "0::/umwelt-run/$id" \
                "$(grep '^0::' "/proc/$pid/cgroup" 2>&1)"
        if ((V2)); then
                t_eq "... and it has the limit" 67108864 "$(cat "$UNI/umwelt-run/$id/memory.max" 2>&1)"
        else
                t_eq "... and its v1 memory cgroup has the limit" ":memory:/umwelt-run/$id 67108864" \
                        "$(grep -o ':memory:.*' "/proc/$pid/cgroup") $(cat "$(cg_dir memory "$id")/memory.limit_in_bytes" 2>&1)"
        fi
        rt delete -f "$id" >/dev/null 2>&1
        t_eq "delete removes it from the unified hierarchy too" "" "$(cg_left "$id")"
else
        t_skip "the init is born in its cgroup2 directory" "no cgroup2 hierarchy here"
fi

# ---------------------------------------------------------------- joined by the init itself

# The init joins its v1 cgroups itself (tasks "0": no RCU grace period) while
# umwelt-run waits for nothing, and before its cgroup mount: without a cgroup
# namespace that mount binds the container's own cgroup of each hierarchy,
# never the host's root.
cfg_set "$b" 'drop_ns("cgroup"); add_mount("/sys/fs/cgroup", "cgroup", "cgroup", ["ro", "nosuid", "noexec", "nodev"])'
run_in "$b" /bin/sh -c 'cat /proc/self/cgroup; cat /proc/self/mountinfo'
id=$T_LAST_ID
t_eq "every v1 hierarchy in /proc/self/cgroup is the container's" "" \
        "$(grep -E '^[1-9][0-9]*:[^ ]*$' <<<"$T_OUT" | grep -v ":/umwelt-run/$id\$")$T_ERR"
if ((V2)); then
        roots=$(awk '$5 == "/sys/fs/cgroup" { print $4 }' <<<"$T_OUT" | sort -u)
else
        roots=$(awk '$5 ~ "^/sys/fs/cgroup/." { print $4 }' <<<"$T_OUT" | sort -u)
fi
t_eq "the cgroup mount binds the container's own cgroup in every hierarchy" "/umwelt-run/$id" \
        "$roots"
cfg_set "$b" 'set_ns("cgroup"); c["mounts"] = [m for m in c["mounts"] if m["destination"] != "/sys/fs/cgroup"]'

# ---------------------------------------------------------------- a create killed mid-way

# create is SIGKILLed while its createRuntime hook runs: the init and the hook
# die with it, and delete --force removes the cgroup from every hierarchy.
hook_secs=29.$$
limits '{"memory": {"limit": 67108864}}' /bin/probe sleep 60
cfg_set "$b" 'c["hooks"] = {"createRuntime": [{"path": "/bin/sleep", "args": ["sleep", "'"$hook_secs"'"]}]}'
new_id
id=$T_LAST_ID
"$RT" --root "$T_ROOT" create --bundle "$b" "$id" </dev/null >/dev/null 2>&1 &
creator=$!
hook=
for _ in $(seq 100); do
        hook=$(pgrep -P "$creator" -x sleep) && break
        sleep 0.1
done
init=$(state_field "$id" pid)
t_match "create runs its createRuntime hook (and has an init)" '^[0-9]+ [0-9]+$' "$hook $init"
kill -KILL "$creator"
wait "$creator" 2>/dev/null
for _ in $(seq 50); do
        proc_alive "$init" || proc_alive "$hook" || break
        sleep 0.1
done
t_eq "the init and the hook die with a SIGKILLed create" "" \
        "$(for p in $init $hook; do proc_alive "$p" && echo "$p alive: $(tr '\0' ' ' <"/proc/$p/cmdline")"; done)"
t_run "delete --force of the killed create exits 0" rt delete --force "$id"
t_eq "... and no cgroup of it is left in any hierarchy" "" "$(find "$CG" -path "*$id*" 2>/dev/null)"
t_eq "... no state dir" "" "$(ls -d "$T_ROOT/$id" 2>/dev/null)"
t_eq "... no process" "" "$(for p in $init $hook; do proc_alive "$p" && echo "$p"; done)"
for p in $init $hook; do proc_alive "$p" && kill -KILL "$p"; done
cfg_set "$b" 'c.pop("hooks", None)'

# A create killed between making the cgroup2 directory (before clone) and
# writing state.json: delete --force finds the cgroup from the saved config.
if [[ -d $UNI ]] && is_umwelt; then
        new_id
        id=$T_LAST_ID
        mkdir -p "$T_ROOT/$id" "$UNI/umwelt-run/$id"
        cp "$b/config.json" "$T_ROOT/$id/config.json"
        t_run "delete --force of a create killed before state.json exits 0" rt delete --force "$id"
        t_eq "... and removes its cgroup2 directory and state dir" "" \
                "$(ls -d "$UNI/umwelt-run/$id" "$T_ROOT/$id" 2>/dev/null)"
fi

t_done
