#!/usr/bin/env bash
# Runs the day's entry of the exhaustive tier (ctest label `full`): entry (days since 1970) mod
# N, so across N days of CI every entry runs; `ctest -L full` runs them all at once.
# With CI_STARTED (seconds since 1970) set, it is left out, saying so, once CI has run for
# CI_SLICE_AFTER seconds (default 3000): the run stays inside CI's time.
# Usage: full_slice.sh BUILD_DIR [ENTRY]
set -euo pipefail
build=${1:?build dir}
if [ -n "${CI_STARTED:-}" ] && [ $(( $(date +%s) - CI_STARTED )) -gt "${CI_SLICE_AFTER:-3000}" ]; then
  echo "== the exhaustive tier's entry for today is left out: CI has run $(( $(date +%s) - CI_STARTED )) s"
  exit 0
fi
mapfile -t entries < <(ctest --test-dir "$build" -N -L full | sed -nE 's/^ *Test +#[0-9]+: (full_[a-z0-9_]+)$/\1/p')
[ "${#entries[@]}" -gt 0 ] || { echo "no tests labelled full in $build"; exit 1; }
pick=${2:-${entries[$(( $(date +%s) / 86400 % ${#entries[@]} ))]}}
echo "== the exhaustive tier's entry for today: $pick (one of ${#entries[@]}: ${entries[*]})"
ctest --test-dir "$build" --output-on-failure -R "^${pick}\$"
