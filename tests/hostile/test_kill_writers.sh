#!/usr/bin/env bash
# Every output qairt writes, killed inside its write: with the test hook
# QAIRT_TEST_STOP_IN_WRITE=<file name> the writer of that file stops itself
# (SIGSTOP) once the bytes are in the file and before the file has a name;
# the test waits for the stop, SIGKILLs the process and checks that the
# destination still holds the old file (or nothing, when there was none) and
# that no temporary is left in the folder. Outputs: the .qairt container,
# the encodings, the Q-DQ ONNX model, the INFO quantizer log, the HTML report,
# the diagnostics file (qairt convert), the sensitivity plot (qairt analyze),
# the calibration statistics (qairt calibrate) and the prepared model and its
# reports (qairt prepare).
#   test_kill_writers.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
model=$here/tests/fuzz/corpus/onnx/conv.onnx
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0

# state PID: the process state letter from /proc (T = stopped), "" when gone.
state() { local s; s=$(cat "/proc/$1/stat" 2>/dev/null) || return 0; s=${s##*) }; echo "${s%% *}"; }

# kill_inside NAME FILE OLD(yes|no) COMMAND...: runs COMMAND (writing FILE in
# $tmp/out) with the hook on FILE, kills it inside that write, checks $tmp/out.
kill_inside() {
  local name=$1 file=$2 old=$3; shift 3
  rm -rf "$tmp/out"; mkdir -p "$tmp/out"
  [ "$old" = yes ] && echo old > "$tmp/out/$file"
  QAIRT_TEST_STOP_IN_WRITE=$file "$@" > "$tmp/log" 2>&1 &
  local pid=$! s="" i
  for i in $(seq 1 600); do
    s=$(state "$pid")
    [ "$s" = T ] || [ -z "$s" ] || [ "$s" = Z ] && break
    sleep 0.1
  done
  if [ "$s" != T ]; then
    echo "FAIL $name: the writer of $file never stopped (state '$s')"; sed -n 1,10p "$tmp/log"
    kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null; fail=1; return
  fi
  kill -9 "$pid"; wait "$pid" 2>/dev/null
  if [ "$old" = yes ] && [ "$(cat "$tmp/out/$file" 2>/dev/null)" != old ]; then
    echo "FAIL $name: $file changed under a writer killed inside its write"; fail=1
  fi
  if [ "$old" = no ] && [ -e "$tmp/out/$file" ]; then echo "FAIL $name: a partial $file exists"; fail=1; fi
  local temps
  temps=$(find "$tmp/out" -name '.*qairt-tmp*')
  if [ -n "$temps" ]; then echo "FAIL $name: temporaries left: $temps"; fail=1; fi
  [ "$fail" -eq 0 ] && echo "ok: $name"
}

convert=("$qairt" convert -i "$model" --target htp_v73 --no_progress -o "$tmp/out/m.qairt"
         --export_encodings "$tmp/out/m.json" --export_qdq_onnx "$tmp/out/m_qdq.onnx"
         --quantizer_log "$tmp/out/m.csv" --quantizer_log_level INFO --report "$tmp/out/m.html"
         --diagnostics "$tmp/out/m.sarif")
# A model whose weights reach the data file (4 KiB of int8 >= the 1 KiB threshold).
/usr/bin/python3 - "$tmp/fc.onnx" <<'PY'
import sys, numpy as np, onnx
from onnx import TensorProto, helper, numpy_helper
w = numpy_helper.from_array(np.linspace(-1, 1, 64 * 64, dtype=np.float32).reshape(64, 64), "w")
g = helper.make_graph([helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)], "fc",
                      [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 64])], [w])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
convert_fc=("$qairt" convert -i "$tmp/fc.onnx" --target htp_v73 --no_progress -o "$tmp/out/fc.qairt"
            --export_qdq_onnx "$tmp/out/m_qdq.onnx" --qdq_external_data)
# analyze needs samples: one of zeros for x [1,4,8,8] float32.
head -c 1024 /dev/zero > "$tmp/x.raw"
echo "x:=$tmp/x.raw" > "$tmp/list.txt"
analyze=("$qairt" analyze -i "$model" --input_list "$tmp/list.txt" --no_progress --plot "$tmp/out/s.svg")
calibrate=("$qairt" calibrate -i "$model" --target htp_v73 --input_list "$tmp/list.txt" --no_progress -o "$tmp/out/r.stats")
for old in yes no; do
  kill_inside "container (old file: $old)" m.qairt "$old" "${convert[@]}"
  kill_inside "encodings (old file: $old)" m.json "$old" "${convert[@]}"
  kill_inside "Q-DQ ONNX (old file: $old)" m_qdq.onnx "$old" "${convert[@]}"
  kill_inside "quantizer log (old file: $old)" m.csv "$old" "${convert[@]}"
  kill_inside "HTML report (old file: $old)" m.html "$old" "${convert[@]}"
  kill_inside "diagnostics (old file: $old)" m.sarif "$old" "${convert[@]}"
  # With external data the data file and the model are renamed only when
  # both are complete: killed in the data's write, neither is new.
  kill_inside "Q-DQ external data (old file: $old)" m_qdq.onnx.data "$old" "${convert_fc[@]}"
  [ -e "$tmp/out/m_qdq.onnx" ] && { echo "FAIL: the Q-DQ model was renamed before its external data"; fail=1; }
  kill_inside "sensitivity plot (old file: $old)" s.svg "$old" "${analyze[@]}"
  kill_inside "calibration statistics (old file: $old)" r.stats "$old" "${calibrate[@]}"
  kill_inside "prepared model (old file: $old)" conv.onnx "$old" \
    "$qairt" prepare -i "$model" --target aic100 -o "$tmp/out"
  kill_inside "prepare report (old file: $old)" report.json "$old" \
    "$qairt" prepare -i "$model" --target aic100 -o "$tmp/out"
done
# Without the hook every output is written.
rm -rf "$tmp/out"; mkdir -p "$tmp/out"
"${convert[@]}" > "$tmp/log" 2>&1 || { echo "FAIL: convert without the hook"; sed -n 1,10p "$tmp/log"; fail=1; }
for f in m.qairt m.json m_qdq.onnx m.csv m.html m.sarif; do
  [ -s "$tmp/out/$f" ] || { echo "FAIL: $f not written without the hook"; fail=1; }
done
"${convert_fc[@]}" > "$tmp/log" 2>&1 || { echo "FAIL: convert --qdq_external_data"; sed -n 1,10p "$tmp/log"; fail=1; }
[ -s "$tmp/out/m_qdq.onnx.data" ] || { echo "FAIL: m_qdq.onnx.data not written"; fail=1; }
"${analyze[@]}" > "$tmp/log" 2>&1 || { echo "FAIL: analyze without the hook"; sed -n 1,10p "$tmp/log"; fail=1; }
[ -s "$tmp/out/s.svg" ] || { echo "FAIL: s.svg not written without the hook"; fail=1; }
"${calibrate[@]}" > "$tmp/log" 2>&1 || { echo "FAIL: calibrate without the hook"; sed -n 1,10p "$tmp/log"; fail=1; }
[ -s "$tmp/out/r.stats" ] || { echo "FAIL: r.stats not written without the hook"; fail=1; }

[ "$fail" -eq 0 ] && echo "kill tests: all checks passed"
exit "$fail"
