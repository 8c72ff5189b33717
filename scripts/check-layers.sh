#!/usr/bin/env bash
# The layer check (DESIGN.md, "Layers and folders"): arrows point down.
# Fails on an #include or a linked symbol that points up or sideways, as
# TAP: three tests per layer, one for the includes of its sources, one for
# the undefined symbols of its objects (the archive and, for netns, the
# gateway's own objects) resolved in another layer, and one for cycles
# between the files of the layer itself (a calls b calls a: one concern
# spread over two files, or two tangled).
#
#   scripts/check-layers.sh SRCDIR BUILDDIR
set -uo pipefail

src=${1:?usage: check-layers.sh SRCDIR BUILDDIR}
build=${2:?usage: check-layers.sh SRCDIR BUILDDIR}

# What each layer may reach, besides itself. src/ (the mains) may reach all.
declare -A may=(
        [common]=""
        [policy]="common"
        [netns]="policy common"
        [runtime]="netns common"
        [face]="runtime netns policy common"
        [mcp]="face runtime netns policy common"
)
layers=(common policy netns runtime face mcp)

n=0
fails=0
# result OK NAME [DIAGNOSTIC LINES...]: one TAP line.
result() {
        local ok=$1 name=$2
        shift 2
        n=$((n + 1))
        if [[ $ok == 0 ]]; then
                echo "ok $n - $name"
        else
                fails=$((fails + 1))
                echo "not ok $n - $name"
                printf '# %s\n' "$@"
        fi
}

# allowed LAYER TARGET: whether LAYER may reach TARGET.
allowed() {
        [[ $1 == "$2" || " ${may[$1]} " == *" $2 "* ]]
}

# check_includes LAYER: every quoted include of LAYER's sources names a
# layer it may reach, spelled from the top ("layer/file.h").
check_includes() {
        local layer=$1 bad=() f line target
        for f in "$src/$layer"/*.[ch]; do
                while IFS= read -r line; do
                        target=${line#*\"}
                        target=${target%%\"*}
                        if [[ $target != */* ]]; then
                                bad+=("${f#"$src"/}: #include \"$target\" is not spelled from the top")
                        elif ! allowed "$layer" "${target%%/*}"; then
                                bad+=("${f#"$src"/}: #include \"$target\" points up")
                        fi
                done < <(grep -h '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f")
        done
        result ${#bad[@]} "$layer: includes reach only ${may[$layer]:-nothing}" "${bad[@]}"
}

# objects LAYER: the object files of LAYER in the build tree.
objects() {
        local layer=$1
        ls "$build"/libumwelt_"$layer".a 2>/dev/null
        [[ $layer == netns ]] && ls "$build"/libumwelt_tls.a "$build"/netns/umwelt_gateway-*.o 2>/dev/null
        [[ $layer == face ]] && ls "$build"/libumwelt_deliver.a "$build"/libumwelt_relay.a 2>/dev/null
        [[ $layer == mcp ]] && ls "$build"/libumwelt_mcp_install.a 2>/dev/null
}

# Which layer defines each global symbol of the layers' objects.
declare -A owner=()
index_symbols() {
        local layer sym
        for layer in "${layers[@]}"; do
                while read -r sym; do
                        owner[$sym]=$layer
                done < <(objects "$layer" | xargs -r nm --defined-only -g -P 2>/dev/null |
                        awk 'NF >= 2 && $2 ~ /^[TDBRVWC]$/ {print $1}')
        done
}

# check_symbols LAYER: every undefined symbol of LAYER's objects that another
# layer defines is one LAYER may reach.
check_symbols() {
        local layer=$1 bad=() sym
        local objs
        objs=$(objects "$layer")
        if [[ -z $objs ]]; then
                result 1 "$layer: symbols" "no objects of $layer in $build: build first"
                return
        fi
        while read -r sym; do
                local def=${owner[$sym]:-}
                [[ -z $def ]] || allowed "$layer" "$def" || bad+=("$layer uses $sym, defined in $def")
        done < <(echo "$objs" | xargs nm --undefined-only -P 2>/dev/null | awk 'NF >= 2 {print $1}' | sort -u)
        result ${#bad[@]} "$layer: symbols resolve only in ${may[$layer]:-nothing}" "${bad[@]}"
}

# check_cycles LAYER: the files of LAYER's archive, each pointing at the
# files whose symbols it uses, form no cycle. (The gateway's own objects are
# a program's, an event loop whose handlers live in several files: not
# checked.)
check_cycles() {
        local layer=$1 cycles bad=() archives=("$build/libumwelt_$1.a")
        [[ $layer == face ]] && archives+=("$build"/libumwelt_deliver.a)
        [[ $layer == mcp ]] && archives+=("$build"/libumwelt_mcp_install.a)
        cycles=$(nm -A -P "${archives[@]}" 2>/dev/null | python3 -c '
import re, sys
defs, uses = {}, set()
for line in sys.stdin:
    m = re.match(r".*\[(.+?)\]: (\S+) (\w)", line)
    if not m:
        continue
    obj, sym, kind = m.groups()
    if kind in "TDBRC":
        defs[sym] = obj
    elif kind == "U":
        uses.add((obj, sym))
edges = {}
for obj, sym in uses:
    d = defs.get(sym)
    if d and d != obj:
        edges.setdefault(obj, set()).add(d)
def reach(a):
    seen, todo = set(), [a]
    while todo:
        for n in edges.get(todo.pop(), ()):
            if n not in seen:
                seen.add(n)
                todo.append(n)
    return seen
for a in sorted(edges):
    for b in sorted(edges[a]):
        if a in reach(b):
            print(a, "->", b, "-> ... ->", a)
')
        [[ -n $cycles ]] && mapfile -t bad <<<"$cycles"
        result ${#bad[@]} "$layer: its files call each other in no cycle" "${bad[@]}"
}

echo "1..$((3 * ${#layers[@]}))"
index_symbols
for layer in "${layers[@]}"; do
        check_includes "$layer"
        check_symbols "$layer"
        check_cycles "$layer"
done
[[ $fails -eq 0 ]]
