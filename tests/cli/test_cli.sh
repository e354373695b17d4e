#!/usr/bin/env bash
# CLI smoke test: documented commands succeed, usage errors exit 2 with a message.
set -uo pipefail
qairt=$1
fail() { echo "FAIL: $*"; exit 1; }

out=$("$qairt" version) || fail "version exited $?"
echo "$out" | grep -qE '^qairt [0-9]+\.[0-9]+\.[0-9]+ \(ABI 1\.[0-9]+\)$' || fail "version printed '$out'"

ops=$("$qairt" ops 2>/dev/null) || fail "ops exited $?"
for op in Conv2d ElementWiseAdd MatMul Softmax LayerNorm Gather Transpose Reshape Concat Convert Cast Lstm; do
  echo "$ops" | grep -qx "$op" || fail "ops does not list $op"
done

"$qairt" dtypes | grep -qE '^sfixed_point_8 +s8 +8$' || fail "dtypes lacks sfixed_point_8/s8"

"$qairt" no-such-command >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "unknown command exited $rc, expected 2"
err=$("$qairt" no-such-command 2>&1 >/dev/null)
echo "$err" | grep -q "unknown command 'no-such-command'" || fail "unknown command message: $err"
"$qairt" >/dev/null 2>&1; [ $? -eq 2 ] || fail "no command should exit 2"
echo "OK: cli"
