#!/bin/bash
# umwelt-run sandbox run: the closed default proved from inside a sandbox on
# the host's read-only /, a grant, a refused grant, the audit log. As root
# (root with no capability); the rootless path is sandbox-rootless.sh.
T_NAME=sandbox
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup

# A private HOME and state dir: the default floor's grant roots include HOME,
# and the audit log goes under XDG_STATE_HOME.
export HOME=$T_TMP/home XDG_STATE_HOME=$T_TMP/state
mkdir -p "$HOME/data" "$HOME/.ssh" "$T_TMP/proj/.git/hooks"
echo secret >"$HOME/.ssh/id_test"
echo granted >"$HOME/data/file"
echo '[core]' >"$T_TMP/proj/.git/config"
echo 'echo planted' >"$T_TMP/proj/.bashrc"
proj=$T_TMP/proj

# sbx ARGS... -- CMD...: a sandbox run in the project with credentials in
# the caller's environment; T_RC, T_OUT (stdout), T_ERR (stderr).
sbx() {
        env GITHUB_TOKEN=do-not-pass AWS_SECRET_ACCESS_KEY=x "$RT" --root "$T_ROOT" \
                sandbox run -p "$proj" "$@" >"$T_TMP/sbx.out" 2>"$T_TMP/sbx.err" </dev/null
        T_RC=$?
        T_OUT=$(cat "$T_TMP/sbx.out")
        T_ERR=$(cat "$T_TMP/sbx.err")
}

sbx -- /bin/sh -c 'exit 7'
t_eq "sandbox run returns the command's exit status" 7 "$T_RC" "$T_OUT"

sbx -- /bin/sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | tr "\n" " "'
t_eq "no network interface but lo" "lo " "$T_OUT"

sbx -- /bin/sh -c "ls -A $HOME/.ssh 2>&1; ls -A /root | wc -l"
t_match "the home directory's contents are not visible" "(No such file|^0$)" "$T_OUT" "$T_OUT"
t_nomatch "the ssh key is not visible" "id_test" "$T_OUT"

sbx -- /bin/sh -c 'grep -E "^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):" /proc/self/status | tr -s "\t" " " | tr "\n" " "'
t_match "no capability in any set" "CapInh: 0+ CapPrm: 0+ CapEff: 0+ CapBnd: 0+ CapAmb: 0+ " "$T_OUT"
t_match "no_new_privs and a seccomp filter" "NoNewPrivs: 1 Seccomp: 2" "$T_OUT"

sbx -- /bin/sh -c "touch $proj/made && echo ws-ok; touch /usr/umwt-x 2>/dev/null || echo root-ro; touch /tmp/x && echo tmp-ok"
t_eq "workspace writable, / read-only, /tmp writable" "ws-ok root-ro tmp-ok" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')"
t_eq "review mode by default: a file made in the workspace is not on the host" no \
        "$([[ -e $proj/made ]] && echo yes || echo no)"
sbx -- /bin/sh -c "cat $proj/made && echo seen"
t_eq "... but the next sandbox sees it (the layer continues)" seen "$T_OUT" "$T_ERR"
sbx --workspace direct -- /bin/sh -c "touch $proj/made-direct"
t_eq "--workspace direct: a file made in the workspace is there on the host" yes \
        "$([[ -e $proj/made-direct ]] && echo yes)" "$T_ERR"
mkdir -p "$HOME/.config/umwelt"
printf '[workspace]\nmode = "direct"\n' >"$HOME/.config/umwelt/config.toml"
sbx -- /bin/sh -c "touch $proj/made-by-config"
t_eq "[workspace] mode = \"direct\" in the user's config: in place" yes \
        "$([[ -e $proj/made-by-config ]] && echo yes)" "$T_ERR"
sbx --workspace review -- /bin/sh -c "touch $proj/made-review"
t_eq "... and --workspace review overrides it for one start" no \
        "$([[ -e $proj/made-review ]] && echo yes || echo no)" "$T_ERR"
rm "$HOME/.config/umwelt/config.toml"
t_eq "... and nothing leaked to the host's /usr" no "$([[ -e /usr/umwt-x ]] && echo yes || echo no)"

sbx --workspace direct -- /bin/sh -c "echo x >> $proj/.git/config 2>/dev/null || echo cfg-ro; touch $proj/.git/hooks/pre-commit 2>/dev/null || echo hooks-ro; echo x >> $proj/.bashrc 2>/dev/null || echo rc-ro"
t_eq ".git/config, .git/hooks and .bashrc are read-only" "cfg-ro hooks-ro rc-ro" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')"

sbx -- /bin/sh -c 'env | grep -cE "TOKEN|SECRET|AWS_" ; hostname'
t_eq "no credential in the environment" 0 "$(head -1 <<<"$T_OUT")"
t_eq "hostname is umwelt-<project>" umwelt-proj "$(sed -n 2p <<<"$T_OUT")"

sbx --grant "$HOME/data" -- /bin/sh -c "cat $HOME/data/file; touch $HOME/data/new 2>/dev/null || echo grant-ro"
t_eq "a grant inside a grant root is visible read-only" "granted grant-ro" "$(tr '\n' ' ' <<<"$T_OUT" | sed 's/ $//')"

sbx --grant /etc -- /bin/true
t_eq "a grant outside every grant root is refused (exit 3)" 3 "$T_RC" "$T_ERR"
t_match "... naming the grant" "/etc" "$T_ERR"

sbx --grant "$HOME/.ssh" -- /bin/true
t_eq "a never-granted path is refused (exit 3)" 3 "$T_RC" "$T_ERR"
t_match "root is told it holds no capability" "no capability" "$(sbx -- /bin/true; echo "$T_ERR")"

log=$(cat "$XDG_STATE_HOME"/umwelt/proj-*/audit.jsonl 2>/dev/null)
t_match "the audit log has start lines" '"event":"start"' "$log"
t_match "... stop lines with the status" '"event":"stop".*"status":"7"' "$log"
t_match "... the grant given" '"event":"grant","path":"[^"]*/home/data","mode":"ro"' "$log"
t_match "... and the refusals" '"event":"refusal"' "$log"
t_eq "the audit log is 0600" 600 "$(stat -c %a "$XDG_STATE_HOME"/umwelt/proj-*/audit.jsonl)"
# Bad project policy: policy accept refuses it with one line naming
# FILE:LINE:COLUMN, exit 3; unaccepted, a run refuses it; nothing started.
bad_policy() {
        local name=$1 text=$2 want=$3
        printf '%s\n' "$text" >"$proj/.umwelt.toml"
        T_ERR=$("$RT" policy accept -p "$proj" 2>&1 >/dev/null)
        T_RC=$?
        t_eq "$name: not accepted, exit 3" 3 "$T_RC" "$T_ERR"
        t_match "$name: names the place" "$want" "$T_ERR"
        sbx -- /bin/sh -c 'echo STARTED'
        t_eq "$name: a run refuses it, exit 3" "3 never accepted" \
                "$T_RC $(grep -o 'never accepted' <<<"$T_ERR")" "$T_ERR"
        t_eq "$name: nothing started" "" "$T_OUT$(rt list -q)"
}
bad_policy "unknown key in .umwelt.toml" 'presett = "dev"' '\.umwelt\.toml:1:1: .*presett'
bad_policy "wrong type in .umwelt.toml" 'preset = 3' '\.umwelt\.toml:1:10: .*string'
bad_policy "a float in .umwelt.toml" $'preset = "dev"\nx = 1.5' '\.umwelt\.toml:2:'
bad_policy "a project widening review mode to direct" $'[workspace]\nmode = "direct"' \
        '\.umwelt\.toml:2:8: workspace\.mode: a project may not widen review mode to direct.*'
bad_policy "an unknown workspace mode" $'[workspace]\nmode = "copy"' \
        '\.umwelt\.toml:2:8: workspace\.mode: expected "review" or "direct", found "copy"'
sbx --workspace bogus -- true
t_eq "--workspace bogus: exit 2, one line" "2 1" "$T_RC $(grep -c . <<<"$T_ERR")" "$T_ERR"
t_match "... naming what is expected" '.*--workspace bogus: expected review or direct.*' "$T_ERR"
# A grant is resolved at the start, against the file system as it is then.
printf '[[grant]]\npath = "/etc"\n' >"$proj/.umwelt.toml"
"$RT" policy accept -p "$proj" >/dev/null
sbx -- /bin/sh -c 'echo STARTED'
t_eq "a [[grant]] outside the grant roots, accepted: a run refuses it, exit 3" 3 "$T_RC" "$T_ERR"
t_match "... names the place" '\.umwelt\.toml:1:1.*/etc' "$T_ERR"
t_eq "... nothing started" "" "$T_OUT$(rt list -q)"
rm -f "$proj/.umwelt.toml"

out=$("$RT" sandbox log -p "$proj" 2>&1)
t_match "sandbox log prints the events as text" " start id=umwelt-proj-.* stop id=" "$(tr '\n' ' ' <<<"$out")" "$out"
out=$("$RT" sandbox log -p "$proj" --json 2>&1)
t_eq "sandbox log --json is one JSON array of the events" yes \
        "$(python3 -c 'import json,sys; a=json.loads(sys.stdin.read()); print("yes" if isinstance(a, list) and a and all("event" in e for e in a) else "no")' <<<"$out" 2>&1)" "$out"
mkdir -p "$T_TMP/other"
"$RT" sandbox log -p "$T_TMP/other" >/dev/null 2>&1
t_eq "sandbox log of a project without a log exits 4" 4 $?
t_eq "no sandbox container is left" "" "$(rt list -q)"
t_done
