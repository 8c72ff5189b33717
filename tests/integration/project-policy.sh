#!/bin/bash
# The project's own .umwelt.toml is applied only as the user accepted it:
# one the agent plants from inside a real sandbox (root's and a user's), one
# a host-side change brings, a link or a FIFO under the name, all refused by
# the next start with how to look and accept; policy diff shows the change
# terminal-safe; policy accept refuses what does not read and is audited;
# umwelt's state directory, where the accepted copies are, is out of reach
# even from a sandbox whose workspace holds it.
T_NAME=project-policy
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user

export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
# The user's sandboxes without a delegated cgroup.
t_keep_floor
floor 'limits_best_effort = true'
mkdir -p "$HOME/secret"
echo key >"$HOME/secret/id"
proj=$T_TMP/proj
mkdir -p "$proj"

# run CMD...: a sandbox run in the project as root; T_RC, T_OUT, T_ERR.
# In direct mode, where the agent's writes reach the host's tree: the
# acceptance must hold there too (review mode keeps them in its layer,
# proved below).
run() { capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" -- "$@"; }
policy() { capture_split "$RT" policy "$1" -p "${2:-$proj}"; }

run /bin/true
t_eq "no .umwelt.toml: a run starts" 0 "$T_RC" "$T_ERR"

rproj=$T_TMP/rproj
mkdir -p "$rproj"
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$rproj" -- /bin/sh -c \
        'printf "[[grant]]\npath = \"/\"\n" >.umwelt.toml && echo planted'
t_eq "review mode: the agent's .umwelt.toml is written in its layer, none on the host" \
        "0 planted no" "$T_RC $T_OUT $([[ -e $rproj/.umwelt.toml ]] && echo yes || echo no)" "$T_ERR"

# The agent widens its own walls: a policy written from inside, where none was.
PLANT='printf "env = [\"GITHUB_TOKEN\"]\n\n[[grant]]\npath = \"%s\"\nmode = \"rw\"\n" "$1" >.umwelt.toml'
run /bin/sh -c "$PLANT" sh "$HOME/secret"
t_eq "root: the agent can write a .umwelt.toml where none was" "0 yes" \
        "$T_RC $([[ -f $proj/.umwelt.toml ]] && echo yes)" "$T_ERR"
run /bin/sh -c 'echo STARTED; cat '"$HOME"'/secret/id'
t_eq "root: the next start refuses it, exit 3, nothing run" "3 " "$T_RC $T_OUT" "$T_ERR"
t_match "... saying it was never accepted and how to look and accept" \
        "\.umwelt\.toml: never accepted, so not applied: .*policy diff -p $proj.*policy accept -p $proj" "$T_ERR"
AUDIT=$(ls "$XDG_STATE_HOME"/umwelt/proj-*/audit.jsonl)
t_match "... the refusal audited" '"event":"refusal","policy":"[^"]*/proj/.umwelt.toml"' "$(cat "$AUDIT")"

policy diff
t_eq "policy diff: exit 0" 0 "$T_RC" "$T_ERR"
t_eq "... the planted lines as added" \
        "--- accepted: none (never accepted)|+++ $proj/.umwelt.toml|+env = [\"GITHUB_TOKEN\"]|+|+[[grant]]|+path = \"$HOME/secret\"|+mode = \"rw\"" \
        "$(tr '\n' '|' <<<"$T_OUT" | sed 's/|$//')"

policy accept
t_eq "policy accept: exit 0" "0 $proj/.umwelt.toml: accepted" "$T_RC $T_OUT" "$T_ERR"
ACCEPTED=$(ls "$XDG_STATE_HOME"/umwelt/proj-*/accepted.umwelt.toml)
t_eq "... a copy in the state directory, 0600, byte for byte" "600 same" \
        "$(stat -c %a "$ACCEPTED") $(cmp -s "$ACCEPTED" "$proj/.umwelt.toml" && echo same)"
t_match "... audited" '"event":"policy-accept","file":"[^"]*/proj/.umwelt.toml","bytes":"[0-9]+"' \
        "$(cat "$AUDIT")"
run /bin/cat "$HOME/secret/id"
t_eq "accepted, it applies: the grant reads" "0 key" "$T_RC $T_OUT" "$T_ERR"
policy diff
t_eq "policy diff of the accepted file" "$proj/.umwelt.toml: accepted as it is" "$T_OUT" "$T_ERR"

# Accepted, it is read-only inside; and a change from the host (a git pull)
# is refused until accepted again.
run /bin/sh -c 'echo "preset = \"review\"" >>.umwelt.toml'
t_eq "inside, the accepted file cannot be written" "no" \
        "$( ((T_RC != 0)) && ! grep -q review "$proj/.umwelt.toml" && echo no)" "$T_ERR"
sed -i '1s/^/preset = "review"\n/' "$proj/.umwelt.toml"
run /bin/true
t_eq "a change made on the host is refused, exit 3" 3 "$T_RC" "$T_ERR"
t_match "... as changed since it was accepted" "changed since it was accepted" "$T_ERR"
policy diff
t_eq "... policy diff keeps the accepted lines and adds the new one" \
        " preset = \"review\"| [[grant]]" "$(grep -E '^( \[\[grant|\+preset)' <<<"$T_OUT" | tr '\n' '|' | sed 's/|$//' | tr + ' ')"
cp "$proj/.umwelt.toml" "$T_TMP/good.toml"
cp "$ACCEPTED" "$T_TMP/accepted.before"

# What does not read as policy is not accepted; the accepted copy stays.
printf 'preset = 3\n' >"$proj/.umwelt.toml"
policy accept
t_eq "policy accept of a file that does not read: exit 3" 3 "$T_RC" "$T_ERR"
t_match "... naming FILE:LINE:COLUMN" "not accepted: .*\.umwelt\.toml:1:10: " "$T_ERR"
t_eq "... the accepted copy unchanged" same "$(cmp -s "$ACCEPTED" "$T_TMP/accepted.before" && echo same)"

# Terminal control bytes cannot hide a line in the diff.
printf 'preset = "dev"\n# \033[1A\033[2Kquiet\r\n\302\233x\n' >"$proj/.umwelt.toml"
policy diff
t_match "policy diff prints control bytes as \\xNN" '\\x1b\[1A\\x1b\[2Kquiet\\x0d' "$T_OUT"
t_match "... C1 controls in UTF-8 too" '\\xc2\\x9bx' "$T_OUT"
t_eq "... no raw control byte reaches the terminal" 0 "$(tr -d '\n\t' <<<"$T_OUT" | LC_ALL=C grep -c $'[\001-\037\177]')"

# A link or a FIFO under the name.
rm -f "$proj/.umwelt.toml"
ln -s "$T_TMP/good.toml" "$proj/.umwelt.toml"
run /bin/true
t_eq "a symbolic link as .umwelt.toml is refused, exit 3" 3 "$T_RC" "$T_ERR"
t_match "... by name" "\.umwelt\.toml: is a symbolic link" "$T_ERR"
policy accept
t_eq "... and cannot be accepted" 3 "$T_RC" "$T_ERR"
rm -f "$proj/.umwelt.toml"
mkfifo "$proj/.umwelt.toml"
capture_split timeout 10 "$RT" --root "$T_ROOT" sandbox run -p "$proj" -- /bin/true
t_eq "a FIFO as .umwelt.toml is refused at once, exit 3" 3 "$T_RC" "$T_ERR"
t_match "... as not a regular file" "expected a regular file" "$T_ERR"
rm -f "$proj/.umwelt.toml"
run /bin/true
t_eq "no file again: a run starts (nothing to accept)" 0 "$T_RC" "$T_ERR"

# A workspace that holds umwelt's state directory (a project at $HOME):
# the accepted copies and audit logs are out of the agent's reach.
hproj=$HOME
cp "$T_TMP/good.toml" "$hproj/.umwelt.toml"
capture_split "$RT" policy accept -p "$hproj"
capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$hproj" -- /bin/sh -c '
        for f in "$1"/umwelt/*/accepted.umwelt.toml "$1"/umwelt/*/audit.jsonl; do
                echo x >>"$f" 2>/dev/null && echo "WROTE $f"
        done
        ls -A "$1/umwelt" | wc -l' sh "$XDG_STATE_HOME"
t_eq "root: with the state directory in the workspace, it is hidden, nothing written" "0 0" \
        "$T_RC $T_OUT" "$T_ERR"
rm -f "$hproj/.umwelt.toml"
XDG_STATE_HOME=$hproj/.local/state capture_split "$RT" --root "$T_ROOT" sandbox run -p "$hproj" -- /bin/true
t_eq "review mode on a workspace that holds umwelt's state directory: refused, exit 3" 3 \
        "$T_RC" "$T_ERR"
t_match "... naming it" ".*review mode: the workspace $hproj holds umwelt's state directory.*" "$T_ERR"

# The same from inside a user's sandbox, with the user's state.
uproj=$T_TMP/uproj
mkdir -p "$uproj"
chown "$U:$G" "$uproj"
capture_split as_user "$RT" sandbox run --workspace direct -p "$uproj" -- /bin/sh -c "$PLANT" sh /etc
t_eq "user: the agent writes a .umwelt.toml" "0 yes" "$T_RC $([[ -f $uproj/.umwelt.toml ]] && echo yes)" "$T_ERR"
capture_split as_user "$RT" sandbox run -p "$uproj" -- /bin/echo STARTED
t_eq "user: the next start refuses it, exit 3" "3 " "$T_RC $T_OUT" "$T_ERR"
t_match "... never accepted" "never accepted" "$T_ERR"
printf 'preset = "dev"\n' >"$uproj/.umwelt.toml"
capture_split as_user "$RT" policy accept -p "$uproj"
t_eq "user: policy accept" 0 "$T_RC" "$T_ERR"
t_eq "... the copy in the user's state directory" 1 \
        "$(ls "$XDG"/.local/state/umwelt/uproj-*/accepted.umwelt.toml 2>/dev/null | wc -l)"
capture_split as_user "$RT" sandbox run -p "$uproj" -- /bin/echo STARTED
t_eq "user: accepted, it starts" "0 STARTED" "$T_RC $T_OUT" "$T_ERR"

t_done
