"""Harvest the Triton PTX corpus: the PTX Triton writes for sm_89 for a spread of kernels.

Triton is not a dependency of ptx2sass (its wheel is over a gigabyte): run this file with an
interpreter that has the pinned Triton installed, e.g.

    python3 -m venv /tmp/tritonenv && /tmp/tritonenv/bin/pip install triton==3.9.0
    /tmp/tritonenv/bin/python tools/harvest_triton.py [--out tests/corpus/triton]

No GPU is needed: each kernel is compiled with `triton.compile` for
`GPUTarget("cuda", 89, 32)`, stopping at the PTX stage output, with the pointer and
size arguments marked divisible by 16 as Triton's launcher marks them at run time (that is
what makes Triton write vector loads). The kernels are our own, written to cover what Triton
programs are made of: masked element-wise code, row reductions (softmax, layer norm,
argmax), scans, tensor-core matmuls with software pipelining (cp.async, ldmatrix,
mma.sync), atomics, integer arithmetic, libdevice math, layout conversions through shared
memory, random numbers (Philox) and low-precision casts.

Writes `<name>.ptx` per kernel and `manifest.json` with how to launch each (grid, threads
per block, dynamic shared bytes, parameters; Triton appends two scratch pointers that these
kernels never use) and how to build the inputs. The NumPy references live in
tests/test_triton_corpus.py, written from the kernels' meaning, not from any output.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "corpus" / "triton"
PINNED_TRITON = "3.9.0"

os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")   # Triton 3.9's default, said aloud

import triton                       # noqa: E402  (only this tool imports Triton)
import triton.language as tl        # noqa: E402
from triton.backends.compiler import GPUTarget   # noqa: E402
from triton.compiler import ASTSource            # noqa: E402


# Kernels -----------------------------------------------------------------------------------

@triton.jit
def vec_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


@triton.jit
def saxpy_f16(x_ptr, y_ptr, out_ptr, a, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m).to(tl.float32)
    y = tl.load(y_ptr + offs, mask=m).to(tl.float32)
    tl.store(out_ptr + offs, (a * x + y).to(tl.float16), mask=m)


@triton.jit
def softmax_rows(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=-float("inf"))
    x = x - tl.max(x, axis=0)
    e = tl.exp(x)
    tl.store(out_ptr + row * stride + cols, e / tl.sum(e, axis=0), mask=m)


@triton.jit
def layer_norm(x_ptr, w_ptr, b_ptr, out_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=m, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    d = tl.where(m, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n_cols + eps)
    w = tl.load(w_ptr + cols, mask=m)
    b = tl.load(b_ptr + cols, mask=m)
    tl.store(out_ptr + row * stride + cols, d * rstd * w + b, mask=m)


@triton.jit
def row_argmax(x_ptr, out_ptr, stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * stride + cols, mask=cols < n_cols, other=-float("inf"))
    tl.store(out_ptr + row, tl.argmax(x, axis=0))


@triton.jit
def column_sum(x_ptr, out_ptr, n_rows, n_cols, BLOCK_R: tl.constexpr, BLOCK_C: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_C + tl.arange(0, BLOCK_C)
    acc = tl.zeros([BLOCK_C], dtype=tl.float32)
    for r0 in range(0, n_rows, BLOCK_R):
        rows = r0 + tl.arange(0, BLOCK_R)
        m = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
        acc += tl.sum(tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :], mask=m, other=0.0), axis=0)
    tl.store(out_ptr + cols, acc, mask=cols < n_cols)


@triton.jit
def cumsum_rows(x_ptr, out_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    tl.store(out_ptr + row * BLOCK + cols, tl.cumsum(tl.load(x_ptr + row * BLOCK + cols), axis=0))


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
           BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        a = tl.load(a_ptr + rm[:, None] * stride_am + (k0 + rk)[None, :])
        b = tl.load(b_ptr + (k0 + rk)[:, None] * stride_bk + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty))


@triton.jit
def histogram(x_ptr, hist_ptr, n, BINS: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    v = tl.load(x_ptr + offs, mask=m, other=0)
    tl.atomic_add(hist_ptr + (v % BINS), 1, mask=m)


@triton.jit
def int_mix(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1)
    y = tl.load(y_ptr + offs, mask=m, other=1)
    r = (x * 3 + y) // 7 + (x % 5) - (y >> 2) + (x & y) - (x ^ 0x55)
    r = tl.where(x > y, tl.maximum(r, y), tl.minimum(r, x))
    tl.store(out_ptr + offs, r, mask=m)


@triton.jit
def unary_math(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    r = tl.sin(x) + tl.cos(x) * tl.exp2(x * 0.25) + tl.log(tl.abs(x) + 1.0) + tl.sqrt(tl.abs(x))
    r += tl.sigmoid(x) + tl.math.rsqrt(tl.abs(x) + 0.5) + tl.floor(x) * tl.fdiv(x, 3.0)
    tl.store(out_ptr + offs, r, mask=m)


@triton.jit
def transpose(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + rows[:, None] * n_cols + cols[None, :])
    tl.store(out_ptr + cols[:, None] * n_rows + rows[None, :], tl.trans(x))


@triton.jit
def dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    keep = tl.rand(seed, offs) > p
    tl.store(out_ptr + offs, tl.where(keep, x / (1 - p), 0.0), mask=m)


@triton.jit
def casts(x_ptr, h_ptr, bf_ptr, f8_ptr, i_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(h_ptr + offs, x.to(tl.float16), mask=m)
    tl.store(bf_ptr + offs, x.to(tl.bfloat16), mask=m)
    tl.store(f8_ptr + offs, x.to(tl.float8e4nv).to(tl.uint8, bitcast=True), mask=m)
    tl.store(i_ptr + offs, x.to(tl.int32), mask=m)


# Which kernels, with which constants, and how to launch them. Arrays: (name, dtype, shape,
# init, access); init "rand" = uniform [-4, 4), "randn" = normal, "ints:A:B" = integers in
# [A, B), "zeros". Scalars: (name, triton type, value).
def _a(name, dtype, count, init="rand", access="in"):
    return {"name": name, "kind": "buffer", "dtype": dtype, "count": count, "init": init,
            "access": access}


def _s(name, ttype, value):
    return {"name": name, "kind": "scalar", "ttype": ttype, "value": value}


KERNELS = [
    dict(name="vec_add", fn=vec_add, constexprs={"BLOCK": 1024}, warps=4, grid=[4, 1, 1],
         params=[_a("x", "float32", 4000), _a("y", "float32", 4000),
                 _a("out", "float32", 4000, "zeros", "out"), _s("n", "i32", 4000)]),
    dict(name="saxpy_f16", fn=saxpy_f16, constexprs={"BLOCK": 512}, warps=4, grid=[2, 1, 1],
         params=[_a("x", "float16", 1000), _a("y", "float16", 1000),
                 _a("out", "float16", 1000, "zeros", "out"), _s("a", "fp32", 1.5),
                 _s("n", "i32", 1000)]),
    dict(name="softmax_rows", fn=softmax_rows, constexprs={"BLOCK": 128}, warps=4,
         grid=[8, 1, 1],
         params=[_a("x", "float32", 8 * 100), _a("out", "float32", 8 * 100, "zeros", "out"),
                 _s("stride", "i32", 100), _s("n_cols", "i32", 100)]),
    dict(name="softmax_rows_w1", fn=softmax_rows, constexprs={"BLOCK": 256}, warps=1,
         grid=[4, 1, 1],
         params=[_a("x", "float32", 4 * 256), _a("out", "float32", 4 * 256, "zeros", "out"),
                 _s("stride", "i32", 256), _s("n_cols", "i32", 256)]),
    dict(name="layer_norm", fn=layer_norm, constexprs={"BLOCK": 256}, warps=4, grid=[4, 1, 1],
         params=[_a("x", "float32", 4 * 200), _a("w", "float32", 200), _a("b", "float32", 200),
                 _a("out", "float32", 4 * 200, "zeros", "out"), _s("stride", "i32", 200),
                 _s("n_cols", "i32", 200), _s("eps", "fp32", 1e-5)]),
    dict(name="row_argmax", fn=row_argmax, constexprs={"BLOCK": 64}, warps=2, grid=[8, 1, 1],
         params=[_a("x", "float32", 8 * 50), _a("out", "int32", 8, "zeros", "out"),
                 _s("stride", "i32", 50), _s("n_cols", "i32", 50)]),
    dict(name="column_sum", fn=column_sum, constexprs={"BLOCK_R": 16, "BLOCK_C": 64}, warps=4,
         grid=[2, 1, 1],
         params=[_a("x", "float32", 40 * 100), _a("out", "float32", 100, "zeros", "out"),
                 _s("n_rows", "i32", 40), _s("n_cols", "i32", 100)]),
    dict(name="cumsum_rows", fn=cumsum_rows, constexprs={"BLOCK": 256}, warps=4, grid=[2, 1, 1],
         params=[_a("x", "int32", 2 * 256, "ints:-100:100"),
                 _a("out", "int32", 2 * 256, "zeros", "out")]),
    dict(name="matmul_f16", fn=matmul, constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32},
         warps=4, stages=3, grid=[2, 2, 1],
         params=[_a("a", "float16", 64 * 64, "randn"), _a("b", "float16", 64 * 64, "randn"),
                 _a("c", "float32", 64 * 64, "zeros", "out"), _s("M", "i32", 64),
                 _s("N", "i32", 64), _s("K", "i32", 64), _s("stride_am", "i32", 64),
                 _s("stride_bk", "i32", 64), _s("stride_cm", "i32", 64)]),
    dict(name="matmul_bf16", fn=matmul, constexprs={"BLOCK_M": 64, "BLOCK_N": 32, "BLOCK_K": 16},
         warps=4, stages=2, grid=[1, 2, 1],
         params=[_a("a", "bfloat16", 64 * 32, "randn"), _a("b", "bfloat16", 32 * 64, "randn"),
                 _a("c", "float16", 64 * 64, "zeros", "out"), _s("M", "i32", 64),
                 _s("N", "i32", 64), _s("K", "i32", 32), _s("stride_am", "i32", 32),
                 _s("stride_bk", "i32", 64), _s("stride_cm", "i32", 64)]),
    dict(name="matmul_tf32", fn=matmul, constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 16},
         warps=4, stages=2, grid=[1, 1, 1],
         params=[_a("a", "float32", 32 * 32, "randn"), _a("b", "float32", 32 * 32, "randn"),
                 _a("c", "float32", 32 * 32, "zeros", "out"), _s("M", "i32", 32),
                 _s("N", "i32", 32), _s("K", "i32", 32), _s("stride_am", "i32", 32),
                 _s("stride_bk", "i32", 32), _s("stride_cm", "i32", 32)]),
    dict(name="histogram", fn=histogram, constexprs={"BINS": 16, "BLOCK": 256}, warps=4,
         grid=[4, 1, 1],
         params=[_a("x", "int32", 1000, "ints:0:1000"), _a("hist", "int32", 16, "zeros", "inout"),
                 _s("n", "i32", 1000)]),
    dict(name="int_mix", fn=int_mix, constexprs={"BLOCK": 256}, warps=2, grid=[2, 1, 1],
         params=[_a("x", "int32", 500, "ints:-1000:1000"), _a("y", "int32", 500, "ints:1:1000"),
                 _a("out", "int32", 500, "zeros", "out"), _s("n", "i32", 500)]),
    dict(name="unary_math", fn=unary_math, constexprs={"BLOCK": 256}, warps=4, grid=[2, 1, 1],
         params=[_a("x", "float32", 500), _a("out", "float32", 500, "zeros", "out"),
                 _s("n", "i32", 500)]),
    dict(name="transpose", fn=transpose, constexprs={"BLOCK": 32}, warps=4, grid=[2, 2, 1],
         params=[_a("x", "float32", 64 * 64), _a("out", "float32", 64 * 64, "zeros", "out"),
                 _s("n_rows", "i32", 64), _s("n_cols", "i32", 64)]),
    dict(name="dropout", fn=dropout, constexprs={"BLOCK": 512}, warps=4, grid=[2, 1, 1],
         params=[_a("x", "float32", 1000), _a("out", "float32", 1000, "zeros", "out"),
                 _s("n", "i32", 1000), _s("p", "fp32", 0.25), _s("seed", "i32", 1234)]),
    dict(name="casts", fn=casts, constexprs={"BLOCK": 256}, warps=2, grid=[2, 1, 1],
         params=[_a("x", "float32", 500), _a("h", "float16", 500, "zeros", "out"),
                 _a("bf", "bfloat16", 500, "zeros", "out"), _a("f8", "uint8", 500, "zeros", "out"),
                 _a("i", "int32", 500, "zeros", "out"), _s("n", "i32", 500)]),
]

_TTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int32": "i32",
           "uint8": "u8"}


def compile_ptx(spec: dict) -> tuple[str, dict]:
    """Triton's PTX for one kernel, and what its launch needs from the compiled metadata."""
    fn = spec["fn"]
    signature, attrs = {}, {}
    runtime_args = [a for a in fn.arg_names if a not in spec["constexprs"]]
    assert len(runtime_args) == len(spec["params"]), spec["name"]
    for arg, p in zip(runtime_args, spec["params"]):
        i = fn.arg_names.index(arg)
        if p["kind"] == "buffer":
            signature[arg] = "*" + _TTYPES[p["dtype"]]
            attrs[(i,)] = [["tt.divisibility", 16]]
        else:
            signature[arg] = p["ttype"]
            if p["ttype"] == "i32" and p["value"] % 16 == 0:
                attrs[(i,)] = [["tt.divisibility", 16]]   # as Triton's launcher specialises
    for name in spec["constexprs"]:
        signature[name] = "constexpr"
    signature = {a: signature[a] for a in fn.arg_names}
    src = ASTSource(fn=fn, signature=signature, constexprs=spec["constexprs"], attrs=attrs)
    options = {"num_warps": spec["warps"], "num_stages": spec.get("stages", 3)}
    k = triton.compile(src, target=GPUTarget("cuda", 89, 32), options=options)
    return k.asm["ptx"], {"entry": k.metadata.name, "shared": k.metadata.shared,
                          "threads": 32 * k.metadata.num_warps}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    args = ap.parse_args(argv)
    if triton.__version__ != PINNED_TRITON:
        print(f"warning: Triton {triton.__version__}, the corpus pins {PINNED_TRITON}",
              file=sys.stderr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    kernels = []
    for spec in KERNELS:
        ptx, meta = compile_ptx(spec)
        (out / f"{spec['name']}.ptx").write_text(ptx)
        params = [{k: v for k, v in p.items()} for p in spec["params"]]
        params += [{"name": "global_scratch", "kind": "null_pointer"},
                   {"name": "profile_scratch", "kind": "null_pointer"}]
        kernels.append({"file": f"{spec['name']}.ptx", "entry": meta["entry"],
                        "sha256": hashlib.sha256(ptx.encode()).hexdigest(),
                        "triton_kernel": spec["fn"].__name__,
                        "constexprs": spec["constexprs"], "num_warps": spec["warps"],
                        "num_stages": spec.get("stages", 3), "grid": spec["grid"],
                        "block": [meta["threads"], 1, 1],
                        "dynamic_shared_bytes": meta["shared"], "params": params})
        print(f"{spec['name']:<18} {len(ptx.splitlines()):5d} lines, "
              f"shared {meta['shared']:6d} B, {meta['threads']} threads")
    manifest = {"generator": "tools/harvest_triton.py", "triton_version": triton.__version__,
                "arch": "sm_89", "fp_fusion": os.environ["TRITON_DEFAULT_FP_FUSION"] == "1",
                "kernels": kernels}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
