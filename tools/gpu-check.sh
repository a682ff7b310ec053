#!/usr/bin/env bash
# The CUDA evidence in one run, on a machine with an NVIDIA GPU, from the repo root:
#   tools/gpu-check.sh [BIN_DIR]
# BIN_DIR holds prebuilt lockstep, lockstep_tests and lockstep-vitsgen (and lib/ with the
# shared libraries they need); default .carry/ if present, else it builds into build-gpu/.
# Runs the GPU test suite (cuda tests, harness and ONNX conformance on cuda), the determinism
# checks (8 fresh processes, 8 compiles in one process, A-B-A; SHA-256 compared across all),
# a tiny staging pool, compute-sanitizer memcheck and racecheck on the decoder, and times
# `lockstep run --target cuda` on the decoder. Logs go to $OUT (or gpu-check-logs/); a short
# table comes last. Exit status 0 when every step passed.
set -u -o pipefail
ROOT=$(pwd)
LOG=${OUT:-$ROOT/gpu-check-logs}
mkdir -p "$LOG"
WORK=$(mktemp -d)
BIN=${1:-}
if [ -z "$BIN" ] && [ -x .carry/lockstep ]; then BIN=.carry; fi
if [ -z "$BIN" ]; then
  echo "== building into build-gpu"
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$LOG/build.log" 2>&1 &&
    ninja -C build-gpu lockstep lockstep_tests lockstep-vitsgen >>"$LOG/build.log" 2>&1 || {
    echo "build failed; see $LOG/build.log"; tail -20 "$LOG/build.log"; exit 1; }
  mkdir -p "$WORK/bin"
  ln -s "$ROOT/build-gpu/src/lockstep" "$ROOT/build-gpu/tests/lockstep_tests" \
    "$ROOT/build-gpu/tools/vitsgen/lockstep-vitsgen" "$WORK/bin/"
  BIN=$WORK/bin
fi
BIN=$(cd "$BIN" && pwd)
export LD_LIBRARY_PATH="$BIN/lib:$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export LOCKSTEP_BINARY="$BIN/lockstep"
export LOCKSTEP_SWEEP=full  # the decoder's pass-fault search (a sweep on cpu) runs on cuda here
export XDG_CACHE_HOME="$WORK/cache"  # a cold kernel cache: the first compile is timed honestly
LS="$BIN/lockstep"

# The tests read data from the path compiled into them; link it when the tree has moved.
DATA=$(grep -aom1 '/[^"[:cntrl:]]*/tests/data' "$BIN/lockstep_tests" | head -1)
if [ -n "$DATA" ] && [ ! -e "$DATA" ]; then
  TREE=$(dirname "$(dirname "$DATA")")
  { mkdir -p "$(dirname "$TREE")" && ln -sn "$ROOT" "$TREE"; } 2>/dev/null ||
    echo "warning: test data expected at $DATA, which does not exist"
fi

declare -a ROWS
row() { ROWS+=("$(printf '%-36s %-6s %s' "$1" "$2" "$3")"); }
secs() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(secs)" 'BEGIN { printf "%.1f", b - a }'; }

echo "== device"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | tee "$LOG/device.log"
DEVICE=$(head -1 "$LOG/device.log")

echo "== decoder model (128 upsample channels, T=1024)"
"$BIN/lockstep-vitsgen" --part decoder --upsample-channels 128 --T 1024 -o "$WORK/decoder.onnx" >"$LOG/vitsgen.log" 2>&1
DEC="$WORK/decoder.onnx"

# The CLI checks on the decoder, one after another (the sanitizers want the GPU to themselves
# less than they want wall time: they run beside the test groups).
cli_checks() {
  local t
  t=$(secs); "$LS" run "$DEC" --target cuda --seed-inputs vits >"$LOG/run_cold.log" 2>&1; echo "cold $? $(since "$t")" >"$WORK/cli.txt"
  t=$(secs); "$LS" run "$DEC" --target cuda --seed-inputs vits >"$LOG/run_warm.log" 2>&1; echo "warm $? $(since "$t")" >>"$WORK/cli.txt"
  "$LS" run "$DEC" --target cuda --seed-inputs vits --staging-slots 2 --staging-slot-bytes 4096 \
    --verify-constants >"$LOG/run_tiny_pool.log" 2>&1
  "$LS" run "$DEC" --target cuda --seed-inputs vits --no-replay >"$LOG/run_no_graph.log" 2>&1
  if command -v compute-sanitizer >/dev/null; then
    for tool in memcheck racecheck; do
      t=$(secs)
      timeout "${SANITIZER_TIMEOUT:-240}" compute-sanitizer --tool $tool --error-exitcode 9 "$LS" run "$DEC" --target cuda --seed-inputs vits \
        >"$LOG/sanitizer_$tool.log" 2>&1
      echo "$tool $? $(since "$t")" >>"$WORK/cli.txt"
    done
  fi
}

# The GPU test suite in parallel groups (the slow ones are the float64 reference runs).
GROUPS_=(
  "conformance:Targets/Conformance.*/cuda"
  "units:HostileNames.*:CudaRun*:Targets/Staging.*/cuda:CudaFaults*:CudaGraph*:CudaCapture*:CudaCodegen*:CudaLaunch*:CudaLayout*:CudaTarget*:Schedule*:KernelCache*:Targets/Harness.*/cuda:CudaVitsTorch*:CudaVitsSequence*:Symbolic*:Targets/SymbolicLengths.*/cuda"
  "decoder128:Seed/CudaVits.*/decoder128:CudaVitsTiming*"
  "flow192:Seed/CudaVits.*/flow192_T173_halfmask"
  "flow:Seed/CudaVits.*/flow"
  "cuts:Seed/CudaVits.*/cut170:Seed/CudaVits.*/cut174"
  "faults1:*RuntimeChecks*/cuda:*Respecialise*/cuda:*TargetFaults*/cuda:*CheckFaults*/cuda:*DecoderFaults.KernelFault*/cuda"
  "faults2:*DecoderFaults.Uninit*/cuda:*DecoderFaults.StagingReuse*/cuda:*DecoderFaults.CacheByName*/cuda"
  "faults3:*DecoderFaults.PassFault*/cuda"
  "vits:Targets/Vits.*/cuda:*MathUlp*/cuda"
)
echo "== GPU test suite (${#GROUPS_[@]} groups in parallel) and CLI checks on the decoder"
t0=$(secs)
pids=()
for g in "${GROUPS_[@]}"; do
  name=${g%%:*}
  timeout "${GROUP_TIMEOUT:-500}" "$BIN/lockstep_tests" --gtest_filter="${g#*:}" >"$LOG/gtest_$name.log" 2>&1 &
  pids+=($!)
done
cli_checks &
cli_pid=$!
for p in "${pids[@]}"; do wait "$p"; done
wait "$cli_pid"
suite=$(since "$t0")
cat "$LOG"/gtest_*.log >"$WORK/gtest.log"
G="$WORK/gtest.log"

cli() { awk -v k="$1" -v f="$2" '$1 == k { print $f }' "$WORK/cli.txt"; }
SHA=$(grep -o 'sha256=[0-9a-f]*' "$LOG/run_warm.log" | head -1 | cut -d= -f2)
[ "$(cli cold 2)" = 0 ] && [ "$(cli warm 2)" = 0 ] && st=pass || st=FAIL
row "lockstep run decoder (cold/warm)" "$st" "$(cli cold 3)s / $(cli warm 3)s wall per process, sha256 ${SHA:0:16}"
TINY=$(grep -o 'sha256=[0-9a-f]*' "$LOG/run_tiny_pool.log" | head -1 | cut -d= -f2)
[ -n "$SHA" ] && [ "$TINY" = "$SHA" ] && st=pass || st=FAIL
row "tiny pool 2x4KiB + verify-constants" "$st" "sha256 ${TINY:0:16} (default pool ${SHA:0:16})"
NOG=$(grep -o 'sha256=[0-9a-f]*' "$LOG/run_no_graph.log" | head -1 | cut -d= -f2)
[ -n "$SHA" ] && [ "$NOG" = "$SHA" ] && st=pass || st=FAIL
row "plain launches vs cuda graph" "$st" "sha256 ${NOG:0:16}"
for tool in memcheck racecheck; do
  f="$LOG/sanitizer_$tool.log"
  if [ ! -f "$f" ]; then row "compute-sanitizer $tool" "n/a" "compute-sanitizer not installed"; continue; fi
  s=$(grep -m1 -E '(ERROR|RACECHECK) SUMMARY' "$f" | sed -E 's/.*(ERROR|RACECHECK) SUMMARY: //')
  if [ -z "$s" ]; then st=n/a; s="did not run: $(grep -m1 -iE 'error|not supported' "$f" | cut -c1-70)"
  elif [ "$(cli $tool 2)" = 0 ]; then st=pass; else st=FAIL; fi
  row "compute-sanitizer $tool" "$st" "$s ($(cli $tool 3)s)"
done

passed=$(grep -c '^\[       OK \]' "$G")
failed=$(grep -c '^\[  FAILED  \] [A-Za-z/]*\.[A-Za-z0-9_/]* (' "$G")
skipped=$(grep -c '^\[  SKIPPED \] [A-Za-z/]*\.[A-Za-z0-9_/]* (' "$G")
unfinished=0
for g in "${GROUPS_[@]}"; do grep -q 'test suites\? ran\.' "$LOG/gtest_${g%%:*}.log" || unfinished=$((unfinished + 1)); done
[ "$failed" = 0 ] && [ "$unfinished" = 0 ] && [ "$passed" -gt 0 ] && st=pass || st=FAIL
row "gtest cuda suite" "$st" "$passed passed, $failed failed, $skipped skipped, $unfinished groups unfinished (${suite}s)"
h=$(grep -o 'harness on cuda: .*' "$G" | head -1)
row "harness on cuda" "$(grep -q 'OK \] Targets/Harness.EveryOpCaseAgreesWithRef/cuda' "$G" && echo pass || echo FAIL)" "${h#harness on cuda: }"
c=$(grep -m1 '^cases: ' "$G")
row "conformance on cuda" "$(grep -q 'OK \] Targets/Conformance.EverySupportedCasePasses/cuda' "$G" && echo pass || echo FAIL)" "${c#cases: }"
for g in cut170 cut174 flow decoder128 flow192_T173_halfmask; do
  ref=$(grep -m1 "^$g output 0: cuda vs ref" "$G" | sed 's/.*cuda vs ref //' | awk '{print $1, $2, $3, $4}')
  cpu=$(grep -m1 "^$g output 0: cuda vs cpu" "$G" | sed 's/.*cuda vs cpu //' | awk '{print $2, $4}')
  sha=$(grep -m1 "^$g: 8 compiles in one process, sha256" "$G" | awk '{print $NF}')
  ok=pass
  for tst in AgreesWithRefAndCpu EightCompilesInOneProcessGiveIdenticalBytes EightFreshProcessesGiveTheInProcessBytes; do
    grep -q "OK \] Seed/CudaVits.$tst/$g " "$G" || ok=FAIL
  done
  row "vits $g" "$ok" "vs ref: $ref; vs cpu: cos,relL2 $cpu; sha ${sha:0:16} (1+8 in-process, 8 fresh)"
done
aba=$(grep -m1 'A-B-A cache 1' "$G")
row "A-B-A 170 -> 174 -> 170" "$(grep -q 'OK \] CudaVitsSequence' "$G" && echo pass || echo FAIL)" "${aba#A-B-A cache 1: }"
for pair in kernel:KernelFaultNamesTheNodeAndNoPass uninit:UninitFaultNamesTheNodeAndItsUnwrittenOutput \
  pass:PassFaultOnTheFullDecoderNamesTheApplication \
  staging-reuse:StagingReuseNamesTheConstantsStageAndItsReaders cache-by-name:CacheByNameNamesTheAbaStage; do
  kind=${pair%%:*}
  v=$(grep -m1 "^bisect cuda $kind" "$G" | sed "s/^bisect cuda //")
  grep -q "OK \] Targets/DecoderFaults.${pair#*:}/cuda " "$G" && st=pass || st=FAIL
  row "bisect --by all cuda $kind" "$st" "$(echo "${v:-no verdict printed}" | cut -c1-160)"
done
tf=$(grep -c 'OK \] Targets/\(TargetFaults\|CheckFaults\|RuntimeChecks\|Respecialise\)\.[A-Za-z]*/cuda' "$G")
ff=$(grep -c 'FAILED  \] Targets/\(TargetFaults\|CheckFaults\|RuntimeChecks\|Respecialise\)\.[A-Za-z]*/cuda' "$G")
[ "$ff" = 0 ] && [ "$tf" -gt 0 ] && st=pass || st=FAIL
row "faults, check rows, data checks (cuda)" "$st" "$tf passed, $ff failed"
tv=$(grep -c 'OK \] Targets/Vits\.[A-Za-z0-9]*/cuda' "$G")
fv=$(grep -c 'FAILED  \] Targets/Vits\.[A-Za-z0-9]*/cuda' "$G")
[ "$fv" = 0 ] && [ "$tv" -gt 0 ] && st=pass || st=FAIL
row "per-target VITS suite (cuda)" "$st" "$tv passed, $fv failed"
u=$(grep -h '^ulp ' "$G" | grep -i cuda | tr '\n' ';' | cut -c1-200)
[ -n "$u" ] && row "math library ulp (cuda)" "info" "$u"
dt=$(grep -m1 'decoder128 per run' "$G")
[ -n "$dt" ] && row "decoder in-process per run" "info" "${dt#*: }"
grep -h '^\[  FAILED  \]\|Failure$' -A3 "$LOG"/gtest_*.log | head -40 >"$LOG/failures.txt"
tar -C "$LOG" -czf "$LOG/logs.tar.gz" $(cd "$LOG" && ls | grep -v logs.tar.gz) 2>/dev/null

if [ -s "$LOG/failures.txt" ]; then echo "== failures"; cat "$LOG/failures.txt"; fi
{
  echo
  echo "== lockstep gpu-check on $DEVICE (logs: $LOG)"
  printf '%-36s %-6s %s\n' "check" "result" "figures"
  for r in "${ROWS[@]}"; do echo "$r"; done
} | tee "$LOG/table.txt"
rm -rf "$WORK"
status=0
for r in "${ROWS[@]}"; do case "$r" in *" FAIL "*) status=1 ;; esac; done
if [ -z "${SKIP_SWEEP:-}" ]; then bash "$ROOT/tools/gpu-sweep.sh" "$BIN" || status=1; fi
exit $status
