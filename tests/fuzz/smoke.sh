#!/bin/bash
# Runs each libFuzzer harness briefly over its seed corpus (copied, so the
# source tree is never written) and reports one TAP line per harness: a
# crash, leak or sanitizer finding fails it. Called by tests/run.sh; the
# harnesses come from `make fuzz` in the build directory.
set -u
BUILDDIR=${UMW_BUILDDIR:?}
SRCDIR=${UMW_SRCDIR:?}
SECONDS_EACH=${UMW_FUZZ_SECONDS:-20}
harnesses=("$BUILDDIR"/tests/fuzz/fuzz-*)
n=0
for h in "${harnesses[@]}"; do
        [ -x "$h" ] || continue
        n=$((n + 1))
        name=${h##*/fuzz-}
        work=$(mktemp -d)
        cp -r "$SRCDIR/tests/fuzz/corpus-$name/." "$work/" 2>/dev/null
        if out=$("$h" -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=1024 \
                -artifact_prefix="$work/" "$work" 2>&1); then
                echo "ok $n - fuzz-$name runs ${SECONDS_EACH}s without a finding"
        else
                echo "not ok $n - fuzz-$name found a crash, leak or timeout"
                printf '%s\n' "$out" | tail -40 | sed 's/^/# /'
        fi
        rm -rf "$work"
done
if [ "$n" -eq 0 ]; then
        echo "1..0 # SKIP no fuzz harness built (make fuzz needs clang)"
else
        echo "1..$n"
fi
