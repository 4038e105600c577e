#!/usr/bin/env bash
# The packages as a user gets them (issue 11): build, `pnpm pack` every published package, install the tarballs
# with npm into an empty folder outside the workspace (effect and the other peers come from the registry), then
#   (a) npx abhed-ext demo, and npx abhed-ext check -- node my-ext.mjs
#   (b) extensions written against the installed @abhed/extension (plain JS, and TypeScript with Effect) run,
#       alone and under npx abhed-ext run
#   (c) an Effect program importing the installed @abhed/host type-checks with plain tsc (NodeNext) and runs.
# Run by .ci/run after the tests. Needs the network (npm registry). Usage: bash test/pack/run.sh
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/test/pack"
# Node 24 (the workspace's) first on PATH, for npm, npx and the extensions the CLI starts.
export PATH="$root/node_modules/.bin:$PATH"
tsc="$root/node_modules/.bin/tsc"
node --version | grep -q '^v24\.' || { echo "pack test: needs Node 24 first on PATH, got $(node --version)" >&2; exit 1; }

work="$(mktemp -d "${TMPDIR:-/tmp}/abhed-pack-XXXXXX")"
trap 'rm -rf "$work"' EXIT
fail() { echo "pack test FAILED: $*" >&2; exit 1; }
step() { echo "== $*" >&2; }

step "build and pack"
(cd "$root" && pnpm -s build)
packages=(protocol core host extension ai cli)
for p in "${packages[@]}"; do
  (cd "$root/packages/$p" && pnpm pack --pack-destination "$work/packs" >/dev/null)
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
  ! grep -q '"\./src/' <<<"$manifest" || fail "$tgz exports point at src/"
done
grep -q '^package/examples/abhed.json$' <<<"$(tar -tzf "$work"/packs/abhed-cli-*.tgz)" || fail "@abhed/cli does not ship its examples"

step "install with npm into an empty folder"
app="$work/app"
mkdir -p "$app"
cp "$here"/app/* "$app/"
cd "$app"
printf '{ "name": "pack-test-app", "private": true, "type": "module" }\n' >package.json
npm install --no-audit --no-fund --loglevel=error "$work"/packs/*.tgz effect@^4.1.0 @effect/platform-node@^4.1.0 @types/node@^24 >&2

step "every package imports from the install (plain Node, no type stripping)"
node --input-type=module -e '
for (const name of ["@abhed/protocol", "@abhed/core", "@abhed/host", "@abhed/extension", "@abhed/extension/effect", "@abhed/cli", "@abhed/ai"]) {
  const module = await import(name)
  if (Object.keys(module).length === 0) throw new Error(`${name} exports nothing`)
}' || fail "a package does not import"

step "(a) npx abhed-ext --version, demo, check"
[ "$(npx --no-install abhed-ext --version)" = "abhed-ext v$(node -p 'require("./node_modules/@abhed/cli/package.json").version')" ] ||
  fail "abhed-ext --version does not print the package's version"
npx --no-install abhed-ext demo >demo.out 2>demo.err || { cat demo.err >&2; fail "abhed-ext demo exited $?"; }
grep -q '^Summary: ' demo.out || { cat demo.out demo.err >&2; fail "abhed-ext demo printed no summary"; }
grep -q 'Every extension stayed alive' demo.out || { cat demo.out demo.err >&2; fail "an example extension died in the demo"; }
npx --no-install abhed-ext check -- node my-ext.mjs >check.out 2>&1 || { cat check.out >&2; fail "abhed-ext check -- node my-ext.mjs failed"; }
grep -q '^PASS' check.out || { cat check.out >&2; fail "abhed-ext check printed no PASS"; }
set +e
npx --no-install abhed-ext run >usage.out 2>usage.err
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

echo "pack test: every package packs, installs and works from the registry layout" >&2
