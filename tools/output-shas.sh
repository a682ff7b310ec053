#!/usr/bin/env bash
# SHA-256 of every output of the VITS test graphs and the decoder on one target: the evidence
# that a restructuring left the bytes alone. Run before and after, and diff the two lists.
#   tools/output-shas.sh TARGET [BIN_DIR]   (BIN_DIR holds lockstep and lockstep-vitsgen)
set -eu -o pipefail
TARGET=${1:?usage: output-shas.sh TARGET [BIN_DIR]}
BIN=${2:-build}
LS=$(find "$BIN" -maxdepth 3 -name lockstep -type f -perm -u+x | head -1)
GEN=$(find "$BIN" -maxdepth 4 -name lockstep-vitsgen -type f -perm -u+x | head -1)
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
gen() { "$GEN" "$@" >/dev/null; }
gen --part flow --cut /flow/flows.0/enc/res_skip_layers.0/Conv -o "$WORK/cut170.onnx"
gen --part flow --cut /flow/flows.0/enc/in_layers.1/Conv -o "$WORK/cut174.onnx"
gen --part flow -o "$WORK/flow.onnx"
gen --part flow --channels 192 --hidden 192 --T T -o "$WORK/flow192.onnx"
gen --part decoder --upsample-channels 128 --T 1024 -o "$WORK/decoder128.onnx"
run() {  # name model [run options]
  local name=$1 model=$2; shift 2
  "$LS" run "$model" --target "$TARGET" "$@" | grep -o 'sha256=[0-9a-f]*' | sed "s/^/$name /"
}
run cut170 "$WORK/cut170.onnx" --seed-inputs vits
run cut174 "$WORK/cut174.onnx" --seed-inputs vits
run flow "$WORK/flow.onnx" --seed-inputs vits
run flow192_T173 "$WORK/flow192.onnx" --seed-inputs vits --dim T=173
run decoder128 "$WORK/decoder128.onnx" --seed-inputs vits
for m in tests/data/torch/vits_small_*.onnx; do
  run "$(basename "$m" .onnx)_T64" "$m" --seed-inputs vits --dim T=64
done
