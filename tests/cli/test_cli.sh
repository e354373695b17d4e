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
echo "OK: cli"
