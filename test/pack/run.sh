#!/usr/bin/env bash
# The packages as a user gets them (issues 11, 23): `pnpm pack` every published package from a tree without dist/
# (prepack must build), serve the tarballs as the @abhed scope of a registry (registry.mjs; everything else comes
# from the npm registry), and in an empty folder outside the workspace, with the machine's own node and npm first
# on PATH (Node 20 on the reference machine), run README's install lines exactly as written, then
#   (a) the README's abhed-ext lines (npx abhed-ext demo, check -- node my-extension.mjs), --version, a usage error
#   (b) extensions written against the installed @abhed/extension (plain JS, and TypeScript with Effect) run,
#       alone and under npx abhed-ext run
#   (c) an Effect program importing the installed @abhed/host type-checks with plain tsc (NodeNext) and runs
#   (d) the startup check: on the machine's Node (when older than 24), and beside an @effect/platform-node 4.0
#       that npm picked on Node 20 for the issue's reporter, abhed-ext prints one line saying what to run, exit 1.
# Run by .ci/run after the tests. Needs the network (npm registry). Usage: bash test/pack/run.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/test/pack"
tsc="$root/node_modules/.bin/tsc"
# The machine's own node and npm, as a user has them: `pnpm test:pack` put the workspace's node_modules/.bin (Node
# 24) in front; a user has none.
PATH="$(tr ':' '\n' <<<"$PATH" | grep -v '/node_modules/\.bin$' | paste -sd: -)"
export PATH
machine_node="$(command -v node)"
machine_major="$(node -p 'process.versions.node.split(".")[0]')"

work="$(mktemp -d "${TMPDIR:-/tmp}/abhed-pack-XXXXXX")"
registry_pid=""
cleanup() {
  if [ -n "$registry_pid" ]; then kill "$registry_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "pack test FAILED: $*" >&2; exit 1; }
step() { echo "== $* ($SECONDS s)" >&2; }
step "the machine's node $(node --version) and npm $(npm --version), first on PATH"

step "pack from a tree without dist/: prepack builds"
(cd "$root" && rm -rf packages/*/dist packages/cli/examples)
packages=(protocol core host extension ai cli)
for p in "${packages[@]}"; do
  (cd "$root/packages/$p" && pnpm pack --pack-destination "$work/packs" >"$work/pack-$p.log" 2>&1) ||
    { cat "$work/pack-$p.log" >&2; fail "pnpm pack of $p failed"; }
done
for tgz in "$work"/packs/*.tgz; do
  listing="$(tar -tzf "$tgz")"
  grep -q '^package/dist/index.js$' <<<"$listing" || fail "$tgz has no dist/index.js"
  grep -q '^package/dist/index.d.ts$' <<<"$listing" || fail "$tgz has no dist/index.d.ts"
  ! grep -q '^package/test/' <<<"$listing" || fail "$tgz ships test/"
  ! grep -q 'tsbuildinfo' <<<"$listing" || fail "$tgz ships a .tsbuildinfo"
  manifest="$(tar -xOzf "$tgz" package/package.json)"
  ! grep -q '"private"' <<<"$manifest" || fail "$tgz is private"
  ! grep -q 'workspace:' <<<"$manifest" || fail "$tgz still has workspace: ranges"
  ! grep -q '"\./src/' <<<"$manifest" || fail "$tgz exports or bin point at src/"
done
cli_listing="$(tar -tzf "$work"/packs/abhed-cli-*.tgz)"
grep -q '^package/examples/abhed.json$' <<<"$cli_listing" || fail "@abhed/cli does not ship its examples"
grep -q '^package/dist/abhed-ext.js$' <<<"$cli_listing" || fail "@abhed/cli does not ship its bin, dist/abhed-ext.js"

step "the tarballs as the @abhed scope of a registry"
exec 3< <(exec node "$here/registry.mjs" "$work/packs")
registry_pid=$!
read -r port <&3 || fail "the test registry did not start"
printf '@abhed:registry=http://127.0.0.1:%s/\nupdate-notifier=false\nfund=false\naudit=false\n' "$port" >"$work/npmrc"
export NPM_CONFIG_USERCONFIG="$work/npmrc"

# The lines of each ```sh block that follows the marker comment in README.md.
readme_lines() {
  awk '/^<!-- test\/pack\/run.sh runs these lines as written -->$/ { marked = 1; next }
       marked && /^```sh$/ { inside = 1; next }
       inside && /^```$/ { inside = 0; marked = 0; next }
       inside { print }' "$root/README.md"
}
# The README's example extension: the ```ts block that starts with `// my-extension.mjs`.
readme_extension() {
  awk '/^```ts$/ { start = 1; next } start && /^\/\/ my-extension\.mjs/ { inside = 1 } start { start = 0 }
       inside && /^```$/ { exit } inside { print }' "$root/README.md"
}

step "README's lines, as written, in an empty folder"
app="$work/app"
mkdir -p "$app"
cd "$app"
readme_extension >my-extension.mjs
[ -s my-extension.mjs ] || fail "README has no my-extension.mjs block"
mapfile -t lines < <(readme_lines)
[ "${#lines[@]}" -ge 4 ] || fail "README's marked blocks hold ${#lines[@]} lines"
i=0
for line in "${lines[@]}"; do
  i=$((i + 1))
  echo "\$ $line" >&2
  start=$SECONDS
  bash -c "$line" >"line-$i.out" 2>"line-$i.err" || { cat "line-$i.out" "line-$i.err" >&2; fail "README's line failed: $line"; }
  echo "   ($((SECONDS - start)) s)" >&2
  case "$line" in
    "npx abhed-ext demo"*)
      grep -q '^Summary: ' "line-$i.out" || { cat "line-$i.out" "line-$i.err" >&2; fail "abhed-ext demo printed no summary"; }
      grep -q 'Every extension stayed alive' "line-$i.out" || { cat "line-$i.out" "line-$i.err" >&2; fail "an example extension died in the demo"; } ;;
    "npx abhed-ext check"*)
      grep -q '^PASS' "line-$i.out" || { cat "line-$i.out" >&2; fail "abhed-ext check printed no PASS"; } ;;
  esac
done
grep -q '"node"' package.json || fail "README's lines did not install node@24"

# From here on, as npx runs things: the folder's node_modules/.bin (Node 24) first.
export PATH="$app/node_modules/.bin:$PATH"
cp "$here"/app/* "$app/"
npm pkg set type=module
npm install --loglevel=error @types/node@24 >&2

step "every package imports from the install (plain Node, no type stripping)"
node --input-type=module -e '
for (const name of ["@abhed/protocol", "@abhed/core", "@abhed/host", "@abhed/extension", "@abhed/extension/effect", "@abhed/cli", "@abhed/ai"]) {
  const module = await import(name)
  if (Object.keys(module).length === 0) throw new Error(`${name} exports nothing`)
}' || fail "a package does not import"

step "(a) npx abhed-ext --version, a usage error"
[ "$(npx --no-install abhed-ext --version)" = "abhed-ext v$(node -p 'require("./node_modules/@abhed/cli/package.json").version')" ] ||
  fail "abhed-ext --version does not print the package's version"
set +e
npx --no-install abhed-ext check >usage.out 2>usage.err  # check needs the command to check: a usage error
code=$?
set -e
[ "$code" = 64 ] && [ ! -s usage.out ] || fail "a usage error exited $code (want 64) or printed on stdout"

step "(b) extensions against the installed @abhed/extension"
reply="$(printf '%s\n' '{"event":"tool_call","session_id":"s","call_id":"c","tool":"bash","args":{"command":"rm -rf /"},"id":7}' | node my-ext.mjs)"
[ "$reply" = '{"block":true,"reason":"no rm here","id":7}' ] || fail "my-ext.mjs replied $reply"
reply="$(printf '%s\n' '{"event":"tool_call","session_id":"s","call_id":"c","tool":"write","args":{"path":"a"}}' | node effect-ext.ts 2>/dev/null)"
[ "$reply" = '{"ask":true,"reason":"writes need a look"}' ] || fail "effect-ext.ts replied $reply"
out="$(printf '%s\n' '{"event":"tool_call","tool":"bash","args":{"command":"rm -rf /"}}' | npx --no-install abhed-ext run -c abhed.json -)"
grep -q '"decision":"deny"' <<<"$out" || fail "abhed-ext run did not deny through my-ext.mjs: $out"

step "(c) an Effect program on the installed @abhed/host: tsc (NodeNext), then node"
"$tsc" -p tsconfig.json || fail "the consumer program does not type-check against the installed packages"
decided="$(node host-program.ts)"
[ "$decided" = '{"rm":"deny","write":"ask","ls":"allow","content":"key=[redacted]"}' ] || fail "host-program decided $decided"

step "(d) the startup check"
bin="$app/node_modules/@abhed/cli/dist/abhed-ext.js"
if [ "$machine_major" -lt 24 ]; then
  set +e
  "$machine_node" "$bin" --version >old.out 2>old.err
  code=$?
  set -e
  [ "$code" = 1 ] && [ ! -s old.out ] && [ "$(wc -l <old.err)" = 1 ] &&
    grep -qF "abhed-ext: needs Node >=24 (this is Node $("$machine_node" -p process.versions.node)): " old.err ||
    { cat old.out old.err >&2; fail "abhed-ext on Node $machine_major exited $code without the one line"; }
fi
# What npm on Node 20 gave the issue's reporter: effect 4.1 beside @effect/platform-node 4.0.6. The app's tree
# (hard links: quick) with the real 4.0.6 in place of 4.1, run with the app's Node 24.
mkdir "$work/mismatch"
cd "$work/mismatch"
cp -al "$app/node_modules" node_modules
platform="$(npm pack --silent --pack-destination "$work" @effect/platform-node@4.0.6 | tail -1)"
rm -rf node_modules/@effect/platform-node
mkdir node_modules/@effect/platform-node
tar -xzf "$work/$platform" -C node_modules/@effect/platform-node --strip-components=1
set +e
node node_modules/@abhed/cli/dist/abhed-ext.js demo >mismatch.out 2>mismatch.err
code=$?
set -e
[ "$code" = 1 ] && [ ! -s mismatch.out ] && [ "$(wc -l <mismatch.err)" = 1 ] &&
  grep -q '^abhed-ext: needs effect ^4.1.0 with @effect/platform-node ^4.1.0, found effect 4.1.0 and @effect/platform-node 4.0.6: run `npm install effect@4.1.0 @effect/platform-node@4.1.0`' mismatch.err ||
  { cat mismatch.out mismatch.err >&2; fail "abhed-ext beside @effect/platform-node 4.0.6 exited $code without the one line"; }

echo "pack test: every package packs, installs with README's lines and works ($SECONDS s)" >&2
