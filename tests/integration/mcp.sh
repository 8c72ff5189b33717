#!/bin/bash
# umwelt-mcp (umwelt-mcp(1)) driven by real MCP clients installed from npm
# (tests/npm/mcp): the official TypeScript SDK in both protocol eras
# (@modelcontextprotocol/sdk for 2025-11-25, @modelcontextprotocol/client
# pinned to 2026-07-28), as root and as the unprivileged user. Every tool
# and its error cases; the walls through the tools: each path attack that
# fails from bash inside fails through read, write, edit, glob and grep
# too, and a write in review mode lands in the layer, not on the host;
# a long command cancelled is gone with everything it started; a grant
# that waits for a human reports progress until approved; malformed and
# oversized messages are answered and the server goes on; stdin closed
# mid-call ends the server and the command.
# run.sh timeout: 1200
T_NAME=mcp
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
t_keep_floor
floor 'limits_best_effort = true'
. "$(dirname "$0")/helpers/relay-lib.sh"
. "$(dirname "$0")/helpers/npm-lib.sh"

# A host action for host_action, in root's table (t_keep_floor puts
# /etc/umwelt back at exit).
mkdir -p /etc/umwelt
cat >/etc/umwelt/host-actions.toml <<'TOML'
[[action]]
name = "mcp-hello"
description = "say hello"
argv = ["/bin/echo", "hello", "{who}"]
ask = false
[action.params]
who = ["world"]
TOML
chmod 644 /etc/umwelt/host-actions.toml

MCP=$(dirname "$RT")/umwelt-mcp
[[ -x $MCP ]] || t_bail "umwelt-mcp $MCP is not executable"
npm_install mcp
CLIENT=$NPM_DIR/mcp-client.mjs
cp "$UMW_SRCDIR/tests/integration/helpers/mcp-client.mjs" "$CLIENT"
chmod a+r "$CLIENT"

# Marks of the test's own commands, so that only ours are looked for.
LONG=7777.25
STDIN_LONG=7778.25
ours() { pgrep -f "sleep ($LONG|$STDIN_LONG)" | tr '\n' ' '; }
mcp_cleanup() {
        [[ -n $RELAY_PID ]] && kill "$RELAY_PID" 2>/dev/null
        local p
        for p in "$T_TMP"/home/proj "$T_TMP"/home/rproj "$UHOME"/proj "$UHOME"/rproj; do
                [[ -d $p ]] || continue
                "$RT" --root "$T_ROOT" sandbox down -p "$p" >/dev/null 2>&1
                U_ "$RT" sandbox down -p "$p" >/dev/null 2>&1
        done
        for p in $(ours); do kill -KILL "$p"; done
        return 0
}
T_EXTRA_CLEANUP=mcp_cleanup

# M SDK STEPS [OPTION...]: the test client as WHO, umwelt-mcp serving PROJ.
M() {
        local sdk=$1 steps=$2
        shift 2
        if [[ $WHO == root ]]; then
                env HOME="$T_TMP/home" XDG_STATE_HOME="$T_TMP/state" node "$CLIENT" "$sdk" "$steps" -- \
                        "$MCP" --project "$PROJ" --root "$T_ROOT" "$@"
        else
                U_ node "$CLIENT" "$sdk" "$steps" -- "$MCP" --project "$PROJ" "$@"
        fi
}
# J EXPR: EXPR over the client's lines on stdin (a list L of objects).
J() { "$PY" -c 'import json,sys
L = [json.loads(l) for l in sys.stdin if l.strip()]
print(eval(sys.argv[1]))' "$1"; }
# call SDK TOOL ARGS-JSON: one call; its line.
call() { M "$1" "[{\"name\":\"$2\",\"arguments\":$3}]"; }
# text_of LINE / err_of LINE
text_of() { J 'L[0].get("text", L[0].get("error"))' <<<"$1"; }
err_of() { J 'L[0].get("isError")' <<<"$1"; }

TOOLS="bash read write edit glob grep ls request_grant host_action host_actions request_egress publish_port note status"

# ------------------------------------------------------------ the eras

eras() {
        local sdk out
        for sdk in v1 v2; do
                out=$(M $sdk '[{"list":true}]')
                t_eq "$WHO $sdk: tools/list lists every tool" "$TOOLS" \
                        "$(J '" ".join(L[0]["tools"])' <<<"$out")" "$out"
                t_eq "$WHO $sdk: the era" "$([[ $sdk == v1 ]] && echo legacy || echo modern)" \
                        "$(J 'L[0]["era"]' <<<"$out")"
                t_eq "$WHO $sdk: every schema takes host" "True" \
                        "$(J 'all("host" in t["inputSchema"]["properties"] for t in L[0]["schemas"])' <<<"$out")"
        done
}

# ------------------------------------------------------------ acting tools

acting() {
        local sdk=$1 out
        out=$(call $sdk bash '{"command":"echo out; echo err >&2; exit 3"}')
        t_eq "$WHO $sdk: bash: stdout, stderr and the exit status" \
                $'out\n[stderr]\nerr\n[exit status 3]' "$(text_of "$out")" "$out"
        t_eq "$WHO $sdk: bash: a failed command is an error result" True "$(err_of "$out")"
        out=$(call $sdk bash '{"command":"pwd; id -u","cwd":"sub"}')
        t_match "$WHO $sdk: bash: cwd, relative to the workspace" "^$PROJ/sub"$'\n' "$(text_of "$out")" "$out"
        out=$(call $sdk bash '{"command":"sleep 30","timeout":1}')
        t_match "$WHO $sdk: bash: killed at its timeout" "killed at its timeout" "$(text_of "$out")" "$out"
        out=$(call $sdk bash '{"command":"head -c 100000 /dev/zero | tr \"\\\\0\" a"}')
        t_match "$WHO $sdk: bash: output over the bound is cut, and said" \
                "stdout cut: 100000 bytes in all, the first 65536 shown" "$(text_of "$out")"
        out=$(call $sdk bash '{"command":"printf \"\\\\377\\\\376ok\""}')
        t_eq "$WHO $sdk: bash: bytes that are not UTF-8 arrive as U+FFFD" \
                $'\ufffd\ufffdok\n[exit status 0]' "$(text_of "$out")" "$out"

        out=$(call $sdk write "{\"path\":\"made/$sdk.txt\",\"content\":\"one\\ntwo\\nthree\\ntwo\\n\"}")
        t_eq "$WHO $sdk: write makes the file and its directory" "wrote 18 bytes to made/$sdk.txt" \
                "$(text_of "$out")" "$out"
        t_eq "$WHO $sdk: write lands in the workspace (direct mode)" $'one\ntwo\nthree\ntwo' \
                "$(cat "$PROJ/made/$sdk.txt")"
        out=$(call $sdk read "{\"path\":\"made/$sdk.txt\",\"offset\":2,\"limit\":2}")
        t_eq "$WHO $sdk: read with offset and limit" $'two\nthree' "$(text_of "$out")" "$out"
        out=$(call $sdk edit "{\"path\":\"made/$sdk.txt\",\"old_string\":\"two\",\"new_string\":\"2\"}")
        t_match "$WHO $sdk: edit refuses a string found twice" "in the file 2 times" "$(text_of "$out")"
        t_eq "$WHO $sdk: ... as an error result" True "$(err_of "$out")"
        out=$(call $sdk edit "{\"path\":\"made/$sdk.txt\",\"old_string\":\"four\",\"new_string\":\"4\"}")
        t_match "$WHO $sdk: edit refuses a string not found" "not in the file" "$(text_of "$out")"
        out=$(call $sdk edit "{\"path\":\"made/$sdk.txt\",\"old_string\":\"three\",\"new_string\":\"3\"}")
        t_eq "$WHO $sdk: edit of a unique string" "replaced 1 occurrence in made/$sdk.txt" "$(text_of "$out")"
        out=$(call $sdk edit "{\"path\":\"made/$sdk.txt\",\"old_string\":\"two\",\"new_string\":\"2\",\"replace_all\":true}")
        t_eq "$WHO $sdk: edit with replace_all" $'one\n2\n3\n2' "$(cat "$PROJ/made/$sdk.txt")" "$out"
        out=$(call $sdk glob '{"pattern":"**/*.txt"}')
        t_match "$WHO $sdk: glob with **" "made/$sdk.txt" "$(text_of "$out")" "$out"
        out=$(call $sdk grep '{"pattern":"^[0-9]$","glob":"*.txt"}')
        t_match "$WHO $sdk: grep: FILE:LINE:TEXT" "made/$sdk.txt:3:3" "$(text_of "$out")" "$out"
        out=$(call $sdk ls '{"path":"made"}')
        t_match "$WHO $sdk: ls" "$sdk.txt" "$(text_of "$out")" "$out"
        out=$(call $sdk read '{"path":"nothing-here"}')
        t_match "$WHO $sdk: read of a missing file is an error result" \
                "nothing-here: No such file or directory" "$(text_of "$out")"
        out=$(call $sdk read '{"path":"/bin/sh"}')
        t_match "$WHO $sdk: read refuses a binary file" "binary file" "$(text_of "$out")"
        out=$(call $sdk read '{}')
        t_match "$WHO $sdk: a missing argument is named" "arguments: \\.path: expected a string" \
                "$(text_of "$out")"
        out=$(call $sdk ls '{"host":"build-farm-7"}')
        t_match "$WHO $sdk: another host is an error result naming what is missing" \
                "host build-farm-7: .*relay over ssh" "$(text_of "$out")"
        out=$(M $sdk '[{"name":"no_such_tool"}]')
        t_match "$WHO $sdk: an unknown tool is -32602" '"code": ?-32602' "$out"
}

# Each call is a line of the project's audit log: tool, what, outcome.
audited() {
        local log
        log=$(S sandbox log -p "$PROJ" --json 2>&1)
        t_eq "$WHO: the calls are in the audit log" \
                "bash echo out; echo err >&2; exit 3 error|edit made/v2.txt ok|ls made ok" \
                "$("$PY" -c 'import json,sys
ev = [e for e in json.load(sys.stdin) if e["event"] == "mcp-call"]
want = [("bash", "echo out; echo err >&2; exit 3"), ("edit", "made/v2.txt"), ("ls", "made")]
print("|".join("%s %s %s" % (t, w, [e for e in ev if e["tool"] == t and e.get("what") == w][-1]["outcome"]) for t, w in want))' <<<"$log" 2>&1)"
}

# ------------------------------------------------------------ walls

# wall NAME TOOL ARGS-JSON SHELL: the tool and `bash -c SHELL` inside both
# fail.
wall() {
        local name=$1 tool=$2 args=$3 shell=$4 out sh
        out=$(call v2 "$tool" "$args")
        sh=$(call v2 bash "$(printf '{"command":%s}' "$("$PY" -c 'import json,sys; print(json.dumps(sys.argv[1]))' "$shell")")")
        t_eq "$WHO: $name: bash inside fails" True "$(err_of "$sh")" "$sh"
        t_eq "$WHO: $name: $tool fails too" True "$(err_of "$out")" "$out"
}

walls() {
        local home=$1 out
        echo "SECRET-$WHO" >"$home/secret.txt"
        ln -sfn "$home/secret.txt" "$PROJ/link-secret"
        ln -sfn "$home/outside.txt" "$PROJ/link-out"
        ln -sfn "$home" "$PROJ/link-home"
        [[ $WHO == user ]] && chown -h "$U:$G" "$home/secret.txt" "$PROJ"/link-*
        wall "the hidden home" read "{\"path\":\"$home/secret.txt\"}" "cat $home/secret.txt"
        wall "a link out of the workspace" read '{"path":"link-secret"}' "cat link-secret"
        wall "up and out" read '{"path":"../secret.txt"}' "cat ../secret.txt"
        # The link's target is the sandbox's own /tmp: what lands there
        # stays there.
        out=$(call v2 write '{"path":"link-out","content":"x"}')
        t_eq "$WHO: a write through a link out reaches no host file" no \
                "$([[ -e $home/outside.txt ]] && echo yes || echo no)" "$out"
        wall "the read-only system" write '{"path":"/usr/local/umwelt-mcp-wall","content":"x"}' \
                "echo x >/usr/local/umwelt-mcp-wall"
        t_eq "$WHO: nothing was written on the system" no \
                "$([[ -e /usr/local/umwelt-mcp-wall ]] && echo yes || echo no)"
        wall "an edit of the system" edit '{"path":"/etc/hostname","old_string":"a","new_string":"b"}' \
                "sed -i s/a/b/ /etc/hostname"
        wall ".git (direct mode)" write '{"path":".git/hooks/pre-commit","content":"#!/bin/sh\n"}' \
                "echo x >.git/hooks/pre-commit"
        wall "the relay's table" read '{"path":"/etc/umwelt/floor.toml"}' "cat /etc/umwelt/floor.toml"
        out=$(call v2 grep '{"pattern":"SECRET","path":"link-home"}')
        t_nomatch "$WHO: grep through a link out finds nothing" "SECRET-" "$(text_of "$out")" "$out"
        out=$(call v2 grep '{"pattern":"SECRET"}')
        t_nomatch "$WHO: grep of the workspace does not follow links" "SECRET-" "$(text_of "$out")" "$out"
        out=$(call v2 glob '{"pattern":"**/secret.txt"}')
        t_match "$WHO: glob does not follow links" "no path matches" "$(text_of "$out")" "$out"
        out=$(call v2 read '{"path":"/proc/1/root/'"${home#/}"'/secret.txt"}')
        t_eq "$WHO: a magic link leads nowhere out" True "$(err_of "$out")" "$out"
}

# Review mode: the tools' writes land in the layer; the host's files and
# its .git are untouched.
review() {
        local out saved=$PROJ
        PROJ=$1
        mkdir -p "$PROJ"
        git -C "$PROJ" init -q && git -C "$PROJ" -c user.name=t -c user.email=t@t commit -q --allow-empty -m init
        echo host >"$PROJ/kept.txt"
        [[ $WHO == user ]] && chown -R "$U:$G" "$PROJ"
        out=$(M v2 '[{"name":"write","arguments":{"path":"kept.txt","content":"agent\n"}},{"name":"edit","arguments":{"path":"kept.txt","old_string":"agent","new_string":"agent2"}},{"name":"write","arguments":{"path":".git/hooks/post-checkout","content":"#!/bin/sh\ntouch /tmp/pwned\n"}},{"name":"read","arguments":{"path":"kept.txt"}}]' --workspace review)
        t_eq "$WHO review: the agent reads its own write" "agent2" "$(J 'L[3]["text"].strip()' <<<"$out")" "$out"
        t_eq "$WHO review: the host's file is untouched" host "$(cat "$PROJ/kept.txt")"
        t_eq "$WHO review: no hook reached the host's .git" no \
                "$([[ -e $PROJ/.git/hooks/post-checkout ]] && echo yes || echo no)"
        t_match "$WHO review: the write is in the layer (deliver review shows it)" "kept.txt" \
                "$(S deliver review -p "$PROJ" 2>&1)"
        S sandbox down -p "$PROJ" >/dev/null 2>&1
        PROJ=$saved
}

# ------------------------------------------------------------ cancel, progress

cancel() {
        local out
        out=$(M v2 "[{\"name\":\"bash\",\"arguments\":{\"command\":\"sleep $LONG & sleep $LONG\"},\"cancelAfter\":1500},{\"name\":\"bash\",\"arguments\":{\"command\":\"echo after\"}}]")
        t_eq "$WHO: a cancelled call ends at once" True "$(J 'L[0]["cancelled"] and L[0]["ms"] < 3000' <<<"$out")" "$out"
        t_eq "$WHO: the server serves on after a cancel" $'after\n[exit status 0]' \
                "$(J 'L[1]["text"].strip()' <<<"$out")"
        local left
        for _ in $(seq 40); do left=$(ours); [[ -z $left ]] && break; sleep 0.1; done
        t_eq "$WHO: the cancelled command and its child are gone" "" "$left"
}

# asked SDK STEP WAIT DECISION...: STEP (one call of a tool that asks the
# relay) in the background; once it is pending, ID its id and PENDING its
# kind, mode, path and why; WAIT seconds; then `relay DECISION ID ...`;
# OUT the call's line once it ended.
asked() {
        local sdk=$1 step=$2 wait=$3 client f
        shift 3
        M "$sdk" "[$step]" >"$T_TMP/asked" 2>&1 &
        client=$!
        ID=$(wait_pending)
        PENDING=
        for f in kind mode path why; do PENDING+="$(pending_field "$ID" $f) "; done
        PENDING=${PENDING% }
        sleep "$wait"
        S relay "$1" "$ID" "${@:2}" >/dev/null 2>&1
        wait "$client"
        OUT=$(cat "$T_TMP/asked")
}

asking() {
        local home=$1 data=$1/data out
        mkdir -p "$data" && echo granted-content >"$data/f"
        [[ $WHO == user ]] && chown -R "$U:$G" "$data"
        asked v1 "{\"name\":\"request_grant\",\"arguments\":{\"path\":\"$data\",\"mode\":\"ro\",\"why\":\"read the data\"},\"progress\":true}" \
                2.2 approve # a progress tick or two while it waits
        t_eq "$WHO: the grant waits for a human" "grant ro $data read the data" "$PENDING"
        t_eq "$WHO: request_grant is granted" False "$(J 'L[0]["isError"]' <<<"$OUT")" "$OUT"
        t_match "$WHO: progress said it waits for approval" "waiting for approval of request $ID" \
                "$(J '"\n".join(L[0]["progress"])' <<<"$OUT")"
        out=$(call v2 read "{\"path\":\"$data/f\"}")
        t_eq "$WHO: the granted path reads through the tool" granted-content "$(text_of "$out")" "$out"
        out=$(call v2 status '{}')
        t_match "$WHO: status lists the grant" "grant ro $data" "$(text_of "$out")" "$out"

        asked v2 "{\"name\":\"request_grant\",\"arguments\":{\"path\":\"$home/secret.txt\",\"why\":\"no\"}}" \
                0 deny --why "not that"
        t_eq "$WHO: a denied grant is an error result" True "$(err_of "$OUT")" "$OUT"
        t_match "$WHO: ... saying why" "denied: not that" "$(text_of "$OUT")"
        out=$(call v2 note '{"text":"from the mcp test"}')
        t_eq "$WHO: note" False "$(err_of "$out")" "$out"
        asked v1 '{"name":"request_egress","arguments":{"rule":"pypi.org:443","why":"pip install"}}' \
                0 deny --why "not today"
        t_eq "$WHO: request_egress waits for a human" "egress   pip install" "$PENDING"
        t_match "$WHO: a denied egress rule is an error result, saying why" "denied: not today" \
                "$(text_of "$OUT")" "$OUT"
        out=$(call v2 request_egress '{"rule":"not a rule!","why":"x"}')
        t_eq "$WHO: a bad egress rule is refused without asking" True "$(err_of "$out")" "$out"
        out=$(call v2 publish_port '{"port":70000,"why":"x"}')
        t_match "$WHO: a bad port is named" "arguments: \\.port" "$(text_of "$out")" "$out"
        out=$(call v2 host_actions '{}')
        t_match "$WHO: host_actions lists the table's action" "mcp-hello .*say hello.*--param who=world" "$(text_of "$out")" "$out"
        out=$(call v2 host_action '{"name":"mcp-hello","params":{"who":"world"},"why":"greet"}')
        t_eq "$WHO: host_action runs it on the host" $'exit status 0\nstdout:\nhello world\n\nstderr:' \
                "$(text_of "$out")" "$out"
        out=$(call v2 host_action '{"name":"mcp-hello","params":{"who":"$(id)"},"why":"x"}')
        t_eq "$WHO: a value outside the table's list is refused" True "$(err_of "$out")" "$out"

        asked v2 '{"name":"publish_port","arguments":{"port":47123,"why":"the dev server"}}' 0 approve
        t_eq "$WHO: publish_port, approved" False "$(err_of "$OUT")" "$OUT"
        out=$(call v2 status '{}')
        t_match "$WHO: status lists the port" "ingress 47123" "$(text_of "$out")" "$out"

        # Egress opened live in the middle of a session: the worker, whose
        # environment is fixed at its start, is started anew, so the next
        # command has the proxy variables a sandbox exec now gets.
        (id=$(wait_pending) && S relay approve "$id" >/dev/null 2>&1) &
        local approver=$!
        out=$(M v2 '[{"name":"bash","arguments":{"command":"echo proxy=$HTTPS_PROXY"}},{"name":"request_egress","arguments":{"rule":"example.org:443","why":"fetch"}},{"name":"bash","arguments":{"command":"echo proxy=$HTTPS_PROXY"}}]')
        wait "$approver"
        t_eq "$WHO: before egress, no proxy" "proxy=" "$(J 'L[0]["text"].split("\n")[0]' <<<"$out")" "$out"
        t_eq "$WHO: request_egress approved" False "$(J 'L[1]["isError"]' <<<"$out")"
        t_eq "$WHO: the session's next command goes through the gateway" "proxy=http://127.0.0.1:3128" \
                "$(J 'L[2]["text"].split("\n")[0]' <<<"$out")"
}

scene() {
        WHO=$1
        local home
        if [[ $WHO == root ]]; then home=$T_TMP/home; else home=$UHOME; fi
        PROJ=$home/proj
        mkdir -p "$PROJ/sub" "$home/.config/umwelt"
        printf '[workspace]\nmode = "direct"\n[relay]\ntimeout = 20\n' >"$home/.config/umwelt/config.toml"
        [[ $WHO == user ]] && chown -R "$U:$G" "$home"
        start_relay
        eras
        acting v1
        acting v2
        audited
        walls "$home"
        cancel
        asking "$home"
        review "$home/rproj"
        S sandbox down -p "$PROJ" >/dev/null 2>&1
        stop_relay
}

scene root
scene user

# ------------------------------------------------------------ the wire itself

WHO=root
PROJ=$T_TMP/home/proj
# raw: lines to umwelt-mcp's stdin as they are (no SDK), its answers.
RAW=$(cat <<'PYEOF'
import json, os, subprocess, sys, time
cmd = sys.argv[1:]
p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
def send(b): p.stdin.write(b); p.stdin.flush()
def answer():
    return json.loads(p.stdout.readline())
out = []
send(b'{not json\n'); out.append(answer()["error"]["code"])
send(b'[{"jsonrpc":"2.0","id":1,"method":"ping"}]\n'); out.append(answer()["error"]["code"])
send(b'{"jsonrpc":"1.0","id":2,"method":"ping"}\n'); out.append(answer()["error"]["code"])
send(b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}\n'); out.append(answer()["error"]["code"])
send(b'{"jsonrpc":"2.0","id":3,"method":"no/such"}\n'); out.append(answer()["error"]["code"])
# Over 8 MiB, in pieces: refused once, then the server goes on.
send(b'{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"' + b'a' * (9 << 20) + b'"}}\n')
a = answer(); out.append(a["error"]["code"])
send(b'{"jsonrpc":"2.0","id":5,"method":"ping"}\n'); out.append(answer().get("id"))
send(b'{"jsonrpc":"2.0","id":6,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"1999-01-01"}}}\n')
a = answer(); out.append(a["error"]["code"]); out.append(a["error"]["data"]["supported"])
print(json.dumps(out))
PYEOF
)
out=$(env HOME="$T_TMP/home" XDG_STATE_HOME="$T_TMP/state" "$PY" -c "$RAW" "$MCP" --project "$PROJ" --root "$T_ROOT")
t_eq "malformed, batched, wrong-version, bad-id, unknown, oversized messages: their codes; served on" \
        '[-32700, -32600, -32600, -32600, -32601, -32600, 5, -32022, ["2026-07-28"]]' "$out"

STDIN_PY=$(cat <<PYEOF
import subprocess, sys, time
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
p.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"bash","arguments":{"command":"sleep $STDIN_LONG"}}}\n')
p.stdin.flush()
for _ in range(100):
    if subprocess.run(["pgrep", "-f", "sleep $STDIN_LONG"], stdout=subprocess.DEVNULL).returncode == 0:
        break
    time.sleep(0.1)
t0 = time.monotonic()
p.stdin.close()
p.wait(timeout=20)
print("exited %d in %s" % (p.returncode, "time" if time.monotonic() - t0 < 5 else "too long"))
PYEOF
)
out=$(env HOME="$T_TMP/home" XDG_STATE_HOME="$T_TMP/state" "$PY" -c "$STDIN_PY" "$MCP" --project "$PROJ" --root "$T_ROOT" --on-exit down 2>&1)
t_eq "stdin closed mid-call: umwelt-mcp ends" "exited 0 in time" "$out"
for _ in $(seq 40); do left=$(ours); [[ -z $left ]] && break; sleep 0.1; done
t_eq "stdin closed mid-call: the command is gone" "" "$left"
t_match "--on-exit down: the sandbox is down" "not running|absent" \
        "$(S sandbox status -p "$PROJ" 2>&1)"

no_sanitizer_reports "$T_TMP"/relay-*.log
t_done
