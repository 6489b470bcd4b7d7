#!/usr/bin/env bash
# `npm test`: the import layers and the build, then the whole suite with the typecheck of src/ running beside it.
# The suite runs the build and never the type information, so the typecheck need not come first; either failing
# fails the command, and its output is printed whole. It checks src/ only (~13 s of CPU from a fresh clone,
# against ~30 s with the tests' own types, which competed with the suite for the two cores): `npm run
# typecheck` checks everything, tests and bench included.
set -uo pipefail
cd "$(dirname "$0")/.."
npm run --silent check:imports || exit 1
npm run --silent build || exit 1
typecheck_log=$(mktemp)
trap 'rm -f "$typecheck_log"' EXIT
npm run --silent typecheck:src >"$typecheck_log" 2>&1 &
typecheck=$!
npx vitest run "$@"
suite=$?
wait "$typecheck"
types=$?
if [ "$types" -ne 0 ]; then
  cat "$typecheck_log"
  echo "typecheck of src/ failed (tsc --noEmit): see the errors above" >&2
fi
[ "$suite" -eq 0 ] && [ "$types" -eq 0 ]
