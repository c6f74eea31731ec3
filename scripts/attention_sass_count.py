#!/usr/bin/env python3
"""Counts the main loop's SASS of attention kernels, side by side (stdlib only; used by
scripts/attention_sass_compare.sh, which makes the inputs).

    attention_sass_count.py --nvdisasm PATH --cuobjdump PATH --head-dim D
                            --kernel LABEL=CUBIN[,LOG] [--kernel ...] [--out FILE.md]

For each cubin: `nvdisasm -c` gives the SASS; the main loop is the innermost loop (a branch
back to a label, the span from label to branch) holding an HGMMA. A span that contains an
unpredicated EXIT is no loop: that is an out-of-line try-wait retry block branching back into
the body. Keys per iteration come from the loop's HGMMAs themselves: S = Q.K^T and O += P.V of one
warpgroup's 64 rows do 2 x 64 x head_dim x keys multiply-adds, so keys = sum(M*N*K) / (128 *
head_dim). Counts are static instructions in the loop body, which each compute warp issues once
per iteration; both kernels give 128 query rows to 2 compute warpgroups (8 warps), so scaling a
count by 64 / keys gives instructions per compute warp per 64 keys x 128 query rows.
`@!PT` instructions (never executed: ptxas padding) are counted apart, not in their class.
Registers come from `cuobjdump -res-usage`, spills from the ptxas log where one is given.
Exit: 0 printed; 1 a tool failed or no main loop was found; 2 bad input (--help: 0).
"""
import argparse
import os
import re
import subprocess
import sys

INSTR = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(@!?U?P[T0-9]+\s+)?([A-Z][A-Za-z0-9_.]*)([^;]*);")
LABEL = re.compile(r"^(\.L_x_[0-9]+):")
BRA = re.compile(r"`\((\.L_x_[0-9]+)\)")
FUNC = re.compile(r"^\s*\.global\s+(\S+)")

# (row, predicate on the opcode), first match wins; the table lists them in this order.
CLASSES = [
    ("HGMMA (all shapes)", lambda o: o.startswith("HGMMA")),
    ("MUFU.EX2", lambda o: o.startswith("MUFU.EX2")),
    ("MUFU other (RCP, LG2, ...)", lambda o: o.startswith("MUFU")),
    ("FMNMX", lambda o: o.startswith("FMNMX")),
    ("FMUL", lambda o: o.startswith("FMUL")),
    ("FFMA", lambda o: o.startswith("FFMA")),
    ("FADD", lambda o: o.startswith("FADD")),
    ("FSEL / SEL (selects, e.g. masks)", lambda o: o.split(".")[0] in ("FSEL", "SEL")),
    ("ISETP / FSETP (compares)", lambda o: o.split(".")[0] in ("ISETP", "FSETP")),
    ("SHFL (row reductions)", lambda o: o.startswith("SHFL")),
    ("F2FP (f32 -> bf16 packing)", lambda o: o.startswith("F2FP")),
    ("SYNCS.PHASECHK (mbarrier try-waits)", lambda o: o.startswith("SYNCS.PHASECHK")),
    ("SYNCS other (mbarrier arrives, ...)", lambda o: o.startswith("SYNCS")),
    ("LDGDEPBAR / DEPBAR (cp.async commit / wait)", lambda o: o.split(".")[0] in ("LDGDEPBAR", "DEPBAR")),
    ("BAR (named barriers, __syncthreads)", lambda o: o == "BAR" or o.startswith("BAR.")),
    ("MEMBAR / FENCE (proxy fences)", lambda o: o.startswith("MEMBAR") or o.startswith("FENCE")),
    ("WARPGROUP.ARRIVE (wgmma fence)", lambda o: o.startswith("WARPGROUP.ARRIVE")),
    ("WARPGROUP.DEPBAR (wgmma wait)", lambda o: o.startswith("WARPGROUP.DEPBAR")),
    ("WARPSYNC", lambda o: o.startswith("WARPSYNC")),
    ("LDS / STS / LDSM / STSM", lambda o: o.split(".")[0] in ("LDS", "STS", "LDSM", "STSM")),
    ("LDGSTS / UTMALDG / LDG (global loads)", lambda o: o.split(".")[0] in ("LDGSTS", "UTMALDG", "LDG", "UBLKCP")),
    ("LDL / STL (local memory: spills)", lambda o: o.split(".")[0] in ("LDL", "STL")),
    ("integer / address (IMAD, IADD3, VIADD, LEA, LOP3, SHF, P2R, ...)",
     lambda o: o.split(".")[0] in ("IMAD", "IADD3", "VIADD", "LEA", "LOP3", "SHF", "P2R", "R2P", "IMNMX", "IABS",
                                   "VIMNMX", "PRMT", "PLOP3", "POPC", "FLO", "BMSK", "SGXT", "LEA.HI")),
    ("uniform datapath (U*, R2UR, S2UR)", lambda o: o.startswith("U") or o.split(".")[0] in ("R2UR", "S2UR", "S2R")),
    ("MOV", lambda o: o.split(".")[0] == "MOV"),
    ("BRA / control", lambda o: o.split(".")[0] in ("BRA", "EXIT", "NOP", "BSSY", "BSYNC", "CALL", "RET", "YIELD")),
]
OTHER = "other"


def fail(msg, code=1):
    print(f"attention_sass_count: error: {msg}", file=sys.stderr)
    sys.exit(code)


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stdout}{p.stderr}")
    return p.stdout


def parse_sass(text):
    """Instructions of the first function: dicts with opcode, operands, predicate, target."""
    code, labels, seen = [], {}, False
    for line in text.splitlines():
        m = FUNC.search(line)
        if m:
            if seen:
                break
            seen = True
            continue
        m = LABEL.search(line)
        if m:
            labels[m.group(1)] = len(code)
            continue
        m = INSTR.search(line)
        if m:
            op, rest = m.group(3), m.group(4)
            t = BRA.search(rest) if op.startswith("BRA") else None
            code.append({"op": op, "args": rest.strip(), "pred": (m.group(2) or "").strip(),
                         "target": t.group(1) if t else None})
    return code, labels


def loops(code, labels):
    """(begin, end) spans of real loops: backward branches whose span has no unpredicated EXIT."""
    out = []
    for at, i in enumerate(code):
        if not i["target"] or i["target"] not in labels or labels[i["target"]] > at:
            continue
        begin, end = labels[i["target"]], at + 1
        if any(c["op"].startswith("EXIT") and not c["pred"] for c in code[begin:end]):
            continue  # an out-of-line retry block jumping back into the body
        out.append((begin, end))
    return sorted(set(out))


def classify(op):
    for name, test in CLASSES:
        if test(op):
            return name
    return OTHER


def hgmma_shape(i):
    """'64x128x16 A:smem' / 'A:regs' from 'HGMMA.64x128x16.F32.BF16 R24, R120, gdesc[..]'."""
    m = re.match(r"HGMMA\.(\d+)x(\d+)x(\d+)", i["op"])
    operands = [a.strip() for a in i["args"].split(",")]
    a_regs = len(operands) > 1 and re.fullmatch(r"R\d+", operands[1]) is not None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))), "A:regs" if a_regs else "A:smem"


def resources(cuobjdump, cubin, log):
    out = run([cuobjdump, "-res-usage", cubin])
    m = re.search(r"REG:(\d+)\s+STACK:(\d+)\s+SHARED:(\d+)\s+LOCAL:(\d+)", out)
    if not m:
        fail(f"no resource usage for {cubin} in cuobjdump's output:\n{out}")
    r = {"registers": int(m.group(1)), "stack": int(m.group(2)), "local": int(m.group(4)),
         "spill_stores": None, "spill_loads": None}
    r["advisories"] = []
    if log:
        with open(log) as f:
            t = f.read()
        for code in re.findall(r"\((C[0-9]{4})\)", t):
            if code not in r["advisories"]:
                r["advisories"].append(code)
        s = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", t)
        if s:
            r["spill_stores"], r["spill_loads"] = int(s.group(1)), int(s.group(2))
    return r


def profile(label, cubin, log, nvdisasm, cuobjdump, head_dim, keep_dir):
    sass = run([nvdisasm, "-c", cubin])
    if keep_dir:
        with open(os.path.join(keep_dir, re.sub(r"[^A-Za-z0-9]+", "_", label).strip("_") + ".sass"), "w") as f:
            f.write(sass)
    code, labels = parse_sass(sass)
    if not code:
        fail(f"{cubin}: nvdisasm listed no instructions")
    found = loops(code, labels)
    with_mma = [(b, e) for b, e in found if any(c["op"].startswith("HGMMA") for c in code[b:e])]
    if not with_mma:
        fail(f"{label}: no loop holding an HGMMA in {cubin}")
    begin, end = min(with_mma, key=lambda s: s[1] - s[0])
    body = code[begin:end]
    counts, shapes, padding, mnk = {}, {}, 0, 0
    for i in body:
        if i["pred"] == "@!PT":
            padding += 1
            continue
        c = classify(i["op"])
        counts[c] = counts.get(c, 0) + 1
        if i["op"].startswith("HGMMA"):
            (m, n, k), src = hgmma_shape(i)
            key = f"HGMMA {m}x{n}x{k} {src}"
            shapes[key] = shapes.get(key, 0) + 1
            mnk += m * n * k
    keys = mnk / (128 * head_dim)
    if keys <= 0 or keys != int(keys):
        fail(f"{label}: the loop's HGMMAs ({shapes}) are not a whole number of keys for head_dim {head_dim}")
    # Try-wait retries the loop jumps out to (a predicated branch to a label past the loop's end).
    retries = sum(1 for i in body if i["target"] and i["pred"] and labels.get(i["target"], -1) >= end)
    # Other loops (e.g. a producer's): their size and the loads and waits in them.
    notable = ("LDGSTS / UTMALDG / LDG (global loads)", "SYNCS.PHASECHK (mbarrier try-waits)")
    other_loops = [(b, e, sum(1 for c in code[b:e] if c["pred"] != "@!PT"),
                    sorted({c["op"].split(".")[0] + (".PHASECHK" if ".PHASECHK" in c["op"] else "")
                            for c in code[b:e] if c["pred"] != "@!PT" and classify(c["op"]) in notable}))
                   for b, e in found if (b, e) != (begin, end) and e - b > 8]
    budgets = [re.search(r"(0x[0-9a-f]+|\d+)\s*$", c["args"]) for c in code if c["op"].startswith("USETMAXREG")]
    return {"label": label, "cubin": cubin, "total_static": len(code), "loop": (begin, end), "counts": counts,
            "shapes": shapes, "padding": padding, "executed": sum(counts.values()), "keys": int(keys),
            "retries": retries, "other_loops": other_loops, "res": resources(cuobjdump, cubin, log),
            "setmaxnreg": [int(b.group(1), 0) for b in budgets if b]}


def fmt(x):
    if x is None:
        return "-"
    return str(int(x)) if float(x).is_integer() else f"{x:.1f}"


def table(profiles, head_dim):
    first = profiles[0]
    cols = []
    for p in profiles:
        if p["keys"] != 64:
            cols.append((f"{p['label']} /iter ({p['keys']} keys)", p, 1.0))
        cols.append((f"{p['label']} /64 keys", p, 64.0 / p["keys"]))
    diff = len(profiles) > 1
    head = ["SASS, main loop (per compute warp)"] + [c[0] for c in cols]
    if diff:
        head.append(f"{first['label']} − {profiles[1]['label']} /64 keys")
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(["---"] + ["---:"] * (len(head) - 1)) + "|"]

    def row(name, get):
        vals = [get(p) for _, p, _ in cols]
        cells = [fmt(None if v is None else v * s) for v, (_, _, s) in zip(vals, cols)]
        if diff:
            a, b = get(profiles[0]), get(profiles[1])
            d = None if a is None or b is None else a * 64.0 / profiles[0]["keys"] - b * 64.0 / profiles[1]["keys"]
            cells.append("-" if d is None else ("+" if d > 0 else "") + fmt(d))
        lines.append(f"| {name} | " + " | ".join(cells) + " |")

    shape_names = sorted({s for p in profiles for s in p["shapes"]})
    row("HGMMA (all shapes)", lambda p: p["counts"].get("HGMMA (all shapes)", 0))
    for s in shape_names:
        row(f"&nbsp;&nbsp;{s}", lambda p, s=s: p["shapes"].get(s, 0))
    for name, _ in CLASSES[1:] + [(OTHER, None)]:
        if any(p["counts"].get(name, 0) for p in profiles) or name.startswith(("LDL", "WARPSYNC", "SYNCS.PHASECHK")):
            row(name, lambda p, name=name: p["counts"].get(name, 0))
    row("**instructions** (all rows above; a branch inside the loop counts whether taken or not)", lambda p: p["executed"])
    row("@!PT padding (never executed)", lambda p: p["padding"])
    row("**total static instructions in the loop**", lambda p: p["executed"] + p["padding"])
    row("try-wait retry blocks the loop can branch out to", lambda p: p["retries"])

    res = ["", "| Whole kernel | " + " | ".join(p["label"] for p in profiles) + " |",
           "|---|" + "---:|" * len(profiles)]

    def rrow(name, get):
        res.append(f"| {name} | " + " | ".join(get(p) for p in profiles) + " |")

    rrow("registers (cuobjdump -res-usage)", lambda p: str(p["res"]["registers"]))
    rrow("setmaxnreg budgets in the SASS", lambda p: ", ".join(map(str, p["setmaxnreg"])) or "none")
    rrow("spill stores / loads, bytes (ptxas -v)",
         lambda p: "-" if p["res"]["spill_stores"] is None else f"{p['res']['spill_stores']} / {p['res']['spill_loads']}")
    rrow("ptxas advisories (Cnnnn) in its -v log",
         lambda p: "-" if p["res"]["spill_stores"] is None else (", ".join(p["res"]["advisories"]) or "none"))
    rrow("local memory / stack, bytes", lambda p: f"{p['res']['local']} / {p['res']['stack']}")
    rrow("keys per main-loop iteration (from the HGMMAs)", lambda p: str(p["keys"]))
    rrow("main loop span (instruction indices)", lambda p: f"{p['loop'][0]}..{p['loop'][1] - 1}")
    rrow("other loops: instructions (loads / waits in them)",
         lambda p: "; ".join(f"{n} ({', '.join(kinds) or 'neither'})"
                             for _, _, n, kinds in p["other_loops"]) or "none")
    rrow("static instructions, whole kernel", lambda p: str(p["total_static"]))
    return "\n".join(lines + res) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Exit codes: 0 printed; 1 a tool failed or no main loop; 2 bad input.")
    ap.add_argument("--nvdisasm", required=True)
    ap.add_argument("--cuobjdump", required=True)
    ap.add_argument("--head-dim", type=int, required=True, choices=[64, 128, 256])
    ap.add_argument("--kernel", action="append", required=True, metavar="LABEL=CUBIN[,LOG]",
                    help="a cubin to profile (and its ptxas -v log); the first two are differenced")
    ap.add_argument("--keep-sass", metavar="DIR", help="write each listing to DIR/LABEL.sass")
    ap.add_argument("--out", help="also write the table to this file")
    args = ap.parse_args()
    for tool in (args.nvdisasm, args.cuobjdump):
        if not os.access(tool, os.X_OK):
            fail(f"{tool} is not an executable (scripts/cuda_tools.sh installs nvdisasm and cuobjdump)", 2)
    profiles = []
    for spec in args.kernel:
        if "=" not in spec:
            fail(f"--kernel {spec}: expected LABEL=CUBIN[,LOG]", 2)
        label, files = spec.split("=", 1)
        cubin, _, log = files.partition(",")
        for f in [cubin] + ([log] if log else []):
            if not os.path.isfile(f):
                fail(f"--kernel {spec}: no file {f}", 2)
        profiles.append(profile(label, cubin, log or None, args.nvdisasm, args.cuobjdump, args.head_dim,
                                args.keep_sass))
    text = table(profiles, args.head_dim)
    sys.stdout.write(text)
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
