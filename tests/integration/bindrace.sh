#!/bin/bash
# A bind source swapped between check and mount (issue 11, hole 2): an agent
# in a running sandbox exchanges protected workspace entries (.envrc, a
# file; .vscode, a directory) with symlinks to a secret outside, one
# renameat2(RENAME_EXCHANGE) after another, while the host starts the next
# sandboxes of the same project. The secret must never appear inside one;
# a start may fail closed (the entry was a symlink when checked, or was
# swapped after), never follow the link. As root and as the unprivileged user.
T_NAME=bindrace
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
floor ""

ROUNDS=${UMW_BINDRACE_ROUNDS:-60}

# The agent (argv: the secret file, the secret directory): makes the
# entries (absent when its sandbox started, so none is a mount point in it)
# and their symlink twins, then exchanges each pair until ./stop exists.
SWAP='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
open(".envrc", "w").write("plain\n")
os.mkdir(".vscode")
open(".vscode/s", "w").write("plain\n")
os.symlink(sys.argv[1], ".envrc.l")
os.symlink(sys.argv[2], ".vscode.l")
pairs = [(b".envrc", b".envrc.l"), (b".vscode", b".vscode.l")]
open("started", "w").write("1")
while not os.path.exists("stop"):
    for a, b in pairs:
        libc.renameat2(-100, a, -100, b, 2)'

# race WHO HOME: the project (owned by WHO) with the agent running in one
# sandbox, ROUNDS sandboxes started beside it, each printing what it sees at
# the protected entries and at the secret's own paths.
race() {
        local who=$1 home=$2 proj=$T_TMP/proj-$1
        mkdir -p "$proj" "$home/secretdir"
        echo "TOPSECRET-$who" >"$home/secret"
        echo "TOPSECRET-$who" >"$home/secretdir/s"
        chmod 600 "$home/secret" "$home/secretdir/s"
        local -a run=(env HOME="$home" XDG_STATE_HOME="$home/state" "$RT" --root "$T_ROOT")
        if [[ $who != root ]]; then
                chown -R "$U:$G" "$proj" "$home"
                run=(as_user env HOME="$home" XDG_STATE_HOME="$home/state" "$RT")
        fi
        ("${run[@]}" sandbox run -p "$proj" --workspace direct -- python3 -c "$SWAP" "$home/secret" "$home/secretdir" \
                >"$T_TMP/agent-$who.log" 2>&1 </dev/null) &
        local agent=$!
        wait_file "$proj/started" 100
        local leaks=0 started=0 refused=0 out round=0
        # ROUNDS starts, and more (up to four times as many) until both a
        # start and a refusal were seen: a start that wins the race is rare.
        while ((round < ROUNDS || ((started == 0 || refused == 0) && round < 4 * ROUNDS))); do
                round=$((round + 1))
                out=$("${run[@]}" sandbox run -p "$proj" --workspace direct -- /bin/sh -c \
                        "cat .envrc .vscode/s $home/secret $home/secretdir/s 2>/dev/null; true" \
                        2>&1 </dev/null) && started=$((started + 1)) || refused=$((refused + 1))
                [[ $out == *TOPSECRET* ]] && leaks=$((leaks + 1))
        done
        touch "$proj/stop"
        wait "$agent"
        t_diag "$who: $started started, $refused refused, $leaks with the secret"
        t_eq "$who: no sandbox started beside the swapping agent sees the secret ($ROUNDS starts or more)" \
                0 "$leaks"
        t_eq "$who: ... and the race was run (starts both made and refused, the agent swapping)" \
                yes "$([[ $started -gt 0 && $refused -gt 0 ]] && echo yes)" \
                "$(cat "$T_TMP/agent-$who.log")"
}

# An OCI bundle (as podman gives one): a bind source below the rootfs is
# the image's, and a symlink the image holds there must not take a host
# file with it (it resolves inside the rootfs, where that path is absent).
oci_secret=$T_TMP/oci-secret
echo TOPSECRET-oci >"$oci_secret"
b=$T_TMP/oci
make_bundle "$b"
ln -s "$oci_secret" "$b/rootfs/data"
cfg_set "$b" 'add_mount("/mnt/x", "bind", "'"$b"'/rootfs/data", ["bind", "ro"])
c["process"]["args"] = ["/bin/cat", "/mnt/x"]'
new_id
out=$(rt run --bundle "$b" "$T_LAST_ID" 2>&1 </dev/null)
t_nomatch "OCI: a bind source below the rootfs that is a symlink out of it brings no host file" \
        TOPSECRET "$out"
t_match "... the start fails naming the source" "rootfs/data" "$out"

race root "$T_TMP/home-root"
# The user's cgroups are not delegated here: its limits best-effort.
floor 'limits_best_effort = true'
race user "$T_TMP/home-user"

t_done
