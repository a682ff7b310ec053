#!/bin/bash
# The exhaustive column of docs/math.md: every float32 input of exp, log, tanh, erf and sigmoid
# (and 2^28 pairs of pow) through the math library compiled alone with the cpu target's flags,
# against glibc's double functions. About 5 minutes a function on two cores.
# Usage: bash tools/math/exhaustive.sh [function ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# The library's text (the raw string of src/codegen/math_library.cpp), qualified as the cpu does.
sed -n '/^constexpr const char\* kLibrary = R"(/,/^)";$/p' "$here/../../src/codegen/math_library.cpp" |
  sed '1s/^constexpr const char\* kLibrary = R"(//; $d' | sed 's/^FN /static inline /' > "$work/math_library.inc"
${CXX:-c++} -std=c++17 -O3 -march=native -fopenmp -ffp-contract=off -fno-trapping-math -fwrapv -fno-math-errno \
  -I"$work" "$here/exhaustive.cpp" -o "$work/exhaustive"
for f in "${@:-exp log tanh erf sigmoid pow}"; do
  for g in $f; do "$work/exhaustive" "$g"; done
done
