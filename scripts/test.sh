#!/usr/bin/env bash
# `npm test`: the import layers and the build, then the whole suite with the typecheck running beside it.
# The suite runs the build and never the type information, so the typecheck (~20 s from a fresh clone)
# need not come first; either failing fails the command, and its output is printed whole.
set -uo pipefail
cd "$(dirname "$0")/.."
npm run --silent check:imports || exit 1
npm run --silent build || exit 1
typecheck_log=$(mktemp)
trap 'rm -f "$typecheck_log"' EXIT
npm run --silent typecheck >"$typecheck_log" 2>&1 &
typecheck=$!
npx vitest run "$@"
suite=$?
wait "$typecheck"
types=$?
if [ "$types" -ne 0 ]; then
  cat "$typecheck_log"
  echo "typecheck failed (tsc --noEmit): see the errors above" >&2
fi
[ "$suite" -eq 0 ] && [ "$types" -eq 0 ]
