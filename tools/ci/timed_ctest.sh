#!/usr/bin/env bash
# Runs ctest with the given arguments, prints its ten slowest tests and its wall time, and fails
# when that exceeds BUDGET seconds (so the README's test command cannot creep past it).
# Usage: timed_ctest.sh BUDGET CTEST_ARGS...
set -uo pipefail
budget=${1:?budget in seconds}; shift
log=$(mktemp)
trap 'rm -f "$log"' EXIT
start=$(date +%s)
ctest "$@" | tee "$log"
status=${PIPESTATUS[0]}
took=$(( $(date +%s) - start ))
echo "== the ten slowest tests"
grep -E 'Test +#[0-9]+: .* sec$' "$log" | sed -E 's/.*Test +#[0-9]+: ([^ ]+) .* ([0-9.]+) sec$/\2 \1/' |
  sort -rn | head -10 | awk '{printf "%9.1f s  %s\n", $1, $2}'
echo "== ctest took ${took} s of its ${budget} s budget"
[ "$status" -eq 0 ] || exit "$status"
if [ "$took" -gt "$budget" ]; then
  echo "the test command took ${took} s, over its ${budget} s budget: make the slowest tests cheaper or move" \
       "their exhaustive forms to the full tier (docs/testing.md)"
  exit 1
fi
