#!/usr/bin/env bash
# Fails unless libqairt.so exports exactly the checked-in list, and the list is
# exactly the functions declared in the public header.
set -euo pipefail
lib=$1 list=$2 header=$3
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

grep -E '^qairt_' "$list" | sort > "$tmp/list"
nm -D --defined-only "$lib" | awk '$2 ~ /^[TWDBR]$/ {print $3}' | sed 's/@.*//' \
  | grep -v '^QAIRT_[0-9]*$' | sort > "$tmp/exported"
grep -oE 'QAIRT_API [^(]*\(' "$header" | grep -oE 'qairt_[a-z0-9_]+\($' | tr -d '(' | sort > "$tmp/declared"

status=0
if ! diff -u "$tmp/list" "$tmp/exported" > "$tmp/d1"; then
  echo "FAIL: exported symbols differ from capi/qairt.exports (- list, + library):"; cat "$tmp/d1"; status=1
fi
if ! diff -u "$tmp/list" "$tmp/declared" > "$tmp/d2"; then
  echo "FAIL: capi/qairt.exports differs from functions declared in qairt.h (- list, + header):"; cat "$tmp/d2"; status=1
fi
# Every exported symbol must carry the ABI version node.
if nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ {print $3}' | grep -v '@@QAIRT_1$' | grep -q .; then
  echo "FAIL: symbols without the QAIRT_1 version node:"; nm -D --defined-only "$lib" | awk '$2 ~ /^[TW]$/ {print $3}' | grep -v '@@QAIRT_1$'; status=1
fi
[ $status -eq 0 ] && echo "OK: $(wc -l < "$tmp/list") symbols exported, matching capi/qairt.exports and qairt.h"
exit $status
