#!/usr/bin/env bash
# Parse + apply of a synthetic >= 100 MB 2.0.0 file, next to Python's json
# module parsing the same file in the same run (one core each).
#   run_bench.sh BUILD_DIR [WORK_DIR]
set -euo pipefail
build=$1
work=${2:-/tmp/qairt_enc_bench}
cpu=${CPU:-0}  # both programs pinned to this core
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work"
if [ ! -s "$work/synthetic.json" ]; then
  /usr/bin/python3 "$here/gen_synthetic.py" "$work/synthetic.json" "$work/synthetic.tensors"
fi
out=$(taskset -c "$cpu" "$build/benchmarks/bench_encodings" "$work/synthetic.json" "$work/synthetic.tensors" 3)
echo "$out"
py=$(taskset -c "$cpu" /usr/bin/python3 - "$work/synthetic.json" <<'PY'
import json, os, sys, time
path = sys.argv[1]
best = 1e30
for _ in range(2):
    t0 = time.perf_counter()
    with open(path, "rb") as f:
        json.load(f)
    best = min(best, time.perf_counter() - t0)
mb = os.path.getsize(path) / 1e6
print("%.3f %.1f" % (best, mb / best))
PY
)
read -r py_s py_mbs <<< "$py"
echo "python json.load:    ${py_s} s  ${py_mbs} MB/s"
total=$(echo "$out" | awk '/^qairt parse\+apply/ {print $(NF-1)}')
awk -v a="$total" -v b="$py_mbs" 'BEGIN { printf "ratio (qairt parse+apply / python parse): %.1fx\n", a / b }'
