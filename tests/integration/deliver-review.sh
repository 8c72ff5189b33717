#!/bin/bash
# Review mode from inside real sandboxes, root's and a user's: the
# workspace an overlay, the project its read-only lower directory, the
# agent's writes in the project's layer (STATE/PROJECT-ID/layer/upper).
# There the attacks of issue 13 are made (the repository moved aside and a
# new one planted with a hook, commondir, a nested repository with
# core.fsmonitor, editor and shell files, a new policy file, links,
# executables, binaries, invalid names, special files); the host's tree
# and .git are proved untouched, host git and a host shell run nothing
# planted, the next sandbox continues on the layer, and deliver review
# puts each change in its bucket with its reason.
T_NAME=deliver-review
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
floor 'limits_best_effort = true'
command -v git >/dev/null || t_skip_all "git missing"

PY=$(command -v python3) || t_skip_all "python3 missing"

# make_project DIR: a repository with a commit, a script, a directory.
make_project() {
        mkdir -p "$1/src" "$1/olddir/x"
        printf 'a\nb\nc\n' >"$1/src/main.c"
        echo old >"$1/gone.txt"
        echo z >"$1/olddir/x/z"
        printf '#!/bin/sh\necho build\n' >"$1/build.sh"
        chmod +x "$1/build.sh"
        git -C "$1" init -q
        git -C "$1" add -A
        git -C "$1" -c user.email=t@t -c user.name=t commit -qm base
        git -C "$1" config remote.origin.url https://token@git.example/x
        printf '#!/bin/sh\necho HOST-HOOK-RAN\n' >"$1/.git/hooks/pre-commit"
        chmod +x "$1/.git/hooks/pre-commit"
}

# The agent's work, run in the review-mode sandbox's workspace.
AGENT='
set -e
printf "a\nB\nc\nd\n" >src/main.c
rm gone.txt
rm -rf olddir
printf "one\ntwo\n" >new.txt
mv .git .git.old 2>/dev/null && echo git-moved
git remote -v
git config --get core.hooksPath || true
git -c user.email=a@a -c user.name=a commit -q --allow-empty -m agent-commit 2>&1
mkdir -p .git/hooks .Git/hooks
printf "#!/bin/sh\ntouch \"$1/PLANTED-hook\"\n" | tee .git/hooks/pre-commit >.Git/hooks/pre-commit
chmod +x .git/hooks/pre-commit .Git/hooks/pre-commit
mkdir .git.old
echo /tmp/planted >.git.old/commondir
git init -q sub
git -C sub config core.fsmonitor "touch $1/PLANTED-fsmonitor"
mkdir .vscode && echo "{}" >.vscode/tasks.json
echo "touch $1/PLANTED-envrc" >.envrc
echo "touch $1/PLANTED-bashrc" >.bashrc
printf "[[grant]]\npath = \"/\"\n" >.umwelt.toml
ln -s /etc/shadow shadow
printf "x\000y" >bin.dat
head -c 2000000 /dev/zero | tr "\000" a >big.txt
touch "$(printf "bad\377name")"
mkfifo fifo
printf "#!/bin/sh\necho pwned\n" >>build.sh
touch src/main.c
'

# check WHO REVIEW_JSON: the buckets the planted files went in.
check_review() {
        local who=$1 got
        got=$(t_buckets <<<"$2" 2>&1)
        want_bucket() { t_bucket "$who" "$got" "$@"; }
        want_bucket src/main.c apply
        want_bucket new.txt apply
        want_bucket gone.txt apply
        want_bucket olddir/x/z apply
        want_bucket .Git/hooks/pre-commit reject "a \.git part"
        want_bucket .git.old/commondir hold "git reads it"
        want_bucket sub hold "a nested repository"
        want_bucket sub/.git/config reject "a \.git part"
        want_bucket .vscode/tasks.json hold "the editor runs"
        want_bucket .envrc hold "direnv runs it"
        want_bucket .bashrc hold "a shell runs it"
        want_bucket .umwelt.toml hold "the sandbox's own policy"
        want_bucket shadow hold "a symbolic link"
        want_bucket bin.dat hold "a binary file"
        want_bucket big.txt hold "larger than the size limit"
        want_bucket 'bad\xffname' reject "not valid UTF-8"
        want_bucket fifo reject "FIFO"
        want_bucket build.sh hold "executable"
        t_eq "$who: nothing under a .git is delivered" "" \
                "$(awk -F'\t' '$1 ~ /(^|\/)\.git\// && $2 != "reject"' <<<"$got")"
        t_match "$who: the edit is counted" '"path": *"src/main.c"[^}]*"added": *2, *"removed": *1' \
                "$(tr -d '\n' <<<"$2" | sed 's/},/}\n/g')"
}

# host_untouched WHO DIR SUM: the host's tree, its .git and what host git
# and a host shell then run are as before.
host_untouched() {
        local who=$1 dir=$2 sum=$3
        t_eq "$who: the host's tree is as it was" "$sum" "$(tree_sum "$dir")"
        t_eq "$who: host git sees no change" "" "$(git -c safe.directory='*' -C "$dir" status --porcelain 2>&1)"
        (cd "$dir" && git -c safe.directory='*' -c user.email=t@t -c user.name=t commit -q --allow-empty -m after \
                && bash -c 'cd . && true') >/dev/null 2>&1
        t_eq "$who: host git and a shell there run nothing planted" "" \
                "$(ls "$T_TMP" | grep PLANTED)"
}
tree_sum() { (cd "$1" && find . -path ./.git/logs -prune -o -print0 | sort -z | xargs -0 sha256sum 2>/dev/null | sha256sum); }

# ------------------------------------------------------------- root
export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
mkdir -p "$HOME"
proj=$T_TMP/proj
make_project "$proj"
capture_split "$RT" deliver review -p "$proj"
t_eq "no layer yet: exit 4" 4 "$T_RC" "$T_ERR"
t_match "... saying so" "no layer for $proj" "$T_ERR"
SUM=$(tree_sum "$proj")
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$proj" --workspace review -- \
        /bin/sh -c "$AGENT" sh "$T_TMP"
t_eq "root: the agent's work in a review-mode sandbox" 0 "$T_RC" "$T_ERR"
t_eq "root: .git cannot be moved aside; the agent's repository has no remote, hook or host output" \
        "" "$T_OUT"
t_match "... its start audited as review mode" '"event":"start",.*"workspace_mode":"review"' \
        "$(cat "$XDG_STATE_HOME"/umwelt/proj-*/audit.jsonl)"
layer=$(ls -d "$XDG_STATE_HOME"/umwelt/proj-*)/layer
t_eq "... its baseline the host's HEAD when the layer began" \
        "$(git -C "$proj" rev-parse HEAD)" "$(cat "$layer/baseline")"
t_eq "... the agent's repository in it, with no remote and no hook of the host's" \
        "none" "$(grep -rl 'git.example\|HOST-HOOK' "$layer/git" 2>/dev/null || echo none)"
t_eq "... the layer in the state directory, upper 0$(stat -c %a "$proj")" "$(stat -c %a "$proj")" \
        "$(stat -c %a "$layer/upper")"
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$proj" --workspace review -- \
        /bin/sh -c 'cat new.txt; test -e gone || echo gone-gone; git log --format=%s | tr "\n" ,'
t_eq "root: the next review-mode sandbox continues on the layer and its repository" \
        "one two gone-gone agent-commit,base," \
        "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
capture_split "$RT" deliver review -p "$proj" --json
t_eq "root: deliver review --json" 0 "$T_RC" "$T_ERR"
check_review root "$T_OUT"
host_untouched root "$proj" "$SUM"
capture_split "$RT" deliver review -p "$proj"
t_match "root: the text form ends with the counts" \
        "[0-9]+ changed: [0-9]+ apply, [0-9]+ hold, [0-9]+ reject$" "$T_OUT"
t_match "... names printed terminal-safe" 'bad\\xffname: a name that is not valid UTF-8' "$T_OUT"

# ------------------------------------------------------------- the user
uproj=$T_TMP/uproj
make_project "$uproj"
chown -R "$U:$G" "$uproj"
chmod 755 "$T_TMP"
USUM=$(tree_sum "$uproj")
capture_split as_user "$RT" sandbox run -p "$uproj" --workspace review -- \
        /bin/sh -c "$AGENT" sh "$T_TMP"
t_eq "user: the agent's work in a review-mode sandbox" 0 "$T_RC" "$T_ERR"
t_eq "user: .git cannot be moved aside; the agent's repository has no remote, hook or host output" \
        "" "$T_OUT"
capture_split as_user "$RT" deliver review -p "$uproj" --json
t_eq "user: deliver review --json" 0 "$T_RC" "$T_ERR"
check_review user "$T_OUT"
host_untouched user "$uproj" "$USUM"

# The user's overlay is made in the sandbox's mount namespace on the
# project's directory as umwelt-run opened it, not on a path: any name will
# do, a comma in it too.
cproj="$T_TMP/with,comma"
make_project "$cproj"
chown -R "$U:$G" "$cproj"
capture_split as_user "$RT" sandbox run -p "$cproj" -- /bin/sh -c 'cat src/main.c; echo n >n.txt'
t_eq "user: review mode on a workspace whose path has a comma" "a b c" \
        "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')" "$T_ERR"
t_eq "... its write in the layer, not the host's tree" "no" \
        "$([[ -e $cproj/n.txt ]] && echo yes || echo no)"

t_done
