#!/usr/bin/env bash
# Sets up umwelt on a Debian 12 machine: installs the build and test
# dependencies that are missing, builds, installs. Idempotent.
#
#   scripts/setup.sh [--prefix DIR] [--demo | --check]
#     --prefix DIR  install prefix (default /usr/local); DESTDIR is honoured
#     --demo        then run a sandbox on this directory that shows its walls
#     --check       then build with -Werror and ASan/UBSan and run every test
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
prefix=/usr/local
mode=install
while [ $# -gt 0 ]; do
        case "$1" in
        --prefix) prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#*=}; shift ;;
        --demo) mode=demo; shift ;;
        --check) mode=check; shift ;;
        *) echo "setup.sh: unknown argument '$1'" >&2; exit 2 ;;
        esac
done

# Build: compiler, autotools, the design's libraries, the manual's tool.
build_deps="gcc make autoconf automake libtool pkg-config libcap-dev libseccomp-dev
        libmnl-dev libnftnl-dev libyajl-dev libssl-dev libgit2-dev scdoc"
# Tests: Criterion, the static busybox test rootfs and the static probe
# (libc6-dev), python3 for JSON edits in tests, the reference runtimes and
# podman with its helpers, clang for the fuzzers, uidmap/passwd for the
# rootless user, strace (a test reads clone3's flags), git and gcc (run inside
# sandboxes on the host's /), hyperfine, bubblewrap (what sandbox run is
# measured against) and GNU time for benchmarks, nftables
# (netwall.sh reads a container's ruleset from the host's side; the runtime
# itself never runs nft), curl, openssl and ca-certificates (the egress
# tests' clients, test CAs and the host trust store the sandbox's bundle
# starts from), nodejs (proves NODE_EXTRA_CA_CERTS takes the umwelt CA).
# Not here: squid and wrk, which only scripts/bench-gateway.sh uses (it names
# them when missing): Debian's squid package starts a proxy service on
# machines with an init system, which no test machine should carry.
test_deps="libcriterion-dev libc6-dev busybox-static python3 crun runc podman conmon catatonit
        netavark aardvark-dns iptables uidmap passwd util-linux bsdutils coreutils clang
        libclang-rt-14-dev hyperfine bubblewrap time iproute2 procps strace git nftables
        curl openssl ca-certificates nodejs"
# The pure cgroup v2 leg (tests/integration/cgroup2-vm.sh) boots Debian's own
# kernel with cgroup_no_v1=all under qemu (TCG: no KVM needed), so the v2
# code paths run whatever cgroups the host has (CI's are hybrid); its /tmp
# is an ext4 image (e2fsprogs' mkfs.ext4). The kernel package comes from apt at
# test time, cached in /var/cache/umwelt-vm.
test_deps="$test_deps qemu-system-x86 e2fsprogs"

install_missing() {
        local missing=()
        for p in "$@"; do
                dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
                        missing+=("$p")
        done
        [ ${#missing[@]} -eq 0 ] && return 0
        echo "setup.sh: installing ${missing[*]}"
        if [ "$(id -u)" -ne 0 ]; then
                echo "setup.sh: missing packages and not root: apt-get install ${missing[*]}" >&2
                exit 1
        fi
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

configure_in() {
        local dir=$1; shift
        mkdir -p "$dir"
        (cd "$dir" && "$here/configure" -q --prefix="$prefix" "$@")
}

# shellcheck disable=SC2086
install_missing $build_deps
[ "$mode" = check ] && install_missing $test_deps
# npm fetches the MCP clients and harnesses the tests drive (tests/npm/);
# Debian's nodejs comes without it, NodeSource's with it.
if [ "$mode" = check ] && ! command -v npm >/dev/null; then
        install_missing npm
fi

cd "$here"
[ -x configure ] || autoreconf -fi >/dev/null

case "$mode" in
install|demo)
        configure_in build --disable-tests
        make -C build -j"$(nproc)" >/dev/null
        make -C build install >/dev/null
        echo "setup.sh: installed umwelt-run in ${DESTDIR:-}$prefix/bin"
        ;;
check)
        configure_in build-check --enable-werror \
                CFLAGS="-g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
        make -C build-check -j"$(nproc)" >/dev/null
        # Leaks are checked; the sanitizers abort on the first finding.
        export ASAN_OPTIONS=abort_on_error=1:detect_leaks=1
        export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
        # qemu is installed above: the v2 leg may not skip for want of it.
        export UMW_VM_REQUIRED=1
        exec make -s --no-print-directory -C build-check check
        ;;
esac

if [ "$mode" = demo ]; then
        exec "$here/scripts/demo.sh" "${DESTDIR:-}$prefix/bin/umwelt-run"
fi
