#!/bin/bash
# umwelt-gateway's privilege separation (DESIGN.md, "The gateway's
# privilege separation"), proven on the running processes as root: the
# umwelt CA's private key is in the signer's memory and in no other
# process of the gateway, no fd of the engine (the process that parses the
# sandbox's bytes) refers to the key, both confined processes run with
# no_new_privs and a seccomp filter, and an openat made from inside the
# engine (injected with ptrace: helpers/inject-open.c) fails with EPERM.
# UMW_GATEWAY names another binary: run against the gateway before the
# split, these tests fail.
T_NAME=gateway-privsep
. "$(dirname "$0")/lib.sh"
t_require_root
GW=${UMW_GATEWAY:-$UMW_BUILDDIR/umwelt-gateway}
INJECT=$UMW_BUILDDIR/tests/integration/helpers/inject-open
[[ -x $GW ]] || t_bail "$GW missing (build it)"
[[ -x $INJECT ]] || t_bail "$INJECT missing (make check builds it)"
command -v openssl >/dev/null || t_bail "openssl missing (scripts/setup.sh installs it)"
t_setup

SBX=umwt-ps$$
GW_PID=
scene_cleanup() {
        [[ -n $GW_PID ]] && kill -9 "$GW_PID" 2>/dev/null && wait "$GW_PID" 2>/dev/null
        ip netns del "$SBX" 2>/dev/null
}
T_EXTRA_CLEANUP=scene_cleanup
ip netns add "$SBX" || t_bail "ip netns add $SBX"
ip -n "$SBX" link set lo up

export XDG_STATE_HOME=$T_TMP/state
CA_KEY=$XDG_STATE_HOME/umwelt/ca/ca.key
printf '[egress]\nenabled = true\nallow = ["GET inspect.example/api/*", "web.example"]\n' \
        >"$T_TMP/policy.toml"
printf '11.0.0.10 inspect.example web.example\n' >"$T_TMP/hosts"
mkfifo "$T_TMP/ready"
# A rule with a method: TLS termination, so the CA is made and loaded at the start.
"$GW" --netns "/run/netns/$SBX" --port 3128 --policy "$T_TMP/policy.toml" \
        --log "$T_TMP/egress.jsonl" --hosts "$T_TMP/hosts" --trust-dir "$T_TMP/trust" \
        --ready-fd 3 3>"$T_TMP/ready" 2>"$T_TMP/gw.err" </dev/null &
GW_PID=$!
read -r -t 10 line <"$T_TMP/ready"
[[ $line == ready && -s $CA_KEY ]] || t_bail "the gateway did not start: $(cat "$T_TMP/gw.err")"

# The processes: the engine and the signer are the gateway's children by
# name; a gateway without them is all three in one.
child() {
        local p
        for p in $(pgrep -P "$GW_PID"); do
                [[ $(cat "/proc/$p/comm") == "$1" ]] && echo "$p" && return
        done
}
ENGINE=$(child umwelt-engine)
SIGNER=$(child umwelt-signer)
t_diag "gateway $GW_PID, engine ${ENGINE:-none}, signer ${SIGNER:-none}"
ENGINE=${ENGINE:-$GW_PID}

status_of() { grep -E "^$2:" "/proc/$1/status" | tr -s '\t ' ' '; }
t_eq "the engine runs with no_new_privs" "NoNewPrivs: 1" "$(status_of "$ENGINE" NoNewPrivs)"
t_eq "... and a seccomp filter" "Seccomp: 2" "$(status_of "$ENGINE" Seccomp)"
t_eq "the signer runs with no_new_privs" "NoNewPrivs: 1" \
        "$( [[ -n $SIGNER ]] && status_of "$SIGNER" NoNewPrivs)"
t_eq "... and a seccomp filter" "Seccomp: 2" "$( [[ -n $SIGNER ]] && status_of "$SIGNER" Seccomp)"

# The CA's private scalar, as OpenSSL writes it, and both byte orders of it
# in memory (a BIGNUM's words are little-endian on x86_64); a piece of the
# PEM text too.
priv=$(openssl pkey -in "$CA_KEY" -noout -text 2>/dev/null |
        sed -n '/^priv:/,/^pub:/p' | grep -v -e '^priv:' -e '^pub:' | tr -d ' :\n')
[[ ${#priv} -ge 64 ]] || t_bail "no private scalar read from $CA_KEY"
pem=$(sed -n 2p "$CA_KEY")
# scan PID: "found" when the key's bytes are in a readable mapping of PID.
scan() {
        python3 - "$1" "${priv: -64}" "$pem" <<'PY'
import re, sys
pid, hexkey, pem = sys.argv[1], sys.argv[2], sys.argv[3].encode()
key = bytes.fromhex(hexkey)
needles = [key, key[::-1], pem[8:40]]
found = False
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        m = re.match(r"([0-9a-f]+)-([0-9a-f]+) (\S+)", line)
        start, end, perms = int(m[1], 16), int(m[2], 16), m[3]
        # Past 1 GiB: a sanitizer's shadow or allocator reservation, not
        # written memory.
        if perms[0] != "r" or "[vvar" in line or "[vsyscall" in line or end - start > 1 << 30:
            continue
        tail = b""
        for at in range(start, end, 1 << 22):
            try:
                mem.seek(at)
                chunk = mem.read(min(1 << 22, end - at))
            except OSError:
                break
            data = tail + chunk
            if any(n in data for n in needles):
                found = True
            tail = data[-64:]
print("found" if found else "absent")
PY
}
t_eq "the CA key is in the signer's memory" found "$( [[ -n $SIGNER ]] && scan "$SIGNER")"
t_eq "... not in the engine's" absent "$(scan "$ENGINE")"
[[ $ENGINE != "$GW_PID" ]] && t_eq "... nor in the monitor's" absent "$(scan "$GW_PID")"
fds=$(ls -l "/proc/$ENGINE/fd" | grep -c "umwelt/ca")
t_eq "no fd of the engine refers to the CA's key or directory" 0 "$fds"

t_eq "an openat injected into the engine fails with EPERM" "errno EPERM" \
        "$("$INJECT" "$ENGINE" /etc/passwd 2>&1)"
t_eq "... and the engine lives on" R "$(kill -0 "$ENGINE" 2>/dev/null && echo R)"

# SIGHUP still reloads: the monitor opens the file and passes the fd.
printf '[egress]\nenabled = true\nallow = ["later.example"]\n' >"$T_TMP/policy.toml"
kill -HUP "$GW_PID"
for _ in $(seq 50); do grep -q egress-reload "$T_TMP/egress.jsonl" 2>/dev/null && break; sleep 0.1; done
t_match "SIGHUP reloads the policy through the monitor" '"result":"ok"' \
        "$(grep egress-reload "$T_TMP/egress.jsonl")"

kill -TERM "$GW_PID"
wait "$GW_PID"
t_eq "SIGTERM stops the gateway, exit 0" 0 "$?"
GW_PID=
t_done
