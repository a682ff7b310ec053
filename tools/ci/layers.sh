#!/usr/bin/env bash
# The layering of src/: a folder includes only folders of its own or a lower layer, a backend
# folder includes no other backend, and target names appear only in their own backend folder
# and the registry. With BUILD_DIR, also no call into a higher layer: a symbol an object of one
# folder uses is defined in its own layer or a lower one (a declaration in a low header whose
# definition lives higher passes the include check, not this one). Prints each violation; exit
# 1 if there is one.
#   tools/ci/layers.sh [REPO_ROOT] [BUILD_DIR]
set -u
ROOT=${1:-.}
BUILD=${2:-}
[ -n "$BUILD" ] && BUILD=$(cd "$BUILD" && pwd)
cd "$ROOT/src" || exit 2
# Lower layers first; folders on one line form one layer and may include each other.
LAYERS=(
  "core"
  "graph"
  "ops"
  "frontend ref kernel"
  "passes"
  "codegen"
  "runtime"
  "backend"
  "verify"
  "cli"
)
rank() {
  local i
  for i in "${!LAYERS[@]}"; do
    for f in ${LAYERS[$i]}; do [ "$f" = "$1" ] && { echo "$i"; return; }; done
  done
  echo -1
}
bad=0
for dir in */; do
  dir=${dir%/}
  r=$(rank "$dir")
  if [ "$r" -lt 0 ]; then echo "src/$dir: not in any layer of tools/ci/layers.sh"; bad=1; continue; fi
  while IFS=: read -r file _ inc; do
    to=$(sed -E 's/.*#include "([a-z_]+)\/.*/\1/' <<<"$inc")
    tr=$(rank "$to")
    if [ "$tr" -gt "$r" ]; then echo "src/$file includes $to/, a higher layer than $dir/"; bad=1; fi
  done < <(grep -rnE '^#include "[a-z_]+/' "$dir" | sed -E 's/^([^:]+):([0-9]+):/\1:\2:/')
done
# Backends: each folder stands alone; only backend/registry.cpp sees them all.
for b in backend/*/; do
  b=${b%/}
  while IFS= read -r hit; do echo "src/$hit: one backend includes another"; bad=1; done < <(
    grep -rnE '^#include "backend/' "$b" | grep -vE "#include \"$b/")
done
# Target names as string literals: only in their own folder and the registry. The oracle's
# name, "ref", is part of the verification vocabulary (check --ref) and exempt.
for b in backend/*/; do
  [ "$(basename "$b")" = ref ] && continue
  name=$(basename "$b")
  while IFS= read -r hit; do echo "src/$hit: names target '$name' outside $b"; bad=1; done < <(
    grep -rnE "\"$name\"" . --include='*.cpp' --include='*.h' | sed 's|^\./||' | grep -vE "^backend/($name/|registry\.cpp)")
done
# Calls: undefined symbols of each object against the lowest layer that defines them.
OBJ=$BUILD/src/CMakeFiles/lockstep_core.dir
if [ -n "$BUILD" ] && [ -d "$OBJ" ]; then
  defs=$(mktemp)
  trap 'rm -f "$defs"' EXIT
  for o in $(cd "$OBJ" && find . -name '*.o' | sed 's|^\./||'); do
    folder=${o%%/*}
    nm --defined-only -g "$OBJ/$o" 2>/dev/null | awk -v r="$(rank "$folder")" -v f="$folder" '{print $3, r, f}'
  done | sort -k1,1 -k2,2n | awk '!seen[$1]++' >"$defs"
  for o in $(cd "$OBJ" && find . -name '*.o' | sed 's|^\./||'); do
    folder=${o%%/*}
    r=$(rank "$folder")
    while read -r sym; do
      hit=$(awk -v s="$sym" '$1 == s {print $2, $3; exit}' "$defs")
      [ -z "$hit" ] && continue
      if [ "${hit%% *}" -gt "$r" ]; then
        echo "src/${o%.o} calls $(c++filt "$sym"), defined in ${hit#* }/, a higher layer than $folder/"
        bad=1
      fi
    done < <(nm -u "$OBJ/$o" 2>/dev/null | awk '{print $2}' | grep -Fxf <(cut -d' ' -f1 "$defs"))
  done
fi
exit $bad
