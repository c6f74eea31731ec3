#!/usr/bin/env python3
"""A Triton fused-attention forward kernel (FlashAttention-2 style), compiled ahead of time for
sm_90a without a GPU, as the reference side of scripts/attention_sass_compare.sh.

The kernel: one program computes BLOCK_M query rows of one (batch, head); it walks the keys in
BLOCK_N-wide blocks with an online softmax (running row max m and row sum l, in the log2
domain: the softmax scale is multiplied by log2(e) once, so each probability is one exp2),
S = Q.K^T and O += P.V with tl.dot, O rescaled by exp2(m_old - m_new) per block, and at the end
O / l and the natural-log LSE written. Non-causal; seq_kv must be a multiple of BLOCK_N (as
Triton's tutorial 06 assumes), so the main loop has no masking.

Run with Triton on the path (scripts/attention_sass_compare.sh installs it):
    PYTHONPATH=.tools/triton /usr/bin/python3 scripts/triton_attention_fwd.py --out DIR
Writes DIR/triton_attention.ptx, DIR/triton_attention.triton.cubin (Triton's own assembly) and
DIR/triton_attention.json (config and Triton's metadata).
Exit: 0 written; 1 the compile failed; 2 bad input (--help: 0).
"""
import argparse
import json
import os
import sys


def kernel():
    import triton
    import triton.language as tl
    # @triton.jit resolves names (tl.constexpr, tl.dot, ...) through the module's globals.
    globals()["tl"] = tl

    @triton.jit
    def attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, lse_ptr,
                 stride_b, stride_h, stride_s,  # Q, K, V and O share one [batch][head][seq][dim] layout
                 heads, seq_q, seq_kv, softmax_scale,
                 HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
        row_block = tl.program_id(0)
        bh = tl.program_id(1)
        base = (bh // heads).to(tl.int64) * stride_b + (bh % heads).to(tl.int64) * stride_h
        rows = row_block * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = tl.arange(0, BLOCK_N)
        dims = tl.arange(0, HEAD_DIM)

        q = tl.load(q_ptr + base + rows[:, None] * stride_s + dims[None, :])
        # K^T's tile, [HEAD_DIM, BLOCK_N]: the dot's B operand without a separate transpose.
        kt_ptrs = k_ptr + base + cols[None, :] * stride_s + dims[:, None]
        v_ptrs = v_ptr + base + cols[:, None] * stride_s + dims[None, :]

        log2_scale = softmax_scale * 1.4426950408889634  # log2(e) folded into the scale
        row_max = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
        row_sum = tl.zeros([BLOCK_M], dtype=tl.float32)
        out = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)

        for start in range(0, seq_kv, BLOCK_N):
            kt = tl.load(kt_ptrs)
            s = tl.dot(q, kt)
            new_max = tl.maximum(row_max, tl.max(s, 1) * log2_scale)
            p = tl.math.exp2(s * log2_scale - new_max[:, None])
            correction = tl.math.exp2(row_max - new_max)
            row_sum = row_sum * correction + tl.sum(p, 1)
            out = out * correction[:, None]
            v = tl.load(v_ptrs)
            out = tl.dot(p.to(v.dtype), v, out)
            row_max = new_max
            kt_ptrs += BLOCK_N * stride_s
            v_ptrs += BLOCK_N * stride_s

        out = out / row_sum[:, None]
        tl.store(o_ptr + base + rows[:, None] * stride_s + dims[None, :], out.to(o_ptr.dtype.element_ty))
        # LSE in natural log: (m + log2 l) * ln 2.
        tl.store(lse_ptr + bh * seq_q + rows, (row_max + tl.math.log2(row_sum)) * 0.6931471805599453)

    return attn_fwd


def fail(msg, code=1):
    print(f"triton_attention_fwd: error: {msg}", file=sys.stderr)
    sys.exit(code)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 epilog="Exit codes: 0 written; 1 the compile failed; 2 bad input.")
    ap.add_argument("--out", required=True, help="output folder (created if missing)")
    ap.add_argument("--head-dim", type=int, default=128, choices=[64, 128, 256])
    ap.add_argument("--dtype", default="bf16", choices=["bf16", "fp16"])
    ap.add_argument("--block-m", type=int, default=128, choices=[64, 128], help="query rows per program (default 128)")
    ap.add_argument("--block-n", type=int, default=64, choices=[32, 64, 128], help="keys per loop step (default 64)")
    ap.add_argument("--num-warps", type=int, default=8, choices=[4, 8], help="default 8: two warpgroups")
    ap.add_argument("--num-stages", type=int, default=3, choices=[1, 2, 3, 4, 5],
                    help="software-pipelining depth of the K/V loads (default 3)")
    args = ap.parse_args()
    try:
        import triton
        from triton.backends.compiler import GPUTarget
    except ImportError as e:
        fail(f"cannot import triton ({e}): put Triton on PYTHONPATH (scripts/attention_sass_compare.sh installs "
             "it into .tools/triton)", 2)
    os.makedirs(args.out, exist_ok=True)
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(os.path.abspath(args.out), "triton-cache"))
    fn = kernel()
    ptr = f"*{args.dtype}"
    sig = {"q_ptr": ptr, "k_ptr": ptr, "v_ptr": ptr, "o_ptr": ptr, "lse_ptr": "*fp32",
           "stride_b": "i32", "stride_h": "i32", "stride_s": "i32", "heads": "i32", "seq_q": "i32",
           "seq_kv": "i32", "softmax_scale": "fp32",
           "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr", "BLOCK_N": "constexpr"}
    # What a launch on contiguous, aligned tensors tells the JIT: pointers 16-byte aligned, strides
    # and lengths multiples of 16 (stride_s == head_dim).
    attrs = {(i,): [["tt.divisibility", 16]] for i in range(11)}
    src = triton.compiler.ASTSource(fn, sig, attrs=attrs, constexprs={
        "HEAD_DIM": args.head_dim, "BLOCK_M": args.block_m, "BLOCK_N": args.block_n})
    try:
        compiled = triton.compile(src, target=GPUTarget("cuda", 90, 32),
                                  options={"num_warps": args.num_warps, "num_stages": args.num_stages})
    except Exception as e:  # Triton raises CompilationError and assorted others
        fail(f"triton.compile failed: {type(e).__name__}: {e}")
    with open(os.path.join(args.out, "triton_attention.ptx"), "w") as f:
        f.write(compiled.asm["ptx"])
    with open(os.path.join(args.out, "triton_attention.triton.cubin"), "wb") as f:
        f.write(compiled.asm["cubin"])
    md = compiled.metadata
    info = {"kernel": md.name, "triton": triton.__version__, "head_dim": args.head_dim, "dtype": args.dtype,
            "block_m": args.block_m, "block_n": args.block_n, "num_warps": md.num_warps,
            "num_stages": md.num_stages, "threads": md.num_warps * 32, "shared_bytes": md.shared,
            "ptx_version": getattr(md, "ptx_version", None)}
    with open(os.path.join(args.out, "triton_attention.json"), "w") as f:
        json.dump(info, f, indent=2)
    print(f"triton_attention_fwd: {md.name}: BLOCK_M {args.block_m} BLOCK_N {args.block_n} d{args.head_dim} "
          f"{args.dtype}, {md.num_warps} warps, {md.num_stages} stages, {md.shared} bytes smem -> {args.out}")


if __name__ == "__main__":
    main()
