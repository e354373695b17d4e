#!/usr/bin/env bash
# CLI test of `qairt targets`: list, show, diff, soc, user descriptors, errors.
#   test_targets_cli.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
check() {  # check NAME EXPECTED_RC COMMAND... ; output in $tmp/out
  local name=$1 want=$2; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, wanted $want"; cat "$tmp/err"; fail=1; return 1
  fi
}
contains() {  # contains NAME FILE PATTERN
  if ! grep -qE -- "$3" "$2"; then echo "FAIL $1: no /$3/ in output"; head -40 "$2"; fail=1; fi
}

check list 0 "$qairt" targets list
for t in htp_v68 htp_v69 htp_v73 htp_v75 htp_v79 htp_v81 lpai_v6 cpu aic100; do contains "list $t" "$tmp/out" "^$t "; done

check diff 0 "$qairt" targets diff htp_v68 htp_v73
cp "$tmp/out" "$tmp/diff.txt"
contains "diff fp16" "$tmp/diff.txt" "^capability fp16_compute: false -> true$"
contains "diff 16x16" "$tmp/diff.txt" "^\+ kernel MatMul a16w16"
contains "diff 16x16 conv" "$tmp/diff.txt" "^\+ kernel Conv2d a16w16"
contains "diff super group added" "$tmp/diff.txt" "^\+ super_group Conv2d \+ HardSwish$"
contains "diff super group removed" "$tmp/diff.txt" "^- super_group Conv2d \+ Batchnorm \+ Relu$"
check diff-json 0 "$qairt" targets diff htp_v68 htp_v73 --json
/usr/bin/python3 - "$tmp/out" <<'PY' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
items = {(c["kind"], c["item"]) for c in d["changes"]}
assert ("capability", "fp16_compute") in items, items
assert ("kernel", "MatMul a16w16") in items
assert any(k == "super_group" for k, _ in items)
PY

check show-op 0 "$qairt" targets show htp_v73 --op Conv2d
contains "show a16w16" "$tmp/out" "a16w16"
contains "show bias" "$tmp/out" "bias s32 \(optional\).*scale = in0 x in1"
check show-sigmoid 0 "$qairt" targets show htp_v68 --op Sigmoid
contains "fixed" "$tmp/out" "u16 fixed scale 1.525878[0-9]*e-05 offset 0"
check show-all 0 "$qairt" targets show lpai_v6
contains "show lpai" "$tmp/out" "^target +lpai_v6"
check show-json 0 "$qairt" targets show htp_v75 --json
cp "$tmp/out" "$tmp/v75.json"
check show-op-json 0 "$qairt" targets show htp_v75 --op MatMul --json
contains "op json" "$tmp/out" '"op":"MatMul"'

# A user descriptor: the JSON dump, renamed, as a file; also a wrong op.
sed 's/"name":"htp_v75"/"name":"my_npu"/' "$tmp/v75.json" > "$tmp/my_npu.json"
check user-file 0 "$qairt" targets show "$tmp/my_npu.json" --op Conv2d
check user-diff 0 "$qairt" targets diff htp_v75 "$tmp/my_npu.json"
contains "user diff" "$tmp/out" "^--- htp_v75$"
sed 's/"op":"Relu"/"op":"Rellu"/' "$tmp/my_npu.json" > "$tmp/bad.json"
check bad-op 1 "$qairt" targets show "$tmp/bad.json"
contains "bad-op message" "$tmp/err" "bad.json.*unknown op type 'Rellu'"
head -c 100 "$tmp/my_npu.json" > "$tmp/cut.json"
check truncated 1 "$qairt" targets show "$tmp/cut.json"
contains "truncated message" "$tmp/err" "cut.json"
printf 'not a descriptor at all' > "$tmp/junk.bin"
check junk 1 "$qairt" targets show "$tmp/junk.bin"

check soc 0 "$qairt" targets soc SM8550
contains "soc" "$tmp/out" "^htp_v73$"
check soc-unknown 1 "$qairt" targets soc SM1234
check unknown-target 1 "$qairt" targets show htp_v99
contains "unknown target lists names" "$tmp/err" "htp_v73"
check usage 2 "$qairt" targets
check usage-bad 2 "$qairt" targets diff htp_v68
check usage-opt 2 "$qairt" targets list --bogus

[ $fail -eq 0 ] && echo "OK: qairt targets CLI"
exit $fail
