#!/bin/bash
# Direct mode from inside real sandboxes, root's and a user's: the whole
# .git read-only (no file written in it, no commondir, no rename aside:
# a mount point), and at the end of the run, and at sandbox down, a report
# of what the agent left that the host executes (a nested repository with
# core.fsmonitor, a new .vscode/tasks.json, .envrc, a new executable, a
# file prepared under another name and renamed into place) on stderr and
# in STATE/PROJECT-ID/direct-report.json, each with its reason; nothing
# for a run that only edits ordinary files; the same at sandbox down and
# gc --idle of an up. deliver quarantine moves them aside, after which
# host git runs no planted fsmonitor; what changed since the report, sits
# behind a link or cannot be renamed (another filesystem) is left, with a
# line each; a walk its bound cut says so.
T_NAME=direct-mode
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
floor 'limits_best_effort = true'
command -v git >/dev/null || t_skip_all "git missing"
PY=$(command -v python3) || t_skip_all "python3 missing"

# report_paths FILE: "path TAB reason" lines of a direct-mode report.
report_paths() {
        "$PY" -c '
import json, sys
for e in json.load(open(sys.argv[1]))["entries"]:
    print("%s\t%s" % (e["path"], e["reason"]))' "$1"
}

# make_project DIR: a repository with a commit and an ordinary file.
make_project() {
        mkdir -p "$1/src"
        printf 'a\n' >"$1/src/main.c"
        git -C "$1" init -q
        git -C "$1" add -A
        git -C "$1" -c user.email=t@t -c user.name=t commit -qm base
}

# What the agent tries on .git; each line says how it went.
GIT_WRITES='
touch .git/x 2>/dev/null && echo touch-ok || echo touch-refused
(echo /tmp/planted >.git/commondir) 2>/dev/null && echo commondir-ok || echo commondir-refused
mv .git .git.old 2>/dev/null && echo mv-ok || echo mv-refused
(echo x >>.git/config) 2>/dev/null && echo config-ok || echo config-refused
mkdir .git/hooks/d 2>/dev/null && echo hooks-ok || echo hooks-refused
'

# The agent's plants ($1: where the markers go).
AGENT='
set -e
git init -q sub
git -C sub config core.fsmonitor "touch $1/PLANTED-fsmonitor"
mkdir .vscode && echo "{}" >.vscode/tasks.json
echo "touch $1/PLANTED-envrc" >.envrc
printf "#!/bin/sh\necho pwned\n" >tool.sh
chmod +x tool.sh
mkdir prep && echo "[alias]" >prep/config.toml
mv prep .cargo
echo b >>src/main.c
'

# check WHO DIR STDERR REPORT: each plant reported with its reason.
check_report() {
        local who=$1 dir=$2 err=$3 report=$4 got
        got=$(report_paths "$report" 2>&1)
        want() {
                local line
                line=$(P=$1 awk -F'\t' '$1 == ENVIRON["P"] {print $2}' <<<"$got")
                t_match "$who: $1 is reported" ".*$2.*" "$line" "$got"
                t_match "$who: ... on stderr, with its reason" \
                        "(.*"$'\n'")?umwelt-run: direct mode: $1: .*$2.*" "$err"
        }
        want sub/.git "host git reads its config"
        want .vscode/tasks.json "the editor runs"
        want .envrc "direnv runs it"
        want tool.sh "executable"
        want .cargo/config.toml "cargo runs"
        t_eq "$who: nothing else is reported (the edited source is not)" 5 "$(wc -l <<<"$got")" "$got"
        t_match "$who: the summary says how to move them aside" \
                ".*5 files the host may execute changed in $dir .*umwelt-run deliver quarantine -p $dir.*" \
                "$err"
        t_eq "$who: the report is 0600" 600 "$(stat -c %a "$report")"
}

# ------------------------------------------------------------- root
export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
mkdir -p "$HOME"
proj=$T_TMP/proj
make_project "$proj"
GITSUM=$(cd "$proj/.git" && find . -print0 | sort -z | xargs -0 stat -c '%n %s %Y' | sha256sum)
capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" -- /bin/sh -c "$GIT_WRITES"
t_eq "root: .git cannot be written, replaced or renamed" \
        "touch-refused commondir-refused mv-refused config-refused hooks-refused" \
        "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "root: the host's .git is unchanged" "$GITSUM" \
        "$(cd "$proj/.git" && find . -print0 | sort -z | xargs -0 stat -c '%n %s %Y' | sha256sum)"
state=$(ls -d "$XDG_STATE_HOME"/umwelt/proj-*)
t_eq "root: a run that tried only that reports nothing" "" "$(grep 'direct mode' <<<"$T_ERR")"

capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" -- /bin/sh -c 'echo c >>src/main.c; echo new >notes.txt'
t_eq "root: a run that edits ordinary files" 0 "$T_RC" "$T_ERR"
t_eq "... reports nothing" "" "$(grep 'direct mode' <<<"$T_ERR")"
t_eq "... and leaves no report" "" "$(ls "$state" | grep direct-report)"
t_match "... its check audited" '.*"event":"direct-report",[^}]*"found":"0".*' "$(cat "$state/audit.jsonl")"

capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" -- /bin/sh -c "$AGENT" sh "$T_TMP"
t_eq "root: the agent's plants" 0 "$T_RC" "$T_ERR"
check_report root "$proj" "$T_ERR" "$state/direct-report.json"
t_match "root: the report is audited" '.*"event":"direct-report",[^}]*"found":"5".*' "$(cat "$state/audit.jsonl")"

(cd "$proj/sub" && git -c safe.directory='*' status) >/dev/null 2>&1
t_eq "root: before the quarantine host git runs the planted fsmonitor (the marker works)" \
        PLANTED-fsmonitor "$(ls "$T_TMP" | grep PLANTED)"
rm -f "$T_TMP/PLANTED-fsmonitor"
capture_split "$RT" deliver quarantine -p "$proj"
t_eq "root: deliver quarantine" 0 "$T_RC" "$T_ERR"
t_match "... says what moved" "(.*"$'\n'")?moved sub/\.git -> quarantine/1/.*5 moved to quarantine/1.*" "$T_OUT"
t_eq "... the plants are gone from the workspace" "" \
        "$(cd "$proj" && ls -d sub/.git .vscode/tasks.json .envrc tool.sh .cargo/config.toml 2>/dev/null)"
t_eq "... and kept in the quarantine at their paths" "ok" \
        "$(cd "$state/quarantine/1" && test -f sub/.git/config && test -f .envrc && test -x tool.sh && echo ok)"
t_match "... each move audited" '.*"event":"quarantine","path":"sub/.git".*' "$(cat "$state/audit.jsonl")"
(cd "$proj/sub" && git -c safe.directory='*' status) >/dev/null 2>&1
(cd "$proj" && git -c safe.directory='*' status) >/dev/null 2>&1
t_eq "root: host git then runs no planted fsmonitor" "" "$(ls "$T_TMP" | grep PLANTED)"
capture_split "$RT" deliver quarantine -p "$proj"
t_eq "root: a second quarantine: no report, exit 4" 4 "$T_RC" "$T_ERR"

# A bound that stops the walk says so.
capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" -- /bin/sh -c \
        'mkdir -p "$(printf "d/%.0s" $(seq 300))"'
t_match "root: a walk cut by its depth bound says so" \
        ".*direct mode: the walk of $proj stopped early \(deeper than 256 directories\).*" "$T_ERR"
rm -rf "$proj/d" "$state/direct-report.json"

# Bad input: one line, its exit code, nothing made.
capture_split "$RT" deliver quarantine -p "$T_TMP/nonexistent"
t_eq "no such project: exit 2" 2 "$T_RC" "$T_ERR"
t_eq "... one line" 1 "$(wc -l <<<"$T_ERR")" "$T_ERR"
echo '{"since_sec": 1, "entries": [' >"$state/direct-report.json"
capture_split "$RT" deliver quarantine -p "$proj"
t_eq "a report that does not parse: exit 3" 3 "$T_RC" "$T_ERR"
t_eq "... one line" 1 "$(wc -l <<<"$T_ERR")" "$T_ERR"
t_eq "... no batch made" 1 "$(ls "$state/quarantine" | wc -l)"
rm -f "$state/direct-report.json"

# A planted file that changed after the report is left in place.
capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" -- /bin/sh -c 'echo x >.envrc'
t_match "root: .envrc reported again" ".*direct mode: \.envrc: direnv.*" "$T_ERR"
chmod 600 "$proj/.envrc"
capture_split "$RT" deliver quarantine -p "$proj"
t_eq "root: a changed entry is left: exit 6" 6 "$T_RC" "$T_ERR"
t_match "... saying why" ".*left \.envrc: it changed since the report.*" "$T_ERR"
t_eq "... and stays reported" ".envrc" "$(report_paths "$state/direct-report.json" | cut -f1)"
rm -f "$proj/.envrc" "$state/direct-report.json"

# A directory on the way swapped for a link after the report: left.
capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" -- /bin/sh -c 'mkdir -p a && echo x >a/.envrc'
t_match "root: a/.envrc reported" ".*direct mode: a/\.envrc: direnv.*" "$T_ERR"
mv "$proj/a" "$proj/a2" && ln -s a2 "$proj/a"
capture_split "$RT" deliver quarantine -p "$proj"
t_eq "root: a link on the way: left, exit 6" 6 "$T_RC" "$T_ERR"
t_match "... saying why" ".*left a/\.envrc: its directory cannot be reached without a link.*" "$T_ERR"
t_eq "... the file behind the link untouched" x "$(cat "$proj/a2/.envrc")"
rm -rf "$proj/a" "$proj/a2" "$state/direct-report.json"

# The state directory on another filesystem: a rename cannot move it.
xstate=$T_TMP/xstate
mkdir -p "$xstate" && mount -t tmpfs -o size=1m tmpfs "$xstate"
XDG_STATE_HOME=$xstate capture_split "$RT" --root "$T_ROOT" sandbox run --workspace direct -p "$proj" -- \
        /bin/sh -c 'echo x >.envrc'
XDG_STATE_HOME=$xstate capture_split "$RT" deliver quarantine -p "$proj"
t_eq "root: state on another filesystem: left, exit 6" 6 "$T_RC" "$T_ERR"
t_match "... in one line saying so" \
        ".*left \.envrc: the state directory is on another filesystem than the workspace: move it by hand.*" \
        "$T_ERR"
t_eq "... .envrc still in the workspace" x "$(cat "$proj/.envrc")"
umount "$xstate"
rm -f "$proj/.envrc"

# up and down: the report comes at down.
capture_split "$RT" --root "$T_ROOT" sandbox up --workspace direct -p "$proj"
t_eq "root: sandbox up" 0 "$T_RC" "$T_ERR"
capture_split "$RT" --root "$T_ROOT" sandbox exec -p "$proj" -- /bin/sh -c 'echo x >.bashrc'
t_eq "root: an exec plants .bashrc" 0 "$T_RC" "$T_ERR"
capture_split "$RT" --root "$T_ROOT" sandbox down -p "$proj"
t_eq "root: sandbox down" 0 "$T_RC" "$T_ERR"
t_match "... reports .bashrc" ".*direct mode: \.bashrc: a shell runs it.*" "$T_ERR"
t_eq "... in the report" ".bashrc" "$(report_paths "$state/direct-report.json" | cut -f1)"
t_eq "... the start record gone" "" "$(ls "$state" | grep direct-start)"

# gc --idle downs it: the same report.
rm -f "$state/direct-report.json"
capture_split "$RT" --root "$T_ROOT" sandbox up --workspace direct -p "$proj"
capture_split "$RT" --root "$T_ROOT" sandbox exec -p "$proj" -- /bin/sh -c 'echo x >.zshrc'
capture_split "$RT" --root "$T_ROOT" sandbox gc --idle 0s
t_eq "root: sandbox gc --idle 0s" 0 "$T_RC" "$T_ERR"
t_match "... reports .zshrc" ".*direct mode: \.zshrc: a shell runs it.*" "$T_ERR"
t_eq "... the start record gone" "" "$(ls "$state" | grep direct-start)"
rm -f "$proj/.zshrc" "$state/direct-report.json"

# ------------------------------------------------------------- the user
uproj=$T_TMP/uproj
make_project "$uproj"
chown -R "$U:$G" "$uproj"
chmod 755 "$T_TMP"
UGITSUM=$(cd "$uproj/.git" && find . -print0 | sort -z | xargs -0 stat -c '%n %s %Y' | sha256sum)
capture_split as_user "$RT" sandbox run --workspace direct -p "$uproj" -- /bin/sh -c "$GIT_WRITES"
t_eq "user: .git cannot be written, replaced or renamed" \
        "touch-refused commondir-refused mv-refused config-refused hooks-refused" \
        "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "user: the host's .git is unchanged" "$UGITSUM" \
        "$(cd "$uproj/.git" && find . -print0 | sort -z | xargs -0 stat -c '%n %s %Y' | sha256sum)"
capture_split as_user "$RT" sandbox run --workspace direct -p "$uproj" -- /bin/sh -c 'echo c >>src/main.c'
t_eq "user: a run that edits ordinary files reports nothing" "0 " \
        "$T_RC $(grep 'direct mode' <<<"$T_ERR")" "$T_ERR"
umark=$T_TMP/umark
mkdir -m 777 "$umark"
capture_split as_user "$RT" sandbox run --workspace direct -p "$uproj" -- /bin/sh -c "$AGENT" sh "$umark"
t_eq "user: the agent's plants" 0 "$T_RC" "$T_ERR"
ustate=$(ls -d "$XDG"/.local/state/umwelt/uproj-*)
check_report user "$uproj" "$T_ERR" "$ustate/direct-report.json"
as_user /bin/sh -c "cd '$uproj/sub' && git status" >/dev/null 2>&1
t_eq "user: before the quarantine host git runs the planted fsmonitor" \
        PLANTED-fsmonitor "$(ls "$umark")"
rm -f "$umark/PLANTED-fsmonitor"
capture_split as_user "$RT" deliver quarantine -p "$uproj"
t_eq "user: deliver quarantine" 0 "$T_RC" "$T_ERR"
t_eq "... the plants are gone from the workspace" "" \
        "$(cd "$uproj" && ls -d sub/.git .vscode/tasks.json .envrc tool.sh .cargo/config.toml 2>/dev/null)"
as_user /bin/sh -c "cd '$uproj/sub' && git status; cd '$uproj' && git status" >/dev/null 2>&1
t_eq "user: host git then runs no planted fsmonitor" "" "$(ls "$umark")"

# A directory the user's walk cannot list, made so by the agent.
capture_split as_user "$RT" sandbox run --workspace direct -p "$uproj" -- /bin/sh -c 'mkdir hid && echo x >hid/.envrc && chmod 300 hid'
t_match "user: a directory made unreadable is reported itself" \
        ".*direct mode: hid: a directory that changed and cannot be read.*" "$T_ERR"
capture_split as_user "$RT" deliver quarantine -p "$uproj"
t_eq "user: ... and quarantined whole" "0 absent" "$T_RC $(test -e "$uproj/hid" && echo present || echo absent)" "$T_ERR"

# The user's up and down.
capture_split as_user "$RT" sandbox up --workspace direct -p "$uproj"
t_eq "user: sandbox up" 0 "$T_RC" "$T_ERR"
capture_split as_user "$RT" sandbox exec -p "$uproj" -- /bin/sh -c 'echo x >.profile'
capture_split as_user "$RT" sandbox down -p "$uproj"
t_eq "user: sandbox down" 0 "$T_RC" "$T_ERR"
t_match "... reports .profile" ".*direct mode: \.profile: a shell runs it.*" "$T_ERR"

t_done
