#!/bin/bash
# Every source file of the library, its passes, C boundary, CLI, target
# descriptors and Python binding stays under the size limit: a file that grows
# past it has taken on a second job and is split by responsibility.
# usage: check_file_sizes.sh REPO_ROOT [LIMIT]
set -euo pipefail
root=${1:?usage: check_file_sizes.sh REPO_ROOT [LIMIT]}
limit=${2:-800}
checked=0
over=()
while IFS= read -r -d '' f; do
  checked=$((checked + 1))
  n=$(wc -l < "$f")
  if [ "$n" -ge "$limit" ]; then over+=("$n ${f#"$root"/}"); fi
done < <(find "$root/lib" "$root/passes" "$root/capi" "$root/tools" "$root/targets" "$root/python" \
           -type f \( -name '*.cpp' -o -name '*.cc' -o -name '*.h' -o -name '*.c' -o -name '*.py' -o -name '*.inc' \) \
           -not -path '*/__pycache__/*' -print0)
if [ "$checked" -lt 100 ]; then
  echo "FAIL: only $checked files found under $root: wrong root?"
  exit 1
fi
if [ "${#over[@]}" -gt 0 ]; then
  echo "FAIL: ${#over[@]} of $checked files have $limit lines or more:"
  printf '  %s\n' "${over[@]}"
  exit 1
fi
echo "OK: $checked files, all under $limit lines"
