#!/usr/bin/env bash
# `npm test`: the build (when src/ changed since the last one), then the whole suite with the import layers'
# check and the typecheck of src/ running beside it. The suite runs the build and never the type information
# or the layer rules, so neither check need come first; any of the three failing fails the command, and a
# failed check's output is printed whole. The typecheck checks src/ only (~13 s of CPU from a fresh clone,
# against ~30 s with the tests' own types, which competed with the suite for the two cores): `npm run
# typecheck` checks everything, tests and bench included.
set -uo pipefail
cd "$(dirname "$0")/.."
# `npm install` builds (the `prepare` script): a clone's first `npm test` need not build the same tree again.
newest_source=$(find src scripts/*.mjs package.json package-lock.json tsconfig.json -newer dist/cli/main.js -print -quit 2>/dev/null)
if [ ! -f dist/cli/main.js ] || [ -n "$newest_source" ]; then
  npm run --silent build || exit 1
fi
checks_dir=$(mktemp -d)
trap 'rm -rf "$checks_dir"' EXIT
npm run --silent check:imports >"$checks_dir/imports" 2>&1 &
imports=$!
npm run --silent typecheck:src >"$checks_dir/types" 2>&1 &
typecheck=$!
# vitest's own temporary files (each module it sends the workers goes through one, in a directory it makes
# before it reads vitest.config.ts) on the tmpfs the tests' homes use (vitest.config.ts: /dev/shm with 4 GiB
# free, unless TMPDIR is set).
if [ -z "${TMPDIR:-}" ] && [ "$(stat -f -c %T /dev/shm 2>/dev/null)" = tmpfs ] && [ -w /dev/shm ] &&
  [ "$(df -Pk /dev/shm 2>/dev/null | awk 'NR == 2 { print $4 }')" -ge 4194304 ] 2>/dev/null; then
  TMPDIR=/dev/shm npx vitest run "$@"
else
  npx vitest run "$@"
fi
suite=$?
wait "$imports"
layers=$?
wait "$typecheck"
types=$?
if [ "$layers" -ne 0 ]; then
  cat "$checks_dir/imports"
  echo "import layers' check failed (scripts/checkImports.ts): see its output above" >&2
fi
if [ "$types" -ne 0 ]; then
  cat "$checks_dir/types"
  echo "typecheck of src/ failed (tsc --noEmit): see the errors above" >&2
fi
[ "$suite" -eq 0 ] && [ "$layers" -eq 0 ] && [ "$types" -eq 0 ]
