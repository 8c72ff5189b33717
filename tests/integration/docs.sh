#!/bin/bash
# The documentation in the tree says what the code does: every verb of
# umwelt-run's dispatch table (and every sandbox sub-verb) is listed by
# --help, has its own --help and a section in umwelt-run(1); every key the
# policy reader accepts (policy/config.c's keys[] tables, and the gateway's
# in netns/gateway_policy.c) is defined in umwelt.toml(5), and the page
# defines no key the code refuses. Needs no root: it reads sources and runs
# --help.
. "$(dirname "$0")/lib.sh"

[[ -x $RT ]] || t_bail "runtime $RT is not executable (build it, or set UMW_RUNTIME)"
is_umwelt || t_skip_all "documents umwelt-run, not $RT"
MAN1=$UMW_SRCDIR/man/umwelt-run.1.scd

# t_has_line NAME FILE LINE: ok when FILE has exactly LINE as a line.
t_has_line() {
        if grep -qxF -- "$3" "$2"; then
                t_ok "$1"
        else
                t_fail "$1" "no line '$3' in $2"
        fi
}

# ---------------------------------------------------------------- verbs

# The names in the verb table: lines of the form {"NAME", verb_NAME, ...}.
verbs=$(sed -n 's/^ *{"\([a-z]*\)", verb_[a-z_]*,.*/\1/p' "$UMW_SRCDIR/src/umwelt-run.c")
# The sandbox sub-verbs: {"NAME", ACCEPT_...|0, ...} in verb_sandbox.c.
subs=$(sed -n 's/^ *{"\([a-z]*\)", \(ACCEPT_\|NEEDS_\|0,\).*/\1/p' "$UMW_SRCDIR/src/verb_sandbox.c")
t_eq "the verb table was read (16 or more verbs)" yes "$([[ $(wc -w <<<"$verbs") -ge 16 ]] && echo yes)" "$verbs"
t_eq "the sandbox sub-verbs were read (9 or more)" yes "$([[ $(wc -w <<<"$subs") -ge 9 ]] && echo yes)" "$subs"

help=$("$RT" --help 2>&1)
t_eq "--help exits 0" 0 "$?" "$help"
for v in $verbs; do
        t_match "--help lists '$v' on a line of its own" $'(^|\n)  '"$v"' +[^ ]' "$help"
        out=$("$RT" "$v" --help 2>&1)
        t_match "'$v --help' prints its usage (exit $?)" "^usage: umwelt-run \[GLOBAL OPTIONS\] $v" "$out"
        # sandbox's sections are its sub-verbs'.
        [[ $v == sandbox ]] || t_has_line "umwelt-run(1) has a section for '$v'" "$MAN1" "## $v"
done
for v in $subs; do
        t_match "--help lists 'sandbox $v'" $'(^|\n)    sandbox '"$v"' +[^ ]' "$help"
        out=$("$RT" sandbox "$v" --help 2>&1)
        t_match "'sandbox $v --help' prints its usage (exit $?)" "^usage: umwelt-run \[GLOBAL OPTIONS\] sandbox $v" "$out"
        t_has_line "umwelt-run(1) has a section for 'sandbox $v'" "$MAN1" "## sandbox $v"
done
t_eq "--help: one line per verb and sub-verb, no more" \
        "$(($(wc -w <<<"$verbs") + $(wc -w <<<"$subs")))" \
        "$(grep -cE '^  (  sandbox )?[a-z]+ +[^ ]' <<<"$help")" "$help"

# ---------------------------------------------------------------- policy keys

MAN5=$UMW_SRCDIR/man/umwelt.toml.5.scd
# Every keys[] table a TOML reader checks, as "SECTION<TAB>KEY": the
# function holding the table says the layer and table (a reader this map
# does not know fails the test: document its keys, then add it here).
accepted=$("$PY" - "$UMW_SRCDIR/policy/config.c" "$UMW_SRCDIR/netns/gateway_policy.c" \
        "$UMW_SRCDIR/policy/host_actions.c" <<'PY'
import re, sys
where = {
    ("config.c", "load_floor"): ("FLOOR", ""),
    ("config.c", "load_user"): ("USER CONFIG", ""),
    ("config.c", "load_project"): ("PROJECT CONFIG", ""),
    ("config.c", "grant_one"): ("PROJECT CONFIG", "grant."),
    ("config.c", "load_egress"): ("PROJECT CONFIG", "egress."),
    ("config.c", "load_ingress"): ("PROJECT CONFIG", "ingress."),
    # [workspace] is read from both the user's and the project's file.
    ("config.c", "load_workspace"): [("USER CONFIG", "workspace."), ("PROJECT CONFIG", "workspace.")],
    ("config.c", "load_delivery"): ("USER CONFIG", "delivery."),
    ("config.c", "load_relay"): ("USER CONFIG", "relay."),
    # The gateway's --policy files: the project's [egress] table.
    ("gateway_policy.c", "load_file"): ("PROJECT CONFIG", "egress."),
    # /etc/umwelt/host-actions.toml: [[action]] tables.
    ("host_actions.c", "read_table"): ("HOST ACTIONS", ""),
    ("host_actions.c", "read_action"): ("HOST ACTIONS", "action."),
}
for path in sys.argv[1:]:
    text = open(path).read()
    base = path.rsplit("/", 1)[-1]
    for m in re.finditer(r"static const char \*const keys\[\] = \{(.*?)\};", text, re.S):
        fn = re.findall(r"^(?:static )?int (\w+)\(", text[: m.start()], re.M)[-1]
        if (base, fn) not in where:
            print("UNKNOWN\t%s:%s" % (base, fn))
            continue
        places = where[(base, fn)]
        for section, prefix in places if isinstance(places, list) else [places]:
            for key in re.findall(r'"([^"]+)"', m.group(1)):
                print("%s\t%s%s" % (section, prefix, key))
PY
)
# The keys the page defines in SECTION: lines "*KEY* = ..." under "# SECTION".
page_keys() {
        awk -v s="# $1" '/^# / { on = ($0 == s) } on' "$MAN5" | sed -n 's/^\*\([a-z_.]*\)\* = .*/\1/p'
}
t_eq "the readers' key tables were read (20 or more keys)" yes \
        "$([[ $(grep -c . <<<"$accepted") -ge 20 ]] && echo yes)" "$accepted"
t_eq "every TOML reader with a keys[] table is mapped to a section" "" \
        "$(sed -n 's/^UNKNOWN\t//p' <<<"$accepted")"
while IFS=$'\t' read -r section key; do
        [[ $section == UNKNOWN ]] && continue
        t_eq "umwelt.toml(5) $section defines '$key'" yes \
                "$(page_keys "$section" | grep -qxF -- "$key" && echo yes)" \
                "add a line '*$key* = TYPE' under '# $section' in man/umwelt.toml.5.scd"
done < <(sort -u <<<"$accepted")
for section in FLOOR "USER CONFIG" "PROJECT CONFIG" "HOST ACTIONS"; do
        for key in $(page_keys "$section"); do
                t_eq "umwelt.toml(5) $section: '$key' is a key the code accepts" yes \
                        "$(grep -qxF -- "$section"$'\t'"$key" <<<"$accepted" && echo yes)"
        done
done
# The presets the page's table names are the code's.
presets=$(sed -n 's/^static const char \*const names\[\] = {\(.*\), NULL};/\1/p' \
        "$UMW_SRCDIR/policy/presets.c" | tr -d '" ' | tr , ' ')
t_eq "the preset names were read (4 or more)" yes "$([[ $(wc -w <<<"$presets") -ge 4 ]] && echo yes)" "$presets"
for p in $presets; do
        t_has_line "umwelt.toml(5) has preset '$p' in its table" "$MAN5" "|  *$p*"
done
if command -v scdoc >/dev/null; then
        t_run "umwelt.toml(5) builds with scdoc" sh -c 'scdoc <"$1" >/dev/null' sh "$MAN5"
else
        t_skip "umwelt.toml(5) builds with scdoc" "no scdoc"
fi

t_done
