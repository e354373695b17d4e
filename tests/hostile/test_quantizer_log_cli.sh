#!/usr/bin/env bash
# `qairt convert --quantizer_log FILE`: a symlink planted at a predictable
# temporary name (FILE.tmp.<pid>) must not be followed (the library writes
# through a hidden mkstemp temporary, O_EXCL) and the log must be a regular
# file.
# Usage: test_quantizer_log_cli.sh QAIRT_CLI
set -u
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
echo precious > "$tmp/victim"
# exec keeps the shell's pid, so the temporary's name is known in advance.
bash -c 'ln -s "$1/victim" "$1/log.csv.tmp.$$" && exec "$2" convert -i "$3" --target htp_v73 \
  --quantizer_log "$1/log.csv" --quantizer_log_level INFO -o "$1/out.qairt"' _ \
  "$tmp" "$qairt" "$here/tests/fuzz/corpus/onnx/conv.onnx" > "$tmp/console" 2>&1 || {
  echo "FAIL: convert failed"; cat "$tmp/console"; fail=1; }
if [ "$(cat "$tmp/victim")" != precious ]; then
  echo "FAIL: the quantizer log was written through a planted symlink into $tmp/victim"
  fail=1
fi
[ -f "$tmp/log.csv" ] && [ ! -L "$tmp/log.csv" ] || { echo "FAIL: log.csv is not a regular file"; fail=1; }
exit $fail
