#!/usr/bin/env bash
# Parse + apply of a synthetic >= 100 MB 2.0.0 file, next to Python's json
# module parsing the same file in the same run.
#   run_bench.sh BUILD_DIR [WORK_DIR]
# Each round runs, in fresh processes: bench_encodings as the CLI runs it
# (every core; the reader and the apply use up to 4 threads), bench_encodings
# on one thread pinned to core CPU (default 0), and Python's json.load
# (single-threaded; not pinned). ROUNDS rounds (default 3) alternate them and
# the best time of each is kept: on a shared VM the machine's speed drifts
# over a minute, and alternating exposes every side to the same drift.
set -euo pipefail
build=$1
work=${2:-/tmp/qairt_enc_bench}
cpu=${CPU:-0}
rounds=${ROUNDS:-3}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
if [ ! -s "$work/synthetic.json" ]; then
  /usr/bin/python3 "$here/gen_synthetic.py" "$work/synthetic.json" "$work/synthetic.tensors"
fi
bench() {  # bench [taskset args...] THREADS -> prints "fresh warm_parse warm_total"
  local threads=${*: -1}
  local out
  out=$("${@:1:$#-1}" "$build/benchmarks/bench_encodings" "$work/synthetic.json" "$work/synthetic.tensors" 3 "$threads")
  # The first repeat of a fresh process: what `qairt convert
  # --quantization_overrides` pays (the file in the page cache, the
  # process's memory fresh).
  awk '/^first run:/ {c = $4} /^qairt parse:/ {p = $3} /^qairt parse\+apply:/ {t = $3} END {print c, p, t}' <<<"$out"
}
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (b < a ? b : a) }'; }
b_cold=1e30 b_parse=1e30 b_total=1e30 b_cold1=1e30 b_py=1e30
for ((r = 1; r <= rounds; r++)); do
  read -r cold p t <<<"$(bench 0)"
  read -r cold1 _ _ <<<"$(bench taskset -c "$cpu" 1)"
  py=$(/usr/bin/python3 - "$work/synthetic.json" <<'PY'
import json, sys, time
t0 = time.perf_counter()
with open(sys.argv[1], "rb") as f:
    json.load(f)
print("%.4f" % (time.perf_counter() - t0))
PY
)
  echo "round $r: qairt fresh process parse+apply $cold s (1 thread, pinned: $cold1 s); warm parse $p s, parse+apply $t s; python json.load $py s"
  b_cold=$(best "$b_cold" "$cold"); b_cold1=$(best "$b_cold1" "$cold1")
  b_parse=$(best "$b_parse" "$p"); b_total=$(best "$b_total" "$t"); b_py=$(best "$b_py" "$py")
done
mb=$(awk -v s="$(stat -c %s "$work/synthetic.json")" 'BEGIN { print s / 1e6 }')
awk -v mb="$mb" -v p="$b_parse" -v t="$b_total" -v py="$b_py" -v c="$b_cold" -v c1="$b_cold1" -v n="$rounds" 'BEGIN {
  printf "best of %s rounds (%.1f MB):\n", n, mb
  printf "qairt fresh process, parse+apply:           %.3f s  %4.0f MB/s  %.1fx python   (targets: >= 300 MB/s, >= 5x)\n", c, mb / c, py / c
  printf "qairt fresh process, 1 thread, pinned:      %.3f s  %4.0f MB/s  %.1fx python\n", c1, mb / c1, py / c1
  printf "qairt warm parse:                           %.3f s  %4.0f MB/s  %.1fx python\n", p, mb / p, py / p
  printf "qairt warm parse+apply:                     %.3f s  %4.0f MB/s  %.1fx python\n", t, mb / t, py / t
  printf "python json.load:                           %.3f s  %4.1f MB/s\n", py, mb / py
}'
