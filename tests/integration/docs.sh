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

t_done
