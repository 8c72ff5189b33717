#!/bin/bash
# umwelt-mcp install|uninstall on each harness's real-looking configuration
# (tests/fixtures/harness/: comments, other servers and settings): the
# entry and the denials land, install twice is install once, --dry-run
# prints a diff and writes nothing, uninstall gives the files back byte for
# byte. Then the harnesses themselves, pinned in tests/npm/harness/ and
# installed with npm into the build directory, read the result with
# their own list and config commands: the umwelt server listed, no config
# error, their own bash, edit and write off. Needs no root; the harness
# checks are skipped, with the reason, where npm cannot install them.
# run.sh timeout: 900
. "$(dirname "$0")/lib.sh"

UMW=$UMW_BUILDDIR/umwelt-mcp
FIX=$UMW_SRCDIR/tests/fixtures/harness
[[ -x $UMW ]] || t_bail "$UMW is not built"
UMW=$(realpath "$UMW")
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/umwt-$T_NAME.XXXXXX") || t_bail "mktemp failed"
trap t_cleanup EXIT
# umwelt's state (the records) and the harnesses' homes stay in T_TMP.
export XDG_STATE_HOME=$T_TMP/state HOME=$T_TMP/home
mkdir -p "$XDG_STATE_HOME" "$HOME"

# project NAME: a fresh copy of the fixture project NAME; sets P.
project() {
        P=$T_TMP/proj-$1-$RANDOM
        mkdir -p "$P"
        cp -a "$FIX/$1/." "$P/"
        P=$(realpath "$P")
}

# files_of NAME: the fixture's files, relative.
files_of() { (cd "$FIX/$1" && find . -type f | sort); }

# same_as_fixture NAME: ok when every file of P is the fixture's, byte for byte.
same_as_fixture() {
        local f bad=()
        for f in $(files_of "$1"); do
                cmp -s "$FIX/$1/$f" "$P/$f" || bad+=("$f differs")
        done
        t_eq "$1: uninstall gives back the user's files byte for byte" "" "${bad[*]}" \
                "$(cd "$P" && for f in $(files_of "$1"); do diff -u "$FIX/$1/$f" "$f"; done)"
}

# snapshot: every file of P with its contents, to compare runs by.
snapshot() { (cd "$P" && find . -type f | sort | xargs -r sha256sum); }

# install_checks NAME FILE PATTERN...: install into a copy of fixture NAME;
# FILE then matches each PATTERN (grep -E), a second install changes
# nothing, uninstall restores the fixture.
install_checks() {
        local name=$1 file=$2 pat before after
        shift 2
        project "$name"
        capture "$UMW" install "$name" --project "$P" --dry-run
        t_eq "$name: --dry-run exits 0" 0 "$T_RC" "$T_OUT"
        t_match "$name: --dry-run prints a unified diff" $'^--- [^\n]+\n\\+\\+\\+ [^\n]+\n@@ -[0-9]' "$T_OUT"
        same_as_fixture "$name"
        t_run "$name: install" "$UMW" install "$name" --project "$P"
        for pat in "$@"; do
                t_match "$name: $file holds /$(pattern_name "$pat")/" "$pat" "$(cat "$P/$file")"
        done
        before=$(snapshot)
        capture "$UMW" install "$name" --project "$P"
        after=$(snapshot)
        t_eq "$name: a second install changes nothing" "$before" "$after" "$T_OUT"
        t_match "$name: ... and says so" "already installed, nothing to change" "$T_OUT"
}

uninstall_checks() {
        t_run "$1: uninstall" "$UMW" uninstall "$1" --project "$P"
        same_as_fixture "$1"
        capture "$UMW" uninstall "$1" --project "$P"
        t_eq "$1: a second uninstall has no record (exit 4)" 4 "$T_RC" "$T_OUT"
}

# ---------------------------------------------------------------- the files

# pattern_name PATTERN: a test name of one line.
pattern_name() { printf '%s' "${1//$'\n'/\\n}"; }

install_checks opencode opencode.json \
        '"umwelt": \{' "\"command\": \\[\"$UMW\", \"--project\", \"[^\"]+\"\\]" \
        $'"\\*": "allow",\n    "webfetch": "ask",\n    "bash": "deny",\n    "edit": "deny"\n' \
        '// on when debugging production'
uninstall_checks opencode
install_checks claude .mcp.json '"postgres": \{' '"umwelt": \{' '"type": "stdio"' \
        "\"command\": \"$UMW\","
t_match "claude: settings.json denies Bash, Edit, Write" \
        '"Write",[[:space:]]+"Bash",[[:space:]]+"Edit"' "$(cat "$P/.claude/settings.json")"
uninstall_checks claude
install_checks codex .codex/config.toml $'\\[mcp_servers.umwelt\\]\ncommand = "[^"]+"\nargs = \\["--project", "[^"]+"\\]' \
        $'web_search_request = true\nshell_tool = false\n' $'approval_policy = "on-request"\nsandbox_mode = "read-only"\n' \
        '# the docs server'
uninstall_checks codex

# A new project: files made, and gone again with uninstall.
P=$T_TMP/empty && mkdir -p "$P"
for h in opencode claude codex; do
        t_run "$h: install into a project without configuration" "$UMW" install "$h" --project "$P"
done
t_run "all three: uninstall" bash -c "for h in opencode claude codex; do '$UMW' uninstall \$h --project '$P' || exit; done"
t_eq "the files and directories install made are gone" "" "$(ls -A "$P")"

# Refusals: a symlinked config, a file that does not parse.
project claude
mv "$P/.mcp.json" "$P/servers.json" && ln -s servers.json "$P/.mcp.json"
capture_split "$UMW" install claude --project "$P"
t_eq "a symlinked .mcp.json is refused (exit 3)" 3 "$T_RC" "$T_ERR"
t_match "... with one line naming it" "^umwelt-mcp: $P/.mcp.json: a symbolic link[^"$'\n'"]*$" "$T_ERR"
project codex
printf '[features\nshell_tool = true\n' >"$P/.codex/config.toml"
capture_split "$UMW" install codex --project "$P"
t_eq "a config.toml that does not parse is refused (exit 3)" 3 "$T_RC" "$T_ERR"
t_eq "... with FILE:LINE:COL and what was expected" \
        "umwelt-mcp: $P/.codex/config.toml:1:10: expected ']'" "$T_ERR"

# ---------------------------------------------------------------- the harnesses

NPMDIR=$UMW_BUILDDIR/tests/npm/harness
NM=$NPMDIR/node_modules

# npm_harnesses: the pinned harnesses in NPMDIR, unless installed already
# from the same lock. Sets NPM_SKIP to why not, where they cannot be.
npm_harnesses() {
        NPM_SKIP=
        command -v npm >/dev/null || {
                NPM_SKIP="no npm here"
                return
        }
        local lock=$UMW_SRCDIR/tests/npm/harness/package-lock.json
        cmp -s "$lock" "$NM/.umwelt-lock" && return
        mkdir -p "$NPMDIR" || return
        cp "$UMW_SRCDIR/tests/npm/harness/package.json" "$lock" "$NPMDIR/"
        # The harnesses' binaries come in their platform packages: no
        # install script is needed, and none is run. npm ci wants every
        # platform's package in the lock, and a registry may serve only
        # some (OpenCode's for other systems): npm install, from the same
        # lock and exact versions, skips what it cannot have.
        if ! (cd "$NPMDIR" && timeout 600 npm install --no-save --ignore-scripts --no-audit --no-fund) >"$T_TMP/npm.log" 2>&1; then
                NPM_SKIP="npm could not install the pinned harnesses (registry unreachable?): $(grep -m1 -iE 'err|error' "$T_TMP/npm.log")"
                return
        fi
        cp "$lock" "$NM/.umwelt-lock"
}

npm_harnesses
if [[ -n $NPM_SKIP ]]; then
        for h in opencode claude codex; do
                t_skip "$h reads the installed configuration" "$NPM_SKIP"
        done
        t_done
fi
# The harnesses' own binaries, from their platform packages: OpenCode's
# and Claude Code's launchers are put in place by the install scripts not
# run here. Codex's launcher is a node script that finds its binary.
case $(uname -m) in
x86_64) ARCH=x64 ;;
aarch64) ARCH=arm64 ;;
*) ARCH=$(uname -m) ;;
esac
OPENCODE=$NM/opencode-linux-$ARCH/bin/opencode
CLAUDE=$NM/@anthropic-ai/claude-code-linux-$ARCH/claude
CODEX=$NM/.bin/codex
# No update checks, no telemetry, no network from the harnesses.
export OPENCODE_DISABLE_AUTOUPDATE=1 OPENCODE_DISABLE_SHARE=1 OPENCODE_DISABLE_MODELS_FETCH=1 \
        OPENCODE_DISABLE_DEFAULT_PLUGINS=1 OPENCODE_DISABLE_LSP_DOWNLOAD=1 DISABLE_AUTOUPDATER=1 \
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 NO_UPDATE_NOTIFIER=1

# harness DIR CMD...: CMD (a harness binary) run in DIR, bounded.
harness() {
        local dir=$1
        shift
        capture env -C "$dir" timeout 120 "$@"
}

# missing HARNESS BINARY: true (and the harness's check skipped) where
# BINARY is not there.
missing() {
        [[ -x $2 ]] && return 1
        t_skip "$1 reads the installed configuration" "no $2 from npm for $(uname -m)"
}

# OpenCode: its resolved config has the entry, its build agent has no
# bash, edit or write.
check_opencode() {
        project opencode
        t_run "opencode: install again for the harness" "$UMW" install opencode --project "$P"
        harness "$P" "$OPENCODE" debug config
        t_eq "opencode debug config exits 0" 0 "$T_RC" "$T_OUT"
        t_nomatch "opencode: no configuration error" 'Configuration is invalid|Error:' "$T_OUT"
        t_eq "opencode: mcp.umwelt is its command" "[\"$UMW\", \"--project\", \"$P\"] local" \
                "$("$PY" -c 'import json,sys; d=json.load(sys.stdin)["mcp"]["umwelt"]; print(json.dumps(d["command"]), d["type"])' <<<"$T_OUT" 2>&1)"
        harness "$P" "$OPENCODE" debug agent build
        t_eq "opencode: the build agent's bash, edit and write are off" "False False False" \
                "$("$PY" -c 'import json,sys; t=json.load(sys.stdin)["tools"]; print(t.get("bash"), t.get("edit"), t.get("write"))' <<<"$T_OUT" 2>&1)" \
                "$T_OUT"
        t_run "opencode: uninstall" "$UMW" uninstall opencode --project "$P"
        harness "$P" "$OPENCODE" debug agent build
        t_eq "opencode: ... and after uninstall they are on again" "True True True" \
                "$("$PY" -c 'import json,sys; t=json.load(sys.stdin)["tools"]; print(t.get("bash"), t.get("edit"), t.get("write"))' <<<"$T_OUT" 2>&1)"
}

# Claude Code: the project's server is listed; doctor finds no invalid
# setting.
check_claude() {
        project claude
        t_run "claude: install again for the harness" "$UMW" install claude --project "$P"
        harness "$P" "$CLAUDE" mcp get umwelt
        t_eq "claude mcp get umwelt exits 0" 0 "$T_RC" "$T_OUT"
        t_match "claude: umwelt is a stdio server of the project" \
                $'Scope: Project config[^\n]*\n.*Type: stdio\n.*Command: '"$UMW"$'\n.*Args: --project '"$P" "$T_OUT"
        harness "$P" "$CLAUDE" mcp list
        t_match "claude mcp list lists umwelt" "(^|"$'\n'")umwelt: $UMW --project $P " "$T_OUT"
        harness "$P" "$CLAUDE" doctor
        t_eq "claude doctor exits 0" 0 "$T_RC" "$T_OUT"
        t_nomatch "claude doctor: no invalid settings" 'Invalid settings' "$T_OUT"
}

# codex_tools: the names of the tools in Codex's prompt input (stdin), and
# of those nested in its code mode's exec tool, one line, spaced.
codex_tools() {
        "$PY" -c '
import json, re, sys
text = sys.stdin.read()
items = json.loads(text[text.index("["):])
names = []
def walk(tools):
    for t in tools:
        if t.get("type") == "namespace":
            walk(t.get("tools", []))
            continue
        names.append(t.get("name", ""))
        names.extend(re.findall(r"^### `(\w+)`", t.get("description", ""), re.M))
for item in items:
    if item.get("type") == "additional_tools":
        walk(item["tools"])
print("", *sorted(names), "")
'
}

# Codex: the project's config is read where the project is trusted; the
# server is listed and the shell tools are gone from what the model sees.
check_codex() {
        project codex
        mkdir -p "$HOME/.codex"
        printf '[projects."%s"]\ntrust_level = "trusted"\n' "$P" >"$HOME/.codex/config.toml"
        # What the model is given, asked of the config alone: no server is
        # started, and the model is one whose tools Codex lists in its
        # prompt input (gpt-5.5's go elsewhere). Codex keeps its helpers out
        # of a temporary directory: a warning only.
        local quiet=(-c 'model="gpt-6-sol"' -c mcp_servers.docs.enabled=false
                -c mcp_servers.figma.enabled=false)
        harness "$P" "$CODEX" debug prompt-input "${quiet[@]}"
        t_match "codex: before the install, it has a shell tool" ' exec_command .* write_stdin ' \
                "$(codex_tools <<<"$T_OUT")" "$T_OUT"
        t_run "codex: install again for the harness" "$UMW" install codex --project "$P"
        harness "$P" "$CODEX" mcp list
        t_eq "codex mcp list exits 0" 0 "$T_RC" "$T_OUT"
        t_match "codex: umwelt listed, its command and args" "umwelt +$UMW +--project $P +- +- +enabled" "$T_OUT"
        t_match "codex: the user's servers listed too" $'(^|\n)docs +npx .*\nfigma ' "$T_OUT"
        harness "$P" "$CODEX" mcp get umwelt
        t_match "codex mcp get umwelt: stdio, the command" $'transport: stdio\n +command: '"$UMW" "$T_OUT"
        harness "$P" "$CODEX" debug prompt-input "${quiet[@]}" -c mcp_servers.umwelt.enabled=false
        t_eq "codex debug prompt-input exits 0" 0 "$T_RC" "$T_OUT"
        local tools
        tools=$(codex_tools <<<"$T_OUT")
        t_match "codex: its tools were read" ' apply_patch ' "$tools" "$T_OUT"
        t_nomatch "codex: no shell tool (exec_command, write_stdin) after the install" \
                ' (exec_command|write_stdin) ' "$tools"
        t_match "codex: its sandbox is read-only" 'sandbox_mode. is .read-only' "$T_OUT"

}

missing opencode "$OPENCODE" || check_opencode
missing claude "$CLAUDE" || check_claude
missing codex "$CODEX" || check_codex
t_done
