"""Kernel Tuner's strategies replayed on a T4 file, for tests/bench_strategies --peer.

    python kt_simulate.py --t4 FILE[.gz] --strategy NAME --seeds N --max-fevals M

Runs Kernel Tuner (installed by scripts/kernel_tuner.sh) in simulation mode on the file: the
file becomes a Kernel Tuner cache (time = median runtime, as mgpu-tune answers; failed configs
as Kernel Tuner's failure markers; compile and benchmark times as recorded), the search space is
every configuration in the file (failed ones included, as for mgpu-tune's strategies: they are
not known to fail before they are tried). For each seed 0..N-1 prints one JSON line: the
configurations in the order Kernel Tuner evaluated them. Scoring is left to the caller, so both
tuners are scored by the same code. Exit: 0 done; 2 bad input.
"""
import argparse
import gzip
import json
import os
import random
import statistics
import sys
import tempfile
import warnings


def load_t4(path):
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        return json.load(f)


def to_cache(t4, name):
    results = t4["results"]
    keys = list(results[0]["configuration"].keys())
    tune_params = {k: sorted({r["configuration"][k] for r in results}) for k in keys}
    cache = {}
    for r in results:
        c = r["configuration"]
        times = r.get("times", {})
        runtimes = times.get("runtimes") or []
        valid = r.get("invalidity", "correct") == "correct" and r.get("correctness", 1) != 0
        entry = dict(c)
        if valid:
            entry["time"] = statistics.median(runtimes) if runtimes else r["measurements"][0]["value"]
        else:
            entry["time"] = "CompilationFailedConfig" if r.get("invalidity") == "compile" else "RuntimeFailedConfig"
        entry.update(times=runtimes, compile_time=times.get("compilation", 0) or 0, verification_time=0,
                     benchmark_time=sum(runtimes), strategy_time=0, framework_time=0, timestamp=r.get("timestamp", ""))
        cache[",".join(str(c[k]) for k in keys)] = entry
    return keys, tune_params, {"device_name": name, "kernel_name": name, "problem_size": [1],
                               "tune_params_keys": keys, "tune_params": tune_params, "objective": "time",
                               "cache": cache}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--t4", required=True)
    ap.add_argument("--strategy", required=True)
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--max-fevals", type=int, required=True)
    a = ap.parse_args()
    warnings.filterwarnings("ignore")
    import numpy as np
    import kernel_tuner
    from constraint import FunctionConstraint

    try:
        t4 = load_t4(a.t4)
    except (OSError, ValueError) as e:
        print(f"kt_simulate: error: {a.t4}: {e}", file=sys.stderr)
        return 2
    name = "t4"
    keys, tune_params, cache = to_cache(t4, name)
    members = {tuple(r["configuration"][k] for k in keys) for r in t4["results"]}
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "cache.json")
        with open(path, "w") as f:
            json.dump(cache, f)
        for seed in range(a.seeds):
            random.seed(seed)
            np.random.seed(seed)
            devnull = open(os.devnull, "w")
            stdout, sys.stdout = sys.stdout, devnull  # Kernel Tuner prints as it goes
            try:
                results, _ = kernel_tuner.tune_kernel(
                    name, "", (1,), [], tune_params, cache=path, simulation_mode=True,
                    restrictions=[FunctionConstraint(lambda *v: tuple(v) in members)],
                    strategy=a.strategy, strategy_options={"max_fevals": a.max_fevals},
                    objective="time", objective_higher_is_better=False, quiet=True, verbose=False)
            finally:
                sys.stdout = stdout
                devnull.close()
            print(json.dumps([{k: r[k] for k in keys} for r in results if r is not None]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
