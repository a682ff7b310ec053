#!/usr/bin/env bash
# Every line of C++ changed since the format check began is as .clang-format lays it out
# (git clang-format over the lines each change touched: older code is reformatted as it is
# edited, not in one sweep). Prints the diff that would fix it; exit 1 if there is one, 77
# (skipped) where there is no git history to compare with.
#   tools/ci/format.sh [REPO_ROOT]
set -u
cd "${1:-.}" || exit 2
BASE=faa1648  # the last commit before the check
command -v git-clang-format >/dev/null || { echo "git-clang-format is not installed (Debian: clang-format)"; exit 2; }
git rev-parse -q --verify "$BASE^{commit}" >/dev/null 2>&1 || { echo "no git history with $BASE: not checked"; exit 77; }
out=$(git clang-format --diff "$BASE" -- '*.cpp' '*.h' '*.cu' '*.cuh' 2>&1)
case "$out" in
  ""|*"no modified files to format"*|*"did not modify any files"*) exit 0 ;;
esac
printf '%s\n' "$out"
echo "format.sh: the lines above are not laid out as .clang-format says: run git clang-format $BASE"
exit 1
