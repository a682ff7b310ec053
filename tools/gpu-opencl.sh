#!/usr/bin/env bash
# The OpenCL evidence on a machine with NVIDIA's OpenCL, from the repo root:
#   tools/gpu-opencl.sh [BIN_DIR]
# Writes /etc/OpenCL/vendors/nvidia.icd when the container lacks it, lists the OpenCL devices,
# runs the opencl test suites (conformance, harness, VITS graphs, planted faults, the device's
# own build of every harness case, the maths' ulp bounds), checks the 128-channel decoder on
# opencl and cuda against ref with the determinism stages, and benches it on both. Logs in
# $OUT (or gpu-opencl-logs/); a short table comes last.
set -u -o pipefail
ROOT=$(pwd)
LOG=${OUT:-$ROOT/gpu-opencl-logs}
mkdir -p "$LOG"
WORK=$(mktemp -d)
BIN=$(cd "${1:-.carry}" && pwd)
export LD_LIBRARY_PATH="$BIN/lib:$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LOCKSTEP_BINARY="$BIN/lockstep"
export XDG_CACHE_HOME="$WORK/cache"  # cold: builds are timed honestly
LS="$BIN/lockstep"
declare -a ROWS
row() { ROWS+=("$(printf '%-40s %-6s %s' "$1" "$2" "$3")"); }

if [ ! -e /etc/OpenCL/vendors/nvidia.icd ]; then
  lib=$(ldconfig -p | awk '/libnvidia-opencl\.so\.1/ { print $NF; exit }')
  [ -n "$lib" ] || lib=$(find /usr/lib /usr/lib64 /usr/local /lib -name 'libnvidia-opencl.so.1*' 2>/dev/null | head -1)
  if [ -n "$lib" ]; then mkdir -p /etc/OpenCL/vendors && echo "$lib" >/etc/OpenCL/vendors/nvidia.icd; fi
fi
{ ls -l /etc/OpenCL/vendors; cat /etc/OpenCL/vendors/*.icd; } >"$LOG/icd.log" 2>&1
"$LS" info --targets >"$LOG/info.log" 2>&1
dev=$(grep -m1 -- '--device 0:' "$LOG/info.log" | sed 's/.*--device 0: //')
grep -A1 '^opencl:' "$LOG/info.log" | grep -q 'runs here' && st=pass || st=FAIL
row "opencl device 0" "$st" "${dev:-none: $(grep -A1 '^opencl:' "$LOG/info.log" | tail -1 | cut -c1-90)}"

# The tests read data from the path compiled into them; link it when the tree has moved.
DATA=$(grep -aom1 '/[^"[:cntrl:]]*/tests/data' "$BIN/lockstep_tests" | head -1)
if [ -n "$DATA" ] && [ ! -e "$DATA" ]; then
  TREE=$(dirname "$(dirname "$DATA")")
  { mkdir -p "$(dirname "$TREE")" && ln -sn "$ROOT" "$TREE"; } 2>/dev/null || echo "warning: no test data at $DATA"
fi

GROUPS_=(
  "conformance:Targets/Conformance.*/opencl"
  "units:Opencl*:Targets/Harness.*/opencl:Targets/Staging.*/opencl:Targets/SymbolicLengths.*/opencl:Targets/RuntimeChecks.*/opencl:Targets/Respecialise.*/opencl:Targets/TargetFaults.*/opencl:Targets/CheckFaults.*/opencl:*MathUlp*/opencl"
  "vits:Targets/Vits.*/opencl"
  "faults:Targets/DecoderFaults.*/opencl"
)
pids=()
for g in "${GROUPS_[@]}"; do
  timeout "${GROUP_TIMEOUT:-500}" "$BIN/lockstep_tests" --gtest_filter="${g#*:}" >"$LOG/gtest_${g%%:*}.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for g in "${GROUPS_[@]}"; do
  f="$LOG/gtest_${g%%:*}.log"
  ok=$(grep -c '^\[       OK \]' "$f"); bad=$(grep -c '^\[  FAILED  \] [A-Za-z/]*\.[A-Za-z0-9_/]* (' "$f")
  skip=$(grep -c '^\[  SKIPPED \] [A-Za-z/]*\.[A-Za-z0-9_/]* (' "$f")
  grep -q 'test suites\? ran\.' "$f" && [ "$bad" = 0 ] && [ "$ok" -gt 0 ] && st=pass || st=FAIL
  row "gtest ${g%%:*} (opencl)" "$st" "$ok passed, $bad failed, $skip skipped"
done
c=$(grep -m1 '^cases: ' "$LOG/gtest_conformance.log"); [ -n "$c" ] && row "conformance cases" "info" "${c#cases: }"

"$BIN/lockstep-vitsgen" --part decoder --upsample-channels 128 --T 1024 -o "$WORK/decoder.onnx" >"$LOG/vitsgen.log" 2>&1
"$LS" check "$WORK/decoder.onnx" --targets cuda,opencl --seed-inputs vits --fresh 2 >"$LOG/check.log" 2>&1
grep -q '^verdict: agree' "$LOG/check.log" && st=pass || st=FAIL
for t in cuda opencl; do
  a=$(grep -E "^  $t +audio" "$LOG/check.log" | awk '{print "cos", $3, "relL2", $4}')
  row "check decoder $t vs ref" "$st" "$a"
done
for t in cuda opencl; do
  "$LS" bench "$WORK/decoder.onnx" --target "$t" --seed-inputs vits --runs 20 --warmup 3 >"$LOG/bench_$t.log" 2>&1
  m=$(grep -m1 '^runs:' "$LOG/bench_$t.log" | grep -o 'median [0-9.]* ms')
  s=$(grep -m1 'bit-identical' "$LOG/bench_$t.log" | grep -o 'sha256 [0-9a-f]*')
  c=$(grep -m1 '^compile:' "$LOG/bench_$t.log" | awk '{print $2, $3}')
  row "bench decoder $t" "info" "$m per run, compile $c, $s"
done

# One math library, one order of float32 operations: the same bytes on every target.
shas=""
for t in cpu cuda opencl metal-sim; do
  s=$("$LS" run "$WORK/decoder.onnx" --target "$t" --seed-inputs vits 2>&1 | grep -o 'sha256=[0-9a-f]*' | head -1 | cut -c8-23)
  shas="$shas $t=${s:-none}"
done
[ "$(echo "$shas" | tr ' ' '\n' | grep = | cut -d= -f2 | sort -u | wc -l)" = 1 ] && st=pass || st=differ
row "decoder bytes across targets" "$st" "$shas"

grep -h '^\[  FAILED  \]\|Failure$' -A3 "$LOG"/gtest_*.log | head -40 >"$LOG/failures.txt"
if [ -s "$LOG/failures.txt" ]; then echo "== failures"; cat "$LOG/failures.txt"; fi
echo
echo "== lockstep gpu-opencl (logs: $LOG)"
for r in "${ROWS[@]}"; do echo "$r"; done
rm -rf "$WORK"
status=0
for r in "${ROWS[@]}"; do case "$r" in *" FAIL "*) status=1 ;; esac; done
exit $status
