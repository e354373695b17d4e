# Shared by the CLI test scripts (source it after setting `tmp` and `fail`).
#   check NAME EXPECTED_RC COMMAND...   runs COMMAND; output in $tmp/out, $tmp/err
#   contains NAME FILE PATTERN          FILE must match the extended regex
check() {
  local name=$1 want=$2; shift 2
  "$@" > "$tmp/out" 2> "$tmp/err"; local rc=$?
  if [ "$rc" -ne "$want" ]; then
    echo "FAIL $name: exit $rc, wanted $want"; head -30 "$tmp/out" "$tmp/err"; fail=1; return 1
  fi
}
contains() {
  if ! grep -qE -- "$3" "$2"; then echo "FAIL $1: no /$3/ in $2"; head -40 "$2"; fail=1; fi
}
