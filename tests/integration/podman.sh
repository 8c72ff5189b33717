#!/bin/bash
# podman 4.3 + conmon driving the runtime under test, as a podman user would:
# run, detach/exec/stop/rm, terminals, a locked-down container, networks and
# --init. Podman gets a private containers.conf, storage, lock files, network
# config and event log under one temp dir, so the machine's own podman state
# is never read or changed; the temp dir is reset and removed at the end.
#
# Environment (besides lib.sh's): UMW_PODMAN=podman binary,
# UMW_PODMAN_DRIVER=storage driver (overlay; vfs where the temp dir is
# itself on overlayfs). Every podman call is bounded by `timeout 120`.

# Commands for the container's shell are single-quoted on purpose.
# shellcheck disable=SC2016
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=lib.sh
. "$HERE/lib.sh"

export LC_ALL=C
PODMAN=${UMW_PODMAN:-podman}
DRIVER=${UMW_PODMAN_DRIVER:-overlay}
IMG=localhost/umwelt-busybox
# The subnet of the private default network; podman's own default is 10.88/16.
SUBNET_RE='^10\.223\.71\.'

TESTS=(
	import "podman import makes $IMG from a busybox rootfs"
	run_rm "run --rm prints the command's output"
	run_rc "run --rm returns the container's exit status"
	run_ulimits "default_ulimits from containers.conf are applied"
	detach "run -d leaves a running container"
	exec "exec runs a command in the running container"
	exec_tty "exec -t gives the command a terminal"
	exec_kill0 "exec: kill(0) inside kills the command alone, not conmon or podman"
	runtime_hidden "the runtime's binary: a CAP_SYS_PTRACE watcher sees no image of it through podman exec; a #!/proc/self/exe script gets the trampoline (127)"
	stop "stop delivers SIGTERM and the container exits 0"
	rm "rm removes the stopped container"
	run_tty "run -t gives the container a terminal"
	locked_caps "--cap-drop all: CapEff is 0"
	locked_nnp "--security-opt no-new-privileges: NoNewPrivs is 1"
	locked_ro "--read-only: writing to / fails"
	net_none "--network none: only lo"
	net_bridge "default bridge network: eth0 with an address in the subnet"
	net_gateway "default bridge network: the host's bridge address answers ping"
	init "--init: pid 1 is catatonit"
	limits_mem "run --memory 64m --pids-limit 50 --cpus 0.5: allocating 128 MiB is OOM-killed (137)"
	limits_pids "run --memory 64m --pids-limit 50 --cpus 0.5: a fork loop stops below 50"
	limits_cpu "run --cpus 0.5: a busy loop gets about half a CPU"
	pause "pause: status paused, every process frozen, no CPU used"
	unpause "unpause: status running, the container uses CPU again"
	idmap_volume "--uidmap with a :idmap volume: host root's file shows as the container's 0, what it makes is host root's"
	userns_volume "--uidmap with a named volume (below podman's 0700 volumes directory): written, owned by the mapped 0"
	cleanup "rm -af and rmi -af leave no container, image, process or cgroup"
)

skip_all() {
	local i
	printf '# SKIP podman suite: %s\n' "$1" >&2
	for ((i = 0; i < ${#TESTS[@]}; i += 2)); do
		t_skip "${TESTS[i + 1]}" "$1"
	done
	t_done
}

[[ $(id -u) -eq 0 ]] || skip_all "needs root"
command -v "$PODMAN" >/dev/null || skip_all "podman not installed"
command -v conmon >/dev/null || skip_all "conmon not installed"
[[ -x $RT ]] || t_bail "runtime $RT is not executable (build it, or set UMW_RUNTIME)"

# Rootful podman keeps a few things at fixed paths whatever its configuration
# says: the image blob-info cache (/var/lib/containers/cache) and netavark's
# IPAM database (/run/containers/networks). The suite runs in a mount
# namespace of its own where both are empty tmpfs, so the machine's copies are
# never written; every mount podman makes goes away with that namespace too.
if [[ -z ${UMW_PODMAN_PRIVATE_NS:-} ]]; then
	unshare --mount true || t_bail "cannot unshare a mount namespace"
	export UMW_PODMAN_PRIVATE_NS=1
	unshare --mount --propagation private -- bash "$0" "$@"
	exit
fi
for d in /var/lib/containers /run/containers; do
	if ! mkdir -p "$d" || ! mount -t tmpfs -o mode=0700 umwt-podman "$d"; then
		t_bail "cannot mount a tmpfs on $d"
	fi
done

P_TMP=$(mktemp -d "${TMPDIR:-/tmp}/umwt-podman.XXXXXX") || t_bail "mktemp failed"
PROBE=${UMW_PROBE:-$UMW_BUILDDIR/tests/integration/helpers/probe}
if [[ ! -x $PROBE ]]; then
	PROBE=$P_TMP/probe
	cc -static -O2 -o "$PROBE" "$UMW_SRCDIR/tests/integration/helpers/probe.c" ||
		t_bail "cannot build the probe helper"
fi
# conmon learns CONTAINERS_CONF from podman and passes it to the exit command
# (`podman container cleanup`), so cleanup runs with this configuration too.
export CONTAINERS_CONF=$P_TMP/containers.conf
export CONTAINERS_STORAGE_CONF=$P_TMP/storage.conf
unset CONTAINER_HOST CONTAINER_CONNECTION

PODMAN_ARGV=("$PODMAN" --root "$P_TMP/root" --runroot "$P_TMP/runroot"
	--storage-driver "$DRIVER" --runtime "$RT")

# pm ARGS...: podman bound to the private configuration and storage.
pm() { timeout -k 10 120 "${PODMAN_ARGV[@]}" "$@"; }

# pm_tty ARGS...: pm under a pseudo-terminal, as podman -t wants one on stdin.
# The timeout sits outside script(1): inside, timeout's own process group would
# not be the terminal's foreground group and podman would stop on SIGTTOU.
pm_tty() {
	timeout -k 10 120 script -qec "exec $(printf '%q ' "${PODMAN_ARGV[@]}" "$@")" /dev/null \
		</dev/null | tr -d '\r'
}

p_cleanup() {
	if [[ -d $P_TMP ]]; then
		pm rm -af -t 0 >/dev/null 2>&1
		pm rmi -af >/dev/null 2>&1
		# Only ever on the private --root/--runroot of this file.
		pm system reset -f >/dev/null 2>&1
		umount_under "$P_TMP"
		if [[ ${UMW_KEEP:-0} == 1 ]]; then
			printf '# kept %s\n' "$P_TMP"
		else
			rm -rf --one-file-system "$P_TMP"
		fi
	fi
	return 0
}
trap p_cleanup EXIT
trap 'exit 130' INT TERM

write_config() {
	mkdir -p "$P_TMP/networks" || return 1
	sed -e "s|@TMP@|$P_TMP|g" -e "s|@RUNTIME@|$RT|g" \
		"$HERE/podman/containers.conf.in" >"$CONTAINERS_CONF" || return 1
	# The default network, with a bridge name of its own so that it cannot
	# meet the machine's podman0.
	cp "$HERE/podman/umwelt-test.json" "$P_TMP/networks/" || return 1
	printf '[storage]\ndriver = "%s"\ngraphroot = "%s/root"\nrunroot = "%s/runroot"\n' \
		"$DRIVER" "$P_TMP" "$P_TMP" >"$CONTAINERS_STORAGE_CONF"
}

make_image_tar() {
	local r=$P_TMP/rootfs a
	mkdir -p "$r"/{bin,dev,etc,proc,sys,tmp,run,root} || return 1
	chmod 1777 "$r/tmp"
	cp /bin/busybox "$r/bin/busybox" || return 1
	cp "$PROBE" "$r/bin/probe" || return 1
	for a in $(/bin/busybox --list); do
		[[ $a == busybox ]] || ln -s busybox "$r/bin/$a"
	done
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$r/etc/passwd"
	printf 'root:x:0:\n' >"$r/etc/group"
	tar -C "$r" -cf "$P_TMP/rootfs.tar" .
}

# ------------------------------------------------------------------ tests

test_import() {
	local out
	out=$(make_image_tar 2>&1 && pm import -q "$P_TMP/rootfs.tar" "$IMG" 2>&1) ||
		{ t_fail "$1" "$out"; return; }
	t_eq "$1" "$IMG:latest" "$(pm images --format '{{.Repository}}:{{.Tag}}' 2>&1)"
}

test_run_rm() {
	t_eq "$1" "hello from umwelt" "$(pm run --rm "$IMG" echo hello from umwelt 2>&1)"
}

test_run_rc() {
	local out rc
	out=$(pm run --rm "$IMG" sh -c 'exit 7' 2>&1)
	rc=$?
	t_eq "$1" 7 "$rc" "$out"
}

test_run_ulimits() {
	t_eq "$1" "20000 20000 32768" \
		"$(pm run --rm "$IMG" sh -c 'echo $(ulimit -Sn) $(ulimit -Hn) $(ulimit -Hu)' 2>&1)"
}

# The detached container traps SIGTERM, so a clean stop proves podman's
# `kill` reached it through the runtime.
test_detach() {
	local out
	out=$(pm run -d --name umwt-detached "$IMG" \
		sh -c 'trap "exit 0" TERM; while :; do sleep 0.2; done' 2>&1) ||
		{ t_fail "$1" "$out"; return; }
	t_eq "$1" running "$(pm inspect -f '{{.State.Status}}' umwt-detached 2>&1)"
}

test_exec() {
	t_eq "$1" "exec-ok 1" \
		"$(pm exec umwt-detached sh -c 'echo exec-ok $(cat /proc/1/cmdline | tr "\0" " " | grep -c trap)' 2>&1)"
}

# kill(0) from an exec'd command: its own session and process group (the
# runtime's setsid), so podman exec reports its 137 and the container stays.
# setsid keeps this script out of reach should the old code let it through.
test_exec_kill0() {
	local out rc
	out=$(setsid -w timeout -k 10 120 "${PODMAN_ARGV[@]}" exec umwt-detached /bin/probe kill0 2>&1)
	rc=$?
	t_eq "$1" "137 running" "$rc $(pm inspect -f '{{.State.Status}}' umwt-detached 2>&1)" "$out"
}

# Hole 1 through podman (rootful: no user namespace, so a process with
# CAP_SYS_PTRACE there holds it over the host): while podman execs into the
# container nothing in it is ever the host's umwelt-run, and a script whose
# interpreter is /proc/self/exe gets the sealed exec trampoline, which runs
# nothing.
test_runtime_hidden() {
	local devino out
	devino=$(stat -L -c %d:%i "$RT")
	pm run -d --name umwt-watch --cap-add SYS_PTRACE "$IMG" probe watch-exe "$devino" 4 >/dev/null 2>&1
	for _ in 1 2 3 4 5 6; do pm exec umwt-watch true >/dev/null 2>&1; done
	pm wait umwt-watch >/dev/null 2>&1
	out=$(pm logs umwt-watch 2>&1
		pm run --rm "$IMG" sh -c 'printf "#!/proc/self/exe\n" >/tmp/s; chmod 755 /tmp/s; /tmp/s; echo rc=$?' 2>&1)
	pm rm -f umwt-watch >/dev/null 2>&1
	t_eq "$1" "seen 0 writable 0 rc=127" "$(grep -E '^seen|^rc=' <<<"$out" | tr '\n' ' ' | sed 's/ $//')" "$out"
}

test_exec_tty() {
	local out
	out=$(pm_tty exec -t umwt-detached sh -c 'tty; [ -t 1 ] && echo stdout-is-a-tty' 2>&1)
	t_match "$1" $'^/dev/pts/[0-9]+\nstdout-is-a-tty' "$out"
}

test_stop() {
	local out
	out=$(pm stop -t 10 umwt-detached 2>&1) || { t_fail "$1" "$out"; return; }
	t_eq "$1" "exited 0" \
		"$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' umwt-detached 2>&1)"
}

test_rm() {
	local out
	out=$(pm rm umwt-detached 2>&1) || { t_fail "$1" "$out"; return; }
	t_eq "$1" "" "$(pm ps -aq 2>&1)"
}

test_run_tty() {
	local out
	out=$(pm_tty run --rm -t "$IMG" sh -c 'tty; [ -t 0 ] && [ -t 1 ] && echo stdio-is-a-tty' 2>&1)
	t_match "$1" $'^/dev/pts/[0-9]+\nstdio-is-a-tty' "$out"
}

LOCKED_OUT=
run_locked() {
	LOCKED_OUT=$(pm run --rm --read-only --cap-drop all --security-opt no-new-privileges "$IMG" \
		sh -c 'grep -E "^(CapEff|NoNewPrivs):" /proc/self/status
		       if touch /written 2>/dev/null; then echo root-writable; else echo root-read-only; fi' 2>&1)
}

test_locked_caps() {
	run_locked
	t_match "$1" $'CapEff:\t0000000000000000' "$LOCKED_OUT"
}

test_locked_nnp() {
	t_match "$1" $'NoNewPrivs:\t1' "$LOCKED_OUT"
}

test_locked_ro() {
	t_match "$1" $'\nroot-read-only$' "$LOCKED_OUT"
}

# The OCI idmap mount option as podman passes it (the mount's uidMappings,
# the container's own), from a directory only the host's root may search.
test_idmap_volume() {
	local v=$P_TMP/idmap-vol out
	mkdir -m 700 "$v" && (umask 077 && echo root-file >"$v/secret")
	out=$(pm run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 -v "$v:/v:idmap" "$IMG" \
		sh -c 'stat -c %u:%g /v/secret; cat /v/secret; echo x >/v/made' 2>&1)
	t_eq "$1" "0:0 root-file 0:0" "$(tr '\n' ' ' <<<"$out")$(stat -c %u:%g "$v/made" 2>&1)"
}

# A named volume lies below /var/lib/containers/storage/volumes (0700,
# root's): umwelt-run clones the bind, the container's ids could not reach it.
test_userns_volume() {
	local out
	pm volume rm -f umwelt-userns-vol >/dev/null 2>&1
	pm volume create umwelt-userns-vol >/dev/null 2>&1
	out=$(pm run --rm --uidmap 0:100000:65536 --gidmap 0:100000:65536 -v umwelt-userns-vol:/data "$IMG" \
		sh -c 'echo x >/data/made && cat /data/made' 2>&1)
	local dir
	dir=$(pm volume inspect -f '{{.Mountpoint}}' umwelt-userns-vol 2>&1)
	t_eq "$1" "x 100000:100000" "$out $(stat -c %u:%g "$dir/made" 2>&1)"
	pm volume rm -f umwelt-userns-vol >/dev/null 2>&1
}

test_net_none() {
	t_eq "$1" "lo lo" "$(pm run --rm --network none "$IMG" \
		sh -c 'echo $(ls /sys/class/net) $(sed -n "3,\$s/:.*//p" /proc/net/dev)' 2>&1)"
}

test_net_bridge() {
	local out
	out=$(pm run --rm "$IMG" sh -c 'ls /sys/class/net | tr "\n" " "; echo
		ip -4 -o addr show dev eth0 | awk "{print \$4}"' 2>&1)
	t_match "$1" "^eth0 lo "$'\n'"${SUBNET_RE#^}" "$out"
}

# Only the host's own end of the bridge is contacted; nothing leaves the machine.
test_net_gateway() {
	t_match "$1" "1 packets received" "$(pm run --rm "$IMG" \
		sh -c 'ping -c 1 -W 5 $(ip route | awk "/^default/ {print \$3}")' 2>&1)"
}

test_init() {
	local want out
	want=$(md5sum </usr/bin/catatonit)
	out=$(pm run --rm --init "$IMG" sh -c 'tr "\0" " " </proc/1/cmdline; echo
		md5sum </proc/1/exe; echo sh-pid=$$' 2>&1)
	t_match "$1" $'^/run/podman-init -- sh -c .*\n'"${want%% *}"$'.*\nsh-pid=[0-9]+$' "$out" \
		"(the second line should be catatonit's md5sum)"
	[[ $out =~ sh-pid=1$ ]] && t_diag "sh ran as pid 1"
}

LIMITS=(--memory 64m --pids-limit 50 --cpus 0.5)

test_limits_mem() {
	local out rc
	out=$(pm run --rm "${LIMITS[@]}" "$IMG" probe alloc 128 2>&1)
	rc=$?
	t_eq "$1" 137 "$rc" "$(tail -n 3 <<<"$out")"
}

test_limits_pids() {
	t_match "$1" '^forked 4[0-9]$' "$(pm run --rm "${LIMITS[@]}" "$IMG" probe forks 100 2>&1)"
}

# limits_cgroup CONTROLLER: the detached container's cgroup directory.
limits_cgroup() {
	local pid
	pid=$(pm inspect -f '{{.State.Pid}}' umwt-limits 2>/dev/null) || return 1
	echo "/sys/fs/cgroup/$1$(awk -F: -v c="$1" '$2 == c { print $3 }' "/proc/$pid/cgroup")"
}

# cpu_seconds SECONDS: CPU the detached container uses over that many seconds.
cpu_seconds() {
	local d a z
	d=$(limits_cgroup cpuacct) || return 1
	a=$(cat "$d/cpuacct.usage")
	sleep "$1"
	z=$(cat "$d/cpuacct.usage")
	awk -v a="$a" -v z="$z" -v s="$1" 'BEGIN { printf "%.3f", (z - a) / (s * 1e9) }'
}

test_limits_cpu() {
	local out frac
	out=$(pm run -d --name umwt-limits "${LIMITS[@]}" "$IMG" sh -c 'probe spin 120 & probe spin 120' 2>&1) ||
		{ t_fail "$1" "$out"; return; }
	sleep 0.5
	frac=$(cpu_seconds 2)
	if awk -v f="$frac" 'BEGIN { exit !(f >= 0.35 && f <= 0.65) }'; then
		t_ok "$1 ($frac)"
	else
		t_fail "$1" "measured: $frac CPU"
	fi
}

test_pause() {
	local out d running= p
	out=$(pm pause umwt-limits 2>&1) || { t_fail "$1" "$out"; return; }
	d=$(limits_cgroup pids)
	for p in $(cat "$d/cgroup.procs"); do
		grep -q '^State:.*R (running)' "/proc/$p/status" && running+=" $p"
	done
	t_eq "$1" "paused  0.000" 		"$(pm inspect -f '{{.State.Status}}' umwt-limits 2>&1) $running $(cpu_seconds 0.5)"
}

test_unpause() {
	local out frac
	out=$(pm unpause umwt-limits 2>&1) || { t_fail "$1" "$out"; return; }
	frac=$(cpu_seconds 1)
	t_eq "$1" "running yes" "$(pm inspect -f '{{.State.Status}}' umwt-limits 2>&1) \
$(awk -v f="$frac" 'BEGIN { print (f > 0.2 ? "yes" : "no (" f ")") }')"
	pm rm -f -t 0 umwt-limits >/dev/null 2>&1
}

test_cleanup() {
	local ids id d left=() out
	ids=$(pm ps -aq --no-trunc 2>/dev/null)
	pm rm -af -t 0 >/dev/null 2>&1
	pm rmi -af >/dev/null 2>&1
	out=$(pm ps -aq 2>&1; pm images -q 2>&1)
	[[ -n $out ]] && left+=("podman still lists: $out")
	for id in $ids; do
		for d in /sys/fs/cgroup/*/libpod_parent/libpod-"$id" /sys/fs/cgroup/libpod_parent/libpod-"$id"; do
			[[ -d $d ]] && left+=("cgroup left: $d")
		done
	done
	out=$(pgrep -af "$P_TMP")
	[[ -n $out ]] && left+=("processes left: $out")
	if ((${#left[@]} == 0)); then
		t_ok "$1"
	else
		t_fail "$1" "${left[@]}"
	fi
}

# ------------------------------------------------------------------ main

write_config || t_bail "cannot write $CONTAINERS_CONF"
t_diag "runtime: $RT" "podman: $("$PODMAN" --version)" "storage: $DRIVER under $P_TMP"
for ((i = 0; i < ${#TESTS[@]}; i += 2)); do
	"test_${TESTS[i]}" "${TESTS[i + 1]}"
done
t_done
