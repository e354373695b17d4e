#!/usr/bin/env bash
# CLI smoke test: documented commands succeed, usage errors exit 2 with a message.
set -uo pipefail
qairt=$1
fail() { echo "FAIL: $*"; exit 1; }

out=$("$qairt" version) || fail "version exited $?"
grep -qE '^qairt [0-9]+\.[0-9]+\.[0-9]+ \(ABI 1\.[0-9]+\)$' <<<"$out" || fail "version printed '$out'"

ops=$("$qairt" ops 2>/dev/null) || fail "ops exited $?"
for op in Conv2d ElementWiseAdd MatMul Softmax LayerNorm Gather Transpose Reshape Concat Convert Cast Lstm; do
  grep -qx "$op" <<<"$ops" || fail "ops does not list $op"
done

dtypes=$("$qairt" dtypes) || fail "dtypes exited $?"
grep -qE '^sfixed_point_8 +s8 +8$' <<<"$dtypes" || fail "dtypes lacks sfixed_point_8/s8"

"$qairt" no-such-command >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown command exited $rc, expected 2"
err=$("$qairt" no-such-command 2>&1 >/dev/null)
grep -q "unknown command 'no-such-command'" <<<"$err" || fail "unknown command message: $err"
"$qairt" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no command should exit 2"
# inspect and dry run on the bundled example model
here=$(cd "$(dirname "$0")" && pwd)
model="$here/../../examples/models/squeezenet_light.onnx"
out=$("$qairt" inspect "$model") || fail "inspect exited $?"
grep -q "data_0 .*float32 .*\[1, 3, 224, 224\]" <<<"$out" || fail "inspect lacks the input: $out"
grep -q "result: OK" <<<"$out" || fail "inspect result: $out"
out=$("$qairt" convert -i "$model" --dry_run --target htp_v73) || fail "dry run exited $?: $out"
grep -q "target: htp_v73: every op type has a kernel" <<<"$out" || fail "target check: $out"
json=$("$qairt" convert --input_network "$model" --dry_run --json --target_soc_model SM8550) || fail "json dry run exited $?"
echo "$json" | /usr/bin/python3 -c '
import json, sys
r = json.load(sys.stdin)
assert r["ok"] is True, r
assert r["inputs"][0]["name"] == "data_0" and r["inputs"][0]["shape"] == [1, 3, 224, 224], r["inputs"]
assert r["outputs"][0]["static"] is True
assert r["target"]["name"] == "htp_v73" and r["target"]["ops_without_kernels"] == []
' || fail "json report"
"$qairt" convert -i "$model" --dry_run --target no_such_target >/dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "unknown target exited $rc, expected 1"
"$qairt" convert -i "$model" >/dev/null 2>&1; [ $? -eq 2 ] || fail "convert without --dry_run should be a usage error"
err=$("$qairt" convert -i /nonexistent.onnx --dry_run 2>&1 >/dev/null); rc=$?
grep -q "/nonexistent.onnx" <<<"$err" || fail "missing model message: $err"
[ $rc -eq 1 ] || fail "missing model exited $rc, expected 1"
"$qairt" convert -i "$model" -d data_0 1,3,x --dry_run >/dev/null 2>&1; [ $? -eq 2 ] || fail "bad -d should be a usage error"

# Help: every command listed by `qairt help` answers `help CMD`, `CMD --help`
# and `CMD -h` on stdout with exit 0.
list=$("$qairt" help) || fail "help exited $?"
commands=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z]*\) .*/\1/p' <<<"$list")
[ "$(wc -w <<<"$commands")" -ge 12 ] || fail "help lists too few commands: $commands"
for cmd in $commands; do
  for form in "help $cmd" "$cmd --help" "$cmd -h"; do
    out=$("$qairt" $form 2>/dev/null); rc=$?
    [ $rc -eq 0 ] || fail "qairt $form exited $rc"
    grep -q "^usage: qairt $cmd" <<<"$out" || fail "qairt $form prints no usage: $out"
  done
done
# --help anywhere among the arguments, before the parser sees the rest.
out=$("$qairt" convert -i x.onnx --no_such_flag --help) || fail "convert ... --help exited $?"
grep -q "^usage: qairt convert" <<<"$out" || fail "convert ... --help: $out"
help=$("$qairt" convert --help) || fail "convert --help exited $?"
for flag in --input_list --keep_int64_inputs --verify_rewrites --export_qdq_onnx; do
  grep -qE "^  $flag( [^ ]+)? +[^ ].*\(default: [^)]" <<<"$help" || fail "convert --help: no default for $flag"
done
grep -q "^example:" <<<"$help" || fail "convert --help has no example"

# Typo suggestions: exit 2 with the likely spelling.
err=$("$qairt" covert 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "misspelled command exited $rc, expected 2"
grep -q "did you mean 'convert'?" <<<"$err" || fail "no suggestion for 'covert': $err"
err=$("$qairt" help covert 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "help of a misspelled command exited $rc, expected 2"
grep -q "did you mean 'convert'?" <<<"$err" || fail "help covert: $err"
err=$("$qairt" convert -i x.onnx --input_lst l.txt --dry_run 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "misspelled flag exited $rc, expected 2"
grep -q "did you mean '--input_list'?" <<<"$err" || fail "no suggestion for --input_lst: $err"
err=$("$qairt" analyze 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "analyze without arguments exited $rc, expected 2"
grep -q "^usage: qairt analyze" <<<"$err" || fail "analyze without arguments: $err"

# The help lists exactly what the parsers accept: the flag spellings in the
# sources (string literals like "--input_list") against the flag column of
# the help ("  -i, --input_network MODEL   sentence").
tools="$here/../../tools"
source_flags() { grep -ohE '"--?[a-zA-Z][a-zA-Z0-9_-]*=?"' "$@" | tr -d '"' | sort -u; }
help_flags() {
  awk '/^  -/ {
    col = substr($0, 3); cut = index(col, "  "); if (cut) col = substr(col, 1, cut - 1)
    n = split(col, spellings, ", ")
    for (k = 1; k <= n; k++) {
      s = spellings[k]; sub(/ .*/, "", s); eq = index(s, "="); if (eq) s = substr(s, 1, eq)
      print s
    }
  }' <<<"$1" | sort -u
}
check_flags() {  # COMMAND BOTH_WAYS SOURCE...
  local cmd=$1 both=$2; shift 2
  local text src hlp
  text=$("$qairt" help "$cmd") || fail "help $cmd exited $?"
  src=$(source_flags "$@")
  hlp=$(help_flags "$text")
  [ -n "$src" ] && [ -n "$hlp" ] || fail "$cmd: no flags found (source: $src; help: $hlp)"
  if [ "$both" = yes ]; then
    missing=$(comm -23 <(echo "$src") <(echo "$hlp"))
    [ -z "$missing" ] || fail "qairt help $cmd lacks flags its parser accepts: $missing"
  fi
  extra=$(comm -13 <(echo "$src") <(echo "$hlp") | grep -vxE -- '-h|--help')
  [ -z "$extra" ] || fail "qairt help $cmd lists flags its parser does not accept: $extra"
}
check_flags convert yes "$tools/cmd_import.cpp" "$tools/cmd_convert.cpp" "$tools/cli_util.cpp" "$tools/io_flags.cpp"
check_flags analyze yes "$tools/cmd_import.cpp" "$tools/cmd_convert.cpp" "$tools/cli_util.cpp" "$tools/io_flags.cpp"
check_flags inspect no "$tools/cmd_import.cpp" "$tools/cmd_container.cpp" "$tools/cli_util.cpp"
check_flags run yes "$tools/cmd_run.cpp"
check_flags compare yes "$tools/cmd_compare.cpp"
check_flags prepare yes "$tools/cmd_prepare.cpp"
check_flags encodings yes "$tools/cmd_encodings.cpp" "$tools/cli_util.cpp"
check_flags targets yes "$tools/cmd_targets.cpp"
echo "OK: cli"
