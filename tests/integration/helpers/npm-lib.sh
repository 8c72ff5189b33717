# The npm packages a test drives umwelt with (real MCP clients, harnesses),
# pinned in tests/npm/NAME/package.json and package-lock.json. Sourced
# after lib.sh. npm_install NAME: `npm ci` of them into
# $UMW_BUILDDIR/npm/NAME (again only when the lock changed), readable by the
# test user; its path in NPM_DIR. A registry out of reach skips the whole
# test file, saying so: nothing is faked in its place.
npm_install() {
        local name=$1 src=$UMW_SRCDIR/tests/npm/$1
        NPM_DIR=$UMW_BUILDDIR/npm/$name
        command -v npm >/dev/null || t_skip_all "npm is not installed (scripts/setup.sh installs it)"
        if ! cmp -s "$src/package-lock.json" "$NPM_DIR/package-lock.json" ||
                [[ ! -d $NPM_DIR/node_modules ]]; then
                rm -rf "$NPM_DIR"
                mkdir -p "$NPM_DIR"
                cp "$src/package.json" "$src/package-lock.json" "$NPM_DIR/"
                if ! (cd "$NPM_DIR" && timeout 600 npm ci --no-audit --no-fund --loglevel=error \
                        >"$T_TMP/npm-$name.log" 2>&1); then
                        t_diag "$(tail -5 "$T_TMP/npm-$name.log")"
                        rm -rf "$NPM_DIR"
                        t_skip_all "npm ci of tests/npm/$name failed (is the npm registry reachable?)"
                fi
        fi
        chmod -R a+rX "$NPM_DIR"
}
