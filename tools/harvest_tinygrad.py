"""Harvest the tinygrad PTX corpus: the kernels tinygrad's PTXRenderer writes for sm_89.

Each entry of `tinygrad_programs()` is a small named tinygrad program. It is scheduled on
tinygrad's NULL device (no GPU needed, nothing runs), every kernel of the schedule is lowered
with a hand-built `PTXRenderer(Target("CUDA", "PTX", "sm_89"))` through
`tinygrad.codegen.to_program`, and the PTX is taken after tinygrad's own `PTXCompiler` has
filled the `.version/.target` placeholders: exactly the text ptxas would receive on a GPU.
Kernels are deduplicated by content and written as `<program>__<entry>.ptx` next to a
`manifest.json` that says how to launch each one (grid, block, parameters) and whether the
pinned ptxas accepts it.

Usage: .venv/bin/python -m tools.harvest_tinygrad [--out tests/corpus/tinygrad]
                                                  [--only PROG[,PROG...]] [--no-ptxas]

The harvest re-executes itself in a clean environment (tinygrad reads dozens of environment
variables, DEBUG, BEAM, TC, NOOPT, ..., that change the generated code), so its output
depends only on this file and the pinned tinygrad release.
"""
from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parent.parent
DEFAULT_OUT = REPO / "tests" / "corpus" / "tinygrad"
ARCH = "sm_89"
PINNED_TINYGRAD = "0.14.0"
_CLEAN_ENV_FLAG = "PTX2SASS_HARVEST_CLEAN_ENV"
# Environment kept in the clean re-execution: nothing tinygrad reads, only what finding the
# interpreter, the oracle and its cache needs.
_KEPT_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "PTX2SASS_CACHE")

# tinygrad's dtype names -> the manifest's (NumPy-style where NumPy has one).
DTYPE_NAMES = {
    "bool": "bool", "char": "int8", "short": "int16", "int": "int32", "long": "int64",
    "uchar": "uint8", "ushort": "uint16", "uint": "uint32", "ulong": "uint64",
    "half": "float16", "bfloat16": "bfloat16", "float": "float32", "double": "float64",
    "fp8e4m3": "float8_e4m3", "fp8e5m2": "float8_e5m2",
}

# What a kernel's PTX shows about the code paths it exercises, found in its text.
PTX_FEATURES = {
    "tensor_core": r"\bmma\.sync\b",
    "barrier": r"\bbar\.sync\b",
    "shared_memory": r"^\s*\.shared\b",
    "vector_load": r"\bld\.(global|shared)\.v[248]\b",
    "vector_store": r"\bst\.(global|shared)\.v[248]\b",
    "loop": r"^\s*LOOP_\w+:",
    "predicated_load": r"@!?%\w+\s+ld\.",
    "f64": r"\.f64\b",
    "f16": r"\.f16\b",
    "int_div": r"\b(div|rem)\.[su](16|32|64)\b",
    "approx_transcendental": r"\b(ex2|lg2|sin|sqrt|rcp)\.approx\b",
    "cvt": r"\bcvt\.(?!s64\.s32\b)",  # other than the address widening every kernel has
}


@dataclass(frozen=True)
class Program:
    """A tinygrad program to harvest: `build` returns the Tensors to realize."""
    name: str
    build: Callable[[], list]
    categories: tuple[str, ...]
    # tinygrad ContextVars set while scheduling and lowering (TC=0, NOOPT=1, ...)
    context: tuple[tuple[str, Any], ...] = ()
    # explicit optimisations (OptOps name, axis, arg) replacing tinygrad's heuristics
    opts: tuple[tuple[str, int, Any], ...] | None = None


def _prepare_environment() -> None:
    os.environ["DEV"] = "NULL"          # schedule without any GPU; nothing is executed
    os.environ["CACHELEVEL"] = "0"      # no tinygrad disk cache: every kernel is lowered afresh


def tinygrad_programs() -> list[Program]:
    """The programs, in harvest order (a kernel met twice keeps the first program's name)."""
    from tinygrad import Tensor, Variable, dtypes

    P = Program
    E = Tensor.empty
    progs: list[Program] = []
    add = progs.append

    all_dtypes = [("bool", dtypes.bool), ("int8", dtypes.int8), ("int16", dtypes.int16),
                  ("int32", dtypes.int32), ("int64", dtypes.int64), ("uint8", dtypes.uint8),
                  ("uint16", dtypes.uint16), ("uint32", dtypes.uint32), ("uint64", dtypes.uint64),
                  ("float16", dtypes.half), ("bfloat16", dtypes.bfloat16),
                  ("float32", dtypes.float32), ("float64", dtypes.float64),
                  ("fp8e4m3", dtypes.fp8e4m3), ("fp8e5m2", dtypes.fp8e5m2)]
    ints = [(n, d) for n, d in all_dtypes if dtypes.is_int(d)]
    floats = [("float16", dtypes.half), ("bfloat16", dtypes.bfloat16),
              ("float32", dtypes.float32), ("float64", dtypes.float64)]
    fp8 = [(n, d) for n, d in all_dtypes if n.startswith("fp8")]

    # ---- elementwise on every dtype: vectorisable, odd-sized (gated), 2-D broadcast ----
    for n, d in all_dtypes:
        add(P(f"add_{n}", lambda d=d: [E(4096, dtype=d) + E(4096, dtype=d)], ("elementwise",)))
        add(P(f"mul_{n}", lambda d=d: [E(33, 17, dtype=d) * E(33, 17, dtype=d)], ("elementwise",)))
        add(P(f"maximum_{n}", lambda d=d: [E(1000, dtype=d).maximum(E(1000, dtype=d))],
              ("elementwise",)))
        add(P(f"cmplt_{n}", lambda d=d: [E(256, dtype=d) < E(256, dtype=d)], ("elementwise",)))
        add(P(f"cmpeq_{n}", lambda d=d: [E(300, dtype=d) == E(300, dtype=d)], ("elementwise",)))
        add(P(f"where_{n}", lambda d=d: [E(512, dtype=dtypes.bool).where(E(512, dtype=d), E(512, dtype=d))],
              ("elementwise", "where_cast_bitcast")))
        add(P(f"bcast_add_{n}", lambda d=d: [E(48, 1, dtype=d) + E(1, 40, dtype=d)], ("elementwise",)))
        add(P(f"sum_{n}", lambda d=d: [E(4096, dtype=d).sum()], ("reduction",)))
        add(P(f"max_axis1_{n}", lambda d=d: [E(64, 100, dtype=d).max(axis=1)], ("reduction",)))
        add(P(f"fill_{n}", lambda d=d: [Tensor.full((96, 3), 1, dtype=d).contiguous()],
              ("elementwise",)))
        if d != dtypes.bool:
            add(P(f"sub_{n}", lambda d=d: [E(4096, dtype=d) - E(4096, dtype=d)], ("elementwise",)))
            add(P(f"neg_{n}", lambda d=d: [-E(777, dtype=d)], ("elementwise",)))
            add(P(f"mulacc_{n}", lambda d=d: [E(1024, dtype=d) * E(1024, dtype=d) + E(1024, dtype=d)],
                  ("elementwise",)))
    # casts: every dtype to and from float32 and int32, plus the narrowing/widening corners
    cast_pairs = [(a, b) for a in all_dtypes for b in all_dtypes
                  if a[0] != b[0] and (a[0] in ("float32", "int32") or b[0] in ("float32", "int32"))]
    cast_pairs += [(a, b) for a in all_dtypes for b in all_dtypes if a[0] != b[0] and
                   {a[0], b[0]} in ({"float16", "float64"}, {"int8", "uint64"}, {"uint8", "int64"},
                                    {"bool", "float16"}, {"bool", "int64"}, {"float16", "int16"},
                                    {"bfloat16", "float16"}, {"float64", "int64"}, {"float64", "uint64"},
                                    {"float64", "uint8"}, {"float16", "uint32"}, {"int16", "uint16"})]
    for (an, ad), (bn, bd) in cast_pairs:
        add(P(f"cast_{an}_to_{bn}", lambda ad=ad, bd=bd: [E(1000, dtype=ad).cast(bd)],
              ("where_cast_bitcast",)))
    for an, bn in [("float32", "int32"), ("float32", "uint32"), ("int32", "float32"),
                   ("uint32", "float32"), ("float16", "int16"), ("float16", "uint16"),
                   ("int16", "float16"), ("float64", "int64"), ("int64", "float64"),
                   ("uint64", "float64"), ("bfloat16", "uint16"), ("uint16", "bfloat16"),
                   ("int8", "uint8"), ("float32", "uint8")]:
        ad, bd = dict(all_dtypes)[an], dict(all_dtypes)[bn]
        # computed first: a bitcast of a stored buffer is only a view, with no kernel
        add(P(f"bitcast_{an}_to_{bn}", lambda ad=ad, bd=bd: [(E(1024, dtype=ad) + E(1024, dtype=ad)).bitcast(bd)],
              ("where_cast_bitcast",)))

    # ---- integer arithmetic: division, modulo, bit operations, shifts ----
    for n, d in ints:
        add(P(f"idiv_{n}", lambda d=d: [E(1000, dtype=d) // E(1000, dtype=d)], ("int_divmod",)))
        add(P(f"mod_{n}", lambda d=d: [E(1000, dtype=d) % E(1000, dtype=d)], ("int_divmod",)))
        add(P(f"idiv_const_{n}", lambda d=d: [E(1000, dtype=d) // 7], ("int_divmod",)))
        add(P(f"bitops_{n}", lambda d=d: [(E(512, dtype=d) & E(512, dtype=d)) | (E(512, dtype=d) ^ 0x55)],
              ("elementwise",)))
        add(P(f"shifts_{n}", lambda d=d: [(E(512, dtype=d) << 3) + (E(512, dtype=d) >> 2)],
              ("elementwise",)))
    for n, d in [("int32", dtypes.int32), ("uint32", dtypes.uint32), ("int64", dtypes.int64)]:
        add(P(f"idiv_const_fast_{n}", lambda d=d: [E(1000, dtype=d) // 7 + E(1000, dtype=d) % 13],
              ("int_divmod",), context=(("DISABLE_FAST_IDIV", 0),)))
    add(P("int64_emulated_add_mul", lambda: [E(256, dtype=dtypes.int64) * E(256, dtype=dtypes.int64) + 3],
          ("elementwise",), context=(("EMULATED_DTYPES", "long"),)))
    add(P("int64_emulated_shift_cmp", lambda: [((E(256, dtype=dtypes.int64) >> 5) < E(256, dtype=dtypes.int64)).where(1, 2).cast(dtypes.int64)],
          ("elementwise",), context=(("EMULATED_DTYPES", "long"),)))

    # ---- float math and transcendental functions ----
    unary = {
        "exp": lambda x: x.exp(), "log": lambda x: x.log(), "sin": lambda x: x.sin(),
        "cos": lambda x: x.cos(), "sqrt": lambda x: x.sqrt(), "reciprocal": lambda x: x.reciprocal(),
        "exp2": lambda x: x.exp2(), "log2": lambda x: x.log2(), "tanh": lambda x: x.tanh(),
        "sigmoid": lambda x: x.sigmoid(), "relu": lambda x: x.relu(), "gelu": lambda x: x.gelu(),
        "abs": lambda x: x.abs(), "floor": lambda x: x.floor(), "ceil": lambda x: x.ceil(),
        "round": lambda x: x.round(), "trunc": lambda x: x.trunc(), "rsqrt": lambda x: x.rsqrt(),
        "isnan": lambda x: x.isnan(), "silu": lambda x: x.silu(),
    }
    for n, d in floats:
        for op, f in unary.items():
            add(P(f"{op}_{n}", lambda d=d, f=f: [f(E(2048, dtype=d))], ("transcendental",)))
        add(P(f"pow_{n}", lambda d=d: [E(2048, dtype=d).pow(E(2048, dtype=d))], ("transcendental",)))
        add(P(f"div_{n}", lambda d=d: [E(2048, dtype=d) / E(2048, dtype=d)], ("transcendental",)))
    for n, d in [("float32", dtypes.float32), ("float64", dtypes.float64), ("float16", dtypes.half)]:
        for op in ("exp", "log", "sin", "sqrt", "exp2"):  # tinygrad's own polynomial versions
            add(P(f"{op}_{n}_software", lambda d=d, f=unary[op]: [f(E(2048, dtype=d))],
                  ("transcendental",), context=(("TRANSCENDENTAL", 2),)))
    for n, d in fp8:
        add(P(f"exp_{n}", lambda d=d: [E(256, dtype=d).exp()], ("transcendental",)))
    add(P("pow_float32_const", lambda: [E(2048).pow(3.0) + E(2048).pow(0.5)], ("transcendental",)))

    # ---- reductions ----
    add(P("sum_large_float32", lambda: [E(1 << 16).sum()], ("reduction",)))
    add(P("sum_axis0_float32", lambda: [E(256, 512).sum(axis=0)], ("reduction",)))
    add(P("sum_axis1_float32", lambda: [E(256, 512).sum(axis=1)], ("reduction",)))
    add(P("sum_odd_float32", lambda: [E(37, 91).sum(axis=1)], ("reduction",)))
    add(P("sum_3d_float32", lambda: [E(8, 16, 32).sum(axis=(0, 2))], ("reduction",)))
    add(P("max_large_float32", lambda: [E(1 << 16).max()], ("reduction",)))
    add(P("min_axis0_int32", lambda: [E(300, 20, dtype=dtypes.int32).min(axis=0)], ("reduction",)))
    add(P("mean_float32", lambda: [E(64, 256).mean(axis=1)], ("reduction",)))
    add(P("mean_float16", lambda: [E(4096, dtype=dtypes.half).mean()], ("reduction",)))
    add(P("var_std_float32", lambda: [E(32, 128).var(axis=1), E(32, 128).std(axis=0)], ("reduction",)))
    add(P("prod_float32", lambda: [E(16, 24).prod(axis=1)], ("reduction",)))
    add(P("argmax_float32", lambda: [E(1000).argmax()], ("reduction",)))
    add(P("argmax_axis1_float32", lambda: [E(64, 100).argmax(axis=1)], ("reduction",)))
    add(P("argmin_int32", lambda: [E(50, 70, dtype=dtypes.int32).argmin(axis=0)], ("reduction",)))
    add(P("any_all_bool", lambda: [E(128, 64, dtype=dtypes.bool).any(axis=1), E(4096, dtype=dtypes.bool).all()],
          ("reduction",)))
    add(P("logsumexp_float32", lambda: [E(32, 200).logsumexp(axis=1)], ("reduction", "transcendental")))
    add(P("sum_int8_to_int32", lambda: [E(4096, dtype=dtypes.int8).sum(dtype=dtypes.int32)], ("reduction",)))
    add(P("sum_float64_axis1", lambda: [E(64, 333, dtype=dtypes.float64).sum(axis=1)], ("reduction",)))
    add(P("sum_square_fused", lambda: [(E(1024, 64) * E(1024, 64)).sum(axis=1).sqrt()], ("reduction",)))

    # ---- matmul: float32, float16 with and without tensor cores, others ----
    def mm(m, k, n, d=dtypes.float32, acc=None):
        return lambda: [E(m, k, dtype=d).matmul(E(k, n, dtype=d), dtype=acc)]
    add(P("matmul_f32_64", mm(64, 64, 64), ("matmul",)))
    add(P("matmul_f32_256", mm(256, 256, 256), ("matmul",)))
    add(P("matmul_f32_odd", mm(33, 65, 17), ("matmul",)))
    add(P("matmul_f32_tall", mm(1024, 32, 8), ("matmul",)))
    add(P("matvec_f32", lambda: [E(1, 1024) @ E(1024, 512)], ("matmul",)))
    add(P("vecmat_f32", lambda: [E(512, 1024) @ E(1024)], ("matmul",)))
    add(P("matmul_f32_batched", lambda: [E(4, 32, 64) @ E(4, 64, 48)], ("matmul",)))
    add(P("matmul_f32_tf32_tc", mm(64, 64, 64), ("matmul", "tensor_core"),
          context=(("ALLOW_TF32", 1),)))
    add(P("matmul_f16_tc", mm(64, 64, 64, dtypes.half), ("matmul", "tensor_core")))
    add(P("matmul_f16_tc_256", mm(256, 128, 256, dtypes.half), ("matmul", "tensor_core")))
    add(P("matmul_f16_tc_acc_f16", mm(64, 64, 64, dtypes.half, dtypes.half), ("matmul", "tensor_core")))
    add(P("matmul_f16_tc_padded", mm(60, 60, 60, dtypes.half), ("matmul", "tensor_core"),
          context=(("TC_OPT", 2),)))
    add(P("matmul_f16_tc_128x64x32", mm(128, 32, 64, dtypes.half), ("matmul", "tensor_core")))
    add(P("matmul_f16_tc_16", mm(16, 16, 16, dtypes.half), ("matmul", "tensor_core")))
    add(P("matmul_f16_tc_padded_acc_f16", mm(50, 40, 30, dtypes.half, dtypes.half), ("matmul", "tensor_core"),
          context=(("TC_OPT", 2),)))
    add(P("matmul_f32_tf32_tc_256", mm(256, 64, 128), ("matmul", "tensor_core"), context=(("ALLOW_TF32", 1),)))
    add(P("matmul_f16_tc_relu_bias", lambda: [(E(64, 64, dtype=dtypes.half) @ E(64, 64, dtype=dtypes.half)
                                               + E(64, dtype=dtypes.half)).relu()], ("matmul", "tensor_core")))
    add(P("matmul_f16_tc_shape_only", mm(64, 64, 64, dtypes.half), ("matmul",), context=(("TC", 2),)))
    add(P("matmul_f16_no_tc", mm(64, 64, 64, dtypes.half), ("matmul",), context=(("TC", 0),)))
    add(P("matmul_f16_no_tc_odd", mm(30, 50, 70, dtypes.half), ("matmul",), context=(("TC", 0),)))
    add(P("matmul_f16_batched_tc", lambda: [E(2, 64, 32, dtype=dtypes.half) @ E(2, 32, 64, dtype=dtypes.half)],
          ("matmul", "tensor_core")))
    add(P("matmul_bf16", mm(32, 32, 32, dtypes.bfloat16), ("matmul",)))
    add(P("matmul_f64", mm(32, 48, 16, dtypes.float64), ("matmul",)))
    add(P("matmul_int32", mm(32, 32, 32, dtypes.int32), ("matmul",)))
    add(P("matmul_int8_acc_int32", mm(32, 64, 32, dtypes.int8, dtypes.int32), ("matmul",)))
    add(P("matmul_f32_noopt", mm(16, 16, 16), ("matmul",), context=(("NOOPT", 1),)))
    add(P("matmul_f32_nolocals", mm(64, 64, 64), ("matmul",), context=(("NOLOCALS", 1),)))
    add(P("matmul_relu_bias", lambda: [(E(64, 128) @ E(128, 32) + E(32)).relu()], ("matmul",)))

    # ---- convolution and pooling ----
    add(P("conv2d_f32", lambda: [E(1, 4, 16, 16).conv2d(E(8, 4, 3, 3))], ("conv2d",)))
    add(P("conv2d_f32_pad_stride", lambda: [E(2, 3, 17, 17).conv2d(E(6, 3, 3, 3), padding=1, stride=2)],
          ("conv2d",)))
    add(P("conv2d_f32_dilated_bias", lambda: [E(1, 8, 12, 12).conv2d(E(8, 8, 3, 3), E(8), dilation=2)],
          ("conv2d",)))
    add(P("conv2d_f32_depthwise", lambda: [E(1, 16, 10, 10).conv2d(E(16, 1, 3, 3), groups=16, padding=1)],
          ("conv2d",)))
    add(P("conv2d_f32_1x1", lambda: [E(4, 32, 8, 8).conv2d(E(64, 32, 1, 1))], ("conv2d",)))
    add(P("conv2d_f16", lambda: [E(1, 16, 16, 16, dtype=dtypes.half).conv2d(E(16, 16, 3, 3, dtype=dtypes.half))],
          ("conv2d",)))
    add(P("conv2d_f16_tc", lambda: [E(1, 16, 16, 16, dtype=dtypes.half).conv2d(E(16, 16, 3, 3, dtype=dtypes.half))],
          ("conv2d", "tensor_core"), context=(("TC_OPT", 2),)))
    add(P("conv1d_f32", lambda: [E(2, 4, 64).conv2d(E(8, 4, 5), padding=2)], ("conv2d",)))
    add(P("conv_transpose2d_f32", lambda: [E(1, 8, 8, 8).conv_transpose2d(E(8, 4, 3, 3), stride=2)],
          ("conv2d",)))
    add(P("max_pool2d_f32", lambda: [E(2, 8, 16, 16).max_pool2d(kernel_size=(2, 2))], ("conv2d", "reduction")))
    add(P("avg_pool2d_f32", lambda: [E(2, 8, 15, 15).avg_pool2d(kernel_size=(3, 3), stride=2)],
          ("conv2d", "reduction")))

    # ---- softmax, normalisation, losses ----
    add(P("softmax_f32", lambda: [E(32, 100).softmax(axis=-1)], ("softmax_layernorm",)))
    add(P("softmax_f32_large", lambda: [E(4, 4096).softmax(axis=-1)], ("softmax_layernorm",)))
    add(P("softmax_f16", lambda: [E(16, 256, dtype=dtypes.half).softmax(axis=-1)], ("softmax_layernorm",)))
    add(P("log_softmax_f32", lambda: [E(8, 1000).log_softmax(axis=1)], ("softmax_layernorm",)))
    add(P("layernorm_f32", lambda: [E(64, 128).layernorm(axis=-1)], ("softmax_layernorm",)))
    add(P("layernorm_affine_f32", lambda: [E(16, 768).layernorm() * E(768) + E(768)], ("softmax_layernorm",)))
    add(P("rmsnorm_f32", lambda: [E(8, 512) * (E(8, 512).square().mean(axis=-1, keepdim=True) + 1e-6).rsqrt()],
          ("softmax_layernorm",)))
    add(P("batchnorm_f32", lambda: [E(4, 16, 8, 8).batchnorm(E(16), E(16), E(16), E(16).rsqrt())],
          ("softmax_layernorm",)))
    add(P("cross_entropy_f32", lambda: [E(32, 10).sparse_categorical_crossentropy(E(32, dtype=dtypes.int32))],
          ("softmax_layernorm", "gather_index")))
    add(P("attention_f32", lambda: [Tensor.scaled_dot_product_attention(E(1, 2, 16, 32), E(1, 2, 16, 32), E(1, 2, 16, 32))],
          ("softmax_layernorm", "matmul")))

    # ---- gather / indexing ----
    add(P("index_tensor_f32", lambda: [E(100, 16)[E(20, dtype=dtypes.int32)]], ("gather_index",)))
    add(P("gather_dim1_f32", lambda: [E(32, 50).gather(1, E(32, 5, dtype=dtypes.int32))], ("gather_index",)))
    add(P("embedding_f16", lambda: [E(512, 64, dtype=dtypes.half)[E(4, 8, dtype=dtypes.int32)]], ("gather_index",)))
    add(P("one_hot_int32", lambda: [E(64, dtype=dtypes.int32).one_hot(10).cast(dtypes.int32)], ("gather_index",)))
    add(P("scatter_f32", lambda: [E(8, 16).scatter(1, E(8, 4, dtype=dtypes.int32), E(8, 4))], ("gather_index",)))
    add(P("index_slice_step", lambda: [E(4096)[::3].contiguous()], ("gather_index",)))
    add(P("index_int64_idx", lambda: [E(256, 4)[E(37, dtype=dtypes.int64)]], ("gather_index",)))

    # ---- cumsum, arange and friends ----
    add(P("cumsum_f32_small", lambda: [E(100).cumsum()], ("cumsum",)))
    add(P("cumsum_f32_large", lambda: [E(5000).cumsum()], ("cumsum",)))
    add(P("cumsum_f32_axis1", lambda: [E(16, 300).cumsum(axis=1)], ("cumsum",)))
    add(P("cumsum_int32", lambda: [E(1000, dtype=dtypes.int32).cumsum()], ("cumsum",)))
    add(P("cummax_f32", lambda: list(E(200).cummax()), ("cumsum",)))
    add(P("cumprod_f32", lambda: [E(64).cumprod(0)], ("cumsum",)))
    add(P("arange_int32", lambda: [Tensor.arange(1000) + E(1000, dtype=dtypes.int32)], ("arange",)))
    add(P("arange_float32_step", lambda: [Tensor.arange(0.5, 100.0, 0.25) * E(398)], ("arange",)))
    add(P("arange_2d_add", lambda: [Tensor.arange(64).reshape(8, 8) + Tensor.arange(8) + E(8, 8, dtype=dtypes.int32)], ("arange",)))
    add(P("eye_f32", lambda: [Tensor.eye(48) * E(48, 48)], ("arange",)))
    add(P("triu_tril_f32", lambda: [E(40, 40).triu(1), E(40, 40).tril()], ("arange",)))
    add(P("linspace_f32", lambda: [Tensor.linspace(-1.0, 1.0, 333) + E(333)], ("arange",)))
    add(P("rand_f32", lambda: [Tensor.rand(1000)], ("random",)))
    add(P("randn_f32", lambda: [Tensor.randn(64, 64)], ("random", "transcendental")))
    add(P("randint_int32", lambda: [Tensor.randint(500, low=0, high=10)], ("random",)))

    # ---- movement ops, fused in kernels ----
    add(P("transpose_f32", lambda: [E(128, 96).T.contiguous()], ("movement",)))
    add(P("permute_3d_f16", lambda: [E(8, 16, 32, dtype=dtypes.half).permute(2, 0, 1).contiguous()], ("movement",)))
    add(P("pad_f32", lambda: [E(30, 30).pad(((1, 2), (3, 4)), value=0.5)], ("movement",)))
    add(P("flip_f32", lambda: [E(64, 33).flip(1).contiguous()], ("movement",)))
    add(P("cat_f32", lambda: [E(10, 8).cat(E(20, 8), E(5, 8))], ("movement",)))
    add(P("stack_int32", lambda: [Tensor.stack(E(64, dtype=dtypes.int32), E(64, dtype=dtypes.int32), dim=1)],
          ("movement",)))
    add(P("repeat_f32", lambda: [E(7, 9).repeat(3, 2).contiguous()], ("movement",)))
    add(P("shrink_expand_f32", lambda: [E(100, 100)[10:50, 20:21].expand(40, 64).contiguous()], ("movement",)))

    # ---- symbolic shapes: scalar variables as kernel parameters ----
    def var(name, lo, hi, val): return Variable(name, lo, hi).bind(val)
    add(P("symbolic_add", lambda: [(E(100)[:var("n", 1, 100, 37)] + 1).contiguous()], ("symbolic", "elementwise")))
    add(P("symbolic_sum", lambda: [E(64, 256)[:, :var("k", 1, 256, 200)].sum(axis=1)], ("symbolic", "reduction")))
    add(P("symbolic_matmul", lambda: [E(64, 32)[:var("m", 1, 64, 48)] @ E(32, 16)], ("symbolic", "matmul")))

    # ---- explicit optimisations: shared-memory group reductions, upcasts, unrolls ----
    add(P("opt_group_sum", lambda: [E(64, 4096).sum(axis=1)], ("reduction",),
          opts=(("GROUP", 0, 16),)))
    add(P("opt_grouptop_sum", lambda: [E(8192).sum()], ("reduction",), opts=(("GROUPTOP", 0, 256),)))
    add(P("opt_grouptop_max_f16", lambda: [E(8192, dtype=dtypes.half).max()], ("reduction",),
          opts=(("GROUPTOP", 0, 128),)))
    add(P("opt_upcast_local_add", lambda: [E(1 << 14) + E(1 << 14)], ("elementwise",),
          opts=(("UPCAST", 0, 4), ("LOCAL", 0, 64))))
    add(P("opt_upcast8_half", lambda: [E(1 << 14, dtype=dtypes.half) * 2], ("elementwise",),
          opts=(("UPCAST", 0, 8), ("LOCAL", 0, 32))))
    add(P("opt_upcast2_f64", lambda: [E(1 << 12, dtype=dtypes.float64) + 1], ("elementwise",),
          opts=(("UPCAST", 0, 2), ("LOCAL", 0, 128))))
    add(P("opt_unroll_sum", lambda: [E(128, 64).sum(axis=1)], ("reduction",), opts=(("UNROLL", 0, 4),)))
    add(P("opt_matmul_locals", mm(64, 64, 64), ("matmul",),
          opts=(("LOCAL", 0, 16), ("LOCAL", 1, 8), ("UPCAST", 0, 2), ("UNROLL", 0, 4))))
    add(P("opt_matmul_group", mm(16, 1024, 16), ("matmul",), opts=(("GROUPTOP", 0, 16), ("LOCAL", 0, 4))))

    # ---- unoptimised kernels (one thread per output, plain loops) ----
    add(P("noopt_add_f32", lambda: [E(4096) + E(4096)], ("elementwise",), context=(("NOOPT", 1),)))
    add(P("noopt_sum_f32", lambda: [E(64, 100).sum(axis=1)], ("reduction",), context=(("NOOPT", 1),)))
    add(P("noopt_softmax_f32", lambda: [E(16, 64).softmax()], ("softmax_layernorm",), context=(("NOOPT", 1),)))
    add(P("noopt_conv2d_f32", lambda: [E(1, 2, 8, 8).conv2d(E(4, 2, 3, 3))], ("conv2d",), context=(("NOOPT", 1),)))
    add(P("nolocals_sum_f32", lambda: [E(1 << 14).sum()], ("reduction",), context=(("NOLOCALS", 1),)))

    # ---- training and small models: an MLP forward + backward, a CNN forward ----
    def mlp_backward():
        x, w1, w2 = E(8, 16), E(16, 32), E(32, 4)
        loss = (x @ w1).relu().matmul(w2).log_softmax().mean()
        return [loss, *loss.gradient(w1, w2)]
    add(P("mlp_forward_backward", mlp_backward, ("matmul", "softmax_layernorm", "backward")))
    def cnn_forward():
        x = E(2, 1, 12, 12).conv2d(E(4, 1, 3, 3)).relu().max_pool2d()
        return [x.flatten(1) @ E(100, 10)]
    add(P("cnn_forward", cnn_forward, ("conv2d", "matmul")))
    return progs


def large_programs() -> list[Program]:
    """Bigger programs for compile-speed work (`--set large`): whole models forward and
    backward, large convolutions and matmuls, reductions with loops; kernels of hundreds to
    thousands of PTX lines, as real workloads give ptxas."""
    from tinygrad import Tensor, dtypes, nn

    P = Program
    E = Tensor.empty
    progs: list[Program] = []
    add = progs.append

    def mm(m, k, n, d=dtypes.float32):
        return lambda: [E(m, k, dtype=d) @ E(k, n, dtype=d)]
    for size in (512, 1024):
        add(P(f"big_matmul_f32_{size}", mm(size, size, size), ("matmul",)))
        add(P(f"big_matmul_f16_tc_{size}", mm(size, size, size, dtypes.half), ("matmul", "tensor_core")))
    add(P("big_matmul_f32_noopt_loops", mm(128, 512, 128), ("matmul",), context=(("NOOPT", 1),)))
    add(P("big_matmul_f16_no_tc", mm(256, 512, 256, dtypes.half), ("matmul",), context=(("TC", 0),)))
    add(P("big_matmul_bf16_tc", mm(256, 256, 256, dtypes.bfloat16), ("matmul", "tensor_core")))
    add(P("big_batched_matmul", lambda: [E(16, 128, 64) @ E(16, 64, 128)], ("matmul",)))

    for cin, cout, hw, k in ((16, 32, 32, 3), (32, 64, 16, 3), (64, 64, 8, 3), (3, 32, 64, 5),
                             (64, 128, 8, 1)):
        add(P(f"big_conv2d_{cin}x{cout}_{hw}_k{k}",
              lambda cin=cin, cout=cout, hw=hw, k=k: [E(4, cin, hw, hw).conv2d(E(cout, cin, k, k),
                                                                            padding=k // 2)],
              ("conv2d",)))
    add(P("big_conv2d_stride2", lambda: [E(2, 32, 32, 32).conv2d(E(64, 32, 3, 3), stride=2, padding=1)],
          ("conv2d",)))
    add(P("big_conv2d_depthwise", lambda: [E(2, 64, 32, 32).conv2d(E(64, 1, 3, 3), groups=64, padding=1)],
          ("conv2d",)))
    add(P("big_conv2d_f16", lambda: [E(2, 32, 32, 32, dtype=dtypes.half).conv2d(
        E(64, 32, 3, 3, dtype=dtypes.half), padding=1)], ("conv2d", "tensor_core")))
    add(P("big_conv_transpose2d", lambda: [E(2, 32, 16, 16).conv_transpose2d(E(32, 16, 4, 4), stride=2)],
          ("conv2d",)))
    add(P("big_conv2d_noopt", lambda: [E(1, 8, 16, 16).conv2d(E(16, 8, 3, 3))], ("conv2d",),
          context=(("NOOPT", 1),)))

    add(P("big_sum_1m", lambda: [E(1 << 20).sum()], ("reduction",)))
    add(P("big_sum_axis1_loop", lambda: [E(128, 8192).sum(axis=1)], ("reduction",)))
    add(P("big_sum_axis0_loop", lambda: [E(4096, 256).sum(axis=0)], ("reduction",)))
    add(P("big_max_noopt_loop", lambda: [E(64, 4096).max(axis=1)], ("reduction",), context=(("NOOPT", 1),)))
    add(P("big_var_mean", lambda: [E(256, 1024).var(axis=1), E(256, 1024).mean(axis=0)], ("reduction",)))
    add(P("big_argmax", lambda: [E(512, 1000).argmax(axis=1)], ("reduction",)))
    add(P("big_cumsum", lambda: [E(64, 512).cumsum(axis=1)], ("reduction", "arange")))
    add(P("big_softmax", lambda: [E(256, 2048).softmax()], ("softmax_layernorm",)))
    add(P("big_log_softmax_f16", lambda: [E(128, 4096, dtype=dtypes.half).log_softmax()],
          ("softmax_layernorm",)))
    add(P("big_layernorm", lambda: [E(512, 768).layernorm()], ("softmax_layernorm",)))
    add(P("big_max_pool", lambda: [E(4, 32, 64, 64).max_pool2d(kernel_size=(3, 3), stride=2)],
          ("reduction",)))
    add(P("big_avg_pool", lambda: [E(4, 32, 64, 64).avg_pool2d(kernel_size=(4, 4))], ("reduction",)))
    add(P("big_sort", lambda: [E(1024).sort()[0]], ("reduction",)))
    add(P("big_topk", lambda: [E(4096).topk(8)[0]], ("reduction",)))
    add(P("big_attention", lambda: [E(2, 8, 128, 64).scaled_dot_product_attention(
        E(2, 8, 128, 64), E(2, 8, 128, 64), is_causal=True)], ("matmul", "softmax_layernorm")))
    add(P("big_gelu_silu", lambda: [E(1 << 16).gelu() + E(1 << 16).silu()], ("transcendental",)))
    add(P("big_interpolate", lambda: [E(1, 8, 32, 32).interpolate((64, 64), mode="linear")],
          ("movement",)))

    def mlp_train():
        l1, l2, l3 = nn.Linear(784, 256), nn.Linear(256, 128), nn.Linear(128, 10)
        x = E(64, 784)
        loss = l3(l2(l1(x).relu()).relu()).sparse_categorical_crossentropy(
            Tensor.empty(64, dtype=dtypes.int32))
        params = [l1.weight, l1.bias, l2.weight, l2.bias, l3.weight, l3.bias]
        return [loss, *loss.gradient(*params)]
    add(P("big_mlp_train", mlp_train, ("matmul", "backward")))

    def cnn_train():
        c1, c2 = nn.Conv2d(3, 16, 3, padding=1), nn.Conv2d(16, 32, 3, padding=1)
        bn, fc = nn.BatchNorm(16), nn.Linear(32 * 8 * 8, 10)
        x = E(8, 3, 32, 32)
        h = bn(c1(x)).relu().max_pool2d()
        h = c2(h).relu().max_pool2d().flatten(1)
        loss = fc(h).log_softmax().mean()
        return [loss, *loss.gradient(c1.weight, c2.weight, fc.weight)]
    add(P("big_cnn_train", cnn_train, ("conv2d", "matmul", "backward")))

    def transformer_block():
        d, heads, t = 256, 4, 64
        x = E(2, t, d)
        qkv = x.linear(E(d, 3 * d))
        q, k, v = [z.reshape(2, t, heads, d // heads).transpose(1, 2) for z in qkv.chunk(3, dim=2)]
        a = q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(2, t, d)
        h = (x + a.linear(E(d, d))).layernorm()
        return [(h + h.linear(E(d, 4 * d)).gelu().linear(E(4 * d, d))).layernorm()]
    add(P("big_transformer_block", transformer_block, ("matmul", "softmax_layernorm")))

    # variants: dtypes, fused epilogues, plain loops (NOOPT), explicit optimisations
    for dn, d in (("f32", dtypes.float32), ("f16", dtypes.half)):
        for cin, cout, hw in ((8, 16, 32), (24, 48, 16), (48, 96, 8), (128, 128, 4)):
            add(P(f"big_conv_bias_relu_{dn}_{cin}x{cout}_{hw}",
                  lambda cin=cin, cout=cout, hw=hw, d=d: [(E(2, cin, hw, hw, dtype=d).conv2d(
                      E(cout, cin, 3, 3, dtype=d), E(cout, dtype=d), padding=1)).relu()],
                  ("conv2d",)))
        for m, k, n in ((384, 384, 384), (96, 1536, 96), (2048, 64, 256), (200, 300, 100)):
            add(P(f"big_matmul_{dn}_{m}x{k}x{n}", mm(m, k, n, d), ("matmul",)))
    for name, build in (("matmul", mm(64, 256, 64)),
                        ("conv3x3", lambda: [E(1, 16, 16, 16).conv2d(E(32, 16, 3, 3))]),
                        ("sum_axis1", lambda: [E(32, 2048).sum(axis=1)]),
                        ("softmax", lambda: [E(32, 1024).softmax()]),
                        ("layernorm", lambda: [E(64, 512).layernorm()]),
                        ("argmax", lambda: [E(64, 2000).argmax(axis=1)]),
                        ("cumsum", lambda: [E(16, 1024).cumsum(axis=1)]),
                        ("attention", lambda: [E(1, 4, 64, 32).scaled_dot_product_attention(
                            E(1, 4, 64, 32), E(1, 4, 64, 32))])):
        add(P(f"big_noopt_{name}", build, ("reduction",), context=(("NOOPT", 1),)))
    for name, build, opts in (
            ("group_sum", lambda: [E(256, 8192).sum(axis=1)], (("GROUP", 0, 16),)),
            ("grouptop_max", lambda: [E(1 << 18).max()], (("GROUPTOP", 0, 256),)),
            ("unroll8_sum", lambda: [E(512, 512).sum(axis=1)], (("UNROLL", 0, 8),)),
            ("upcast_unroll_matmul", mm(256, 256, 256),
             (("UPCAST", 0, 4), ("UPCAST", 1, 4), ("UNROLL", 0, 8))),
            ("locals_matmul", mm(512, 128, 512),
             (("LOCAL", 0, 16), ("LOCAL", 1, 16), ("UPCAST", 0, 4), ("UNROLL", 0, 4))),
            ("upcast16_elementwise", lambda: [(E(1 << 16) * 3 + E(1 << 16)).exp2()],
             (("UPCAST", 0, 16),))):
        add(P(f"big_opt_{name}", build, ("reduction",), opts=opts))

    def resnet_block():
        c1, c2 = nn.Conv2d(32, 32, 3, padding=1), nn.Conv2d(32, 32, 3, padding=1)
        b1, b2 = nn.BatchNorm(32), nn.BatchNorm(32)
        x = E(4, 32, 16, 16)
        y = (b2(c2(b1(c1(x)).relu())) + x).relu()
        loss = y.mean()
        return [loss, *loss.gradient(c1.weight, c2.weight)]
    add(P("big_resnet_block_train", resnet_block, ("conv2d", "backward")))

    def adam_step():
        w = Tensor.empty(4096, 256)
        opt = nn.optim.Adam([w], lr=1e-3)
        w.grad = Tensor.empty(4096, 256)
        opt.step()
        return [w, *opt.m, *opt.v]
    add(P("big_adam_step", adam_step, ("elementwise",), context=(("TRAINING", 1),)))

    def embedding_mlp():
        emb = nn.Embedding(1000, 128)
        h = emb(Tensor.empty(8, 32, dtype=dtypes.int32)).mean(axis=1)
        return [h.linear(E(128, 64)).relu().linear(E(64, 10)).softmax()]
    add(P("big_embedding_mlp", embedding_mlp, ("matmul", "softmax_layernorm")))

    def gru_cell():
        x, h = E(16, 96), E(16, 96)
        r = (x @ E(96, 96) + h @ E(96, 96)).sigmoid()
        z = (x @ E(96, 96) + h @ E(96, 96)).sigmoid()
        n = (x @ E(96, 96) + r * (h @ E(96, 96))).tanh()
        return [(1 - z) * n + z * h]
    add(P("big_gru_cell", gru_cell, ("matmul", "transcendental")))

    # long fused elementwise chains, reductions over every dtype, sizes and plain loops
    def chain(k, d):
        def build():
            x = E(1 << 14, dtype=d)
            for i in range(k):
                x = (x * 1.0001 + 0.5).sin() if i % 3 == 0 else (x.exp2() - x) if i % 3 == 1 \
                    else x.maximum(x * 0.5).sqrt()
            return [x]
        return build
    for k in (8, 24, 48):
        for dn, d in (("f32", dtypes.float32), ("f16", dtypes.half)):
            add(P(f"big_chain_{k}_{dn}", chain(k, d), ("elementwise", "transcendental")))
    for dn, d in (("f16", dtypes.half), ("bf16", dtypes.bfloat16), ("i32", dtypes.int32),
                  ("i64", dtypes.int64), ("f64", dtypes.float64), ("u8", dtypes.uint8)):
        add(P(f"big_sum_axis1_{dn}", lambda d=d: [E(256, 4096, dtype=d).sum(axis=1)], ("reduction",)))
        add(P(f"big_max_axis0_{dn}", lambda d=d: [E(2048, 128, dtype=d).max(axis=0)], ("reduction",)))
        add(P(f"big_noopt_sum_{dn}", lambda d=d: [E(64, 1024, dtype=d).sum(axis=1)], ("reduction",),
              context=(("NOOPT", 1),)))
    for rows, cols in ((64, 10000), (1000, 100), (8, 65536)):
        add(P(f"big_softmax_{rows}x{cols}", lambda rows=rows, cols=cols: [E(rows, cols).softmax()],
              ("softmax_layernorm",)))
        add(P(f"big_layernorm_{rows}x{cols}", lambda rows=rows, cols=cols: [E(rows, cols).layernorm()],
              ("softmax_layernorm",)))
    for k in (2, 3, 5, 7):
        add(P(f"big_conv1d_k{k}", lambda k=k: [E(8, 64, 512).conv2d(E(128, 64, k), padding=k // 2)],
              ("conv2d",)))
        add(P(f"big_pool_k{k}", lambda k=k: [E(4, 16, 64, 64).max_pool2d(kernel_size=(k, k), stride=1)],
              ("reduction",)))
    for m in (3, 5, 17, 31):
        add(P(f"big_matvec_odd_{m}", lambda m=m: [E(m, 4096) @ E(4096, m)], ("matmul",)))
        add(P(f"big_noopt_matmul_odd_{m}", lambda m=m: [E(m, 512) @ E(512, 64)], ("matmul",),
              context=(("NOOPT", 1),)))

    def lstm_like():
        x, h, w, u = E(32, 128), E(32, 128), E(128, 512), E(128, 512)
        g = x @ w + h @ u
        i, f, o, c = g.chunk(4, dim=1)
        return [(i.sigmoid() * c.tanh() + f.sigmoid()).tanh() * o.sigmoid()]
    add(P("big_lstm_cell", lstm_like, ("matmul", "transcendental")))
    return progs


def _dtype_key(dt) -> str:
    """tinygrad's own short name of a dtype (`dtypes.half` -> "half")."""
    return str(dt).split(".")[-1]


def _dtype_name(dt) -> str:
    return DTYPE_NAMES[_dtype_key(dt)]


def _ptx_params(ptx: str) -> list[tuple[str, str]]:
    """(name, type) of the kernel's `.param` list, in order."""
    head = ptx.split(")", 1)[0]
    return [(m[2], m[1]) for m in re.finditer(r"\.param\s+\.(\w+)\s+(\w+)", head)]


def _features(ptx: str) -> list[str]:
    return sorted(k for k, rx in PTX_FEATURES.items() if re.search(rx, ptx, re.M))


def _static_shared_bytes(ptx: str) -> int:
    return sum(int(m) for m in re.findall(r"\.shared\s+\.align\s+\d+\s+\.b8\s+\w+\[(\d+)\]", ptx))


def _plain_int(x) -> int:
    if not isinstance(x, int) or isinstance(x, bool) or x <= 0:
        raise ValueError(f"launch dimension {x!r} is not a positive integer")
    return x


def harvest_program(prog: Program, renderer) -> list[dict]:
    """Every kernel tinygrad writes for one program, as manifest records with their PTX."""
    from tinygrad import Tensor
    from tinygrad.codegen import to_program
    from tinygrad.codegen.opt import Opt, OptOps
    from tinygrad.helpers import Context, prod
    from tinygrad.uop.ops import AddrSpace, Ops

    kernels = []
    with Context(**dict(prog.context)):
        linear, var_vals = Tensor.linear_with_vars(*prog.build())
        for call in linear.src:
            ast = call.src[0]
            if ast.op is not Ops.SINK:
                continue  # copies and host-side work carry no PTX
            if prog.opts is not None:
                opts = tuple(Opt(OptOps[op], axis, arg) for op, axis, arg in prog.opts)
                ast = ast.replace(arg=replace(ast.arg, opts_to_apply=opts))
            prg = to_program(ast, renderer)
            info = prg.arg
            ptx = prg.src[-1].arg.decode()  # BINARY: PTXCompiler's output, placeholders filled
            args = [s for s in call.src[1:] if not s.is_bound_var]
            storage = {u.arg.slot: u.dtype for u in prg.src[0].toposort()
                       if u.op is Ops.PARAM and u.addrspace is not AddrSpace.ALU}
            variables = {v.arg.slot: v for v in info.vars}
            params = []
            for pname, ptype in _ptx_params(ptx):
                slot = int(pname.removeprefix("data"))
                if slot in variables:
                    v = variables[slot]
                    lo, hi = v.arg.vmin_vmax
                    params.append({"name": pname, "kind": "var", "ptx_type": ptype, "var": v.arg.name,
                                   "dtype": _dtype_name(v.dtype), "min": lo, "max": hi,
                                   "value": var_vals[v.arg.name]})
                    continue
                buf = args[slot]  # a BUFFER, or a typed view into tinygrad's scratch arena
                count = prod(buf.shape)
                if not isinstance(count, int):
                    raise RuntimeError(f"{prog.name}: buffer {pname} has no concrete size")
                entry = {"name": pname, "kind": "buffer", "ptx_type": ptype,
                         "dtype": _dtype_name(buf.dtype), "count": count,
                         "bytes": count * buf.dtype.itemsize,
                         "access": ("inout" if slot in info.outs and slot in info.ins else
                                    "out" if slot in info.outs else "in" if slot in info.ins else "none")}
                if _dtype_key(storage[slot]) != _dtype_key(buf.dtype):
                    entry["storage_dtype"] = _dtype_name(storage[slot])  # emulated by tinygrad
                params.append(entry)
            grid, block = info.launch_dims(var_vals)
            if block is None:
                # 'i' specials: tinygrad leaves the block size to run time, but PTXRenderer
                # reads them from %tid with `.maxntid 1`, so no launch computes the intended result
                raise RuntimeError("kernel uses global-index specials (%tid with .maxntid 1): "
                                   "tinygrad's PTX renderer cannot launch it correctly")
            kernels.append({
                "entry": info.function_name,
                "ptx": ptx,
                "grid": [_plain_int(g) for g in grid],
                "block": [_plain_int(b) for b in block],
                "static_shared_bytes": _static_shared_bytes(ptx),
                "params": params,
            })
    return kernels


def make_renderer():
    from tinygrad.helpers import Target
    from tinygrad.renderer.ptx import PTXRenderer
    return PTXRenderer(Target(device="CUDA", renderer="PTX", arch=ARCH))


def dtype_support() -> dict:
    """Which dtypes the PTX renderer writes natively and which tinygrad emulates for it."""
    from tinygrad.dtype import dtypes
    native = make_renderer().supported_dtypes()
    known = [d for d in dtypes.all if _dtype_key(d) in DTYPE_NAMES]
    return {"native": sorted(_dtype_name(d) for d in known if d in native),
            "emulated": sorted(_dtype_name(d) for d in known if d not in native),
            "emulation_note": "tinygrad rewrites bfloat16 (fp8) kernels for this renderer to compute in "
                              "float32 (float16) and load/store the raw bits through 16 (8)-bit unsigned "
                              "integer buffers (storage_dtype); fp8e4m3fnuz/fp8e5m2fnuz are not harvested"}


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", name)


def harvest(out: Path, only: set[str] | None = None, run_ptxas: bool = True,
            log=lambda s: None, program_set: str = "corpus") -> dict:
    """Harvest every program (or those named in `only`) into `out`; returns the manifest."""
    import tinygrad  # noqa: F401  (imported after the environment is prepared)
    from importlib.metadata import version

    tg_version = version("tinygrad")
    if tg_version != PINNED_TINYGRAD:
        raise SystemExit(f"tinygrad {tg_version} is installed, the corpus is pinned to "
                         f"{PINNED_TINYGRAD}: pip install tinygrad=={PINNED_TINYGRAD}")
    renderer = make_renderer()
    programs = PROGRAM_SETS[program_set]()
    names = [p.name for p in programs]
    if len(set(names)) != len(names):
        raise RuntimeError("duplicate program names in the harvest table")
    if only is not None:
        unknown = only - set(names)
        if unknown:
            raise SystemExit(f"unknown program(s): {', '.join(sorted(unknown))}")
        programs = [p for p in programs if p.name in only]

    by_hash: dict[str, dict] = {}
    files: set[str] = set()
    program_records = []
    for prog in programs:
        record = {"name": prog.name, "categories": list(prog.categories),
                  "context": {k: v for k, v in prog.context}, "kernels": []}
        if prog.opts is not None:
            record["opts"] = [list(o) for o in prog.opts]
        try:
            kernels = harvest_program(prog, renderer)
        except Exception as e:  # recorded: what tinygrad's PTX path cannot do is data too
            record["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}"
            program_records.append(record)
            log(f"{prog.name}: FAILED {record['error']}")
            continue
        if not kernels:
            record["error"] = "no kernel: tinygrad computed nothing on the device for it"
        for k in kernels:
            digest = hashlib.sha256(k["ptx"].encode()).hexdigest()
            if digest in by_hash:
                first = by_hash[digest]
                if prog.name != first["program"] and prog.name not in first["also_from"]:
                    first["also_from"].append(prog.name)
                record["kernels"].append(first["file"])
                continue
            stem = f"{_safe(prog.name)}__{_safe(k['entry'])}"
            fname, i = f"{stem}.ptx", 2
            while fname in files:
                fname, i = f"{stem}_{i}.ptx", i + 1
            files.add(fname)
            by_hash[digest] = {"file": fname, "entry": k["entry"], "sha256": digest,
                               "program": prog.name, "also_from": [],
                               "categories": list(prog.categories),
                               "context": record["context"], "features": _features(k["ptx"]),
                               "grid": k["grid"], "block": k["block"],
                               "dynamic_shared_bytes": 0,
                               "static_shared_bytes": k["static_shared_bytes"],
                               "params": k["params"], "_ptx": k["ptx"]}
            record["kernels"].append(fname)
        log(f"{prog.name}: {len(kernels)} kernel(s)")
        program_records.append(record)

    kernels = sorted(by_hash.values(), key=lambda k: k["file"])
    if run_ptxas:
        from ptx2sass import oracle
        for k in kernels:
            run = oracle.ptxas(k["_ptx"], ARCH, name=k["file"])
            if not run.ok:
                k["ptxas_error"] = first_error_line(run.stderr)
                log(f"ptxas rejects {k['file']}: {k['ptxas_error'].splitlines()[0]}")

    out.mkdir(parents=True, exist_ok=True)
    if only is None:  # a full harvest owns the folder: stale kernels go
        for old in out.glob("*.ptx"):
            if old.name not in files:
                old.unlink()
    for k in kernels:
        (out / k["file"]).write_text(k.pop("_ptx"))
    manifest = {
        "generator": "python -m tools.harvest_tinygrad",
        "tinygrad_version": tg_version,
        "renderer": f"PTXRenderer(Target(device='CUDA', renderer='PTX', arch='{ARCH}'))",
        "arch": ARCH,
        "launch_note": "grid = tinygrad global_size (%ctaid), block = local_size (%tid); "
                       "params in .param order: buffers by device address, vars as scalars",
        "dtypes": dtype_support(),
        "kernel_count": len(kernels),
        "kernels": kernels,
        "programs": program_records,
    }
    (out / "manifest.json").write_text(dump_json(manifest) + "\n")
    return manifest


def first_error_line(stderr: str) -> str:
    """ptxas's first diagnostic: what the manifest records for a known rejection."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    return next((ln for ln in lines if "error" in ln), lines[0] if lines else "")


def dump_json(obj, level: int = 0, width: int = 180) -> str:
    """JSON with one line per small object: readable diffs, a third of `indent=1`'s size."""
    flat = json.dumps(obj, separators=(", ", ": "))
    if not isinstance(obj, (dict, list)) or len(flat) + level <= width or not obj:
        return flat
    pad, inner = " " * level, " " * (level + 1)
    if isinstance(obj, dict):
        items = [f"{inner}{json.dumps(k)}: {dump_json(v, level + 1, width)}" for k, v in obj.items()]
        return "{\n" + ",\n".join(items) + f"\n{pad}}}"
    return "[\n" + ",\n".join(inner + dump_json(v, level + 1, width) for v in obj) + f"\n{pad}]"


PROGRAM_SETS = {"corpus": tinygrad_programs, "large": large_programs}
LARGE_OUT = REPO / "tests" / "corpus" / "tinygrad_large"


def _reexec_clean(argv: list[str]) -> int:
    env = {k: os.environ[k] for k in _KEPT_ENV if k in os.environ}
    env[_CLEAN_ENV_FLAG] = "1"
    return subprocess.run([sys.executable, "-m", "tools.harvest_tinygrad", *argv],
                          cwd=REPO, env=env).returncode


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="corpus folder (default %(default)s)")
    ap.add_argument("--only", help="comma-separated program names (partial harvest, nothing deleted)")
    ap.add_argument("--no-ptxas", action="store_true", help="skip the ptxas acceptance check")
    ap.add_argument("--list", action="store_true", help="list the program names and exit")
    ap.add_argument("--set", choices=("corpus", "large"), default="corpus",
                    help="program set: the test corpus, or `large` (tests/corpus/tinygrad_large, "
                         "compile-speed work)")
    ap.add_argument("-q", "--quiet", action="store_true")
    args = ap.parse_args(argv)
    if args.set == "large" and "--out" not in " ".join(argv):
        args.out = LARGE_OUT
    if os.environ.get(_CLEAN_ENV_FLAG) != "1":
        args.out = args.out.resolve()
        return _reexec_clean(_with_absolute_out(argv, args.out))
    _prepare_environment()
    if args.list:
        print("\n".join(p.name for p in PROGRAM_SETS[args.set]()))
        return 0
    only = set(args.only.split(",")) if args.only else None
    if only is not None and args.out.resolve() == DEFAULT_OUT.resolve():
        print("--only writes a partial manifest: give it another --out folder", file=sys.stderr)
        return 2
    start = time.monotonic()
    log = (lambda s: None) if args.quiet else (lambda s: print(s, file=sys.stderr))
    manifest = harvest(args.out, only, not args.no_ptxas, log, args.set)
    kernels = manifest["kernels"]
    rejected = sum("ptxas_error" in k for k in kernels)
    failed = sum("error" in p for p in manifest["programs"])
    print(f"{len(kernels)} kernels from {len(manifest['programs'])} programs ({failed} failed) "
          f"-> {args.out}; ptxas {ARCH}: {len(kernels) - rejected} accepted, {rejected} rejected; "
          f"{time.monotonic() - start:.1f} s")
    return 0


def _with_absolute_out(argv: list[str], out: Path) -> list[str]:
    """argv with --out made absolute (the clean re-execution runs in the repository root)."""
    rest, skip = [], False
    for a in argv:
        if skip:
            skip = False
            continue
        if a == "--out":
            skip = True
            continue
        if a.startswith("--out="):
            continue
        rest.append(a)
    return [*rest, "--out", str(out)]


if __name__ == "__main__":
    sys.exit(main())
