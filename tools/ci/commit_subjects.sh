#!/usr/bin/env bash
# Commit subjects since the check began are one line under 72 characters (the detail goes in
# the body). Exit 1 naming each that is not, 77 (skipped) without the git history.
#   tools/ci/commit_subjects.sh [REPO_ROOT]
set -u
cd "${1:-.}" || exit 2
BASE=faa1648
git rev-parse -q --verify "$BASE^{commit}" >/dev/null 2>&1 || { echo "no git history with $BASE: not checked"; exit 77; }
bad=0
while IFS= read -r line; do
  sha=${line%% *} subject=${line#* }
  if [ ${#subject} -ge 72 ]; then echo "$sha: subject of ${#subject} characters: $subject"; bad=1; fi
done < <(git log --format='%h %s' "$BASE..HEAD")
exit $bad
