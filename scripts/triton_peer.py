#!/usr/bin/env python3
"""Side by side: our Hopper matmul and Triton's, compiled for the same tiles, and what
their machine code shows -- registers, spills, and the main loop's SASS per k-step.

Run with the venv of scripts/triton_peer.sh (no GPU needed):
    .venv-triton/bin/python scripts/triton_peer.py [--mgpu build/mgpu-tune] [--keep DIR] [--json]

For each config below it builds ours (`mgpu-tune compile matmul --sass --json`) and Triton's
tl.dot kernel with TMA tensor descriptors, compiled ahead of time for sm_90a with an explicit
GPUTarget, in two forms: `triton` (num_warps=8, Triton's software-pipelined Hopper path) and
`triton-ws` (tl.range(warp_specialize=True), num_warps=4: a producer warpgroup and two consumer
warpgroups, like ours). Triton's PTX is assembled by OUR toolkit's ptxas with the flags we use
(`-arch=sm_90a -O3 -v`), so one assembler makes both, and profiled by `mgpu-tune sass`.

Tile mapping: our tile_m x tile_n is one compute warpgroup's; the CTA tile is two of them side by
side along wg_dimension. Triton's BLOCK_M x BLOCK_N is the CTA tile, split by Triton among its
warpgroups (along M: 8 warps = 2 warpgroups of BLOCK_M/2 rows; the warp-specialized form gives
each consumer BLOCK_M/2 rows). Counts are per k-step of ONE warpgroup: a loop iteration is
divided by the k-steps it holds (its MMAs / the MMAs one warpgroup issues per k-step), which
is 1 for every config here (neither compiler unrolls these k-loops); the column says so.
Exit: 0 the table was printed; 1 a compile or a tool failed; 2 bad input (--help: 0).
"""
import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")
PTXAS = os.environ.get("MGPU_PTXAS", os.path.join(CUDA_HOME, "bin", "ptxas"))
SMEM_LIMIT = 232448  # bytes of dynamic SMEM one H100 CTA may have (227 KiB)

# (our config, output dtype). Ours: tile_m x tile_n per compute warpgroup; tile_k; stages.
CONFIGS = [
    ({}, "bf16"),  # the sm_90a default: 128x128 per warpgroup, split along M, 4 stages
    ({"tile_m": 64, "tile_n": 128}, "bf16"),
    ({"tile_m": 128, "tile_n": 128, "wg_dimension": "N", "max_concurrent_steps": 3}, "bf16"),
    ({"max_concurrent_steps": 3}, "f32"),
    ({"tile_m": 64, "tile_n": 256, "max_concurrent_steps": 3}, "f32"),
]
DEFAULTS = {"tile_m": 128, "tile_n": 128, "tile_k": 64, "max_concurrent_steps": 4, "wg_dimension": "M"}


def cta_tile(cfg):
    c = {**DEFAULTS, **cfg}
    m, n = c["tile_m"], c["tile_n"]
    return (2 * m, n) if c["wg_dimension"] == "M" else (m, 2 * n)


def fail(msg, code=1):
    print(f"triton_peer: error: {msg}", file=sys.stderr)
    sys.exit(code)


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p


def setmaxnreg_values(ptx_text):
    """The register budgets the PTX asks for (setmaxnreg.inc/dec), low to high; [] when none."""
    return sorted({int(v) for v in re.findall(r"setmaxnreg\.(?:inc|dec)\.sync\.aligned\.u32\s+(\d+)", ptx_text)})


def ours(mgpu, cfg, out_dtype, workdir):
    emit = tempfile.mkdtemp(prefix="ours-", dir=workdir)
    p = run([mgpu, "compile", "matmul", "--arch", "sm_90a", "--out-dtype", out_dtype, "--config", json.dumps(cfg),
             "--sass", "--json", "--emit-dir", emit])
    row = json.loads(p.stdout)["configs"][0]
    (ptx,) = glob.glob(os.path.join(emit, "*.ptx"))
    with open(ptx) as f:
        budgets = setmaxnreg_values(f.read())
    c = {**DEFAULTS, **cfg}
    wg = (c["tile_m"], c["tile_n"])
    return {"registers": row["registers"], "spill_store_bytes": row["spill_store_bytes"], "sass": row["sass"],
            "smem": row["dynamic_smem_bytes"], "threads": 384, "wg_tile": wg, "setmaxnreg": budgets}


def triton_kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
               NUM_STAGES: tl.constexpr, WARP_SPECIALIZE: tl.constexpr):
        # Descriptors made in the kernel, not passed from the host: Hopper's warp specialization
        # splits A's tile between the consumers and must re-shape its descriptor, which a host
        # descriptor's fixed block does not allow ("descriptor block and tensor must have the
        # same number of elements"). Made once per CTA, outside the k-loop.
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[K, 1], block_shape=[BLOCK_M, BLOCK_K])
        b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[N, 1], block_shape=[BLOCK_K, BLOCK_N])
        c_desc = tl.make_tensor_descriptor(c_ptr, shape=[M, N], strides=[N, 1], block_shape=[BLOCK_M, BLOCK_N])
        pid = tl.program_id(0)
        num_pid_n = tl.cdiv(N, BLOCK_N)
        pid_m = pid // num_pid_n
        pid_n = pid % num_pid_n
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for k in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=NUM_STAGES, warp_specialize=WARP_SPECIALIZE):
            a = a_desc.load([pid_m * BLOCK_M, k * BLOCK_K])
            b = b_desc.load([k * BLOCK_K, pid_n * BLOCK_N])  # B as K x N, as our default layout
            acc = tl.dot(a, b, acc)
        c_desc.store([pid_m * BLOCK_M, pid_n * BLOCK_N], acc.to(c_ptr.dtype.element_ty))

    return matmul


def triton_peer(mgpu, kernel, cfg, out_dtype, ws, workdir):
    import triton
    from triton.backends.compiler import GPUTarget
    c = {**DEFAULTS, **cfg}
    bm, bn = cta_tile(cfg)
    bk, stages = c["tile_k"], c["max_concurrent_steps"]
    out_ty = {"bf16": "bf16", "f32": "fp32"}[out_dtype]
    sig = {"a_ptr": "*bf16", "b_ptr": "*bf16", "c_ptr": f"*{out_ty}", "M": "i32", "N": "i32", "K": "i32",
           "BLOCK_M": "constexpr", "BLOCK_N": "constexpr", "BLOCK_K": "constexpr", "NUM_STAGES": "constexpr",
           "WARP_SPECIALIZE": "constexpr"}
    # What a launch on aligned tensors would tell the JIT: pointers and M, N, K divisible by 16.
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(6)}
    src = triton.compiler.ASTSource(kernel, sig, attrs=attrs, constexprs={
        "BLOCK_M": bm, "BLOCK_N": bn, "BLOCK_K": bk, "NUM_STAGES": stages, "WARP_SPECIALIZE": ws})
    num_warps = 4 if ws else 8  # Hopper warp specialization runs only from num_warps=4 (adding 8 warps)
    compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": num_warps,
                                                                               "num_stages": stages})
    name = f"triton{'_ws' if ws else ''}_{bm}x{bn}x{bk}_s{stages}_{out_dtype}"
    ptx, cubin, log = (os.path.join(workdir, name + ext) for ext in (".ptx", ".cubin", ".ptxas.log"))
    with open(ptx, "w") as f:
        f.write(compiled.asm["ptx"])
    p = run([PTXAS, "-arch=sm_90a", "-O3", "-v", ptx, "-o", cubin])
    with open(log, "w") as f:
        f.write(p.stdout + p.stderr)
    s = json.loads(run([mgpu, "sass", cubin, "--ptx", ptx, "--ptxas-log", log, "--json"]).stdout)
    budgets = setmaxnreg_values(compiled.asm["ptx"])
    md = compiled.metadata
    # Triton's own cubin (its ptxas flags: -lineinfo --regAllocOptLevel=2), for the registers only.
    own = os.path.join(workdir, name + ".triton.cubin")
    with open(own, "wb") as f:
        f.write(compiled.asm["cubin"])
    own_regs = json.loads(run([mgpu, "sass", own, "--json"]).stdout)["registers"]
    return {"registers": s["registers"], "spill_store_bytes": s["spill_store_bytes"], "sass": s["sass"],
            "smem": md.shared, "threads": md.num_warps * 32, "wg_tile": (bm // 2, bn), "own_registers": own_regs,
            "setmaxnreg": budgets}


def per_kstep(r, tile_k):
    """Main-loop counts per k-step of one warpgroup: MMAs per k-step = (rows / 64) x (tile_k / 16)."""
    loop = r["sass"].get("main_loop")
    if not loop:
        return None, None
    per_step = (r["wg_tile"][0] // 64) * (tile_k // 16)
    steps = loop["mma"] / per_step
    return steps, {k: loop[k] / steps for k in ("instructions", "mma", "tma", "sync", "warpgroup_sync", "local_memory")}


def setmaxnreg(row):
    if not row["setmaxnreg_budgets"]:
        return "not asked"
    budgets = ", ".join(map(str, row["setmaxnreg_budgets"]))
    return f"{'kept' if row['setmaxnreg_kept'] else 'DROPPED'} ({budgets})"


def fmt(x):
    return "?" if x is None else (str(int(x)) if float(x).is_integer() else f"{x:.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Exit codes: 0 printed; 1 a compile or tool failed; 2 bad input.")
    ap.add_argument("--mgpu", default=os.path.join(ROOT, os.environ.get("BUILD_DIR", "build"), "mgpu-tune"),
                    help="the mgpu-tune executable (default: BUILD_DIR/mgpu-tune, BUILD_DIR=build)")
    ap.add_argument("--keep", help="write the PTX, cubins and ptxas logs here (default: a temporary folder)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON instead of a table")
    args = ap.parse_args()
    if not os.access(args.mgpu, os.X_OK):
        fail(f"no mgpu-tune at {args.mgpu} (build it: cmake --build build --target mgpu-tune; or --mgpu)", 2)
    if not os.access(PTXAS, os.X_OK):
        fail(f"no ptxas at {PTXAS} (set CUDA_HOME or MGPU_PTXAS)", 2)
    # Triton writes `.version` for the ptxas it finds (its own is newer than CUDA 13.0's, whose
    # ptxas then refuses the PTX); pointing it at ours makes the PTX ours can assemble.
    os.environ["TRITON_PTXAS_PATH"] = os.environ["TRITON_PTXAS_BLACKWELL_PATH"] = PTXAS
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    workdir = args.keep or tempfile.mkdtemp(prefix="triton-peer-")
    os.makedirs(workdir, exist_ok=True)
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(workdir, "triton-cache"))
    try:
        import triton
    except ImportError:
        fail("no triton here: run with the python of scripts/triton_peer.sh's venv (.venv-triton/bin/python)", 2)
    kernel = triton_kernel()
    rows = []
    for cfg, out_dtype in CONFIGS:
        c = {**DEFAULTS, **cfg}
        bm, bn = cta_tile(cfg)
        label = f"CTA {bm}x{bn}x{c['tile_k']}, {c['max_concurrent_steps']} stages, bf16->{out_dtype}"
        for who, r in (("ours", ours(args.mgpu, cfg, out_dtype, workdir)),
                       ("triton", triton_peer(args.mgpu, kernel, cfg, out_dtype, False, workdir)),
                       ("triton-ws", triton_peer(args.mgpu, kernel, cfg, out_dtype, True, workdir))):
            steps, per = per_kstep(r, c["tile_k"])
            rows.append({"config": label, "ours": json.dumps(cfg), "who": who, "threads": r["threads"],
                         "warpgroup_tile": f"{r['wg_tile'][0]}x{r['wg_tile'][1]}", "registers": r["registers"],
                         "registers_triton_flags": r.get("own_registers"), "spill_store_bytes": r["spill_store_bytes"],
                         "smem": r["smem"], "ksteps_per_iteration": steps, "per_kstep": per,
                         "setmaxnreg_kept": r["sass"]["setmaxnreg_kept"], "setmaxnreg_budgets": r["setmaxnreg"],
                         "lints": [l["code"] for l in r["sass"]["lints"]]})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print("| config (ours) | who | threads | warpgroup tile | registers | spill bytes | SMEM KiB | k-steps/iter "
              "| instr | MMA | TMA | sync | wg-sync | local | setmaxnreg (budgets) | lints |")
        print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
        for r in rows:
            p = r["per_kstep"] or {}
            smem = f"{r['smem'] / 1024:.0f}" + (" (over 227: no launch)" if r["smem"] > SMEM_LIMIT else "")
            regs = str(r["registers"])
            if r["registers_triton_flags"] not in (None, r["registers"]):
                regs += f" ({r['registers_triton_flags']} w/ Triton's flags)"
            print(f"| {r['config']} {r['ours'] if r['who'] == 'ours' else ''} | {r['who']} | {r['threads']} "
                  f"| {r['warpgroup_tile']} | {regs} | {r['spill_store_bytes']} | {smem} "
                  f"| {fmt(r['ksteps_per_iteration'])} | {fmt(p.get('instructions'))} | {fmt(p.get('mma'))} "
                  f"| {fmt(p.get('tma'))} | {fmt(p.get('sync'))} | {fmt(p.get('warpgroup_sync'))} "
                  f"| {fmt(p.get('local_memory'))} | {setmaxnreg(r)} | {' '.join(r['lints']) or 'none'} |")
        kept = f"files in {workdir}" if args.keep else "--keep DIR keeps the PTX, cubins and logs"
        print(f"\nTriton {triton.__version__}; both assembled by {PTXAS} -arch=sm_90a -O3; {kept}")
    if not args.keep:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
