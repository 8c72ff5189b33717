#!/bin/bash
# The test runner behind `make check`: every unit test binary (Criterion, TAP
# output) and every integration test script (TAP on stdout), one summary line
# at the end: "N passed, N failed, N skipped". Exits non-zero when a test
# failed or a test file crashed, timed out or printed no valid plan.
#
# Environment:
#   UMW_BUILDDIR, UMW_SRCDIR  set by `make check`
#   UMW_TESTS=GLOB...         run only test files whose name matches one of
#                             the space-separated globs, e.g.
#                             UMW_TESTS='lifecycle*' or UMW_TESTS='test-json exec'
#   UMW_RUNTIME=PATH          runtime the integration tests drive
#   UMW_TEST_TIMEOUT=SECONDS  per test file (default 600); a file that says
#                             "# run.sh timeout: SECONDS" near its top gets
#                             that much when it is more
#   UMW_TAP_DIR=DIR           keep each file's TAP (NAME.tap), stderr
#                             (NAME.log) and exit status (NAME.status) in DIR
#   UMW_VERBOSE=1             print every TAP line, not only failures
if [ -z "${BASH_VERSION:-}" ]; then exec bash "$0" "$@"; fi
set -u

SRCDIR=${UMW_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
BUILDDIR=${UMW_BUILDDIR:-$SRCDIR}
export UMW_SRCDIR=$SRCDIR UMW_BUILDDIR=$BUILDDIR
TIMEOUT=${UMW_TEST_TIMEOUT:-600}
PATTERN=${UMW_TESTS:-*}

passed=0
failed=0
skipped=0
failures=()
if [[ -n ${UMW_TAP_DIR:-} ]]; then
        LOGDIR=$UMW_TAP_DIR
        mkdir -p "$LOGDIR" || exit 1
else
        LOGDIR=$(mktemp -d "${TMPDIR:-/tmp}/umwelt-check.XXXXXX") || exit 1
        trap 'rm -rf "$LOGDIR"' EXIT
fi

# matches NAME: true when the file name (with or without extension) matches
# one of the UMW_TESTS globs.
matches() {
        local p pats
        # read, not a bare $PATTERN: the globs must not expand to file names.
        read -r -a pats <<<"$PATTERN"
        # shellcheck disable=SC2053
        for p in "${pats[@]}"; do
                [[ $1 == $p || ${1%.*} == $p ]] && return 0
        done
        return 1
}

# file_timeout SCRIPT: the seconds SCRIPT may run: TIMEOUT, or what the file
# asks for when that is more (a test that boots a machine).
file_timeout() {
        local want
        want=$(sed -n '1,20s/^# run.sh timeout: \([0-9][0-9]*\)$/\1/p' "$1" | head -n 1)
        echo $((${want:-0} > TIMEOUT ? want : TIMEOUT))
}

# tally FILE TAPFILE LOGFILE STATUS: counts the TAP results of one test file
# and prints failures with their diagnostics.
tally() {
        local file=$1 tap=$2 log=$3 status=$4
        local plan= count=0 fp=0 ff=0 fs=0 line name in_fail=0 diag=() bail=
        while IFS= read -r line; do
                [[ ${UMW_VERBOSE:-0} == 1 ]] && printf '    %s\n' "$line"
                if [[ $line =~ ^(not\ )?ok([[:space:]]+[0-9]+)?([[:space:]]+-)?[[:space:]]*(.*)$ ]]; then
                        count=$((count + 1))
                        name=${BASH_REMATCH[4]}
                        in_fail=0
                        if [[ -n ${BASH_REMATCH[1]} ]]; then
                                if [[ $name =~ \#[[:space:]]*TODO ]]; then
                                        fs=$((fs + 1))
                                else
                                        ff=$((ff + 1))
                                        in_fail=1
                                        printf 'FAIL %s: %s\n' "$file" "$name"
                                        failures+=("$file: $name")
                                fi
                        elif [[ $name =~ \#[[:space:]]*[Ss][Kk][Ii][Pp] ]]; then
                                fs=$((fs + 1))
                                [[ ${UMW_VERBOSE:-0} == 1 ]] || printf 'SKIP %s: %s\n' "$file" "$name"
                        else
                                fp=$((fp + 1))
                        fi
                elif [[ $line =~ ^1\.\.([0-9]+)(.*)$ ]]; then
                        plan=${BASH_REMATCH[1]}
                        if [[ $plan == 0 ]]; then
                                printf 'SKIP %s: whole file%s\n' "$file" "${BASH_REMATCH[2]}"
                                fs=$((fs + 1))
                        fi
                elif [[ $line =~ ^Bail\ out! ]]; then
                        bail=$line
                elif [[ $in_fail == 1 && ! $line =~ ^#(\ Running|$) ]]; then
                        # Diagnostics of a failed test: "# ..." lines and
                        # Criterion's indented YAML block.
                        printf '    %s\n' "$line"
                fi
        done <"$tap"

        local broken=
        if [[ -n $bail ]]; then
                broken="$bail"
        elif [[ -z $plan ]]; then
                broken="no TAP plan (crashed? exit status $status)"
        elif [[ $plan != 0 && $plan != "$count" ]]; then
                broken="planned $plan tests, ran $count (exit status $status)"
        elif [[ $status -ge 124 && $status -ne 0 && $ff -eq 0 ]]; then
                broken="exit status $status (timeout or signal)"
        fi
        if [[ -n $broken ]]; then
                ff=$((ff + 1))
                printf 'FAIL %s: %s\n' "$file" "$broken"
                failures+=("$file: $broken")
        fi
        if [[ $ff -gt 0 && -s $log ]]; then
                printf -- '--- output of %s (last 40 lines) ---\n' "$file"
                tail -n 40 "$log" | sed 's/^/    /'
        fi
        printf '%-40s %3d passed, %d failed, %d skipped\n' "$file" "$fp" "$ff" "$fs"
        passed=$((passed + fp))
        failed=$((failed + ff))
        skipped=$((skipped + fs))
}

run_unit() {
        local bin=$1 name
        name=unit/$(basename "$bin")
        local tap=$LOGDIR/$(basename "$bin").tap log=$LOGDIR/$(basename "$bin").log
        timeout "$TIMEOUT" "$bin" --tap="$tap" --color=never >"$log" 2>&1 </dev/null
        local status=$?
        [[ -f $tap ]] || : >"$tap"
        tally "$name" "$tap" "$log" "$status"
}

run_integration() {
        local script=$1 name
        name=integration/$(basename "$script")
        local tap=$LOGDIR/$(basename "$script").tap log=$LOGDIR/$(basename "$script").log
        # The script's TAP goes to stdout; stderr holds the noise of the
        # commands it ran, shown only when something failed.
        timeout -k 10 "$(file_timeout "$script")" bash "$script" >"$tap" 2>"$log" </dev/null
        local status=$?
        [[ -n ${UMW_TAP_DIR:-} ]] && echo "$status" >"${tap%.tap}.status"
        tally "$name" "$tap" "$log" "$status"
}

# The layer check: no include or symbol points up (scripts/check-layers.sh).
echo "# source checks"
if matches check-layers.sh; then
        tap=$LOGDIR/layers.tap log=$LOGDIR/layers.log
        timeout -k 10 "$TIMEOUT" bash "$SRCDIR/scripts/check-layers.sh" "$SRCDIR" "$BUILDDIR" \
                >"$tap" 2>"$log" </dev/null
        tally scripts/check-layers.sh "$tap" "$log" $?
fi

echo "# unit tests ($BUILDDIR/tests/unit)"
for bin in "$BUILDDIR"/tests/unit/test-*; do
        [[ -f $bin && -x $bin && $bin != *.o && $bin != *.c ]] || continue
        matches "$(basename "$bin")" || continue
        run_unit "$bin"
done

echo "# integration tests ($SRCDIR/tests/integration)"
[[ $(id -u) -eq 0 ]] || echo "# NOT ROOT: every integration test will be skipped (needs root: sudo make check)"
for script in "$SRCDIR"/tests/integration/*.sh; do
        [[ -f $script && $(basename "$script") != lib.sh ]] || continue
        matches "$(basename "$script")" || continue
        run_integration "$script"
done

# The fuzz harnesses (make fuzz), each run briefly over its seed corpus.
echo "# fuzz smoke ($BUILDDIR/tests/fuzz)"
if matches smoke.sh; then
        tap=$LOGDIR/fuzz.tap log=$LOGDIR/fuzz.log
        timeout -k 10 "$TIMEOUT" bash "$SRCDIR/tests/fuzz/smoke.sh" >"$tap" 2>"$log" </dev/null
        tally fuzz/smoke.sh "$tap" "$log" $?
fi

if [[ ${#failures[@]} -gt 0 ]]; then
        echo "# failed:"
        printf '#   %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed, $skipped skipped"
[[ $failed -eq 0 ]]
