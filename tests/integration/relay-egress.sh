#!/bin/bash
# `umwelt-run request egress` from inside real sandboxes, root's and the
# unprivileged user's, in the network scene of helpers/netscene.sh: on a
# sandbox that started without egress the approved rule opens a gateway
# live (a process started before reaches the host through it, later execs
# get the proxy variables, other hosts stay closed), a second rule reloads
# it, a sandbox that started with egress gets the rule added to its own
# gateway and kept across `sandbox reload`, what the floor or the rule's
# form forbids is refused without asking, a denial opens nothing, a relay
# killed and restarted still knows the rules, and nothing is left at down.
T_NAME=relay-egress
. "$(dirname "$0")/lib.sh"
t_require_root
t_setup
t_test_user
SPY=/usr/bin/python3 # the host's, visible inside
. "$(dirname "$0")/helpers/netscene.sh"
floor 'limits_best_effort = true'
. "$(dirname "$0")/helpers/relay-lib.sh"

# S ARGS...: umwelt-run as WHO, in the scene's host namespace.
S() { if [[ $WHO == root ]]; then rumw "$@"; else uumw "$@"; fi; }
# relay_launch PIDFILE: the relay as WHO there too, so that the gateway it
# starts dials from the host's side of the scene.
relay_launch() {
        local run='echo $$ >"$1" && exec "$2" --timeout 60 --idle 0'
        if [[ $WHO == root ]]; then
                host env HOME="$T_TMP/rhome" XDG_STATE_HOME="$RSTATE" sh -c "$run" sh "$1" "$RELAY" \
                        2>>"$T_TMP/relay-root.log" &
        else
                host runuser -u "$USER_NAME" -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
                        XDG_RUNTIME_DIR="$XDG" HOME="$XDG" sh -c "$run" sh "$1" "$RELAY" \
                        2>>"$T_TMP/relay-user.log" &
        fi
}

relay_egress_cleanup() {
        local p
        for p in "$T_TMP"/rhome/*proj "$XDG"/*proj; do
                [[ -d $p ]] || continue
                rsbx down -p "$p" >/dev/null 2>&1
                usbx down -p "$p" >/dev/null 2>&1
        done
        [[ -n $RELAY_PID ]] && kill "$RELAY_PID" 2>/dev/null
        scene_cleanup
}
T_EXTRA_CLEANUP=relay_egress_cleanup

# code URL...: the HTTP status of each URL through the gateway's address,
# one a line, from inside the sandbox of $PROJ (000: no answer).
code() {
        S sandbox exec -p "$PROJ" -- sh -c 'for u; do
                curl -s --max-time 10 -o /dev/null -w "%{http_code}\n" \
                        --proxy http://127.0.0.1:3128 "$u"; done' sh "$@" 2>&1
}
# ask RULE WHY: request egress RULE from inside in the background (its
# output in $T_TMP/req, its pid REQ), and the id the human is shown (ID).
ask() {
        S sandbox exec -p "$PROJ" -- ./umw request egress "$1" --why "$2" >"$T_TMP/req" 2>&1 &
        REQ=$!
        ID=$(wait_pending)
}
# gateways ID: the gateway of sandbox ID (its monitor, the oldest of its
# processes); gateway_procs ID: all of them.
gateways() { pgrep -o -f "umwelt-gateway .*--sandbox $1( |$)"; }
gateway_procs() { pgrep -f "umwelt-gateway .*--sandbox $1( |$)" | tr '\n' ' '; }
sid() { json_get "$(S sandbox status -p "$PROJ" --json 2>/dev/null)" "j['id']"; }
# elog: the egress log of WHO's projects.
elog() {
        if [[ $WHO == root ]]; then cat "$RSTATE"/umwelt/*/egress.jsonl; else cat "$XDG"/.local/state/umwelt/*/egress.jsonl; fi 2>&1
}

scene() {
        WHO=$1
        local home
        if [[ $WHO == root ]]; then home=$T_TMP/rhome; else home=$XDG; fi
        PROJ=$home/eproj
        mkdir -p "$PROJ"
        cp "$RT" "$PROJ/umw"
        [[ $WHO == user ]] && chown -R "$U:$G" "$PROJ"
        start_relay
        capture S sandbox up -p "$PROJ"
        t_eq "$WHO: sandbox up without egress" 0 "$T_RC" "$T_OUT"
        t_eq "$WHO: nothing answers at 127.0.0.1:3128 before" 000 "$(code http://web.example/)"

        # A process started before the approval, asking again and again.
        S sandbox exec -p "$PROJ" -- sh -c 'for i in $(seq 150); do
                c=$(curl -s --max-time 5 -o /dev/null -w "%{http_code}" \
                        --proxy http://127.0.0.1:3128 http://web.example/waiter)
                [ "$c" = 200 ] && break; sleep 0.1; done; echo "$c"' >"$T_TMP/waiter" 2>&1 &
        local waiter=$!
        ask web.example "fetch the docs"
        t_eq "$WHO: the request waits for a human, showing its rule" \
                "egress web.example fetch the docs" \
                "$(pending_field "$ID" kind) $(pending_field "$ID" rule) $(pending_field "$ID" why)"
        capture S relay approve "$ID"
        wait "$REQ"
        t_eq "$WHO: approved, request egress exits 0" "0 0" "$T_RC $?" "$T_OUT $(cat "$T_TMP/req")"
        t_match "$WHO: ... and says where the door is" "HTTPS_PROXY=http://127.0.0.1:3128" \
                "$(cat "$T_TMP/req")"
        wait "$waiter"
        t_eq "$WHO: a process started before reaches the host through the new gateway" 200 \
                "$(cat "$T_TMP/waiter")"
        t_eq "$WHO: later execs get the proxy variables: the host allowed, no other" \
                "http://127.0.0.1:3128 200 403 000" \
                "$(S sandbox exec -p "$PROJ" -- sh -c 'echo "$HTTPS_PROXY"
                        for u in http://web.example/later http://other.example/ \
                                https://secure.example/; do
                                curl -s --max-time 10 -o /dev/null -w "%{http_code}\n" "$u"
                        done' 2>&1 | tr '\n' ' ' | sed 's/ $//')"
        t_match "$WHO: ... each request in the project's egress log" \
                '"host":"web.example".*"decision":"allow"' "$(elog)"
        local id gw
        id=$(sid)
        gw=$(gateways "$id")
        t_match "$WHO: sandbox status says the relay opened it" \
                "egress: +opened live by the relay \(gateway pid $gw\)" \
                "$(S sandbox status -p "$PROJ" 2>&1)"
        t_eq "$WHO: request status lists the rule" "egress web.example" \
                "$(S sandbox exec -p "$PROJ" -- ./umw request status 2>&1)"

        # A second rule: the running gateway reloads, no second one starts.
        ask other.example "a mirror"
        capture S relay approve "$ID"
        wait "$REQ"
        t_eq "$WHO: a second rule is approved" "0 0" "$T_RC $?" "$T_OUT $(cat "$T_TMP/req")"
        t_eq "$WHO: ... reaches its host, the first still open, the gateway the same" \
                "200 200 $gw" \
                "$(code http://other.example/ http://web.example/ | tr '\n' ' ')$(gateways "$id")"

        # Refused without asking: nothing becomes pending.
        local rule
        for rule in 'secure.example/allowed/*' web.example; do
                capture S sandbox exec -p "$PROJ" -- ./umw request egress "$rule" --why x
                t_eq "$WHO: egress '$rule' is refused without asking (exit 9)" "9 " \
                        "$T_RC $(S relay pending --json 2>&1)" "$T_OUT"
        done
        for rule in http://web.example 'GET web.example'; do
                capture S sandbox exec -p "$PROJ" -- ./umw request egress "$rule" --why x
                t_eq "$WHO: egress '$rule' is a usage error (a scheme; methods a request cannot name)" \
                        2 "$T_RC" "$T_OUT"
        done

        # A denial opens nothing.
        ask later.example "not this one"
        capture S relay deny "$ID" --why "no"
        wait "$REQ"
        t_eq "$WHO: a denied egress request exits 7, its host still closed" "7 403" \
                "$? $(code http://later.example/)" "$(cat "$T_TMP/req")"
        t_match "$WHO: the audit log has the request, the decision and the rule opened" \
                'relay-request.*kind=egress.*relay-decision.*relay-egress.*rule=web.example gateway=started [0-9]+.*rule=other.example gateway=reloaded' \
                "$(S sandbox log -p "$PROJ" 2>&1 | tr '\n' ' ')"

        # A relay killed and started again knows the rules; the gateway
        # serves on (it is the sandbox's, ending with its init).
        kill -KILL "$RELAY_PID"
        for _ in $(seq 100); do kill -0 "$RELAY_PID" 2>/dev/null || break; sleep 0.05; done
        start_relay
        t_eq "$WHO: a restarted relay lists the rules the killed one opened" \
                "egress web.example"$'\n'"egress other.example" \
                "$(S sandbox exec -p "$PROJ" -- ./umw request status 2>&1)"
        t_eq "$WHO: ... and the gateway still serves them" 200 "$(code http://other.example/)"

        # What the floor forbids is not asked.
        floor 'limits_best_effort = true' 'egress = false'
        capture S sandbox exec -p "$PROJ" -- ./umw request egress later.example --why x
        t_match "$WHO: with egress = false in the floor, refused without asking (exit 9)" \
                "^9 .*egress = false" "$T_RC $T_OUT"
        floor 'limits_best_effort = true'

        capture S sandbox down -p "$PROJ"
        t_eq "$WHO: sandbox down" 0 "$T_RC" "$T_OUT"
        local left=
        for _ in $(seq 50); do
                left=$(gateway_procs "$id")
                [[ -z $left ]] && break
                sleep 0.1
        done
        t_eq "$WHO: ... the relay's gateway ended with the sandbox" "" "$left"
        t_eq "$WHO: ... and its files are gone with the door" "gone" \
                "$([[ -n $id && ! -e $(relay_dir)/sandboxes/$id ]] && echo gone)" "$id"
        stop_relay
}

scene root
scene user

# A sandbox that started with egress: the rule goes to its own gateway,
# which terminates TLS for a path rule (the sandbox trusts the umwelt CA),
# and a reload of the project's rules keeps it.
WHO=root
PROJ=$T_TMP/rhome/gproj
mkdir -p "$PROJ"
cp "$RT" "$PROJ/umw"
printf '[egress]\nenabled = true\nallow = ["web.example"]\n' >"$PROJ/.umwelt.toml"
raccept "$PROJ"
start_relay
capture S sandbox up -p "$PROJ"
t_eq "root: sandbox up with egress" 0 "$T_RC" "$T_OUT"
gw=$(gateways "$(sid)")
ask 'secure.example/allowed/*' "a path rule"
capture S relay approve "$ID"
wait "$REQ"
t_eq "root: a path rule for a sandbox with egress is asked and approved" "0 0" "$T_RC $?" \
        "$T_OUT $(cat "$T_TMP/req")"
t_eq "root: ... its own gateway terminates TLS for it: the path allowed, its sibling not" \
        "200 403 200 $gw" \
        "$(S sandbox exec -p "$PROJ" -- sh -c 'for u in https://secure.example/allowed/x \
                https://secure.example/other http://web.example/; do
                curl -s --max-time 10 -o /dev/null -w "%{http_code}\n" "$u"; done' 2>&1 |
                tr '\n' ' ')$(gateways "$(sid)")"
capture S sandbox reload -p "$PROJ"
t_eq "root: sandbox reload" 0 "$T_RC" "$T_OUT"
t_eq "root: ... keeps the rule the relay opened" 200 \
        "$(S sandbox exec -p "$PROJ" -- curl -s --max-time 10 -o /dev/null -w "%{http_code}" \
                https://secure.example/allowed/y 2>&1)"
capture S sandbox down -p "$PROJ"

# A one-shot `sandbox run`, the way an agent is started: the command asks,
# a human approves from outside, and the same command goes on through it.
PROJ=$T_TMP/rhome/rproj
mkdir -p "$PROJ"
cp "$RT" "$PROJ/umw"
S sandbox run -p "$PROJ" -- sh -c './umw request egress web.example --why "in a run" 2>/dev/null &&
        curl -s --max-time 10 -o /dev/null -w "%{http_code}" --proxy http://127.0.0.1:3128 \
                http://web.example/run' >"$T_TMP/run.out" 2>"$T_TMP/run.err" &
run=$!
ID=$(wait_pending)
capture S relay approve "$ID"
wait "$run"
t_eq "root: a one-shot run that asks goes on through the gateway once approved" "0 200" \
        "$? $(cat "$T_TMP/run.out")" "$(cat "$T_TMP/run.err")"
stop_relay
no_sanitizer_reports "$T_TMP"/relay-*.log
t_done
