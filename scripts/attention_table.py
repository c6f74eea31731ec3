#!/usr/bin/env python3
"""The attention lease table: the best config per shape from a sweep's TSV.

    scripts/attention_table.py attention.tsv > attention.md

Input: the lines tests/test_gpu_attention.cc (GpuAttention.SweepEveryValidConfigForTheLeaseTable)
writes, one per config measured. Output: per head dim, mask and sequence length, the fastest
config, its TFLOP/s, the cost model's TFLOP/s for it, measured over predicted, and how many
configs were measured; configs whose small check failed never rank. Exit: 0; 2 bad input.
Standard library only (it runs on the GPU machine beside the bundle)."""
import csv
import sys
from collections import defaultdict


def main(argv):
    if len(argv) != 2 or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 0 if len(argv) == 2 else 2
    try:
        with open(argv[1], newline="") as f:
            rows = list(csv.DictReader(f, delimiter="\t"))
    except OSError as e:
        print(f"attention_table: cannot read {argv[1]}: {e.strerror}", file=sys.stderr)
        return 2
    need = {"head_dim", "seq", "causal", "block_kv", "stages", "median_ms", "tflops", "predicted_ms", "check"}
    if rows and not need <= set(rows[0]):
        print(f"attention_table: {argv[1]} lacks the columns {sorted(need - set(rows[0]))}", file=sys.stderr)
        return 2
    shapes = defaultdict(list)
    for r in rows:
        try:
            key = (int(r["head_dim"]), r["causal"] in ("1", "true"), int(r["seq"]))
            shapes[key].append((float(r["median_ms"]), float(r["tflops"]), float(r["predicted_ms"]),
                                r["block_kv"], r["stages"], r["check"] == "ok", r.get("schedule") or "serial"))
        except (KeyError, ValueError) as e:
            print(f"attention_table: {argv[1]}: a line that is no measurement ({e})", file=sys.stderr)
            return 2
    print("| head dim | mask | seq | best config (block_kv/stages/schedule) | ms | TFLOP/s | predicted TFLOP/s | "
          "measured / predicted time | best serial TFLOP/s | best overlap TFLOP/s | configs |")
    print("|---:|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for (d, causal, seq), runs in sorted(shapes.items()):
        ok = [r for r in runs if r[5]]
        if not ok:
            print(f"| {d} | {'causal' if causal else 'dense'} | {seq} | none passed its check | | | | | | | {len(runs)} |")
            continue
        ms, tf, pred, bkv, st, _, sched = min(ok)
        # The two consumer schedules side by side (measured in the same lease).
        best = {name: max((r[1] for r in ok if r[6] == name), default=None) for name in ("serial", "intra_wg_overlap")}
        cell = lambda v: f"{v:.0f}" if v is not None else ""
        print(f"| {d} | {'causal' if causal else 'dense'} | {seq} | {bkv}/{st}/{sched} | {ms:.4f} | {tf:.0f} | "
              f"{tf * ms / pred:.0f} | {ms / pred:.2f} | {cell(best['serial'])} | {cell(best['intra_wg_overlap'])} | "
              f"{len(runs)} |")
    failed = sum(1 for runs in shapes.values() for r in runs if not r[5])
    print(f"\n{sum(len(v) for v in shapes.values())} configs measured, {failed} failed their check. "
          "Reference point (published, not measured here): FlashAttention-3 forward on an H100 SXM, "
          "650-740 TFLOP/s at head dim 128 and long sequences.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
