#!/usr/bin/env python3
"""Kernels vs the peers' numpy formulations, in the same run.

Runs bench_kernels (Google Benchmark, JSON) and, in this process, the numpy
code ONNX Runtime's quantization tool (quant_utils.quantize_nparray) and
AIMET-style block / LPBQ quantization use for the same operations on the
same shapes, then prints: kernel GB/s, numpy GB/s, speed-up vs numpy, % of
the single-thread memcpy bandwidth measured by the same binary, and the
2-thread / 1-thread scaling. Bytes = bytes read + bytes written.

  /usr/bin/python3 benchmarks/kernels_vs_numpy.py --bench build/benchmarks/bench_kernels [--repeat 3] [--rounds 3]

The machine these figures come from is shared: repeat and keep the best.
By default every single-thread measurement (kernel and numpy) runs with the
machine's other CPUs held by a pause loop (bench_kernels --hold_idle_cpus /
--hold_cpus_only): on the 2-vCPU VM the figures come from, one thread ran
1.5-3x slower while the other vCPU idled, which made the 2-thread / 1-thread
ratio measure the host. --no-hold measures without it.
"""
import argparse
import json
import subprocess
import sys
import time

import numpy as np

M64 = 64 << 20


def best_time(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


# ---- numpy formulations -------------------------------------------------------

def quantize_nparray(qtype, arr, scale, zero_point, low, high):
    # onnxruntime/python/tools/quantization/quant_utils.py (quantize_nparray)
    arr_fp32 = np.asarray((arr.astype(np.float32) / scale).round() + zero_point)
    np.clip(arr_fp32, low, high, out=arr_fp32)
    return arr_fp32.astype(qtype)


def np_u8_per_tensor(x):
    return quantize_nparray(np.uint8, x, np.float32(10.0 / 255), 128, 0, 255)


def np_s8_per_channel(w, scales):
    # per-channel along axis 0, broadcast (faster than ORT's per-channel loop)
    q = np.round(w / scales[:, None])
    np.clip(q, -128, 127, out=q)
    return q.astype(np.int8)


def pack_int4(q):
    q = q.reshape(-1).astype(np.uint8) & 0x0F
    return q[0::2] | (q[1::2] << 4)  # low nibble first


def np_s4_block64(w, scales):
    blocks = w.reshape(-1, 64)
    q = np.round(blocks / scales[:, None])
    np.clip(q, -8, 7, out=q)
    return pack_int4(q.astype(np.int8))


def np_lpbq(w):
    # AIMET-style LPBQ: symmetric 4-bit block scales, per-channel float scale
    # = max block scale / 16, integer block scales in [1, 16], then quantize.
    c = w.shape[0]
    blocks = w.reshape(c, -1, 64)
    bmin = np.minimum(blocks.min(axis=-1), 0)
    bmax = np.maximum(blocks.max(axis=-1), 0)
    s = np.maximum(bmax / 7, -bmin / 8)
    pc = s.max(axis=-1) / 16
    k = np.clip(np.round(s / pc[:, None]), 1, 16)
    eff = (k * pc[:, None]).astype(np.float32)
    q = np.round(blocks / eff[..., None])
    np.clip(q, -8, 7, out=q)
    return pack_int4(q.astype(np.int8))


def np_hist(x):
    # onnxruntime calibrate.py HistogramCollector: np.histogram(..., 2048 bins, range)
    return np.histogram(x, bins=2048, range=(-4.0, 4.0))


def np_minmax(x):
    return x.min(), x.max()


def np_dequant_u8(q):
    # quant_utils style: (q - zero_point) * scale in float32
    return (q.astype(np.float32) - np.float32(128)) * np.float32(0.01)


_DATA = {}


def run_numpy(repeat):
    # Inputs are made once per process (rounds reuse them).
    if not _DATA:
        _DATA["x"] = np.random.default_rng(1).standard_normal(M64, dtype=np.float32)
        _DATA["q"] = (np.arange(M64) * 7).astype(np.uint8)
    x = _DATA["x"]
    res = {}
    y = np.empty_like(x)
    res["Memcpy"] = (best_time(lambda: np.copyto(y, x), repeat), 8 * M64)
    del y
    res["QuantU8PerTensor"] = (best_time(lambda: np_u8_per_tensor(x), repeat), 5 * M64)
    w = x.reshape(4096, 16384)
    scales = (0.02 + 0.00001 * np.arange(4096)).astype(np.float32)
    res["QuantS8PerChannel"] = (best_time(lambda: np_s8_per_channel(w, scales), repeat), 5 * M64)
    n16 = 4096 * 4096
    w4 = x[:n16].reshape(4096, 4096)
    bscales = (0.3 + 0.001 * (np.arange(n16 // 64) % 97)).astype(np.float32)
    res["QuantS4Block64"] = (best_time(lambda: np_s4_block64(w4, bscales), repeat), n16 * 4 + n16 // 2)
    res["LpbqS4Block64"] = (best_time(lambda: np_lpbq(w4), repeat), n16 * 4 + n16 // 2)
    res["Hist2048"] = (best_time(lambda: np_hist(x), max(1, repeat - 1)), 4 * M64)
    res["MinMax"] = (best_time(lambda: np_minmax(x), repeat), 4 * M64)
    q = _DATA["q"]
    res["DequantU8PerTensor"] = (best_time(lambda: np_dequant_u8(q), repeat), 5 * M64)
    return res


def run_bench(path, repeat, min_time, hold):
    cmd = [path, "--benchmark_format=json", f"--benchmark_repetitions={repeat}", f"--benchmark_min_time={min_time}",
           "--benchmark_report_aggregates_only=false"]
    if hold:
        cmd.append("--hold_idle_cpus")
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    data = json.loads(out)
    best = {}
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate":
            continue
        name = b["run_name"] if "run_name" in b else b["name"]
        bps = b.get("bytes_per_second", 0.0)
        best[name] = max(best.get(name, 0.0), bps)
    return best


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bench", default="build/benchmarks/bench_kernels")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min-time", default="0.5")
    ap.add_argument("--rounds", type=int, default=1,
                    help="alternate kernel and numpy runs this many times, keep the best of each (a shared "
                         "machine drifts over a minute; alternating exposes both sides to the same drift)")
    ap.add_argument("--no-hold", action="store_true",
                    help="do not hold the idle CPUs during single-thread measurements (see the docstring)")
    args = ap.parse_args()
    hold = not args.no_hold

    kern, nump = {}, {}
    rounds = []  # each round's best-of-repetitions, for the paired 2T/1T ratios
    for _ in range(args.rounds):
        this_round = run_bench(args.bench, args.repeat, args.min_time, hold)
        rounds.append(this_round)
        for name, bps in this_round.items():
            kern[name] = max(kern.get(name, 0.0), bps)
        holder = subprocess.Popen([args.bench, "--hold_cpus_only"], stdin=subprocess.PIPE) if hold else None
        try:
            numpy_round = run_numpy(args.repeat)
        finally:
            if holder:
                holder.stdin.close()
                holder.wait()
        for name, (t, nbytes) in numpy_round.items():
            if name not in nump or t < nump[name][0]:
                nump[name] = (t, nbytes)

    def key(name, threads, isa=-1):
        return f"BM_{name}/{threads}/{isa}/real_time"

    def k(name, threads, isa=-1):
        return kern.get(key(name, threads, isa), 0.0)

    def paired(name):
        # 1 and 2 threads measured seconds apart in the same round share that
        # minute's drift; the median over rounds of their ratio.
        r = sorted(rd.get(key(name, 2), 0.0) / rd[key(name, 1)] for rd in rounds if rd.get(key(name, 1)))
        if not r:
            return 0.0
        return r[len(r) // 2] if len(r) % 2 else (r[len(r) // 2 - 1] + r[len(r) // 2]) / 2

    memcpy1, memcpy2 = k("Memcpy", 1), k("Memcpy", 2)
    print("single-thread runs: " + ("other CPUs held by a pause loop" if hold else "other CPUs idle (--no-hold)"))
    print(f"memcpy (read+write) 1 thread: {memcpy1 / 1e9:.2f} GB/s   2 threads: {memcpy2 / 1e9:.2f} GB/s   "
          f"numpy copyto: {nump['Memcpy'][1] / nump['Memcpy'][0] / 1e9:.2f} GB/s")
    print()
    hdr = (f"{'operation':<22} {'kernel GB/s':>11} {'numpy GB/s':>10} {'x numpy':>8} {'% memcpy':>9} "
           f"{'2T GB/s':>8} {'2T/1T':>6} {'paired':>7} {'2T % 2T memcpy':>15}")
    print(hdr)
    print("-" * len(hdr))
    for name in ["QuantU8PerTensor", "QuantS8PerChannel", "QuantS4Block64", "LpbqS4Block64", "Hist2048", "MinMax",
                 "DequantU8PerTensor"]:
        k1, k2 = k(name, 1), k(name, 2)
        t, nbytes = nump[name]
        npbps = nbytes / t
        print(f"{name:<22} {k1 / 1e9:>11.2f} {npbps / 1e9:>10.2f} {k1 / npbps:>8.1f} {100 * k1 / memcpy1:>8.0f}% "
              f"{k2 / 1e9:>8.2f} {k2 / k1 if k1 else 0:>6.2f} {paired(name):>7.2f} "
              f"{100 * k2 / memcpy2 if memcpy2 else 0:>14.0f}%")
    print()
    print(f"2T/1T = best 2-thread / best 1-thread over all {len(rounds)} rounds; paired = median over rounds of "
          "each round's own ratio; memcpy paired: " + f"{paired('Memcpy'):.2f}")
    isas = ["scalar", "sse41", "avx2", "avx512"]
    print("QuantU8PerTensor by ISA (1 thread): " +
          ", ".join(f"{isas[i]} {k('QuantU8PerTensor', 1, i) / 1e9:.2f} GB/s" for i in range(4)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
