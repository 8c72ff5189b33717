#!/bin/bash
# No sandbox holds the host's uid or gid 0 (issue 11, hole 5). Root's own
# sandbox maps its 0 to an unprivileged host id and sees root's workspace
# and rw grant through idmapped binds: from inside, a root-owned 0600 file
# outside them is unreadable (EACCES), no line of /proc/self/uid_map or
# gid_map maps the host's 0, what it writes keeps the host owner of the
# place it writes to, and the workspace's own 0600 files are writable; on
# `sandbox run` and `sandbox exec` alike. Through sudo (a caller mapped to
# itself) and as the unprivileged user: the same secret unreadable, no host
# 0 mapped, the caller's files the caller's.
# Direct mode throughout: what is written is looked at on the host in place
# (review mode's layer ownership is deliver-review.sh's).
T_NAME=sandbox-ids
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user

# Under /etc: the default view keeps /etc whatever else it narrows.
secret=/etc/umwelt-test-secret-$$ other=/etc/umwelt-test-other-$$
T_EXTRA_CLEANUP="rm -f $secret $other; $RT --root $T_ROOT sandbox down -p $T_TMP/priv/proj >/dev/null 2>&1"
(umask 077 && echo host-secret >"$secret")

# Root's project and grant below a directory only the host's root may
# search, as root's home is.
export HOME=$T_TMP/priv XDG_STATE_HOME=$T_TMP/state
mkdir -m 700 "$T_TMP/priv"
proj=$T_TMP/priv/proj data=$T_TMP/priv/data
mkdir -p "$proj" "$data"
(umask 077 && echo ws-secret >"$proj/own")

# In one line each: the errno of reading the secret, whether a map line
# names host id 0, the id inside.
PROBE_IDS="python3 -c '
import errno, os
try:
    open(\"$secret\").read(); print(\"secret=READ\")
except OSError as e:
    print(\"secret=\" + errno.errorcode[e.errno])
for f in (\"uid_map\", \"gid_map\"):
    rows = [l.split() for l in open(\"/proc/self/\" + f)]
    print(f + \"=\" + (\"host0\" if any(r[1] == \"0\" for r in rows) else \"no-host0\"))
'"

sbx() {
        capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" "$@"
}

sbx --grant "$data:rw" -- /bin/sh -c "$PROBE_IDS"
t_eq "root's sandbox: a root-owned 0600 file outside the workspace is unreadable" \
        "secret=EACCES" "$(sed -n 1p <<<"$T_OUT")" "$T_ERR"
t_eq "... and neither its uid_map nor its gid_map maps the host's 0" \
        "uid_map=no-host0 gid_map=no-host0" "$(sed -n '2,3p' <<<"$T_OUT" | tr '\n' ' ' | sed 's/ $//')" "$T_ERR"

sbx --grant "$data:rw" -- /bin/sh -c \
        "echo more >>$proj/own && cat $proj/own | tr '\n' ' '; echo x >$proj/made; echo y >$data/made; mkdir $proj/dir; id -u"
t_eq "... the workspace's own 0600 files are readable and writable, as the container's 0" \
        "ws-secret more 0" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "... what it makes in the workspace and in a rw grant is root's on the host" \
        "0:0 0:0 0:0" "$(stat -c %u:%g "$proj/made" "$proj/dir" "$data/made" 2>&1 | tr '\n' ' ' | sed 's/ $//')"

capture_split "$RT" --root "$T_ROOT" sandbox up --workspace direct -p "$proj"
t_eq "sandbox up as root" 0 "$T_RC" "$T_ERR"
capture_split "$RT" --root "$T_ROOT" sandbox exec -p "$proj" -- /bin/sh -c \
        "$PROBE_IDS; echo e >$proj/exec-made"
t_eq "sandbox exec into root's sandbox: the secret unreadable, no host 0 mapped" \
        "secret=EACCES uid_map=no-host0 gid_map=no-host0" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "... and what it makes in the workspace is root's" 0:0 "$(stat -c %u:%g "$proj/exec-made" 2>&1)"
"$RT" --root "$T_ROOT" sandbox down -p "$proj" >/dev/null 2>&1

# Through sudo: the caller's project, the caller's ids.
uproj=$T_TMP/uproj
mkdir -m 700 "$uproj"
chown "$U:$G" "$uproj"
capture_split env SUDO_UID="$U" SUDO_GID="$G" HOME="$T_TMP/priv" "$RT" --root "$T_ROOT" \
        sandbox run --workspace direct -p "$uproj" -- /bin/sh -c "$PROBE_IDS; id -u; echo s >$uproj/made"
t_eq "through sudo: the secret unreadable, no host 0 mapped, the caller's id" \
        "secret=EACCES uid_map=no-host0 gid_map=no-host0 $U" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "... and what it makes is the caller's" "$U:$G" "$(stat -c %u:%g "$uproj/made" 2>&1)"

# The unprivileged user: root's files and another user's stay unreadable.
t_keep_floor
floor 'limits_best_effort = true'
(umask 077 && echo other >"$other")
chown nobody:nogroup "$other"
capture_split as_user "$RT" sandbox run --workspace direct -p "$uproj" -- /bin/sh -c \
        "$PROBE_IDS; cat $other 2>&1 | grep -c 'Permission denied'"
t_eq "the unprivileged user: root's secret and another user's file unreadable, no host 0" \
        "secret=EACCES uid_map=no-host0 gid_map=no-host0 1" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"

t_done
