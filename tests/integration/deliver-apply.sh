#!/bin/bash
# Delivery, end to end (issue 13): layers written by real review-mode
# sandboxes, root's and a user's, delivered by umwelt-deliver (exec'd by
# umwelt-run deliver). apply commits the apply bucket and the files
# included to a working branch with libgit2 only: no hook runs, the
# working tree and index are untouched, the branch's tree is exactly the
# baseline plus what went; a symlink to /etc/shadow goes as its text; a
# host file changed since the baseline is a conflict, held and merged;
# protected and invalid branches and bad includes are refused with one
# line and leave nothing. --since, sync and discard too.
T_NAME=deliver-apply
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
floor 'limits_best_effort = true'
command -v git >/dev/null || t_skip_all "git missing"
command -v python3 >/dev/null || t_skip_all "python3 missing"

# merge_of PATH: the merge text review --json shows for PATH.
merge_of() {
        P=$1 python3 -c '
import json, os, sys
for c in json.load(sys.stdin)["changes"]:
    if c["path"] == os.environ["P"]:
        print(c["merge"] or "")'
}
g() { git -c safe.directory='*' -C "$proj" "$@"; }

# make_project DIR: a repository on branch trunk with hooks that would
# leave markers in $T_TMP, and the user's identity in its config.
make_project() {
        mkdir -p "$1/src" "$1/olddir/x"
        printf 'a\nb\nc\n' >"$1/src/main.c"
        echo z >"$1/olddir/x/z"
        echo t >"$1/todir"
        echo old >"$1/gone.txt"
        echo moved >"$1/old.txt"
        echo keep >"$1/keep.txt"
        printf 'one\ntwo\nthree\n' >"$1/conflict.txt"
        printf '#!/bin/sh\necho build\n' >"$1/build.sh"
        chmod +x "$1/build.sh"
        git -C "$1" init -q -b trunk
        git -C "$1" config user.name "Host User"
        git -C "$1" config user.email host@example.org
        git -C "$1" add -A
        git -C "$1" commit -qm base
        for h in pre-commit post-commit commit-msg reference-transaction post-checkout; do
                printf '#!/bin/sh\ntouch "%s/HOOK-%s"\n' "$T_TMP" "$h" >"$1/.git/hooks/$h"
                chmod +x "$1/.git/hooks/$h"
        done
}

AGENT='
set -e
printf "a\nB\nc\n" >src/main.c
rm gone.txt
rm -r olddir
echo "now a file" >olddir
rm todir
mkdir todir
echo in >todir/in
mv old.txt renamed.txt
printf "new\n" >new.txt
chmod +x keep.txt
printf "x\000y" >bin.dat
head -c 1100000 /dev/zero | tr "\000" a >big.txt
ln -s /etc/shadow shadow
touch "$(printf "bad\377name")"
git init -q sub
printf "one\ntwo\nagent\n" >conflict.txt
'

# ------------------------------------------------------------- root
export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
mkdir -p "$HOME"
proj=$T_TMP/proj
make_project "$proj"
base=$(g rev-parse HEAD)
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$proj" --workspace review -- \
        /bin/sh -c "$AGENT"
t_eq "root: the agent's work in a review-mode sandbox" 0 "$T_RC" "$T_ERR"
state=$(ls -d "$XDG_STATE_HOME"/umwelt/proj-*)
# The user changes a file on the host after the layer began.
printf 'one\ntwo\nHOST\n' >"$proj/conflict.txt"

t_eq "umwelt-run does not link libgit2" "" "$(ldd "$RT" | grep libgit2)"

capture_split "$RT" deliver review -p "$proj" --json
t_eq "root: review --json" 0 "$T_RC" "$T_ERR"
got=$(t_buckets <<<"$T_OUT")
want_bucket() { t_bucket root "$got" "$@"; }
want_bucket src/main.c apply
want_bucket gone.txt apply
want_bucket old.txt apply
want_bucket renamed.txt apply
want_bucket new.txt apply
want_bucket keep.txt hold "executable"
want_bucket bin.dat hold "a binary file"
want_bucket big.txt hold "larger than the size limit"
want_bucket shadow hold "a symbolic link"
want_bucket 'bad\xffname' reject "not valid UTF-8"
want_bucket sub hold "a nested repository"
want_bucket conflict.txt hold "a conflict: the host's file changed since the baseline"
merge=$(merge_of conflict.txt <<<"$T_OUT")
t_match "... the conflict shown with git_merge_file's three-way text" \
        '^one.two.<<<<<<< host.HOST.=======.agent.>>>>>>> agent.?$' "$(tr '\n' . <<<"$merge")"
capture_split "$RT" deliver review -p "$proj"
t_match "... and in the text form, indented" $'\n    .*agent' "$T_OUT"

# Bad input: one line, its exit code, nothing left behind.
# git status refreshes the index's stat data: once before the hash.
status0=$(g status --porcelain)
index0=$(sha1sum <"$proj/.git/index")
objects0=$(g count-objects -v | grep -E '^(count|in-pack):' | tr '\n' ' ')
nothing_left() {
        t_eq "$1: no branch made, no object written" " $objects0" \
                "$(g branch --list agent) $(g count-objects -v | grep -E '^(count|in-pack):' | tr '\n' ' ')"
        t_eq "$1: no delivery recorded" "" "$(ls "$state/deliveries" 2>/dev/null)"
}
refused() { # NAME RC REGEX ARGS...
        local name=$1 rc=$2 re=$3
        shift 3
        capture_split "$RT" deliver "$@"
        t_eq "$name: exit $rc" "$rc" "$T_RC" "$T_ERR"
        t_match "... one line: $re" "^umwelt-[a-z]+: [^"$'\n'"]*$re[^"$'\n'"]*$" "$T_ERR"
        nothing_left "$name"
}
refused "an unknown subcommand" 2 "expected review, apply, sync, discard or quarantine" push -p "$proj"
refused "apply without --branch" 2 "expected --branch NAME" apply -p "$proj"
refused "an unknown option" 2 "unknown option '--bogus'" apply -p "$proj" --branch agent --bogus
refused "the branch main" 3 "main and master are never delivered to" apply -p "$proj" --branch main
refused "the branch checked out" 3 "the branch checked out on the host" apply -p "$proj" --branch trunk
g config init.defaultBranch dev
refused "init.defaultBranch" 3 "init.defaultBranch" apply -p "$proj" --branch dev
g config --unset init.defaultBranch
mkdir -p "$HOME/.config/umwelt"
printf '[delivery]\nprotected_branches = ["release"]\nhold = ["src/main.c"]\n' \
        >"$HOME/.config/umwelt/config.toml"
refused "a branch the user's config protects" 3 "protected in the user config" \
        apply -p "$proj" --branch release
capture_split "$RT" deliver review -p "$proj" --json
t_match "a name the user's config holds is held" \
        '.*"path": *"src/main.c"[^}]*"bucket": *"hold", *"reason": *"named in the user config".*' \
        "$(tr -d '\n' <<<"$T_OUT" | sed 's/},/}\n/g')" "$T_ERR"
printf '[delivery]\nhold = ["/abs"]\n' >"$HOME/.config/umwelt/config.toml"
refused "a bad [delivery] hold name" 3 "config.toml:2:9: delivery.hold\[0\]: expected a relative name" \
        review -p "$proj"
rm "$HOME/.config/umwelt/config.toml"
refused "a leading -" 3 "expected a valid git branch name" apply -p "$proj" --branch -x
refused "a bad branch name" 3 "expected a valid git branch name" apply -p "$proj" --branch 'a..b'
refused "--include of no change" 3 "no such change in the layer" \
        apply -p "$proj" --branch agent --include nope.txt
refused "--include of a rejected path" 3 "rejected .*never delivered" \
        apply -p "$proj" --branch agent --include "$(printf 'bad\377name')"
refused "--include of an applied path" 3 "not held" \
        apply -p "$proj" --branch agent --include new.txt
refused "--include of the nested repository" 3 "a nested repository is not delivered" \
        apply -p "$proj" --branch agent --include sub
refused "--since of no delivery" 4 "no such delivery" review -p "$proj" --since 3

# apply: the apply bucket, the link and the mode change included.
capture_split "$RT" deliver apply -p "$proj" --branch agent --include shadow --include keep.txt
t_eq "root: apply" 0 "$T_RC" "$T_ERR"
t_match "... numbered, on the branch" "^delivery 1: 11 delivered, [0-9]+ held, [0-9]+ rejected: [0-9a-f]{40} on agent$" "$T_OUT"
t_eq "... no hook ran" "" "$(cd "$T_TMP" && ls -d HOOK-* 2>/dev/null)"
t_eq "... the index as it was" "$index0" "$(sha1sum <"$proj/.git/index")"
t_eq "... the working tree as it was" "$status0" "$(g status --porcelain)"
t_eq "... HEAD still on trunk at the baseline" "trunk $base" \
        "$(g symbolic-ref --short HEAD) $(g rev-parse HEAD)"
t_eq "... the branch's parent is the baseline" "$base" "$(g rev-parse agent~1)"
t_eq "... its tree: the baseline plus exactly what went" \
        "build.sh conflict.txt keep.txt new.txt olddir renamed.txt shadow src/main.c todir/in" \
        "$(g ls-tree -r --name-only agent | tr '\n' ' ' | sed 's/ $//')"
t_eq "... keep.txt now 100755, shadow 120000" "100755 keep.txt 120000 shadow" \
        "$(g ls-tree agent keep.txt shadow | awk '{print $1, $4}' | tr '\n' ' ' | sed 's/ $//')"
t_eq "... the link delivered as its text, its target never read" "/etc/shadow" \
        "$(g cat-file blob agent:shadow)"
t_eq "... the directory become a file, the file a directory" "now a file in" \
        "$(g show agent:olddir) $(g show agent:todir/in)"
t_eq "... the edit as the agent made it" "a B c" "$(g show agent:src/main.c | tr '\n' ' ' | sed 's/ $//')"
t_eq "... the conflict not delivered: the baseline's" "one two three" \
        "$(g show agent:conflict.txt | tr '\n' ' ' | sed 's/ $//')"
t_eq "... author and committer: the host user's git identity" \
        "Host User <host@example.org> Host User <host@example.org>" \
        "$(g log -1 --format='%an <%ae> %cn <%ce>' agent)"
t_eq "... the record 0600" "600" "$(stat -c %a "$state/deliveries/1.json")"
t_match "... recording branch, commit and each file's bucket and blob" \
        '"branch": *"agent".*"commit": *"[0-9a-f]{40}".*"path": *"shadow", *"bucket": *"hold", *"delivered": *true.*"blob": *"[0-9a-f]{40}"' \
        "$(tr -d '\n' <"$state/deliveries/1.json")"
t_match "... one audit line listing each file and its bucket" \
        '"event":"deliver",.*"number":1,.*"branch":"agent".*\{"path":"src/main.c","bucket":"apply","delivered":true\}' \
        "$(grep '"event":"deliver"' "$state/audit.jsonl")"
capture_split "$RT" deliver apply -p "$proj" --branch agent --include shadow --include keep.txt
t_eq "root: the same again: nothing to deliver, exit 6" 6 "$T_RC" "$T_ERR"

# A second session: the branch moves forward, --since shows what is new.
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$proj" --workspace review -- \
        /bin/sh -c 'printf "newer\n" >new.txt; echo 2 >second.txt'
t_eq "root: a second session on the layer" 0 "$T_RC" "$T_ERR"
capture_split "$RT" deliver review -p "$proj" --json
since_last=$(t_buckets <<<"$T_OUT" | cut -f1 | grep -v -e bin.dat -e big.txt -e sub -e name -e conflict | tr '\n' ' ')
t_eq "root: review (--since last) shows only the newer changes" "new.txt second.txt " "$since_last" "$T_OUT"
capture_split "$RT" deliver review -p "$proj" --since start --json
t_match "... --since start shows every change" "src/main.c" "$(t_buckets <<<"$T_OUT")"
capture_split "$RT" deliver apply -p "$proj" --branch agent -m "second delivery" \
        --include conflict.txt --include bin.dat --include big.txt
t_match "root: a second apply, the conflict, the binary, the large file included" "^delivery 2: " "$T_OUT" "$T_ERR"
t_eq "... the conflict as the agent wrote it" "one two agent" \
        "$(g show agent:conflict.txt | tr '\n' ' ' | sed 's/ $//')"
t_eq "... the binary and the large file byte for byte" \
        "$(cat "$state/layer/upper/bin.dat" "$state/layer/upper/big.txt" | sha1sum)" \
        "$( (g cat-file blob agent:bin.dat; g cat-file blob agent:big.txt) | sha1sum)"
first=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commit"])' "$state/deliveries/1.json")
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$proj" --workspace review -- \
        /bin/sh -c 'echo 3 >third.txt'
capture_split "$RT" deliver apply -p "$proj" --branch agent --json
t_match "root: apply --json" \
        '^\{"delivery":3,"kind":"apply","branch":"agent","commit":"[0-9a-f]{40}","delivered":[0-9]+,"held":[0-9]+,"rejected":[0-9]+\}$' \
        "$T_OUT" "$T_ERR"
t_eq "... the branch moved forward from the second" "$(g rev-parse agent~1)" \
        "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["commit"])' "$state/deliveries/2.json")"
t_eq "... the branch moved forward from the first" "$first second delivery" \
        "$(g rev-parse agent~2) $(g log -1 --format=%s agent~1)"
t_eq "... with the newer file" "newer" "$(g show agent:new.txt)"
t_eq "... still no hook ran" "" "$(cd "$T_TMP" && ls -d HOOK-* 2>/dev/null)"

# discard: refused while the sandbox is up, then the layer is gone.
capture_split "$RT" --root "$T_ROOT" sandbox up -p "$proj" --workspace review
t_eq "root: up in review mode" 0 "$T_RC" "$T_ERR"
capture_split "$RT" --root "$T_ROOT" deliver discard -p "$proj"
t_eq "root: discard while up: exit 6" 6 "$T_RC" "$T_ERR"
st=$(g status --porcelain)
capture_split "$RT" --root "$T_ROOT" deliver sync -p "$proj"
t_eq "root: sync while up: exit 6, the tree as it was" "6 $st" "$T_RC $(g status --porcelain)" "$T_ERR"
t_eq "... the layer kept" "yes" "$([[ -d $state/layer/upper ]] && echo yes)"
"$RT" --root "$T_ROOT" sandbox down -p "$proj" >/dev/null 2>&1
capture_split "$RT" --root "$T_ROOT" deliver discard -p "$proj"
t_eq "root: discard" 0 "$T_RC" "$T_ERR"
t_eq "... the layer gone (work/work's 000 too)" "" "$(ls -A "$state/layer" 2>/dev/null)"
capture_split "$RT" deliver review -p "$proj"
t_eq "... review finds no layer: exit 4" 4 "$T_RC" "$T_ERR"

# ------------------------------------------------------------- sync
plain=$T_TMP/plain
mkdir -p "$plain"
echo b >"$plain/b.txt"
echo c >"$plain/c.txt"
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$plain" --workspace review -- /bin/sh -c \
        'echo a >a.txt; mkdir -p d/e; echo f >d/e/f.txt; echo B >b.txt; rm c.txt
         printf "#!/bin/sh\n" >run.sh; chmod +x run.sh'
t_eq "sync: the agent's work in a project without git" 0 "$T_RC" "$T_ERR"
capture_split "$RT" deliver apply -p "$plain" --branch agent
t_eq "sync: apply without a repository: exit 4" 4 "$T_RC" "$T_ERR"
capture_split "$RT" deliver review -p "$plain"
t_match "sync: review without a repository (no conflicts to look for)" \
        "5 changed: 4 apply, 1 hold, 0 reject$" "$T_OUT" "$T_ERR"
capture_split "$RT" deliver sync -p "$plain"
t_match "sync: written into the host's tree" "^delivery 1: 4 delivered, 1 held" "$T_OUT" "$T_ERR"
t_eq "... adds, edits, deletions; the held script not" "a B f absent absent" \
        "$(cat "$plain/a.txt" "$plain/b.txt" "$plain/d/e/f.txt" | tr '\n' ' ')$([[ -e $plain/c.txt ]] || echo absent) $([[ -e $plain/run.sh ]] || echo absent)"
capture_split "$RT" deliver sync -p "$plain" --include run.sh
t_eq "sync: --include of the script: its exec bit kept" "0 755" "$T_RC $(stat -c %a "$plain/run.sh")" "$T_ERR"

# A link the user made on the host where the agent made a directory:
# review shows it deleted, sync removes the link and never follows it.
plain2=$T_TMP/plain2
mkdir -p "$plain2/olddir/x" "$T_TMP/outside"
echo keep >"$plain2/keep.txt"
echo z >"$plain2/olddir/x/z"
echo t >"$plain2/todir"
capture_split "$RT" --root "$T_ROOT" sandbox run -p "$plain2" --workspace review -- /bin/sh -c \
        'mkdir x; echo f >x/f; rm -r olddir; echo file >olddir; rm todir; mkdir todir; echo in >todir/in'
ln -s "$T_TMP/outside" "$plain2/x"
capture_split "$RT" deliver sync -p "$plain2"
t_eq "sync: a host link, a directory become a file, a file become a directory" 0 "$T_RC" "$T_ERR"
t_eq "... the link removed, not followed; each type replaced" "|f file in" \
        "$(ls "$T_TMP/outside")|$(cat "$plain2/x/f" "$plain2/olddir" "$plain2/todir/in" | tr '\n' ' ' | sed 's/ $//')"

# ------------------------------------------------------------- the user
proj=$T_TMP/uproj
make_project "$proj"
chown -R "$U:$G" "$proj"
rm -f "$T_TMP"/HOOK-*
chmod 777 "$T_TMP"
capture_split as_user "$RT" sandbox run -p "$proj" --workspace review -- /bin/sh -c "$AGENT"
t_eq "user: the agent's work in a review-mode sandbox" 0 "$T_RC" "$T_ERR"
# Host git as the user: root's would rewrite the index as root's.
g() { as_user git -C "$proj" "$@"; }
status0=$(g status --porcelain)
index0=$(sha1sum <"$proj/.git/index")
# The host moves on after the layer began; the layer's baseline says where
# it began (written when the layer is made).
ubase=$(g rev-parse HEAD)
uhome=$(ls -d "$XDG"/.local/state/umwelt/uproj-*)
echo later >"$proj/later.txt"
as_user git -C "$proj" add later.txt
as_user git -C "$proj" commit -qm later
rm -f "$T_TMP"/HOOK-* # host git's own commit ran them: that is git, not a delivery
echo nonsense >"$uhome/layer/baseline"
capture_split as_user "$RT" deliver apply -p "$proj" --branch agent
t_match "user: a malformed baseline file: exit 3" "^3 .*layer/baseline: expected one line, a 40-hex commit id" \
        "$T_RC $T_ERR"
echo "$ubase" >"$uhome/layer/baseline"
status0=$(g status --porcelain)
index0=$(sha1sum <"$proj/.git/index")
capture_split as_user "$RT" deliver apply -p "$proj" --branch agent --include shadow
t_match "user: apply" "^delivery 1: 11 delivered" "$T_OUT" "$T_ERR"
t_eq "... from the baseline, not the host's HEAD now" "$ubase" "$(g rev-parse agent~1)"
t_eq "... the branch's files (no conflict here: conflict.txt goes)" \
        "conflict.txt new.txt renamed.txt shadow src/main.c todir todir/in" \
        "$(g diff --name-only "$ubase" agent | grep -v -e gone -e old | tr '\n' ' ' | sed 's/ $//')"
t_eq "... the link as its text" "/etc/shadow" "$(g cat-file blob agent:shadow)"
t_eq "... no hook ran, index and tree as they were" "|$index0|$status0" \
        "$(cd "$T_TMP" && ls -d HOOK-* 2>/dev/null)|$(sha1sum <"$proj/.git/index")|$(g status --porcelain)"
t_eq "... the objects the user's" "" "$(find "$proj/.git" ! -user "$U" | head -3)"
capture_split as_user "$RT" deliver discard -p "$proj"
t_eq "user: discard, as the user" 0 "$T_RC" "$T_ERR"
t_eq "... the layer gone" "" "$(ls -A "$XDG"/.local/state/umwelt/uproj-*/layer 2>/dev/null)"

t_done
