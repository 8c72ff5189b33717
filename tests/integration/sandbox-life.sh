#!/bin/bash
# The long-lived sandbox: sandbox up, exec, down, status, list, gc and their
# --json, as root and as the unprivileged user the set-up makes (rootless: a
# user namespace, no cgroup manager). exec is proved from inside to get the
# walls run gets; what down and gc leave is looked for on the host (process,
# pid namespace, mount, cgroup, state directory, bundle).
T_NAME=sandbox-life
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user

export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
# The runtime's binary, which nothing in a sandbox may reach.
RT_DEVINO=$(stat -L -c %d:%i "${UMW_RUNTIME_BIN:-$RT}")
mkdir -p "$HOME"

# Whatever a failed test left running, as root (T_ROOT) and as the user.
life_cleanup() {
        local id
        for id in $(as_user "$RT" list -q 2>/dev/null); do
                as_user "$RT" delete -f "$id" >/dev/null 2>&1
        done
        for id in $("$RT" --root "$T_ROOT" list -q 2>/dev/null); do
                rm -rf "/run/umwelt/bundles/$id"
        done
}
T_EXTRA_CLEANUP=life_cleanup

# S ARGS...: umwelt-run as WHO ("root": with this file's state root;
# "user": the unprivileged user with its own, without a cgroup manager).
WHO=root
S() {
        if [[ $WHO == root ]]; then
                "$RT" --root "$T_ROOT" "$@"
        else
                as_user "$RT" --cgroup-manager disabled "$@"
        fi
}
# nr NAME: the x86-64 system call number, from the kernel's header.
nr() { awk -v n="__NR_$1" '$1 == "#define" && $2 == n { print $3 }' /usr/include/x86_64-linux-gnu/asm/unistd_64.h; }
state_dir() { if [[ $WHO == root ]]; then echo "$T_ROOT/$1"; else echo "$XDG/umwelt-run/$1"; fi; }
bundle_dir() { if [[ $WHO == root ]]; then echo "/run/umwelt/bundles/$1"; else echo "$XDG/umwelt/bundles/$1"; fi; }
audit_log() {
        if [[ $WHO == root ]]; then cat "$XDG_STATE_HOME"/umwelt/"$1"-*/audit.jsonl; else cat "$XDG"/.local/state/umwelt/"$1"-*/audit.jsonl; fi 2>/dev/null
}
json_ok() { "$PY" -c 'import json,sys; json.load(sys.stdin)' 2>&1 <<<"$1" && echo valid; }
# field JSON EXPR: a field of a JSON document (lib.sh's json_get).
field() { json_get "$1" "$2"; }

# The walls, one a line: uid, interfaces, capability sets with no_new_privs
# and seccomp, workspace writable, / read-only, cwd.
read -r -d '' REPORT <<'EOF'
id -u
tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " "; echo
grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t" " " | tr "\n" " "; echo
touch "$0/written" && echo ws-rw; touch /usr/umwt-life 2>/dev/null || echo root-ro
pwd
EOF

# What is left of a sandbox, on the host: its init, any process in its pid
# namespace, its state directory, bundle and cgroup.
NS=
CG=
remember() {
        local pid=$1
        NS=$(stat -L -c %i "/proc/$pid/ns/pid")
        if cgroup_v2_only; then
                CG=$(sed -n 's/^0::\(.*\)/\1/p' "/proc/$pid/cgroup")
                [[ $CG == / || $CG == "" ]] && CG= || CG=/sys/fs/cgroup$CG
        else
                CG=$(sed -n 's/^[0-9]*:pids:\(.*\)/\1/p' "/proc/$pid/cgroup")
                [[ $CG == / || $CG == "" ]] && CG= || CG=/sys/fs/cgroup/pids$CG
        fi
}
leftovers() {
        local id=$1 pid=$2 p out=
        proc_alive "$pid" && out+="init $pid alive; "
        for p in /proc/[0-9]*; do
                [[ $(stat -L -c %i "$p/ns/pid" 2>/dev/null) == "$NS" ]] && proc_alive "${p#/proc/}" &&
                        out+="process ${p#/proc/} in its pid namespace; "
        done
        [[ -e $(state_dir "$id") ]] && out+="state dir; "
        [[ -e $(bundle_dir "$id") ]] && out+="bundle; "
        [[ $WHO == root && -n $CG && -e $CG ]] && out+="cgroup $CG; "
        echo "$out"
}

life() {
        WHO=$1
        local w=$1 proj=$T_TMP/$1-proj uid=0 id pid out
        mkdir -p "$proj"
        if [[ $w == user ]]; then
                chown "$U:$G" "$proj"
                uid=$U
        fi

        capture_split S sandbox run -p "$proj" -- /bin/sh -c "$REPORT" "$proj"
        local run_walls=$T_OUT
        capture_split S sandbox up -p "$proj"
        t_eq "$w: up starts the sandbox" 0 "$T_RC" "$T_ERR"
        t_match "$w: up prints its status" "status: +running" "$T_OUT"
        out=$(S sandbox status -p "$proj" --json)
        id=$(field "$out" "j['id']")
        pid=$(field "$out" "j['pid']")
        t_match "$w: the sandbox's id is umwelt-<project>-<hash>" "^umwelt-$w-proj-[0-9a-f]{8}$" "$id" "$out"
        t_eq "$w: its init runs" yes "$(proc_alive "$pid" && echo yes)"
        remember "$pid"

        capture_split S sandbox exec -p "$proj" -- /bin/sh -c "$REPORT" "$proj"
        local exec_walls=$T_OUT
        t_eq "$w: exec runs" 0 "$T_RC" "$T_ERR"
        line() { sed -n "$1p" <<<"$exec_walls"; }
        t_eq "$w: exec runs as the user" "$uid" "$(line 1)"
        t_eq "$w: exec sees only lo" "lo " "$(line 2)"
        t_match "$w: exec holds no capability, no_new_privs, seccomp filter" \
                "CapInh: 0+ CapPrm: 0+ CapEff: 0+ CapBnd: 0+ CapAmb: 0+ NoNewPrivs: 1 Seccomp: 2" "$(line 3)"
        t_eq "$w: exec: workspace writable, / read-only" "ws-rw root-ro" "$(line 4) $(line 5)"
        t_eq "$w: exec's working directory is the workspace" "$proj" "$(line 6)"
        t_eq "$w: exec sees exactly the walls run sees" "$run_walls" "$exec_walls"
        capture_split S sandbox run -p "$proj" -- /bin/sh -c 'echo STARTED'
        t_eq "$w: a review-mode run beside the up sandbox is refused (one overlay on a layer), exit 6" \
                "6 " "$T_RC $T_OUT" "$T_ERR"
        t_match "... naming sandbox exec" ".*is up on .*sandbox exec.*" "$T_ERR"

        # A user namespace of its own, root's too (its 0 mapped to the
        # unprivileged id of root's sandboxes); exec enters it as it is, and
        # the runtime's image it is until it execs is reached from inside
        # neither through /proc/PID/exe nor by ptrace.
        local host=$uid
        [[ $w == root ]] && host=$(sandbox_root_id)
        t_eq "$w: the sandbox's user namespace maps $uid to $host" "$uid $host 1" \
                "$(S sandbox exec -p "$proj" -- cat /proc/self/uid_map </dev/null 2>&1 | tr -s ' ' | sed 's/^ //')"
        cp "$PROBE" "$proj/probe"
        S sandbox exec -p "$proj" -- "$proj/probe" watch-runtime "$RT_DEVINO" 3 >"$T_TMP/watch-$w.out" 2>&1 </dev/null &
        local watcher=$!
        sleep 0.5
        for _ in $(seq 20); do S sandbox exec -p "$proj" -- true </dev/null >/dev/null 2>&1; done
        wait "$watcher"
        t_match "$w: exec caught entering from inside: its exe and ptrace refused, never reached" \
                'denied [1-9][0-9]* breached 0$' "$(grep '^runtime' "$T_TMP/watch-$w.out")" "$(cat "$T_TMP/watch-$w.out")"
        rm -f "$proj/probe"

        # A relative command resolves in the working directory, as execve
        # sees it, not at the root the exec joined.
        mkdir -p "$proj/sub"
        printf '#!/bin/sh\necho relative-ok\n' >"$proj/sub/tool.sh"
        chmod 755 "$proj/sub/tool.sh"
        [[ $w == user ]] && chown -R "$U:$G" "$proj/sub"
        t_eq "$w: exec ./relative runs from the sandbox's working directory" relative-ok \
                "$(S sandbox exec -p "$proj" -- ./sub/tool.sh </dev/null 2>&1)"
        t_eq "$w: exec --cwd DIR ./relative runs from DIR" relative-ok \
                "$(S sandbox exec -p "$proj" --cwd "$proj/sub" -- ./tool.sh </dev/null 2>&1)"
        rm -rf "$proj/sub"
        # Device nodes: the profile says no (EPERM) before the kernel's
        # capability check (that would be EFAULT for the NULL path); FIFOs
        # reach the kernel.
        cp "$PROBE" "$proj/probe"
        t_eq "$w: mknod and mknodat of a character or block device: EPERM from the profile" \
                "1 1 1 1" "$(for c in "$(nr mknod) 0 0x2000 0" "$(nr mknod) 0 0x6000 0" \
                        "$(nr mknodat) -100 0 0x2000 0" "$(nr mknodat) -100 0 0x6180 0"; do
                        S sandbox exec -p "$proj" -- "$proj/probe" nr $c </dev/null 2>&1; done | tr '\n' ' ' | sed 's/ $//')"
        t_eq "$w: mknodat of a FIFO reaches the kernel (EFAULT)" 14 \
                "$(S sandbox exec -p "$proj" -- "$proj/probe" nr "$(nr mknodat)" -100 0 0x1000 0 </dev/null 2>&1)"
        rm -f "$proj/probe"

        S sandbox exec -p "$proj" -- /bin/sh -c 'echo kept >/tmp/umwt-mark' </dev/null
        t_eq "$w: a file one exec leaves in the sandbox's /tmp, the next sees" kept \
                "$(S sandbox exec -p "$proj" -- cat /tmp/umwt-mark </dev/null 2>&1)"
        S sandbox exec -p "$proj" -- /bin/sh -c 'exit 7' </dev/null
        t_eq "$w: exec returns the command's exit status" 7 "$?"
        t_eq "$w: stdin passes through exec" "from stdin" \
                "$(S sandbox exec -p "$proj" -- cat <<<"from stdin" 2>&1)"
        out=$(S sandbox exec -p "$proj" --json -- /bin/sh -c 'echo own-output; exit 3' </dev/null)
        t_eq "$w: exec --json: the command's output, then one JSON line with its status" \
                "own-output|$id 3" "$(head -1 <<<"$out")|$(field "$(tail -1 <<<"$out")" "j['id'] + ' ' + str(j['exit_status'])")" "$out"

        capture_split S sandbox up -p "$proj"
        t_eq "$w: up on a running sandbox: exit 5" 5 "$T_RC" "$T_ERR"
        t_match "$w: ... saying it runs already" "running already.*sandbox exec -p" "$T_ERR"
        t_eq "$w: ... in one line" 1 "$(wc -l <<<"$T_ERR")"

        out=$(S sandbox status -p "$proj")
        t_match "$w: status: id, workspace, status, pid" \
                "id: +$id.*workspace: +$proj.*status: +running.*pid: +$pid.*preset: +dev" "$(tr '\n' ' ' <<<"$out")" "$out"
        out=$(S sandbox status -p "$proj" --json)
        t_eq "$w: status --json is one JSON document" valid "$(json_ok "$out")" "$out"
        t_eq "$w: ... with the status, kind, workspace and grants" "running up $proj []" \
                "$(field "$out" "' '.join([j['status'], j['kind'], j['workspace'], json.dumps(j['grants'])])")" "$out"
        t_match "$w: list shows it" "$id +running +$pid .* $proj" "$(S sandbox list)"
        out=$(S sandbox list --json)
        t_eq "$w: list --json is one JSON array with it" "$proj" \
                "$(field "$out" "[s['workspace'] for s in j if s['id'] == '$id'][0]")" "$out"

        capture_split S sandbox down -p "$proj"
        t_eq "$w: down" 0 "$T_RC" "$T_ERR"
        t_eq "$w: down leaves no process, state directory, bundle or cgroup" "" "$(leftovers "$id" "$pid")"
        # Other tests may mount on this host meanwhile: only the sandbox's count.
        t_eq "$w: ... and no mount of its workspace, id or bundle" "" \
                "$(grep -e "$proj" -e "$id" /proc/self/mountinfo)"
        t_eq "$w: status after down: absent" absent "$(field "$(S sandbox status -p "$proj" --json)" "j['status']")"
        capture_split S sandbox exec -p "$proj" -- true
        t_eq "$w: exec after down: exit 6" 6 "$T_RC" "$T_ERR"
        t_match "$w: ... saying how to start it" "no sandbox is running for $proj: start it with umwelt-run sandbox up -p $proj" "$T_ERR"
        capture_split S sandbox down -p "$proj"
        t_eq "$w: down when none runs: exit 6" 6 "$T_RC" "$T_ERR"

        # An init killed from outside: gc removes what it left.
        S sandbox up -p "$proj" >/dev/null 2>&1
        pid=$(field "$(S sandbox status -p "$proj" --json)" "j['pid']")
        remember "$pid"
        kill -KILL "$pid"
        for _ in $(seq 50); do proc_alive "$pid" || break; sleep 0.1; done
        t_match "$w: a sandbox whose init was killed is stopped" "status: +stopped" "$(S sandbox status -p "$proj")"
        capture_split S sandbox gc
        t_eq "$w: gc" 0 "$T_RC" "$T_ERR"
        t_match "$w: gc says what it removed" "removed $id \\($proj\\)" "$T_OUT"
        t_eq "$w: nothing is left of it" "" "$(leftovers "$id" "$pid")"
        t_eq "$w: gc then finds nothing" "nothing to remove" "$(S sandbox gc 2>&1)"

        # A one-shot run has no bundle directory: its state directory is its
        # bundle. Killed with its runtime, gc removes what it left.
        S sandbox run -p "$proj" -- sleep 100 >/dev/null 2>&1 </dev/null &
        local runner=$! rid=
        for _ in $(seq 50); do
                rid=$(S list -q | grep -e '-run[0-9]*$') && [[ -n $(S state "$rid" 2>/dev/null) ]] && break
                sleep 0.1
        done
        out=$(S state "$rid")
        t_eq "$w: a one-shot run's bundle is its state directory" "$(state_dir "$rid")" \
                "$(field "$out" "j['bundle']")" "$out"
        t_eq "$w: ... holding its config" yes "$([[ -s $(state_dir "$rid")/config.json ]] && echo yes)"
        t_eq "$w: ... and no bundle directory is made" no "$([[ -e $(bundle_dir "$rid") ]] && echo yes || echo no)"
        pid=$(field "$out" "j['pid']")
        remember "$pid"
        kill -KILL "${rid##*-run}" "$pid"
        for _ in $(seq 50); do proc_alive "$pid" || break; sleep 0.1; done
        capture_split S sandbox gc
        t_match "$w: gc removes a one-shot run killed with its runtime" "removed $rid \\($proj\\)" \
                "$T_OUT" "$T_ERR"
        t_eq "$w: nothing is left of the one-shot run" "" "$(leftovers "$rid" "$pid")"
        wait "$runner" 2>/dev/null

        # Idle: a sandbox with an exec just now stays; with none for 1s it goes.
        S sandbox up -p "$proj" >/dev/null 2>&1
        pid=$(field "$(S sandbox status -p "$proj" --json)" "j['pid']")
        remember "$pid"
        S sandbox exec -p "$proj" -- true </dev/null
        capture_split S sandbox gc --idle 1h
        t_eq "$w: gc --idle 1h leaves a sandbox used just now" "0 nothing to remove running" \
                "$T_RC $T_OUT $(field "$(S sandbox status -p "$proj" --json)" "j['status']")" "$T_ERR"
        sleep 2
        out=$(S sandbox gc --idle 1s --json)
        t_eq "$w: gc --idle 1s --json downs it" "$id idle" \
                "$(field "$out" "' '.join([r['id'] + ' ' + r['reason'] for r in j['removed']])")" "$out"
        t_eq "$w: nothing is left of the idle one" "" "$(leftovers "$id" "$pid")"

        # An up killed between create and start leaves an init waiting for a
        # start that never comes; made here with the runtime's own create on
        # the bundle a sandbox had, aged past gc's minute (a direct-mode
        # one: its binds' sources can be named by path again below).
        S sandbox up --workspace direct -p "$proj" >/dev/null 2>&1
        local b
        b=$(bundle_dir "$id")
        cp "$b/config.json" "$T_TMP/abandoned.json"
        S sandbox down -p "$proj" >/dev/null 2>&1
        mkdir -p "$b" && cp "$T_TMP/abandoned.json" "$b/config.json"
        # Its bind sources named the fds of the up that composed it
        # (/proc/self/fd/N); here, another process, they are the paths.
        cfg_set "$b" 'for m in c["mounts"]:
    if m["source"].startswith("/proc/self/fd/"): m["source"] = m["destination"]'
        [[ $WHO == root ]] || chown -R "$U:$G" "$b"
        S create --bundle "$b" "$id" >/dev/null 2>&1 </dev/null
        pid=$(field "$(S sandbox status -p "$proj" --json)" "j['pid']")
        remember "$pid"
        t_eq "$w: a sandbox created and never started is there" created \
                "$(field "$(S sandbox status -p "$proj" --json)" "j['status']")"
        t_eq "$w: gc leaves it while its up may still start it" "nothing to remove" "$(S sandbox gc 2>&1)"
        touch -d '2 minutes ago' "$b/config.json"
        capture_split S sandbox gc
        t_match "$w: a minute on, gc removes it" "removed $id \\($proj\\): created, never started" "$T_OUT" "$T_ERR"
        t_eq "$w: nothing is left of the abandoned one" "" "$(leftovers "$id" "$pid")"

        out=$(audit_log "$w-proj")
        local ev
        for ev in start exec stop; do
                t_match "$w: the audit log has $ev lines" "\"event\":\"$ev\",\"id\":\"$id\"" "$out"
        done
        t_match "$w: ... the exec line names the command" '"event":"exec".*"command":"/bin/sh -c exit 7"' "$out"
        t_match "$w: ... and the stops say why" '"reason":"down".*"reason":"dead".*"reason":"idle"' "$(tr '\n' ' ' <<<"$out")"
}

life root
life user

# Root through sudo: the sandbox runs as the caller, its 0 mapped too, to
# the unprivileged id of root's sandboxes (the runtime builds it as 0); a
# file of any other user, root's included, shows as nobody inside.
WHO=root
sproj=$T_TMP/sudo-proj
mkdir -p "$sproj"
chown "$U:$G" "$sproj"
touch "$sproj/theirs"
chown 12345:12345 "$sproj/theirs"
SUDO_S=(env SUDO_UID="$U" SUDO_GID="$G" "$RT" --root "$T_ROOT" sandbox)
capture_split "${SUDO_S[@]}" up -p "$sproj" --workspace direct
t_eq "sudo: up" 0 "$T_RC" "$T_ERR"
out=$("${SUDO_S[@]}" exec -p "$sproj" -- /bin/sh -c 'id -u; id -g; awk "{ printf \"%s %s %s,\", \$1, \$2, \$3 }" /proc/self/uid_map; echo; stat -c %u:%g "$0/theirs" /; touch "$0/mine"' "$sproj" </dev/null 2>&1)
t_eq "sudo: exec runs as the caller, 0 (not the host's) and the caller mapped, another user's file and / nobody's" \
        "$U $G 0 $(sandbox_root_id) 1,$U $U 1, 65534:65534 65534:65534" "$(tr '\n' ' ' <<<"$out" | sed 's/ $//')"
t_eq "sudo: what exec writes in the workspace is the caller's" "$U:$G" "$(stat -c %u:%g "$sproj/mine" 2>&1)"
"${SUDO_S[@]}" down -p "$sproj" >/dev/null 2>&1

# As root only: a terminal, signals, an image rootfs, the command line.
WHO=root
proj=$T_TMP/root-proj
S sandbox up -p "$proj" >/dev/null 2>&1
out=$(script -qec "$RT --root $T_ROOT sandbox exec -p $proj -- /bin/sh -c 'tty; test -t 0 && echo in-tty'" /dev/null </dev/null)
t_match "exec from a terminal gets one" "/dev/pts/[0-9]+.*in-tty" "$(tr -d '\r' <<<"$out" | tr '\n' ' ')" "$out"
t_eq "exec -t gets a terminal without one" in-tty \
        "$(S sandbox exec -t -p "$proj" -- /bin/sh -c 'test -t 1 && echo in-tty' </dev/null 2>&1 | tr -d '\r')"

rm -f "$proj/ready"
"$RT" --root "$T_ROOT" sandbox exec -p "$proj" -- /bin/sh -c \
        'trap "echo got-term; exit 3" TERM; touch "$0/ready"; while :; do sleep 0.1; done' "$proj" \
        >"$T_TMP/sig.out" 2>&1 </dev/null &
bg=$!
for _ in $(seq 50); do [[ -e $proj/ready ]] && break; sleep 0.1; done
kill -TERM "$bg"
wait "$bg"
t_eq "a signal to exec reaches the command" "3 got-term" "$? $(cat "$T_TMP/sig.out")"
S sandbox down -p "$proj" >/dev/null 2>&1

# An image without sleep, a shell of the host or the runtime's libraries.
img=$T_TMP/image
cp -a "$T_TMP/rootfs-template" "$img"
mkdir -p "$img/home" "$img/usr"
rm -f "$img/bin/sleep"
capture_split S sandbox up -p "$proj" --rootfs "$img"
t_eq "up with an image rootfs (no sleep) as root" 0 "$T_RC" "$T_ERR"
t_eq "... exec runs in the image, the init still undumpable" "busybox-only unreadable" \
        "$(S sandbox exec -p "$proj" -- /bin/sh -c 'test -e /usr/bin/python3 || echo busybox-only; cat /proc/1/environ >/dev/null 2>&1 || echo unreadable' </dev/null 2>&1 | tr '\n' ' ' | sed 's/ $//')"
S sandbox down -p "$proj" >/dev/null 2>&1
WHO=user
uproj=$T_TMP/user-proj
capture_split S sandbox up -p "$uproj" --rootfs "$img"
t_eq "as the user, an image the pause init cannot run in is refused (exit 1)" 1 "$T_RC" "$T_ERR"
t_match "... saying why" "umwelt-run and its libraries" "$T_ERR"
t_eq "... leaving nothing" "" "$(as_user "$RT" list -q)$(ls -A "$XDG/umwelt/bundles")"
WHO=root

S sandbox up -p "$proj" >/dev/null 2>&1
out=$(S sandbox exec -p "$proj" -- /bin/sh -c 'cat /proc/1/environ >/dev/null 2>&1 || echo environ-denied; readlink /proc/1/exe >/dev/null 2>&1 || echo exe-denied; strace -p 1 -e trace=none true 2>&1 | grep -q "Operation not permitted" && echo ptrace-denied' </dev/null 2>&1)
t_eq "nothing in the sandbox reads, follows or ptraces its init" "environ-denied exe-denied ptrace-denied" \
        "$(tr '\n' ' ' <<<"$out" | sed 's/ $//')"
S sandbox down -p "$proj" >/dev/null 2>&1

# up over a dead sandbox's leftovers: they go, a new one starts.
S sandbox up -p "$proj" >/dev/null 2>&1
pid=$(field "$(S sandbox status -p "$proj" --json)" "j['pid']")
kill -KILL "$pid"
for _ in $(seq 50); do proc_alive "$pid" || break; sleep 0.1; done
capture_split S sandbox up -p "$proj"
t_eq "up where a dead sandbox left its state starts a new one" "0 running" \
        "$T_RC $(field "$(S sandbox status -p "$proj" --json)" "j['status']")" "$T_ERR"
S sandbox down -p "$proj" >/dev/null 2>&1

out=$(S sandbox run -p "$proj" --json -- /bin/sh -c 'echo own-output; exit 4' 2>/dev/null </dev/null)
t_eq "run --json: the command's output, then one JSON line with its status" "own-output 4" \
        "$(head -1 <<<"$out") $(field "$(tail -1 <<<"$out")" "j['exit_status']")" "$out"

usage() {
        local name=$1
        shift
        capture_split S sandbox "$@"
        t_eq "$name: exit 2" 2 "$T_RC" "$T_ERR"
        t_eq "$name: one line" 1 "$(wc -l <<<"$T_ERR")" "$T_ERR"
}
usage "gc --idle 5x" gc --idle 5x
usage "gc --idle without a unit" gc --idle 10
usage "exec without a command" exec -p "$proj"
usage "up with an exec option" up -p "$proj" --cwd /
usage "status with an argument" status extra
usage "an unknown sub-verb" bogus
t_eq "nothing was started by the bad command lines" "" "$(rt list -q)"
t_done
