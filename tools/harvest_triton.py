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


# Kernels added with the second harvest (below the first ones, so that those keep their
# line numbers and hence their PTX).

from triton.language.extra.cuda import libdevice   # noqa: E402


@triton.jit
def flash_attn_fwd(q_ptr, k_ptr, v_ptr, o_ptr, seq_len, sm_scale, HEAD: tl.constexpr,
                   BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    base = tl.program_id(1) * seq_len * HEAD
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rd = tl.arange(0, HEAD)
    q = tl.load(q_ptr + base + rm[:, None] * HEAD + rd[None, :])
    m_i = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l_i = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD], tl.float32)
    scale = sm_scale * 1.4426950408889634
    hi = (tl.program_id(0) + 1) * BLOCK_M if CAUSAL else seq_len
    for start_n in range(0, hi, BLOCK_N):
        rn = start_n + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + base + rn[None, :] * HEAD + rd[:, None])
        qk = tl.dot(q, kt) * scale
        if CAUSAL:
            qk = tl.where(rm[:, None] >= rn[None, :], qk, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(qk, 1))
        p = tl.math.exp2(qk - m_new[:, None])
        alpha = tl.math.exp2(m_i - m_new)
        l_i = l_i * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + base + rn[:, None] * HEAD + rd[None, :])
        acc = acc * alpha[:, None] + tl.dot(p.to(tl.float16), v)
        m_i = m_new
    tl.store(o_ptr + base + rm[:, None] * HEAD + rd[None, :], (acc / l_i[:, None]).to(tl.float16))


@triton.jit
def matmul_masked(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_bk, stride_cm,
                  BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.int32 if c_ptr.dtype.element_ty == tl.int32
                   else tl.float32)
    for k0 in range(0, tl.cdiv(K, BLOCK_K)):
        rk = k0 * BLOCK_K + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * stride_am + rk[None, :],
                    mask=(rm[:, None] < M) & (rk[None, :] < K), other=0)
        b = tl.load(b_ptr + rk[:, None] * stride_bk + rn[None, :],
                    mask=(rk[:, None] < K) & (rn[None, :] < N), other=0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :], acc.to(c_ptr.dtype.element_ty),
             mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, NUM_PROGRAMS: tl.constexpr,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    tiles_n = tl.cdiv(N, BLOCK_N)
    for tile in range(tl.program_id(0), tl.cdiv(M, BLOCK_M) * tiles_n, NUM_PROGRAMS):
        rm = (tile // tiles_n) * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = (tile % tiles_n) * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for k0 in range(0, K, BLOCK_K):
            a = tl.load(a_ptr + rm[:, None] * K + (k0 + rk)[None, :])
            b = tl.load(b_ptr + (k0 + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(a, b)
        tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def _welford_combine(mean1, m2_1, n1, mean2, m2_2, n2):
    n = n1 + n2
    delta = mean2 - mean1
    w = tl.where(n == 0.0, 0.0, n2 / n)
    return mean1 + delta * w, m2_1 + m2_2 + delta * delta * n1 * w, n


@triton.jit
def welford_rows(x_ptr, mean_ptr, var_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=m, other=0.0)
    mean, m2, n = tl.reduce((x, tl.zeros_like(x), m.to(tl.float32)), 0, _welford_combine)
    tl.store(mean_ptr + row, mean)
    tl.store(var_ptr + row, m2 / n)


@triton.jit
def atomics_mix(x_ptr, fmax_ptr, fmin_ptr, xchg_ptr, old_ptr, cas_ptr, cas_old_ptr, n,
                BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.atomic_max(fmax_ptr + offs % 8, x, mask=m)
    tl.atomic_min(fmin_ptr + offs % 8, x, mask=m)
    tl.store(old_ptr + offs, tl.atomic_xchg(xchg_ptr + offs, x * 2.0, mask=m), mask=m)
    want = offs % 3
    old = tl.atomic_cas(cas_ptr + offs, want, want + 100)
    tl.store(cas_old_ptr + offs, old)


@triton.jit
def libdevice_math(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    r = libdevice.erf(x) + libdevice.pow(tl.abs(x) + 0.5, 1.7) + libdevice.tanh(x)
    r += libdevice.log1p(tl.abs(x)) + libdevice.exp(x * 0.5) + libdevice.atan2(x, 1.5)
    r += libdevice.expm1(x * 0.25) + libdevice.rint(x * 3.0)
    tl.store(out_ptr + offs, r, mask=m)


@triton.jit
def float64_ops(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=1.0)
    y = tl.load(y_ptr + offs, mask=m, other=1.0)
    r = x * y + x / (tl.abs(y) + 1.0) + tl.sqrt(tl.abs(x)) - tl.minimum(x, y)
    r += tl.floor(x) + libdevice.exp(x * 0.1) + (x > y).to(tl.float64)
    tl.store(out_ptr + offs, r, mask=m)


@triton.jit
def int64_rows(x_ptr, out_ptr, stride_row, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    m = cols < n_cols
    x = tl.load(x_ptr + row * stride_row + cols, mask=m, other=1)
    r = (x * 0x100000001) >> 7
    r += x // 13 + x % 13 + tl.maximum(x, -x) + (x.to(tl.uint64) >> 3).to(tl.int64)
    tl.store(out_ptr + row * stride_row + cols, r, mask=m)


@triton.jit
def nan_where(x_ptr, y_ptr, max_ptr, min_ptr, sel_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(max_ptr + offs, tl.maximum(x, y, propagate_nan=tl.PropagateNan.ALL), mask=m)
    tl.store(min_ptr + offs, tl.minimum(x, y), mask=m)
    s = tl.where(x != x, 0.0, tl.where(y > 0, x, float("nan")))
    tl.store(sel_ptr + offs, s, mask=m)


@triton.jit
def bf16_elementwise(x_ptr, y_ptr, out_ptr, max_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.load(y_ptr + offs, mask=m)
    tl.store(out_ptr + offs, x * y + x - y, mask=m)
    tl.store(max_ptr + offs, tl.maximum(x, y), mask=m)


@triton.jit
def sort_flip(x_ptr, sorted_ptr, flipped_ptr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * BLOCK + cols)
    tl.store(sorted_ptr + row * BLOCK + cols, tl.sort(x, 0, descending=True))
    tl.store(flipped_ptr + row * BLOCK + cols, tl.flip(x, 0))


@triton.jit
def block_histogram(x_ptr, hist_ptr, BINS: tl.constexpr, BLOCK: tl.constexpr):
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK))
    tl.store(hist_ptr + tl.program_id(0) * BINS + tl.arange(0, BINS), tl.histogram(x, BINS))


@triton.jit
def gather_rows(x_ptr, idx_ptr, out_ptr, R: tl.constexpr, C: tl.constexpr):
    rows = tl.arange(0, R)
    cols = tl.arange(0, C)
    x = tl.load(x_ptr + rows[:, None] * C + cols[None, :])
    idx = tl.load(idx_ptr + rows[:, None] * C + cols[None, :])
    tl.store(out_ptr + rows[:, None] * C + cols[None, :], tl.gather(x, idx, 1))


@triton.jit
def permute_join(x_ptr, perm_ptr, join_ptr, A: tl.constexpr, B: tl.constexpr, C: tl.constexpr):
    ia = tl.arange(0, A)
    ib = tl.arange(0, B)
    ic = tl.arange(0, C)
    x = tl.load(x_ptr + ia[:, None, None] * B * C + ib[None, :, None] * C + ic[None, None, :])
    p = tl.permute(x, (2, 0, 1))          # [C, A, B]
    tl.store(perm_ptr + ic[:, None, None] * A * B + ia[None, :, None] * B + ib[None, None, :], p)
    flat = tl.reshape(x, [A * B, C])
    lo, hi = tl.split(tl.reshape(flat, [A * B, C // 2, 2]))
    j = tl.join(hi, lo * 2.0)             # [A*B, C//2, 2]
    r = tl.arange(0, A * B)
    h = tl.arange(0, C // 2)
    t = tl.arange(0, 2)
    tl.store(join_ptr + r[:, None, None] * C + h[None, :, None] * 2 + t[None, None, :], j)


@triton.jit
def scan_max(x_ptr, out_ptr, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + tl.program_id(0) * BLOCK + cols)
    tl.store(out_ptr + tl.program_id(0) * BLOCK + cols, tl.associative_scan(x, 0, _max_combine))


@triton.jit
def _max_combine(a, b):
    return tl.maximum(a, b)


@triton.jit
def asm_barrier(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m, other=0)
    y = tl.inline_asm_elementwise("shf.l.wrap.b32 $0, $1, $1, 7;", "=r,r", [x], dtype=tl.uint32,
                                  is_pure=True, pack=1)
    tl.debug_barrier()
    z = tl.inline_asm_elementwise("prmt.b32 $0, $1, 0, 0x0123;", "=r,r", [y], dtype=tl.uint32,
                                  is_pure=True, pack=1)
    tl.store(out_ptr + offs, z, mask=m)


@triton.jit
def fp8_casts(x_ptr, e4_ptr, e5_ptr, back_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    tl.store(e4_ptr + offs, x.to(tl.float8e4nv), mask=m)
    e5 = x.to(tl.float8e5)
    tl.store(e5_ptr + offs, e5, mask=m)
    tl.store(back_ptr + offs, e5.to(tl.float32), mask=m)


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
    # Second harvest.
    dict(name="flash_attn_fwd", fn=flash_attn_fwd,
         constexprs={"HEAD": 32, "BLOCK_M": 32, "BLOCK_N": 32, "CAUSAL": False}, warps=4,
         stages=2, grid=[2, 2, 1],
         params=[_a("q", "float16", 2 * 64 * 32, "randn"), _a("k", "float16", 2 * 64 * 32, "randn"),
                 _a("v", "float16", 2 * 64 * 32, "randn"),
                 _a("o", "float16", 2 * 64 * 32, "zeros", "out"), _s("seq_len", "i32", 64),
                 _s("sm_scale", "fp32", 0.25)]),
    dict(name="flash_attn_causal", fn=flash_attn_fwd,
         constexprs={"HEAD": 16, "BLOCK_M": 16, "BLOCK_N": 16, "CAUSAL": True}, warps=1,
         stages=3, grid=[4, 1, 1],
         params=[_a("q", "float16", 64 * 16, "randn"), _a("k", "float16", 64 * 16, "randn"),
                 _a("v", "float16", 64 * 16, "randn"), _a("o", "float16", 64 * 16, "zeros", "out"),
                 _s("seq_len", "i32", 64), _s("sm_scale", "fp32", 0.5)]),
    dict(name="matmul_masked", fn=matmul_masked,
         constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, warps=4, stages=3,
         grid=[2, 1, 1],
         params=[_a("a", "float16", 40 * 50, "randn"), _a("b", "float16", 50 * 24, "randn"),
                 _a("c", "float32", 40 * 24, "zeros", "out"), _s("M", "i32", 40),
                 _s("N", "i32", 24), _s("K", "i32", 50), _s("stride_am", "i32", 50),
                 _s("stride_bk", "i32", 24), _s("stride_cm", "i32", 24)]),
    dict(name="matmul_int8", fn=matmul_masked,
         constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, warps=4, stages=2,
         grid=[1, 1, 1],
         params=[_a("a", "int8", 32 * 80, "ints:-128:128"), _a("b", "int8", 80 * 32, "ints:-128:128"),
                 _a("c", "int32", 32 * 32, "zeros", "out"), _s("M", "i32", 32),
                 _s("N", "i32", 32), _s("K", "i32", 80), _s("stride_am", "i32", 80),
                 _s("stride_bk", "i32", 32), _s("stride_cm", "i32", 32)]),
    dict(name="matmul_fp8", fn=matmul,
         constexprs={"BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, warps=4, stages=2,
         grid=[1, 1, 1],
         params=[_a("a", "float8e4nv", 32 * 64, "randn"), _a("b", "float8e4nv", 64 * 32, "randn"),
                 _a("c", "float32", 32 * 32, "zeros", "out"), _s("M", "i32", 32),
                 _s("N", "i32", 32), _s("K", "i32", 64), _s("stride_am", "i32", 64),
                 _s("stride_bk", "i32", 32), _s("stride_cm", "i32", 32)]),
    dict(name="matmul_w8s4", fn=matmul, constexprs={"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32},
         warps=8, stages=4, grid=[1, 1, 1],
         params=[_a("a", "float16", 64 * 128, "randn"), _a("b", "float16", 128 * 64, "randn"),
                 _a("c", "float16", 64 * 64, "zeros", "out"), _s("M", "i32", 64),
                 _s("N", "i32", 64), _s("K", "i32", 128), _s("stride_am", "i32", 128),
                 _s("stride_bk", "i32", 64), _s("stride_cm", "i32", 64)]),
    dict(name="matmul_persistent", fn=matmul_persistent,
         constexprs={"NUM_PROGRAMS": 2, "BLOCK_M": 32, "BLOCK_N": 32, "BLOCK_K": 32}, warps=4,
         stages=2, grid=[2, 1, 1],
         params=[_a("a", "float16", 64 * 32, "randn"), _a("b", "float16", 32 * 64, "randn"),
                 _a("c", "float32", 64 * 64, "zeros", "out"), _s("M", "i32", 64),
                 _s("N", "i32", 64), _s("K", "i32", 32)]),
    dict(name="welford_rows", fn=welford_rows, constexprs={"BLOCK": 128}, warps=4, grid=[4, 1, 1],
         params=[_a("x", "float32", 4 * 100), _a("mean", "float32", 4, "zeros", "out"),
                 _a("var", "float32", 4, "zeros", "out"), _s("n_cols", "i32", 100)]),
    dict(name="atomics_mix", fn=atomics_mix, constexprs={"BLOCK": 128}, warps=4, grid=[3, 1, 1],
         params=[_a("x", "float32", 300), _a("fmax", "float32", 8, "rand", "inout"),
                 _a("fmin", "float32", 8, "rand", "inout"), _a("xchg", "float32", 300, "rand", "inout"),
                 _a("old", "float32", 300, "zeros", "out"), _a("cas", "int32", 384, "ints:0:3", "inout"),
                 _a("cas_old", "int32", 384, "zeros", "out"), _s("n", "i32", 300)]),
    dict(name="libdevice_math", fn=libdevice_math, constexprs={"BLOCK": 256}, warps=4,
         grid=[2, 1, 1],
         params=[_a("x", "float32", 500), _a("out", "float32", 500, "zeros", "out"),
                 _s("n", "i32", 500)]),
    dict(name="float64_ops", fn=float64_ops, constexprs={"BLOCK": 128}, warps=4, grid=[3, 1, 1],
         params=[_a("x", "float64", 300), _a("y", "float64", 300),
                 _a("out", "float64", 300, "zeros", "out"), _s("n", "i32", 300)]),
    dict(name="int64_rows", fn=int64_rows, constexprs={"BLOCK": 128}, warps=2, grid=[3, 1, 1],
         params=[_a("x", "int64", 300, "ints:-1099511627776:1099511627776"),
                 _a("out", "int64", 300, "zeros", "out"), _s("stride_row", "i64", 100),
                 _s("n_cols", "i32", 70)]),
    dict(name="nan_where", fn=nan_where, constexprs={"BLOCK": 128}, warps=2, grid=[3, 1, 1],
         params=[_a("x", "float32", 300, "rand_nan"), _a("y", "float32", 300, "rand_nan"),
                 _a("max", "float32", 300, "zeros", "out"), _a("min", "float32", 300, "zeros", "out"),
                 _a("sel", "float32", 300, "zeros", "out"), _s("n", "i32", 300)]),
    dict(name="bf16_elementwise", fn=bf16_elementwise, constexprs={"BLOCK": 256}, warps=2,
         grid=[2, 1, 1],
         params=[_a("x", "bfloat16", 500), _a("y", "bfloat16", 500),
                 _a("out", "bfloat16", 500, "zeros", "out"), _a("max", "bfloat16", 500, "zeros", "out"),
                 _s("n", "i32", 500)]),
    dict(name="sort_flip", fn=sort_flip, constexprs={"BLOCK": 64}, warps=2, grid=[2, 1, 1],
         params=[_a("x", "float32", 128), _a("sorted", "float32", 128, "zeros", "out"),
                 _a("flipped", "float32", 128, "zeros", "out")]),
    dict(name="block_histogram", fn=block_histogram, constexprs={"BINS": 16, "BLOCK": 256},
         warps=4, grid=[2, 1, 1],
         params=[_a("x", "int32", 512, "ints:0:16"), _a("hist", "int32", 32, "zeros", "out")]),
    dict(name="gather_rows", fn=gather_rows, constexprs={"R": 16, "C": 32}, warps=2,
         grid=[1, 1, 1],
         params=[_a("x", "float32", 16 * 32), _a("idx", "int32", 16 * 32, "ints:0:32"),
                 _a("out", "float32", 16 * 32, "zeros", "out")]),
    dict(name="permute_join", fn=permute_join, constexprs={"A": 4, "B": 8, "C": 16}, warps=4,
         grid=[1, 1, 1],
         params=[_a("x", "float32", 512), _a("perm", "float32", 512, "zeros", "out"),
                 _a("join", "float32", 512, "zeros", "out")]),
    dict(name="scan_max", fn=scan_max, constexprs={"BLOCK": 256}, warps=4, grid=[2, 1, 1],
         params=[_a("x", "float32", 512), _a("out", "float32", 512, "zeros", "out")]),
    dict(name="asm_barrier", fn=asm_barrier, constexprs={"BLOCK": 256}, warps=4, grid=[2, 1, 1],
         params=[_a("x", "uint32", 500, "ints:0:4294967296"), _a("out", "uint32", 500, "zeros", "out"),
                 _s("n", "i32", 500)]),
    dict(name="fp8_casts", fn=fp8_casts, constexprs={"BLOCK": 256}, warps=2, grid=[2, 1, 1],
         params=[_a("x", "float32", 500), _a("e4", "float8e4nv", 500, "zeros", "out"),
                 _a("e5", "float8e5", 500, "zeros", "out"), _a("back", "float32", 500, "zeros", "out"),
                 _s("n", "i32", 500)]),
]

_TTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16", "int32": "i32",
           "uint8": "u8", "float64": "fp64", "int64": "i64", "int8": "i8", "uint32": "u32",
           "float8e4nv": "fp8e4nv", "float8e5": "fp8e5"}


# Triton writes the jit functions' source file into the PTX (`.file 1 "<path>"`), taken from
# the function's code object. So that the corpus does not depend on where the checkout lies,
# each kernel (and every jit function it calls) is compiled from a copy whose code object names
# this file by its path inside the repository, with the source served from linecache.
import linecache                                   # noqa: E402  (here, not above: the
import types                                       # noqa: E402  kernels keep their lines)
from triton.runtime.jit import JITFunction         # noqa: E402

SOURCE_NAME = "tools/harvest_triton.py"
_renamed: dict = {}


def _fixed_name(jit_fn):
    """`jit_fn` re-jitted from a copy of its function whose file is SOURCE_NAME."""
    if jit_fn in _renamed:
        return _renamed[jit_fn]
    if SOURCE_NAME not in linecache.cache:
        lines = Path(__file__).read_text().splitlines(keepends=True)
        linecache.cache[SOURCE_NAME] = (sum(map(len, lines)), None, lines, SOURCE_NAME)
    fn = jit_fn.fn
    namespace = dict(fn.__globals__)
    copy = types.FunctionType(fn.__code__.replace(co_filename=SOURCE_NAME), namespace,
                              fn.__name__, fn.__defaults__, fn.__closure__)
    copy.__module__, copy.__qualname__ = fn.__module__, fn.__qualname__
    _renamed[jit_fn] = renamed = triton.jit(copy)
    for key, value in namespace.items():      # the jit functions it calls, renamed alike
        if isinstance(value, JITFunction):
            namespace[key] = _fixed_name(value)
    return renamed


def compile_ptx(spec: dict) -> tuple[str, dict]:
    """Triton's PTX for one kernel, and what its launch needs from the compiled metadata."""
    fn = _fixed_name(spec["fn"])
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
            if p["ttype"] in ("i32", "i64") and p["value"] % 16 == 0:
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
