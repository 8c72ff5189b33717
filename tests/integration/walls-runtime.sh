#!/bin/bash
# Two ways out through the runtime itself, tried from inside real containers
# and sandboxes, as root and as the unprivileged user:
# - the host's binary (CVE-2019-5736 again): a workspace script whose
#   interpreter is /proc/self/exe makes the runtime image that starts every
#   container process a process inside; a second process then chmods it
#   setuid, truncates it, opens it for writing, and reopens an O_PATH fd of it
#   for writing once it is gone. Each attempt must fail, and the binary keep
#   its mode, size and hash. The binary attacked is a copy this file owns
#   (root's, or the user's own install), never the build's.
# - kill(0): the workload kills its process group; the caller's must live.
T_NAME=walls-runtime
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user

export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
mkdir -p "$HOME"

# The runtimes under attack: root's copy, and the user's own (~/bin style).
mkdir -p -m 755 "$T_TMP/root-bin" "$T_TMP/user-bin"
cp "$RT" "$T_TMP/root-bin/umwelt-run"
cp "$RT" "$T_TMP/user-bin/umwelt-run"
chown -R "$U:$G" "$T_TMP/user-bin"
RT_ROOT=$T_TMP/root-bin/umwelt-run
RT_USER=$T_TMP/user-bin/umwelt-run
SUM=$(sha256sum <"$RT" | cut -d' ' -f1)
fingerprint() { stat -c '%a %s' "$1"; sha256sum <"$1" | cut -d' ' -f1; }
WANT="$(stat -c '755 %s' "$RT")
$SUM"

walls_cleanup() {
        local id
        for id in $(as_user "$RT_USER" list -q 2>/dev/null); do
                as_user "$RT_USER" delete -f "$id" >/dev/null 2>&1
        done
        for id in $("$RT_ROOT" --root "$T_ROOT" list -q 2>/dev/null); do
                "$RT_ROOT" --root "$T_ROOT" delete -f "$id" >/dev/null 2>&1
                rm -rf "/run/umwelt/bundles/$id"
        done
}
T_EXTRA_CLEANUP=walls_cleanup

# arm DIR: the attack's script and FIFO in DIR, the probe beside them.
arm() {
        cp "$PROBE" "$1/probe"
        printf '#!/proc/self/exe --log=%s/fifo\n' "$2" >"$1/atk.sh"
        chmod 755 "$1/atk.sh"
        rm -f "$1/fifo"
        mkfifo -m 666 "$1/fifo"
}

# judge WHAT BIN OUT RC: the attack refused at every step, BIN untouched.
judge() {
        local what=$1 bin=$2 out=$3 rc=$4
        t_eq "$what: every change to the runtime's binary through /proc/PID/exe is refused" 0 "$rc" "$out"
        t_match "$what: the script ran the runtime inside (the attack got its target)" "^target is" "$out"
        t_eq "$what: the binary keeps its mode, size and hash" "$WANT" "$(fingerprint "$bin")" "$out"
        # Put back whatever the old code let through, for the next case.
        chmod 755 "$bin"
}

# ------------------------------------------------------------------- OCI

b=$T_TMP/bundle
make_bundle "$b"
cfg_set "$b" 'c["root"]["readonly"] = False'
arm "$b/rootfs" ""
DEVINO=$(stat -c %d:%i "$RT_ROOT")

# An OCI container's processes see no path to the runtime's binary here:
# the kernel refuses to exec /proc/self/exe once its mount is outside the
# container's mount namespace (ENOENT), so the sandbox cases below, whose
# root is the host's, are the ones that reach it. The OCI paths re-exec
# the same way (selfexe.c) and podman.sh tries them through podman.
cfg_args "$b" /bin/sleep 60
new_id
id=$T_LAST_ID
"$RT_ROOT" --root "$T_ROOT" run -d --bundle "$b" "$id" >/dev/null 2>&1 </dev/null

# kill(0) inside: the caller (a shell of its own session here, so the old
# code's kill cannot reach this test) lives and sees the container's 137.
out=$(setsid -w bash -c '"$1" --root "$2" exec "$3" /bin/probe kill0; echo "caller lives, exec $?"' \
        _ "$RT_ROOT" "$T_ROOT" "$id" 2>&1 </dev/null)
t_eq "OCI exec: kill(0) inside reaches not the caller" "caller lives, exec 137" "$out"
t_eq "OCI exec: kill(0) inside left the container running" running "$(state_field "$id" status)"
"$RT_ROOT" --root "$T_ROOT" delete -f "$id" >/dev/null 2>&1
cfg_args "$b" /bin/probe kill0
new_id
out=$(setsid -w bash -c '"$1" --root "$2" run --bundle "$3" "$4"; echo "caller lives, run $?"' \
        _ "$RT_ROOT" "$T_ROOT" "$b" "$T_LAST_ID" 2>&1 </dev/null)
t_match "OCI run: kill(0) inside reaches neither the caller nor the supervising runtime" \
        '^caller lives, run [0-9]+$' "$out"
t_eq "OCI run: the runtime removed the container it supervised" "" \
        "$("$RT_ROOT" --root "$T_ROOT" state "$T_LAST_ID" 2>/dev/null)"

# Without a user namespace of its own the container's init execs its
# workload through the sealed trampoline (trampoline.h): a script whose
# interpreter is /proc/self/exe gets that, which runs nothing (the old code's
# kernel refused it: ENOENT), while the init waits for start as the runtime.
cfg_args "$b" /atk.sh
new_id
out=$("$RT_ROOT" --root "$T_ROOT" run --bundle "$b" "$T_LAST_ID" 2>&1 </dev/null)
t_eq "OCI run: a #!/proc/self/exe script gets the trampoline, which ends at once (127)" 127 $? "$out"
waiting_exe() {
        cfg_args "$b" /bin/sleep 60
        new_id
        "$RT_ROOT" --root "$T_ROOT" create --bundle "$b" "$T_LAST_ID" >/dev/null 2>&1 </dev/null
        readlink "/proc/$(state_field "$T_LAST_ID" pid)/exe"
        "$RT_ROOT" --root "$T_ROOT" delete -f "$T_LAST_ID" >/dev/null 2>&1
}
t_eq "OCI create: the trampoline suffices, the init waits as the runtime" "$RT_ROOT" "$(waiting_exe)"
# A filter that may refuse execveat keeps the re-exec from a read-only clone.
cfg_set "$b" 'c["linux"]["seccomp"] = {"defaultAction": "SCMP_ACT_ALLOW", "syscalls": [{"names": ["execveat"], "action": "SCMP_ACT_ERRNO"}]}'
t_eq "OCI create: a filter that may stop execveat: the init waits from a read-only clone" / "$(waiting_exe)"
cfg_set "$b" 'del c["linux"]["seccomp"]'
cfg_set "$b" 'drop_ns("pid")'
t_eq "OCI create: no pid namespace of its own: a read-only clone" / "$(waiting_exe)"
cfg_set "$b" 'set_ns("pid")'

# --------------------------------------------------------------- sandbox
# Direct mode: the scripts talk to the host through a FIFO in the
# workspace, which review mode's overlay would give an inode of its own.

# S WHO ARGS...: the runtime copy of WHO, with its state.
S() {
        local who=$1
        shift
        if [[ $who == root ]]; then
                "$RT_ROOT" --root "$T_ROOT" "$@"
        else
                as_user "$RT_USER" --cgroup-manager disabled "$@"
        fi
}

for who in root user; do
        proj=$T_TMP/proj-$who
        mkdir -p "$proj"
        arm "$proj" "$proj"
        [[ $who == user ]] && chown -R "$U:$G" "$proj"
        bin=$RT_ROOT
        [[ $who == user ]] && bin=$RT_USER
        devino=$(stat -c %d:%i "$bin")

        if [[ $who == user ]]; then
                # The user's sandbox maps the binary's owner, so its init
                # execs the workload through the sealed trampoline
                # (trampoline.h): the script's /proc/self/exe is that, which
                # runs nothing when it is not handed its report fd, and no
                # process inside is ever the runtime (the old code's runtime
                # opens the FIFO: the reader lets it go on).
                timeout 30 sh -c ': <"$1"' _ "$proj/fifo" &
                reader=$!
                out=$(as_user timeout -k 2 20 "$RT_USER" --cgroup-manager disabled \
                        sandbox run --workspace direct -p "$proj" -- "$proj/atk.sh" 2>&1 </dev/null)
                rc=$?
                kill "$reader" 2>/dev/null
                wait "$reader" 2>/dev/null
                t_eq "user: sandbox run: the script's interpreter is the trampoline, which ends at once (127)" \
                        127 "$rc" "$out"
                t_eq "user: sandbox run: and says nothing (no runtime ran)" "" "$out"
                t_eq "user: sandbox run: the binary keeps its mode, size and hash" "$WANT" "$(fingerprint "$bin")"
        else
                # One-shot: the workload is the script; the attacker a
                # process in all its namespaces with its ids (and every
                # capability there).
                S "$who" sandbox run --workspace direct -p "$proj" -- "$proj/atk.sh" >/dev/null 2>&1 </dev/null &
                victim=
                for _ in $(seq 100); do victim=$(pgrep -x atk.sh | head -1); [[ -n $victim ]] && break; sleep 0.05; done
                out=$(nsenter -t "$victim" -a -r -w -S 0 -G 0 -- "$proj/probe" attack-exe "$proj/fifo" "$devino" 2>&1 </dev/null)
                judge "$who: sandbox run" "$bin" "$out" $?
                # The script blocks on its FIFO until someone reads it.
                timeout 5 sh -c ': <"$1"' _ "$proj/fifo"
                wait
        fi

        log=$T_TMP/state/umwelt
        [[ $who == user ]] && log=$XDG/.local/state/umwelt
        starts() { cat "$log"/proj-"$who"-*/audit.jsonl 2>/dev/null | grep -c '"event":"start"'; }
        before=$(starts)
        out=$(S "$who" sandbox up --workspace direct -p "$proj" 2>&1 </dev/null) || t_fail "$who: sandbox up" "$out"
        # The user's up re-execs the runtime (a pause init cannot take the
        # trampoline): still one start more in the audit log.
        t_eq "$who: sandbox up: one start line more in the audit log" $((before + 1)) "$(starts)"
        S "$who" sandbox exec -p "$proj" -- "$proj/atk.sh" >/dev/null 2>&1 </dev/null &
        out=$(S "$who" sandbox exec -p "$proj" -- "$proj/probe" attack-exe "$proj/fifo" "$devino" 2>&1 </dev/null)
        judge "$who: sandbox exec" "$bin" "$out" $?
        timeout 5 sh -c ': <"$1"' _ "$proj/fifo"
        wait

        # S in a shell of its own session, so the old code's kill(0) cannot
        # reach this test.
        out=$(setsid -w bash -c "$(declare -f S as_user); RT_ROOT=$RT_ROOT RT_USER=$RT_USER T_ROOT=$T_ROOT USER_NAME=$USER_NAME XDG=$XDG
S $who sandbox exec -p '$proj' -- '$proj/probe' kill0; echo \"caller lives, exec \$?\"" 2>&1 </dev/null)
        t_eq "$who: sandbox exec: kill(0) inside reaches not the caller" "caller lives, exec 137" "$out"
        t_match "$who: sandbox exec: the sandbox still runs after kill(0)" '"status": *"running"' \
                "$(S "$who" sandbox status -p "$proj" --json 2>&1 </dev/null)"
        out=$(setsid -w bash -c "$(declare -f S as_user); RT_ROOT=$RT_ROOT RT_USER=$RT_USER T_ROOT=$T_ROOT USER_NAME=$USER_NAME XDG=$XDG
S $who sandbox run --workspace direct -p '$proj' -- '$proj/probe' kill0; echo \"caller lives, run \$?\"" 2>&1 </dev/null)
        t_match "$who: sandbox run: kill(0) inside reaches neither the caller nor the runtime" \
                'caller lives, run [0-9]+$' "$out"
        S "$who" sandbox down -p "$proj" >/dev/null 2>&1 </dev/null
done

t_done
