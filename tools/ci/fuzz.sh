#!/usr/bin/env bash
# Builds the libFuzzer targets with clang in BUILD_DIR, seeds them from the test models and
# .npy files, and runs each for SECONDS (default 60). Findings are written to BUILD_DIR/crashes.
# Usage: fuzz.sh SRC_DIR BUILD_DIR [SECONDS]
set -euo pipefail
src=$(cd "${1:?source dir}" && pwd); build=${2:?build dir}; secs=${3:-60}
CC=clang CXX=clang++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" \
  -DLOCKSTEP_FUZZ=ON -DLOCKSTEP_TESTS=OFF >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target onnx_loader_fuzz npy_fuzz external_data_fuzz
mkdir -p "$build/corpus/onnx" "$build/corpus/npy" "$build/corpus/ext" "$build/crashes"
# Every seed under its own name: the conformance cases are all called model.onnx.
seed() {
  find "$src/tests/data" -name "$1" -size "$2" -print0 |
    while IFS= read -r -d '' f; do cp "$f" "$build/corpus/$3/$(printf '%s' "${f#$src/}" | tr '/' '_')"; done
}
seed '*.onnx' -256k onnx
seed '*.npy' -64k npy
# External-data locations: the first byte is the offset, the rest the path.
for loc in a.bin sub/b.bin in out abs up/secret.bin pipe d ../secret.bin /etc/passwd sub/../a.bin; do
  printf '\x10%s' "$loc" > "$build/corpus/ext/$(printf '%s' "$loc" | tr '/.' '__')"
done
status=0
for t in onnx_loader_fuzz:onnx npy_fuzz:npy external_data_fuzz:ext; do
  bin=${t%%:*}; corpus=${t##*:}
  echo "== $bin for ${secs}s, seeds: $(ls "$build/corpus/$corpus" | wc -l)"
  if ! "$build/fuzz/$bin" "$build/corpus/$corpus" -max_total_time="$secs" -rss_limit_mb=2048 \
       -timeout=20 -artifact_prefix="$build/crashes/$bin-" -print_final_stats=1 2>"$build/$bin.log"; then
    status=1
  fi
  grep -E "stat::number_of_executed_units|stat::new_units_added|ERROR|SUMMARY" "$build/$bin.log" || true
done
ls -l "$build/crashes"
exit $status
