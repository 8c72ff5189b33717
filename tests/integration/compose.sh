#!/bin/bash
# compose: the closed default (issue 4) as policy/compose writes it, run by
# the runtime on the host's / and proved from inside with the host's own
# tools: only lo, no home directory of the host, no write outside the
# workspace and the tmpfs, the workspace's protected files read-only (and no
# .git planted where none was), no capability, no_new_privs, seccomp, no
# credential from the caller's environment. Once as root (root with no
# capability) and once as an unprivileged uid (process.user).
. "$(dirname "$0")/lib.sh"
t_require_root
COMPOSE=$UMW_BUILDDIR/tests/integration/helpers/compose-config
[[ -x $COMPOSE ]] || t_bail "$COMPOSE missing (make check builds it)"
t_setup
WRAP=()
RTARGS=(--root "$T_ROOT")

# What the sandbox reports, one NAME=VALUE a line. $1: the workspace. No
# /dev/null: a rootless sandbox has the host's, whose mode is the host's.
read -r -d '' REPORT <<'EOF'
ws=$1
w() { if (: >"$1") 2>&-; then echo "$2=writable"; else echo "$2=readonly"; fi; }
echo "uid=$(id -u) gid=$(id -g)"
echo "ifaces=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ,)"
echo "home=$(ls -A /home | tr '\n' ,)"
echo "root=$(ls -A /root 2>&- | tr '\n' ,)"
echo "runuser=$(ls -A /run/user 2>&1 | tr '\n' ,)"
echo "shadow=$(wc -c </etc/shadow)"
echo "hostname=$(cat /proc/sys/kernel/hostname)"
grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status | tr -d '\t '
w /mnt/umwt-probe mnt; w /etc/umwt-probe etc; w /usr/umwt-probe usr; w /var/umwt-probe var; w /umwt-probe slash
w "$(dirname "$ws")/umwt-probe" ws_parent
w /tmp/umwt-probe tmp; w /var/tmp/umwt-probe vartmp; w "$HOME/umwt-probe" home_dir
w "$ws/created" ws
w "$ws/.bashrc" bashrc; w "$ws/.git/config" git_config; w "$ws/.git/hooks/post-checkout" git_hooks
w "$ws/.vscode/tasks.json" vscode
if mkdir "$ws/.git/hooks/d" 2>&-; then echo mkdir_hooks=ok; else echo mkdir_hooks=refused; fi
echo "cwd=$(pwd)"
echo "env_home=$HOME"
env | grep -E '^(GITHUB_TOKEN|SSH_AUTH_SOCK|AWS_|MY_API_KEY|PROJECT_VAR)' | sed 's/^/env:/'
EOF

# sandbox NAME WORKSPACE COMPOSE-ARGS...: composes and runs the report,
# through the command in WRAP (an array) when set, the runtime with RTARGS.
sandbox() {
        local name=$1 ws=$2 b=$T_TMP/bundle-$1
        shift 2
        mkdir -p "$b"
        GITHUB_TOKEN=x SSH_AUTH_SOCK=/run/agent AWS_SECRET_ACCESS_KEY=y MY_API_KEY=z PROJECT_VAR=p \
                "$COMPOSE" "$@" -e PROJECT_VAR -e GITHUB_TOKEN "$ws" /bin/sh -c "$REPORT" sh "$ws" \
                >"$b/config.json" 2>"$b/compose.err" || t_bail "compose-config failed: $(cat "$b/compose.err")"
        new_id
        "${WRAP[@]}" "$RT" "${RTARGS[@]}" run --bundle "$b" "$T_LAST_ID" >"$b/out" 2>"$b/err" </dev/null
        T_RC=$?
        OUT=$(cat "$b/out")
}

# field NAME: the reported value.
field() { sed -n "s/^$1=//p" <<<"$OUT" | head -n 1; }

# make_ws DIR UID GID: a workspace with a repository and a .bashrc, owned by UID.
make_ws() {
        mkdir -p "$1/.git/hooks" "$1/.vscode"
        printf '[core]\n' >"$1/.git/config"
        printf 'ref: refs/heads/main\n' >"$1/.git/HEAD"
        printf 'echo hi\n' >"$1/.bashrc"
        printf '{}\n' >"$1/.vscode/tasks.json"
        chown -R "$2:$3" "$1"
}

check_walls() {
        local who=$1 ws=$2 uid=$3 gid=$4 home=$5
        t_eq "$who: the command ran" 0 "$T_RC" "$OUT" "$(cat "$T_TMP/bundle-$who/err")"
        t_eq "$who: runs as $uid:$gid" "$uid gid=$gid" "$(sed -n 's/^uid=//p' <<<"$OUT")"
        t_eq "$who: only lo" "lo," "$(field ifaces)"
        local in_home=
        [[ $home == /home/* ]] && in_home="$(basename "$home"),"
        t_eq "$who: /home holds only the fresh home" "$in_home" "$(field home)"
        t_eq "$who: /root is empty" "" "$(field root)"
        t_nomatch "$who: /run/user is gone" '[0-9]' "$(field runuser)"
        t_eq "$who: /etc/shadow is masked" 0 "$(field shadow)"
        t_eq "$who: hostname" umwelt-test "$(field hostname)"
        local k
        for k in CapInh CapPrm CapEff CapBnd CapAmb; do
                t_eq "$who: $k is 0" 0000000000000000 "$(sed -n "s/^$k://p" <<<"$OUT")"
        done
        t_eq "$who: NoNewPrivs" 1 "$(sed -n 's/^NoNewPrivs://p' <<<"$OUT")"
        t_eq "$who: seccomp filter" 2 "$(sed -n 's/^Seccomp://p' <<<"$OUT")"
        for k in mnt etc usr var slash bashrc git_config git_hooks vscode; do
                t_eq "$who: $k is read-only" readonly "$(field "$k")"
        done
        for k in tmp vartmp home_dir ws; do
                t_eq "$who: $k is writable" writable "$(field "$k")"
        done
        t_eq "$who: no directory made in .git/hooks" refused "$(field mkdir_hooks)"
        t_eq "$who: cwd is the workspace" "$ws" "$(field cwd)"
        t_eq "$who: HOME is the fresh home" "$home" "$(field env_home)"
        t_eq "$who: of the caller's environment only the project's variable" "env:PROJECT_VAR=p" \
                "$(grep '^env:' <<<"$OUT")"
        t_eq "$who: the file written in the workspace belongs to $uid on the host" "$uid" \
                "$(stat -c %u "$ws/created" 2>&1)"
        t_eq "$who: nothing escaped to the host" "" \
                "$(ls -d /umwt-probe /etc/umwt-probe "$(dirname "$ws")/umwt-probe" 2>/dev/null)"
}

# As root, with a writable mount of the host's below / (a tmpfs on /mnt in
# a mount namespace of the test's own): the read-only root covers it too.
ws=$T_TMP/ws-root
make_ws "$ws" 0 0
WRAP=(unshare -m --propagation private sh -c 'mount -t tmpfs umwt-rw /mnt && exec "$@"' sh)
sandbox root "$ws" -u 0 -g 0 -H /root
WRAP=()
check_walls root "$ws" 0 0 /root

ws=$T_TMP/ws-user
make_ws "$ws" 65534 65534
sandbox user "$ws" -u 65534 -g 65534 -H /home/agent
check_walls user "$ws" 65534 65534 /home/agent

# Rootless: an unprivileged user runs the runtime, a user namespace maps
# only that user, to itself. No cgroup is delegated to it here, so without
# the cgroup manager (limits are the cgroup code's business).
t_test_user
xdg=$XDG
ws=$T_TMP/ws-rootless
make_ws "$ws" "$U" "$G"
mkdir -p "$T_TMP/bundle-rootless"
chown "$U:$G" "$T_TMP/bundle-rootless"
WRAP=(runuser -u "$USER_NAME" -- env -i PATH=/usr/bin:/bin XDG_RUNTIME_DIR="$xdg" HOME="$xdg")
RTARGS=(--root "$xdg/state" --cgroup-manager disabled)
sandbox rootless "$ws" -U -u "$U" -g "$G" -H /home/agent
WRAP=()
RTARGS=(--root "$T_ROOT")
check_walls rootless "$ws" "$U" "$G" /home/agent

# No .git: the sandbox cannot make one, and what it leaves is an empty
# directory, which no git takes for a repository.
ws=$T_TMP/ws-bare
mkdir -p "$ws"
chown 65534:65534 "$ws"
b=$T_TMP/bundle-bare
mkdir -p "$b"
"$COMPOSE" -u 65534 -g 65534 "$ws" /bin/sh -c \
        'mkdir -p "$1/.git/hooks" 2>/dev/null && echo made; (: >"$1/.git/config") 2>/dev/null && echo wrote; echo done' \
        sh "$ws" >"$b/config.json" || t_bail "compose-config failed"
new_id
out=$(rt run --bundle "$b" "$T_LAST_ID" 2>&1 </dev/null)
t_eq "no .git: none can be created" done "$out"
t_eq "no .git: an empty directory is left on the host" "" "$(ls -A "$ws/.git" 2>&1)"
cfg_set "$b" 'c["process"]["args"] = ["/bin/sh", "-c", "(: >\"$0/.git/HEAD\") 2>/dev/null && echo wrote; echo done", c["process"]["cwd"]]'
new_id
out=$(rt run --bundle "$b" "$T_LAST_ID" 2>&1 </dev/null)
t_eq "no .git: a second sandbox cannot fill the directory left" done "$out"

t_done
