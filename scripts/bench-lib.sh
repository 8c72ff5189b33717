# Shared by the benchmark scripts (sourced, not run): their one way to fail
# and their one way to put a report into BENCHMARKS.md.

# die MESSAGE...: one line naming the script, exit 1.
die() {
	printf '%s: %s\n' "${0##*/}" "$*" >&2
	exit 1
}

# bench_write_block NAME REPORT: the lines between <!-- NAME:begin --> and
# <!-- NAME:end --> of BENCHMARKS.md become REPORT's (after an empty line);
# the rest of the file stays. Written to a temporary file, then renamed.
bench_write_block() {
	local name=$1 report=$2 md=$SRCDIR/BENCHMARKS.md
	grep -qx "<!-- $name:begin -->" "$md" && grep -qx "<!-- $name:end -->" "$md" ||
		die "$md has no <!-- $name:begin --> ... <!-- $name:end --> block"
	awk -v report="$report" -v begin="<!-- $name:begin -->" -v end="<!-- $name:end -->" '
		$0 == end { inside = 0 }
		!inside { print }
		$0 == begin {
			print ""
			while ((getline line <report) > 0) print line
			inside = 1
		}' "$md" >"$md.tmp" && mv "$md.tmp" "$md" || die "cannot update $md"
	printf '\n%s: results written to %s\n' "${0##*/}" "$md"
}

# bench_args "$@": the options every benchmark takes: --rounds N (ROUNDS,
# whose default the script sets first) and --write (WRITE: 1).
bench_args() {
	WRITE=0
	while (($#)); do
		case $1 in
		--rounds) ROUNDS=${2:?}; shift ;;
		--write) WRITE=1 ;;
		*) printf '%s: unknown argument %s\n' "${0##*/}" "$1" >&2; exit 2 ;;
		esac
		shift
	done
}

# bench_needs CMD...: root (the benchmarks' sandboxes are root's), and
# each CMD on PATH.
bench_needs() {
	[[ $(id -u) -eq 0 ]] || die "needs root (sandboxes as root)"
	local c
	for c in "$@"; do command -v "$c" >/dev/null || die "$c is missing"; done
}
