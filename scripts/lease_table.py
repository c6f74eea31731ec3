#!/usr/bin/env python3
"""The lease step's table (scripts/gpu_session.sh lease): one row per shape, tuned winner against
cuBLASLt, from DIR/M x N x K.tune.json and the two alternated bench rounds DIR/M x N x K.bench-R.json.

  scripts/lease_table.py DIR [--hbm-tbps X]      prints Markdown; exit 2 if DIR holds no bench

Each side's time is the mean of its two rounds' medians (ours, cuBLASLt, ours, cuBLASLt: A B A B),
the round-to-round spread is shown so that a gap smaller than it is not read as a win. The HBM
roofline share is the least bytes a matmul must move (A, B and C once) over the time, at the card's
peak bandwidth (from the bench's device name unless --hbm-tbps gives it). Standard library only:
it runs on the GPU machine's own Python or here on the files a lease brought back.
"""
import argparse
import glob
import json
import math
import os
import re
import sys

# Peak HBM bandwidth in TB/s by the device name CUDA reports (the vendors' data sheets).
HBM_TBPS = [("H200", 4.8), ("H100 NVL", 3.9), ("H100 PCIe", 2.0), ("H100", 3.35), ("GH200", 4.0)]
DTYPE_BYTES = {"bf16": 2, "f16": 2, "f32": 4}


def hbm_tbps(device):
    for name, tbps in HBM_TBPS:
        if name in device:
            return tbps
    return None


def problem_dims(key):
    # e.g. m16_n4096_k14336_bf16_bf16_nk
    m = re.match(r"m(\d+)_n(\d+)_k(\d+)_(\w+?)_(\w+?)_(kn|nk)$", key)
    if not m:
        raise ValueError(f"unrecognised problem key {key!r}")
    return int(m[1]), int(m[2]), int(m[3]), m[4], m[5]


def summary(cfg):
    parts = [cfg.get("schedule", "data_parallel")]
    if cfg.get("schedule") == "split_k":
        parts[-1] += f" x{cfg.get('split_k')}"
    if cfg.get("swap_ab") == "yes":
        parts.append("swap_ab")
    if cfg.get("consumers") == "pingpong":
        parts.append("pingpong")
    parts.append(f"{cfg.get('tile_m')}x{cfg.get('tile_n')}x{cfg.get('tile_k')}")
    parts.append(f"{cfg.get('max_concurrent_steps')} stages")
    if cfg.get("cluster_dimension") not in (None, "none"):
        parts.append(f"cluster {cfg.get('cluster_dimension')}")
    return ", ".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--hbm-tbps", type=float)
    a = ap.parse_args()
    rows, missing = [], []
    for tune_path in sorted(glob.glob(os.path.join(a.dir, "*.tune.json"))):
        stem = tune_path[: -len(".tune.json")]
        benches = []
        for r in (1, 2):
            try:
                with open(f"{stem}.bench-{r}.json") as f:
                    benches.append(json.load(f))
            except (OSError, ValueError):
                pass
        if not benches:
            missing.append(os.path.basename(stem))
            continue
        try:
            with open(tune_path) as f:
                tune = json.load(f)
        except (OSError, ValueError):
            tune = {}
        ours = [b["median_ms"] for b in benches]
        theirs = [b["cublas_ms"] for b in benches]
        m, n, k, din, dout = problem_dims(benches[0]["problem"])
        rows.append(dict(m=m, n=n, k=k, din=din, dout=dout, device=benches[0]["device"],
                         cfg=benches[0]["config"], ours=sum(ours) / len(ours), theirs=sum(theirs) / len(theirs),
                         spread=(max(ours) - min(ours)) / min(ours), rounds=len(benches),
                         trials=tune.get("study_trials"), cpm=tune.get("configs_per_minute")))
    if not rows:
        print(f"lease_table: no bench results under {a.dir}", file=sys.stderr)
        return 2
    rows.sort(key=lambda r: (r["m"], r["n"], r["k"]))
    tbps = a.hbm_tbps or hbm_tbps(rows[0]["device"])
    print(f"Device: {rows[0]['device']}" + (f", HBM peak {tbps} TB/s" if tbps else ", HBM peak unknown"))
    print()
    print("| M x N x K | winner | ours (ms) | cuBLASLt (ms) | x cuBLASLt | ours, % of HBM roofline | "
          "cuBLASLt, % of HBM roofline | rounds, spread of ours | trials |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    ratios = []
    for r in rows:
        ratio = r["theirs"] / r["ours"]
        ratios.append((ratio, r))
        share = lambda ms: "-"
        if tbps:
            bytes_ = (r["m"] * r["k"] + r["n"] * r["k"]) * DTYPE_BYTES[r["din"]] + r["m"] * r["n"] * DTYPE_BYTES[r["dout"]]
            share = lambda ms, b=bytes_: f"{100 * b / (tbps * 1e12) / (ms * 1e-3):.0f}%"
        print(f"| {r['m']} x {r['n']} x {r['k']} | {summary(r['cfg'])} | {r['ours']:.4f} | {r['theirs']:.4f} | "
              f"{ratio:.3f} | {share(r['ours'])} | {share(r['theirs'])} | {r['rounds']}, {100 * r['spread']:.1f}% | "
              f"{r['trials'] if r['trials'] is not None else '-'} |")
    geo = math.exp(sum(math.log(x) for x, _ in ratios) / len(ratios))
    worst, wr = min(ratios, key=lambda t: t[0])
    print()
    print(f"Geo-mean {geo:.3f}x cuBLASLt over {len(rows)} shapes; worst {worst:.3f}x at "
          f"{wr['m']} x {wr['n']} x {wr['k']}.")
    if missing:
        print(f"Tuned but not benched (the step's time bound or a failure): {', '.join(missing)}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
