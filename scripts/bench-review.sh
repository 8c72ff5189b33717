#!/bin/bash
# Review mode benchmark, every number from the same run:
#   1. what review mode adds to a start: `sandbox run -p P -- true` with
#      --workspace direct and --workspace review on a one-commit
#      repository (review binds the agent's own over it), interleaved;
#   2. `deliver review` on a generated tree of FILES files whose layer
#      holds CHANGED changed files (made by a review-mode sandbox), against
#      `git status --porcelain` on a copy of the same tree with the same
#      changes made in place, hyperfine, one after the other.
# A benchmark, not a test: it reports, it never fails on speed.
#
# Usage: sudo scripts/bench-review.sh [--rounds N] [--files N] [--changed N] [--write]
#   --write   also replace the review block of BENCHMARKS.md
# Environment: UMW_BUILDDIR (where umwelt-run was built; default the source tree).
# Needs: git, hyperfine, python3.

set -u
export LC_ALL=C

SRCDIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
ROUNDS=100
FILES=100000
CHANGED=100
WRITE=0
while (($#)); do
        case $1 in
        --rounds) ROUNDS=${2:?}; shift ;;
        --files) FILES=${2:?}; shift ;;
        --changed) CHANGED=${2:?}; shift ;;
        --write) WRITE=1 ;;
        *) printf 'bench-review.sh: unknown argument %s\n' "$1" >&2; exit 2 ;;
        esac
        shift
done

. "$SRCDIR/scripts/bench-lib.sh"

[[ $(id -u) -eq 0 ]] || die "needs root (sandboxes as root)"
for c in git hyperfine python3; do command -v "$c" >/dev/null || die "$c is missing"; done
UMW=${UMW_BUILDDIR:-$SRCDIR}/umwelt-run
[[ -x $UMW ]] || die "build umwelt-run first (UMW_BUILDDIR=DIR)"

W=$(mktemp -d "${TMPDIR:-/tmp}/umwelt-bench-review.XXXXXX") || die "mktemp failed"
trap 'rm -rf "$W"' EXIT
export HOME=$W/home XDG_STATE_HOME=$W/state
mkdir -p "$HOME"

# ------------------------------------------------------------- 1. start cost
# A repository, as projects are: review mode binds the agent's own over it.
mkdir -p "$W/start"
echo x >"$W/start/file"
git -C "$W/start" init -q && git -C "$W/start" add -A &&
        git -C "$W/start" -c user.email=b@b -c user.name=b commit -qm start || die "git commit failed"
python3 - "$UMW" "$W/root" "$W/start" "$ROUNDS" >"$W/starts" <<'EOF' || die "sandbox starts failed"
import subprocess, sys, time
umw, root, proj, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def once(mode):
    t = time.perf_counter()
    r = subprocess.run([umw, "--root", root, "sandbox", "run", "-p", proj, "--workspace", mode,
                        "--", "true"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    t = time.perf_counter() - t
    if r.returncode != 0:
        sys.exit("sandbox run --workspace %s: exit %d" % (mode, r.returncode))
    return t
for _ in range(5):
    once("direct"), once("review")
for _ in range(n):
    print("direct %.6f" % once("direct"))
    print("review %.6f" % once("review"))
EOF

# ------------------------------------------------------------- 2. deliver review
TREE=$W/tree
python3 - "$TREE" "$FILES" <<'EOF' || die "cannot make the tree"
import os, sys
root, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    d = os.path.join(root, "d%03d" % (i // 100))
    if i % 100 == 0:
        os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "f%05d.txt" % i), "w") as f:
        f.write("line one of %d\nline two\n" % i)
EOF
git -C "$TREE" init -q && git -C "$TREE" add -A &&
        git -C "$TREE" -c gc.auto=0 -c maintenance.auto=false -c user.email=b@b -c user.name=b commit -qm tree || die "git commit failed"
cp -a "$TREE" "$W/inplace"
# The same CHANGED edits: in the layer through a review-mode sandbox, and in place in the copy.
EDIT='step=$(( $1 / $2 )); i=0; while [ $i -lt $2 ]; do n=$((i * step)); printf "edited\n" >>"d$(printf %03d $((n / 100)))/f$(printf %05d $n).txt"; i=$((i + 1)); done'
"$UMW" --root "$W/root" sandbox run -p "$TREE" --workspace review -- /bin/sh -c "$EDIT" sh "$FILES" "$CHANGED" \
        2>/dev/null || die "the review-mode edit failed"
(cd "$W/inplace" && /bin/sh -c "$EDIT" sh "$FILES" "$CHANGED") || die "the in-place edit failed"
got=$("$UMW" deliver review -p "$TREE" | tail -1)
[[ $got == "$CHANGED changed: $CHANGED apply, 0 hold, 0 reject" ]] || die "deliver review saw: $got"
[[ $(git -C "$W/inplace" status --porcelain | wc -l) == "$CHANGED" ]] || die "git status disagrees"
hyperfine -N -w 3 -r 30 --export-json "$W/review.json" \
        -n "deliver review" "$UMW deliver review -p $TREE" \
        -n "git status --porcelain" "git -C $W/inplace status --porcelain" >"$W/hyperfine.out" 2>&1 ||
        die "hyperfine failed: $(cat "$W/hyperfine.out")"

# ------------------------------------------------------------- the report
REPRO="sudo scripts/bench-review.sh --rounds $ROUNDS --files $FILES --changed $CHANGED --write"
python3 - "$W/starts" "$W/review.json" "$FILES" "$CHANGED" "$REPRO" >"$W/report" <<'EOF'
import json, statistics as st, sys
starts, review, files, changed, repro = sys.argv[1:6]
t = {"direct": [], "review": []}
for l in open(starts):
    k, v = l.split()
    t[k].append(float(v) * 1000)
diff = [r - d for d, r in zip(t["direct"], t["review"])]
res = {r["command"]: r for r in json.load(open(review))["results"]}
dr, gs = res["deliver review"]["median"] * 1000, res["git status --porcelain"]["median"] * 1000
ratio = dr / gs
add = st.median(diff)
print("| target | measured | |")
print("|---|---|---|")
print("| review mode adds at most 0.5 ms to `sandbox run -- true` | %+.2f ms | %s |" % (add, "met" if add <= 0.5 else "NOT MET"))
print("| `deliver review` at most 0.25x `git status --porcelain` (%s files, %s changed) | %.3fx | %s |"
      % (files, changed, ratio, "met" if ratio <= 0.25 else "NOT MET"))
print()
print("`umwelt-run sandbox run -p P -- true`, %d interleaved rounds (ms):" % len(diff))
print()
print("| workspace | median | min | max |")
print("|---|---|---|---|")
for k in ("direct", "review"):
    print("| --workspace %s | %.2f | %.2f | %.2f |" % (k, st.median(t[k]), min(t[k]), max(t[k])))
print("| difference, median of the rounds' differences | %+.2f | | |" % add)
print()
print("A %s-file tree, %s files changed, hyperfine -N, 30 runs each (ms):" % (files, changed))
print()
print("| command | median | min | max |")
print("|---|---|---|---|")
for name, r in res.items():
    print("| %s | %.2f | %.2f | %.2f |" % (name, r["median"] * 1000, r["min"] * 1000, r["max"] * 1000))
print()
print("Reproduce as root from the source tree (UMW_BUILDDIR=DIR for an out-of-tree build):")
print()
print("    " + repro)
EOF
cat "$W/report"
((WRITE)) && bench_write_block review "$W/report"
exit 0
