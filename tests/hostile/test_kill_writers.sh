#!/usr/bin/env bash
# Every output qairt writes, killed inside its write: with the test hook
# QAIRT_TEST_STOP_IN_WRITE=<file name> the writer of that file stops itself
# (SIGSTOP) once the bytes are in the file and before the file has a name;
# the test waits for the stop, SIGKILLs the process and checks that the
# destination still holds the old file (or nothing, when there was none) and
# that no temporary is left in the folder. Outputs: the .qairt container,
# the encodings, the Q-DQ ONNX model, the INFO quantizer log, the HTML report
# (qairt convert) and the prepared model and its reports (qairt prepare).
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
         --quantizer_log "$tmp/out/m.csv" --quantizer_log_level INFO --report "$tmp/out/m.html")
for old in yes no; do
  kill_inside "container (old file: $old)" m.qairt "$old" "${convert[@]}"
  kill_inside "encodings (old file: $old)" m.json "$old" "${convert[@]}"
  kill_inside "Q-DQ ONNX (old file: $old)" m_qdq.onnx "$old" "${convert[@]}"
  kill_inside "quantizer log (old file: $old)" m.csv "$old" "${convert[@]}"
  kill_inside "HTML report (old file: $old)" m.html "$old" "${convert[@]}"
  kill_inside "prepared model (old file: $old)" conv.onnx "$old" \
    "$qairt" prepare -i "$model" --target aic100 -o "$tmp/out"
  kill_inside "prepare report (old file: $old)" report.json "$old" \
    "$qairt" prepare -i "$model" --target aic100 -o "$tmp/out"
done
# Without the hook every output is written.
rm -rf "$tmp/out"; mkdir -p "$tmp/out"
"${convert[@]}" > "$tmp/log" 2>&1 || { echo "FAIL: convert without the hook"; sed -n 1,10p "$tmp/log"; fail=1; }
for f in m.qairt m.json m_qdq.onnx m.csv m.html; do
  [ -s "$tmp/out/$f" ] || { echo "FAIL: $f not written without the hook"; fail=1; }
done

[ "$fail" -eq 0 ] && echo "kill tests: all checks passed"
exit "$fail"
