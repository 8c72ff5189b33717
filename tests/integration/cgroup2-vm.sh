#!/bin/bash
# run.sh timeout: 1500
# The pure cgroup v2 leg: boots Debian 12's own kernel under qemu (TCG) with
# cgroup_no_v1=all, its root the host's / read-only under an overlay, and
# runs there, with tests/run.sh and this build directory, the integration
# tests that reach umwelt-run's v2 code (memory, pids, cpu, io, cpuset, the
# BPF device program, CLONE_INTO_CGROUP, freeze, kill, a systemd-style
# delegated subtree for the rootless user). Each guest test comes back as a
# TAP line of this file, named "guest FILE: NAME".
#
# Environment:
#   UMW_VM_TESTS     the guest's test files, names without .sh (default below)
#   UMW_VM_TIMEOUT   seconds the guest may run (default 1380)
#   UMW_VM_CACHE     where the kernel package is kept (/var/cache/umwelt-vm)
#   UMW_VM_REQUIRED=1  qemu missing is a failure, not a skip (setup.sh --check)
. "$(dirname "$0")/lib.sh"
t_require_root

VM_TESTS=${UMW_VM_TESTS:-cgroups rootless sandbox-rootless doctor exec sandbox}
VM_TIMEOUT=${UMW_VM_TIMEOUT:-1380}
VM_CACHE=${UMW_VM_CACHE:-/var/cache/umwelt-vm}
QEMU=$(command -v qemu-system-x86_64)
if [[ -z $QEMU ]]; then
        [[ ${UMW_VM_REQUIRED:-0} == 1 ]] && t_bail "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
        t_skip_all "qemu-system-x86_64 missing (apt-get install qemu-system-x86)"
fi
command -v mkfs.ext4 >/dev/null || t_bail "mkfs.ext4 missing (e2fsprogs)"
t_setup

# kernel_package: the linux-image package linux-image-amd64 depends on, and
# its candidate version ("NAME VERSION"), from apt's lists.
kernel_package() {
        local name ver
        name=$(apt-cache depends linux-image-amd64 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-/ { print $2; exit }')
        [[ -n $name ]] || return 1
        ver=$(apt-cache policy "$name" 2>/dev/null | awk '$1 == "Candidate:" { print $2 }')
        [[ -n $ver && $ver != "(none)" ]] || return 1
        echo "$name $ver"
}

# fetch_kernel: sets KDIR to the unpacked package in the cache (downloaded
# and unpacked once per version, with a modules.dep made by busybox's
# depmod: the package leaves that to its postinst; older versions dropped)
# and KVER to its release. Where apt cannot answer or download, the newest
# version already cached.
fetch_kernel() {
        local pkg name ver tmp
        if pkg=$(kernel_package); then
                read -r name ver <<<"$pkg"
                KDIR=$VM_CACHE/${name}_$ver
                if [[ ! -f $KDIR/.complete ]] && mkdir -p "$VM_CACHE" &&
                        tmp=$(mktemp -d "$VM_CACHE/.fetch.XXXXXX"); then
                        if (cd "$tmp" && apt-get download -q "$name=$ver" >/dev/null 2>&1 &&
                                dpkg -x ./*.deb root) &&
                                KVER=$(basename "$(ls -d "$tmp"/root/lib/modules/*/ | head -n 1)") &&
                                busybox depmod -b "$tmp/root" "$KVER"; then
                                rm -rf "$KDIR"
                                mv "$tmp/root" "$KDIR" && touch "$KDIR/.complete" &&
                                        find "$VM_CACHE" -mindepth 1 -maxdepth 1 -name 'linux-image-*' \
                                                ! -name "${name}_$ver" -exec rm -rf {} +
                        fi
                        rm -rf "$tmp"
                fi
        fi
        if [[ ! -f ${KDIR:-}/.complete ]]; then
                KDIR=$(ls -d "$VM_CACHE"/linux-image-*/.complete 2>/dev/null | sort -V | tail -n 1)
                [[ -n $KDIR ]] || return 1
                KDIR=${KDIR%/.complete}
        fi
        KVER=$(basename "$(ls -d "$KDIR"/lib/modules/*/ | head -n 1)")
        [[ -f $KDIR/boot/vmlinuz-$KVER ]]
}

# add_module DIR NAME: copies module NAME and what it depends on (by
# modules.dep) from the kernel into the initramfs at DIR.
add_module() {
        local dir=$1 name=$2 mods=$KDIR/lib/modules/$KVER m line
        line=$(grep -E "(^|/)$name\.ko(\.[a-z]+)?:" "$mods/modules.dep") || return 1
        for m in ${line/:/}; do
                mkdir -p "$dir/lib/modules/$KVER/$(dirname "$m")"
                cp "$mods/$m" "$dir/lib/modules/$KVER/$m"
        done
}

# make_initramfs FILE: busybox-static, vm-init as /init, the modules it
# loads, and /vm.env with what the guest is to run; an uncompressed cpio
# (TCG would spend seconds inflating it).
make_initramfs() {
        local out=$1 dir=$T_TMP/initramfs m v
        mkdir -p "$dir"/{bin,dev,proc,sys,lib/modules/"$KVER"}
        cp /bin/busybox "$dir/bin/busybox"
        cp "$UMW_SRCDIR/tests/integration/helpers/vm-init" "$dir/init"
        chmod 755 "$dir/init"
        for m in virtio_pci 9pnet_virtio 9p overlay virtio_blk crc32c_generic ext4; do
                add_module "$dir" "$m" || return 1
        done
        cp "$KDIR/lib/modules/$KVER"/modules.{dep,alias,symbols,builtin,order} "$dir/lib/modules/$KVER/"
        {
                for v in UMW_SRCDIR UMW_BUILDDIR UMW_RUNTIME UMW_VERBOSE ASAN_OPTIONS UBSAN_OPTIONS; do
                        [[ -n ${!v:-} ]] && printf 'export %s=%q\n' "$v" "${!v}"
                done
                printf 'export UMW_KDIR=%q UMW_KVER=%q\n' "$KDIR" "$KVER"
                printf 'export UMW_VM_TESTS=%q UMW_VM_FILE_TIMEOUT=%q\n' "$VM_TESTS" "$VM_TIMEOUT"
        } >"$dir/vm.env"
        (cd "$dir" && find . | busybox cpio -o -H newc >"$out" 2>/dev/null)
}

if ! fetch_kernel; then
        t_fail "Debian's kernel is at hand" "cannot download or find linux-image-*-amd64 in $VM_CACHE"
        t_done
fi
t_ok "Debian's kernel is at hand ($(basename "$KDIR"))"
make_initramfs "$T_TMP/initramfs.cpio" || t_bail "cannot build the initramfs"

# The guest's /tmp: ext4, sparse, on the host's /tmp.
truncate -s 8G "$T_TMP/scratch.img" && mkfs.ext4 -q -F "$T_TMP/scratch.img" || t_bail "cannot make the scratch disk"
mkdir -m 700 "$T_TMP/out"

start=$(date +%s)
timeout -k 5 "$VM_TIMEOUT" "$QEMU" -accel tcg -cpu max -smp 2 -m 4096 \
        -nographic -monitor none -serial "file:$T_TMP/console.log" -no-reboot \
        -kernel "$KDIR/boot/vmlinuz-$KVER" -initrd "$T_TMP/initramfs.cpio" \
        -append "console=ttyS0 panic=-1 cgroup_no_v1=all quiet loglevel=4 rdinit=/init" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs "local,path=$T_TMP/out,mount_tag=out,security_model=none" \
        -drive "file=$T_TMP/scratch.img,format=raw,if=virtio,cache=unsafe" \
        -nic none >"$T_TMP/qemu.log" 2>&1 </dev/null
qrc=$?
took=$(($(date +%s) - start))
echo "# guest ran $took s (qemu exit status $qrc)" >&2
console=$(tail -n 40 "$T_TMP/console.log" 2>/dev/null)

if [[ $qrc -eq 124 || $qrc -eq 137 ]]; then
        t_fail "guest finished within $VM_TIMEOUT s" "console:" "$console"
elif ! grep -q 'umw-vm: booted' "$T_TMP/console.log" 2>/dev/null; then
        t_fail "guest booted" "qemu exit status $qrc" "$(cat "$T_TMP/qemu.log")" "console:" "$console"
        t_done
else
        t_ok "guest booted ($(grep -o 'booted in .*' "$T_TMP/console.log"))"
fi

# The guest's files come back as this file's tests: each of its TAP lines,
# renamed, with its diagnostics; then, per file, what run.sh found wrong
# beyond failed tests (no plan, a plan not met, a timeout), and whether
# run.sh itself finished.
declare -A named=()
for f in $VM_TESTS; do
        tap=$T_TMP/out/$f.sh.tap
        if [[ ! -f $tap ]]; then
                t_fail "guest $f.sh ran" "no TAP in the output share" "console:" "$console"
                continue
        fi
        diag=()
        pending=
        while IFS= read -r line; do
                if [[ $line =~ ^(not\ )?ok([[:space:]]+[0-9]+)?([[:space:]]+-)?[[:space:]]*(.*)$ ]]; then
                        [[ -n $pending ]] && t_fail "$pending" "${diag[@]}"
                        pending=
                        diag=()
                        name=${BASH_REMATCH[4]}
                        if [[ -z ${BASH_REMATCH[1]} ]]; then
                                T_N=$((T_N + 1))
                                printf 'ok %d - guest %s.sh: %s\n' "$T_N" "$f" "$name"
                        elif [[ $name =~ \#[[:space:]]*TODO ]]; then
                                T_N=$((T_N + 1))
                                printf 'not ok %d - guest %s.sh: %s\n' "$T_N" "$f" "$name"
                        else
                                pending="guest $f.sh: $name"
                                named["integration/$f.sh: $name"]=1
                        fi
                elif [[ -n $pending && $line == \#* ]]; then
                        diag+=("${line#\# }")
                fi
        done <"$tap"
        if [[ -n $pending ]]; then
                [[ -s $T_TMP/out/$f.sh.log ]] && diag+=("stderr (last 20 lines):" "$(tail -n 20 "$T_TMP/out/$f.sh.log")")
                t_fail "$pending" "${diag[@]}"
        fi
        # The file run.sh was running when the guest stopped.
        [[ -f $T_TMP/out/$f.sh.status ]] ||
                t_fail "guest $f.sh finished" "stderr (last 20 lines):" "$(tail -n 20 "$T_TMP/out/$f.sh.log" 2>/dev/null)"
        # A whole-file skip in the guest is a failure here: the leg exists to
        # run these files.
        if grep -q '^1\.\.0' "$tap"; then
                t_fail "guest $f.sh: ran, not skipped" "$(grep '^1\.\.0' "$tap")"
        fi
done
if [[ ! -f $T_TMP/out/run.status ]]; then
        t_fail "guest run.sh finished" "console:" "$console"
else
        while IFS= read -r line; do
                [[ $line =~ ^FAIL\ (.*)$ && -z ${named[${BASH_REMATCH[1]}]:-} ]] || continue
                t_fail "guest ${BASH_REMATCH[1]#integration/}" "stderr (last 20 lines):" \
                        "$(tail -n 20 "$T_TMP/out/$(basename "${BASH_REMATCH[1]%%:*}").log" 2>/dev/null)"
        done <"$T_TMP/out/run.out"
        t_ok "guest run.sh finished: $(tail -n 1 "$T_TMP/out/run.out") (host clock $took s)"
fi
[[ ${UMW_KEEP:-0} == 1 ]] && cp "$T_TMP/console.log" "$T_TMP/out/" 2>/dev/null
t_done
