#!/usr/bin/env bash
# Fails unless libqairt.so exports exactly the checked-in lists (capi/*.exports),
# and the lists are exactly the functions declared in the public headers.
#   check_exports.sh LIB CAPI_DIR INCLUDE_DIR
set -euo pipefail
lib=$1 capi_dir=$2 include_dir=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

cat "$capi_dir"/*.exports | grep -E '^qairt_' | sort > "$tmp/list"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TWDBR]$/ {print $3}' | sed 's/@.*//' \
  | grep -v '^QAIRT_[0-9]*$' | sort > "$tmp/exported"
cat "$include_dir"/*.h | tr '\n' ' ' | grep -oE 'QAIRT_API [^(;]*\(' | grep -oE 'qairt_[a-z0-9_]+\($' \
  | tr -d '(' | sort > "$tmp/declared"

status=0
if [ -n "$(uniq -d "$tmp/list")" ]; then echo "FAIL: duplicate entries in export lists:"; uniq -d "$tmp/list"; status=1; fi
if ! diff -u "$tmp/list" "$tmp/exported" > "$tmp/d1"; then
  echo "FAIL: exported symbols differ from capi/*.exports (- list, + library):"; cat "$tmp/d1"; status=1
fi
if ! diff -u "$tmp/list" "$tmp/declared" > "$tmp/d2"; then
  echo "FAIL: capi/*.exports differs from functions declared in include/qairt/*.h (- list, + headers):"; cat "$tmp/d2"; status=1
fi
# Every exported function must carry the ABI version node.
bad=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ {print $3}' | grep -v '@@QAIRT_1$' || true)
if [ -n "$bad" ]; then echo "FAIL: symbols without the QAIRT_1 version node:"; echo "$bad"; status=1; fi
[ $status -eq 0 ] && echo "OK: $(wc -l < "$tmp/list") symbols exported, matching capi/*.exports and include/qairt/*.h"
exit $status
