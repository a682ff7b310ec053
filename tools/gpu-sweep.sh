#!/usr/bin/env bash
# One compile for every length, on a machine with an NVIDIA GPU, from the repo root:
#   tools/gpu-sweep.sh [BIN_DIR]
# The 192-channel VITS decoder with a symbolic T, swept over T=173,64,1,1000,173 in one
# process: on cuda with the symbolic program and with per-shape compiles (--specialise), whose
# outputs must be the same bytes at every length; on the host's cpu with the symbolic program
# (bind times on a fast host), also with --reserve T=1000; then `check` on cuda at T=1 and
# T=173 (parity with the float64 reference, determinism across compiles and fresh processes).
# Logs in $OUT (or gpu-sweep-logs/).
set -u -o pipefail
ROOT=$(pwd)
LOG=${OUT:-$ROOT/gpu-sweep-logs}
mkdir -p "$LOG"
WORK=$(mktemp -d)
BIN=$(cd "${1:-.carry}" && pwd)
export LD_LIBRARY_PATH="$BIN/lib:$BIN${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export XDG_CACHE_HOME="$WORK/cache"  # cold: the one compile is timed honestly
LS="$BIN/lockstep"
declare -a ROWS
row() { ROWS+=("$(printf '%-40s %-6s %s' "$1" "$2" "$3")"); }

"$BIN/lockstep-vitsgen" --part decoder --channels 192 --T T -o "$WORK/dec192.onnx" >"$LOG/vitsgen.log" 2>&1
SWEEP=T=173,64,1,1000,173
sweep() {  # target mode [more bench flags]: logs sweep_TARGET_MODE[_reserve].log
  local t=$1 m=$2 name=sweep_$1_$2${3:+_reserve}
  shift 2
  "$LS" bench "$WORK/dec192.onnx" --target "$t" --seed-inputs vits --dims $SWEEP --runs 5 --warmup 1 --"$m" "$@" \
    --json "$LOG/$name.json" >"$LOG/$name.log" 2>&1
  echo "== $t --$m $*"; cat "$LOG/$name.log"
}
shas() { grep -o '^  T=[0-9]* .*' "$1" | awk '{print $NF}' | tr '\n' ,; }
binds() { grep -o '^  T=[0-9]* *[0-9.]* ms  bound' "$1" | awk '{printf "%s=%s ", $1, $2}'; }
runs() { grep -o '^  T=[0-9]* .*' "$1" | awk '{printf "%s=%s ", $1, $(NF-2)}'; }
compiles() { grep -o '^compiles: [0-9]*' "$1" | awk '{print $2}'; }

sweep cuda symbolic
sweep cuda specialise
a=$(shas "$LOG/sweep_cuda_symbolic.log"); b=$(shas "$LOG/sweep_cuda_specialise.log")
[ -n "$a" ] && [ "$a" = "$b" ] && [ "$(compiles "$LOG/sweep_cuda_symbolic.log")" = 1 ] && st=pass || st=FAIL
row "cuda sweep: 1 compile, per-shape bytes" "$st" "compiles $(compiles "$LOG/sweep_cuda_symbolic.log") vs $(compiles "$LOG/sweep_cuda_specialise.log"); bind ms $(binds "$LOG/sweep_cuda_symbolic.log")"
row "cuda run ms, symbolic" "info" "$(runs "$LOG/sweep_cuda_symbolic.log")"
row "cuda run ms, specialised" "info" "$(runs "$LOG/sweep_cuda_specialise.log")"
sweep cuda symbolic --reserve T=1000
[ "$(shas "$LOG/sweep_cuda_symbolic_reserve.log")" = "$a" ] && st=pass || st=FAIL
row "cuda sweep, --reserve T=1000" "$st" "bind ms $(binds "$LOG/sweep_cuda_symbolic_reserve.log")"
sweep cpu symbolic
[ "$(compiles "$LOG/sweep_cpu_symbolic.log")" = 1 ] && st=pass || st=FAIL
row "cpu sweep (host): 1 compile" "$st" "bind ms $(binds "$LOG/sweep_cpu_symbolic.log")"
row "cpu run ms, symbolic" "info" "$(runs "$LOG/sweep_cpu_symbolic.log")"
sweep cpu symbolic --reserve T=1000
[ "$(shas "$LOG/sweep_cpu_symbolic_reserve.log")" = "$(shas "$LOG/sweep_cpu_symbolic.log")" ] && st=pass || st=FAIL
row "cpu sweep (host), --reserve T=1000" "$st" "bind ms $(binds "$LOG/sweep_cpu_symbolic_reserve.log")"
for T in 1 173; do
  "$LS" check "$WORK/dec192.onnx" --targets cuda --seed-inputs vits --dim T=$T >"$LOG/check_T$T.log" 2>&1
  st=$([ $? = 0 ] && echo pass || echo FAIL)
  row "check dec192 cuda T=$T" "$st" "$(grep -m1 ' audio ' "$LOG/check_T$T.log" | awk '{print "cos", $3, "relL2", $4}')"
  cat "$LOG/check_T$T.log"
done
echo
echo "== lockstep gpu-sweep"
for r in "${ROWS[@]}"; do echo "$r"; done
rm -rf "$WORK"
for r in "${ROWS[@]}"; do case "$r" in *" FAIL "*) exit 1 ;; esac; done
exit 0
