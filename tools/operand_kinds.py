"""Kernels that make ptxas write each operation with each kind of source operand.

Why: ptxas reads a warp-uniform value (a kernel parameter) from constant bank 0 or a uniform
register, folds an immediate into the instruction or puts it into constant bank 2, and
moves whole computations onto the uniform datapath when every input is uniform. Our corpora
show only the kinds their kernels happened to need, so the encoding tables and the
emulator missed forms such as `POPC R0, c[0x0][0x160]`, `ISETP.GE.U32.AND.EX … c[0x0][…]`,
`IDP.4A.U8.U8 R0, R7, c[0x2][0x0], R7` or `USHF.L.U32`. Here every operation of `OPS` is
written once per combination of source kinds:

* `r`: a per-thread value loaded from global memory (a general register);
* `p`: a kernel parameter (`ld.param`: a constant-bank operand or a uniform register);
* `i`: an immediate (the operation's own constant).

and, with every source a parameter, once more with the result used as a load index (`u`),
which is what sends ptxas to the uniform datapath.

Each kernel stores its result per thread; `launch` runs one in the emulator and
`reference_launch` the all-register kernel of the same operation on the same values, so the
emulator's reading of every operand kind is checked against its reading of registers, which
the other suites validate (`tests/test_emu_operand_kinds.py`). The words of ptxas's cubins
seed the encoding probe: `py -m tools.operand_kinds --write-seeds` writes
`tools/isa_seeds/operand_kinds.ptx`.

Random chains of these operations (`chain_kernel`) mix the kinds further (results feeding
results, guarded steps, uniform and per-thread values together).

Usage: python -m tools.operand_kinds [--write-seeds] [--check] [--arch sm_89] [--chains N]
                                     [--first-chain S] [--op NAME ...]
  --check: decode every word of ptxas's cubins with our codec, run every kernel against
  its reference in the emulator and every chain for faults and hazards; prints the failures.
"""
from __future__ import annotations

import argparse
import itertools
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
SEED_FILE = REPO / "tools" / "isa_seeds" / "operand_kinds.ptx"
THREADS = 32
SEED_CHAINS = 1000       # the chains written into the seed file (seeds 0..999)


@dataclass(frozen=True)
class Op:
    """One PTX operation: `body` uses {d} for the result and {a} {b} {c} for the sources,
    `srcs` gives each source's type, `dest` the result's type. `imms` are the immediates
    the `i` kind uses per source (PTX spelling)."""
    name: str
    body: str
    srcs: tuple[str, ...]
    dest: str
    imms: tuple[str, ...]
    kinds: str = "rpi"          # the kinds each source may take


B32 = ("b32",)
OPS: list[Op] = [
    # bit counting and reversal (POPC, FLO, BREV)
    Op("popc32", "popc.b32 {d}, {a};", B32, "b32", ("0x00F0F0F1",)),
    Op("popc64", "popc.b64 {d}, {a};", ("b64",), "b32", ("0x00F0F0F100FF",)),
    Op("clz32", "clz.b32 {d}, {a};", B32, "b32", ("0x00F0F0F1",)),
    Op("clz64", "clz.b64 {d}, {a};", ("b64",), "b32", ("0x00F0F0F100FF",)),
    Op("bfind_u32", "bfind.u32 {d}, {a};", ("u32",), "b32", ("0x00F0F0F1",)),
    Op("bfind_s32", "bfind.s32 {d}, {a};", ("s32",), "b32", ("-5",)),
    Op("bfind_shiftamt", "bfind.shiftamt.u32 {d}, {a};", ("u32",), "b32", ("0x00F0F0F1",)),
    Op("brev32", "brev.b32 {d}, {a};", B32, "b32", ("0x00F0F0F1",)),
    Op("brev64", "brev.b64 {d}, {a};", ("b64",), "b64", ("0x00F0F0F100FF",)),
    # shifts and funnel shifts (SHF)
    Op("shl32", "shl.b32 {d}, {a}, {b};", ("b32", "u32"), "b32", ("0x12345678", "7")),
    Op("shr_u32", "shr.u32 {d}, {a}, {b};", ("b32", "u32"), "b32", ("0x82345678", "7")),
    Op("shr_s32", "shr.s32 {d}, {a}, {b};", ("s32", "u32"), "b32", ("-0x12345678", "7")),
    Op("shl64", "shl.b64 {d}, {a}, {b};", ("b64", "u32"), "b64", ("0x123456789A", "13")),
    Op("shr_s64", "shr.s64 {d}, {a}, {b};", ("s64", "u32"), "b64", ("-0x123456789A", "13")),
    Op("shf_l_wrap", "shf.l.wrap.b32 {d}, {a}, {b}, {c};", ("b32", "b32", "u32"), "b32",
       ("0x12345678", "0x9ABCDEF0", "9")),
    Op("shf_r_clamp", "shf.r.clamp.b32 {d}, {a}, {b}, {c};", ("b32", "b32", "u32"), "b32",
       ("0x12345678", "0x9ABCDEF0", "9")),
    # byte permutes (PRMT)
    Op("prmt", "prmt.b32 {d}, {a}, {b}, {c};", ("b32", "b32", "b32"), "b32",
       ("0x12345678", "0x9ABCDEF0", "0x5140")),
    Op("prmt_b4e", "prmt.b32.b4e {d}, {a}, {b}, {c};", ("b32", "b32", "b32"), "b32",
       ("0x12345678", "0x9ABCDEF0", "5")),
    Op("prmt_ecl", "prmt.b32.ecl {d}, {a}, {b}, {c};", ("b32", "b32", "b32"), "b32",
       ("0x12345678", "0x9ABCDEF0", "2")),
    # selects (SEL, FSEL)
    Op("selp32", "setp.ne.u32 %q, {c}, 0;\nselp.b32 {d}, {a}, {b}, %q;", ("b32", "b32", "u32"), "b32",
       ("0x12345678", "0x9ABCDEF0", "1")),
    Op("selp_f32", "setp.ne.u32 %q, {c}, 0;\nselp.f32 {d}, {a}, {b}, %q;", ("f32", "f32", "u32"), "b32",
       ("0f3FC00000", "0fC0490FDB", "1")),
    Op("selp64", "setp.ne.u32 %q, {c}, 0;\nselp.b64 {d}, {a}, {b}, %q;", ("b64", "b64", "u32"), "b64",
       ("0x123456789A", "-0x9ABCDEF0", "1")),
    # min/max (IMNMX, FMNMX)
    Op("min_s32", "min.s32 {d}, {a}, {b};", ("s32", "s32"), "b32", ("-0x1234", "0x77")),
    Op("max_u32", "max.u32 {d}, {a}, {b};", ("u32", "u32"), "b32", ("0x81234567", "0x77")),
    Op("min_s64", "min.s64 {d}, {a}, {b};", ("s64", "s64"), "b64", ("-0x123456789", "0x77")),
    Op("max_f32", "max.f32 {d}, {a}, {b};", ("f32", "f32"), "b32", ("0f3FC00000", "0fC0490FDB")),
    # dot products (IDP)
    Op("dp4a_uu", "dp4a.u32.u32 {d}, {a}, {b}, {c};", ("b32", "b32", "u32"), "b32",
       ("0x01020304", "0x80FF7F01", "0x1234")),
    Op("dp4a_ss", "dp4a.s32.s32 {d}, {a}, {b}, {c};", ("b32", "b32", "s32"), "b32",
       ("0x01020304", "0x80FF7F01", "-0x1234")),
    Op("dp2a_lo", "dp2a.lo.u32.s32 {d}, {a}, {b}, {c};", ("b32", "b32", "s32"), "b32",
       ("0x01020304", "0x80FF7F01", "-0x1234")),
    # scalar video (VABSDIFF)
    Op("vabsdiff_add", "vabsdiff.u32.u32.u32.add {d}, {a}, {b}, {c};", ("u32", "u32", "u32"), "b32",
       ("0x01020304", "0x80FF7F01", "0x1234")),
    Op("vabsdiff_s", "vabsdiff.s32.s32.s32 {d}, {a}, {b};", ("s32", "s32"), "b32",
       ("-0x01020304", "0x7F01")),
    # integer multiply-add (IMAD, IMAD.WIDE, IMAD.HI, IMAD.WIDE.X)
    Op("mul_lo", "mul.lo.u32 {d}, {a}, {b};", ("u32", "u32"), "b32", ("0x12345", "0x80000000")),
    Op("mad_lo", "mad.lo.u32 {d}, {a}, {b}, {c};", ("u32", "u32", "u32"), "b32",
       ("0x12345", "-3", "0x80000000")),
    Op("mad_wide", "mad.wide.u32 {d}, {a}, {b}, {c};", ("u32", "u32", "u64"), "b64",
       ("0x12345", "0x9ABCDEF0", "0x123456789A")),
    Op("mul_hi_u64", "mul.hi.u64 {d}, {a}, {b};", ("u64", "u64"), "b64",
       ("0x123456789ABCD", "0xFEDCBA987654321")),
    Op("mul_lo_u64", "mul.lo.u64 {d}, {a}, {b};", ("u64", "u64"), "b64",
       ("0x123456789ABCD", "0xFEDCBA987654321")),
    Op("add_sat", "add.sat.s32 {d}, {a}, {b};", ("s32", "s32"), "b32", ("0x7FFFFFF0", "-5")),
    Op("add64", "add.s64 {d}, {a}, {b};", ("s64", "s64"), "b64", ("0x1FFFFFFFF", "-0x123456789")),
    Op("sub64", "sub.s64 {d}, {a}, {b};", ("s64", "s64"), "b64", ("0x1FFFFFFFF", "-0x123456789")),
    Op("and32", "and.b32 {d}, {a}, {b};", ("b32", "b32"), "b32", ("0x0FF00FF0", "0x12345678")),
    Op("xor64", "xor.b64 {d}, {a}, {b};", ("b64", "b64"), "b64", ("0x0FF00FF000FF", "0x123456789A")),
    # signed division by a power of two (LEA.HI of the sign, as in nvcc's `n / 32`)
    Op("sdiv_pow2", "div.s32 {d}, {a}, {b};", ("s32", "s32"), "b32", ("-0x12345", "32"), kinds="rpi"),
    Op("sdiv_by_32", "shr.s32 %t2, {a}, 31;\nshr.u32 %t2, %t2, 27;\nadd.s32 %t2, {a}, %t2;\nshr.s32 {d}, %t2, 5;",
       ("s32",), "b32", ("-0x12345",)),
    # a local array indexed by the value (STL/LDL, with a uniform index: `[R1+UR4]`)
    Op("local_index", "and.b32 %t2, {a}, 15;\nmul.wide.u32 %rd7, %t2, 4;\nmov.u64 %w, larr;\n"
       "add.s64 %w, %w, %rd7;\nst.local.u32 [larr], 0;\nst.local.u32 [larr+60], 1;\nst.local.u32 [%w], {b};\n"
       "ld.local.u32 {d}, [larr+60];", ("u32", "u32"), "b32", ("15", "0x1234")),
    # shared memory at an index from the value (a parameter: `LDS.64 R10, [UR4+0x28]`)
    Op("shared_index", "and.b32 %t2, {b}, 15;\nshl.b32 %t2, %t2, 3;\nmov.u32 %t3, sarr;\nadd.u32 %t2, %t2, %t3;\n"
       "shl.b32 %t3, %t0, 2;\nmov.u32 %t1, sarr;\nadd.u32 %t3, %t3, %t1;\nst.shared.u32 [%t3], {a};\n"
       "st.shared.u32 [%t3+128], {a};\nbar.sync 0;\nld.shared.u16 %hh, [%t2+2];\nld.shared.v2.u32 {{%t1, %t3}}, [%t2+8];\n"
       "cvt.u32.u16 {d}, %hh;\nadd.u32 {d}, {d}, %t1;\nadd.u32 {d}, {d}, %t3;", ("u32", "u32"), "b32",
       ("0x12345", "6")),
    # address arithmetic (LEA, LEA.HI.X)
    Op("lea", "shl.b64 %w, {a}, 2;\nadd.s64 {d}, {b}, %w;", ("s64", "s64"), "b64",
       ("0x1FFFFFFFF", "-0x123456789")),
    Op("lea_wide", "cvt.s64.s32 %w, {a};\nshl.b64 %w, %w, 3;\nadd.s64 {d}, {b}, %w;", ("s32", "s64"), "b64",
       ("-0x12345", "0x123456789")),
    # compares (ISETP, ISETP.EX, FSETP, PLOP3)
    Op("setp_u64", "setp.lt.u64 %q, {a}, {b};\nselp.b32 {d}, 1, 0, %q;", ("u64", "u64"), "b32",
       ("0x1FFFFFFFF", "0x123456789")),
    Op("setp_s64", "setp.ge.s64 %q, {a}, {b};\nselp.b32 {d}, 1, 0, %q;", ("s64", "s64"), "b32",
       ("-0x1FFFFFFFF", "0x123456789")),
    Op("setp_and", "setp.lt.u32 %q, {a}, {b};\nsetp.ne.and.u32 %q, {c}, 0, %q;\nselp.b32 {d}, 1, 0, %q;",
       ("u32", "u32", "u32"), "b32", ("0x1234", "0x8000", "1")),
    Op("setp_f32", "setp.gtu.f32 %q, {a}, {b};\nselp.b32 {d}, 1, 0, %q;", ("f32", "f32"), "b32",
       ("0f3FC00000", "0fC0490FDB")),
    # conversions (I2F, I2FP, F2I, F2F)
    Op("i2f_s32", "cvt.rn.f32.s32 {d}, {a};", ("s32",), "b32", ("-0x1234567",)),
    Op("i2f_u32", "cvt.rz.f32.u32 {d}, {a};", ("u32",), "b32", ("0x81234567",)),
    Op("i2f_s64", "cvt.rn.f32.s64 {d}, {a};", ("s64",), "b32", ("-0x123456789AB",)),
    # from a value the uniform datapath computed (I2FP.F32.S32 R0, UR6)
    Op("i2f_of_sum", "add.s32 %t2, {a}, {b};\ncvt.rn.f32.s32 {d}, %t2;", ("s32", "s32"), "b32", ("-0x1234567", "5")),
    Op("i2f_u_of_sum", "add.u32 %t2, {a}, {b};\ncvt.rn.f32.u32 {d}, %t2;", ("u32", "u32"), "b32", ("0x81234567", "5")),
    Op("i2f_rz_of_sum", "add.s32 %t2, {a}, {b};\ncvt.rz.f32.s32 {d}, %t2;", ("s32", "s32"), "b32", ("-0x1234567", "5")),
    Op("i2f_f64", "cvt.rn.f64.s32 {d}, {a};", ("s32",), "b64", ("-0x1234567",)),
    Op("f2i_s32", "cvt.rzi.s32.f32 {d}, {a};", ("f32",), "b32", ("0fC2F6E979",)),
    Op("f2i_u32_ftz", "cvt.rmi.ftz.u32.f32 {d}, {a};", ("f32",), "b32", ("0f4F000001",)),
    Op("f2i_f64", "cvt.rni.s32.f64 {d}, {a};", ("f64",), "b32", ("0dC05EDD2F1A9FBE77",)),
    Op("f2i_s64", "cvt.rzi.s64.f64 {d}, {a};", ("f64",), "b64", ("0dC3E0000000000001",)),
    Op("f2f_f32_f64", "cvt.rn.f32.f64 {d}, {a};", ("f64",), "b32", ("0d3FF0000000000001",)),
    Op("f2f_f64_f32", "cvt.f64.f32 {d}, {a};", ("f32",), "b64", ("0f3FC00001",)),
    Op("f2f_f16_f32", "cvt.rn.f16.f32 %hh, {a};\ncvt.u32.u16 {d}, %hh;", ("f32",), "b32", ("0f3FC00001",)),
    # floating point with constants (FFMA, FADD, DFMA, MUFU, FCHK)
    Op("ffma", "fma.rn.f32 {d}, {a}, {b}, {c};", ("f32", "f32", "f32"), "b32",
       ("0f3FC00000", "0fC0490FDB", "0f3E800000")),
    Op("fadd", "add.rz.f32 {d}, {a}, {b};", ("f32", "f32"), "b32", ("0f3FC00000", "0fC0490FDB")),
    Op("dfma", "fma.rn.f64 {d}, {a}, {b}, {c};", ("f64", "f64", "f64"), "b64",
       ("0d3FF8000000000000", "0dC00921FB54442D18", "0d3FD0000000000001")),
    Op("rcp_f32", "rcp.rn.f32 {d}, {a};", ("f32",), "b32", ("0f40400000",)),
    Op("rcp_approx_f64", "rcp.approx.ftz.f64 {d}, {a};", ("f64",), "b64", ("0d4008000000000000",)),
    Op("rcp_f64", "rcp.rn.f64 {d}, {a};", ("f64",), "b64", ("0d4008000000000000",)),
    Op("div_f32", "div.rn.f32 {d}, {a}, {b};", ("f32", "f32"), "b32", ("0f40400000", "0f40E00000")),
    Op("sqrt_f32", "sqrt.rn.f32 {d}, {a};", ("f32",), "b32", ("0f40400000",)),
    Op("ex2", "ex2.approx.ftz.f32 {d}, {a};", ("f32",), "b32", ("0f3FC00000",)),
    # half precision (HADD2, HFMA2)
    Op("hfma2", "fma.rn.f16x2 {d}, {a}, {b}, {c};", ("b32", "b32", "b32"), "b32",
       ("0x3C003E00", "0xC0004200", "0x34003800"), kinds="rp"),     # f16x2 takes no immediates
    Op("hadd2", "add.f16x2 {d}, {a}, {b};", ("b32", "b32"), "b32", ("0x3C003E00", "0xC0004200"), kinds="rp"),
    # warp votes of a value (VOTE; VOTEU when the value is uniform, its result then read
    # as a predicate by PLOP3/SEL)
    Op("vote_any", "setp.ne.u32 %q, {a}, 0;\nvote.sync.any.pred %q, %q, -1;\nsetp.lt.u32 %g2, {b}, 9;\n"
       "and.pred %q, %q, %g2;\nselp.b32 {d}, 1, 0, %q;", ("u32", "u32"), "b32", ("1", "5"), kinds="rp"),
    Op("vote_ballot", "setp.ne.u32 %q, {a}, 0;\nvote.sync.ballot.b32 {d}, %q, -1;", ("u32",), "b32", ("1",),
       kinds="rp"),
    # warp shuffles with constant lane/clamp operands (SHFL)
    Op("shfl_bfly", "shfl.sync.bfly.b32 {d}, {a}, {b}, 0x1f, -1;", ("b32", "u32"), "b32",
       ("0x12345678", "5"), kinds="rp"),
    Op("shfl_idx", "shfl.sync.idx.b32 {d}, {a}, {b}, {c}, -1;", ("b32", "u32", "u32"), "b32",
       ("0x12345678", "3", "0x1f"), kinds="rp"),
]

# Registers every kernel declares (the bodies' scratch: %q a predicate, %w a 64-bit value,
# %hh a half).
_DECLS = (".reg .pred %q;\n.reg .pred %g2;\n.reg .b64 %w;\n.reg .b16 %hh;\n.reg .b32 %t<4>;\n.reg .b64 %rd<8>;\n"
          ".reg .b32 %s32_<3>;\n.reg .b64 %s64_<3>;\n.local .align 4 .b8 larr[64];\n"
          ".shared .align 16 .b8 sarr[256];\n")


def _bits(ty: str) -> int:
    return int(ty[1:]) if ty[1:].isdigit() else 32


def kind_combos(op: Op) -> list[str]:
    """Every combination of source kinds for `op` ('rp', 'pi' …), all-register first, then
    the all-parameter one once more as `u` (the result used as a load index)."""
    combos = ["".join(c) for c in itertools.product(op.kinds, repeat=len(op.srcs))]
    combos = [c for c in combos if set(c) != {"i"}]        # all-immediate: ptxas folds it
    if "p" in op.kinds:
        combos.append("u" * len(op.srcs))
    return combos


def kernel_name(op: Op, combo: str) -> str:
    return f"{op.name}_{combo}"


def kernel(op: Op, combo: str) -> str:
    """One `.entry`: `out[tid] = op(sources)`; sources of kind r come from `in` (one 8-byte
    slot per source per thread), p from parameters s0..s2 (each 8 bytes, read at the
    source's width), i are the op's immediates; kind u: every source a parameter and the
    result, masked to 0..31, indexes `in` for the value stored."""
    name = kernel_name(op, combo)
    lines = ["ld.param.u64 %rd0, [out];", "ld.param.u64 %rd1, [in];", "mov.u32 %t0, %tid.x;",
             f"mul.wide.u32 %rd2, %t0, {8 * len(op.srcs)};", "add.s64 %rd3, %rd1, %rd2;"]
    vals = []
    for k, (ty, kind) in enumerate(zip(op.srcs, combo)):
        bits = _bits(ty)
        reg = f"%s{bits}_{k}"
        if kind == "r":
            lines.append(f"ld.global.b{bits} {reg}, [%rd3+{8 * k}];")
        elif kind in "pu":
            lines.append(f"ld.param.b{bits} {reg}, [s{k}];")
        else:
            reg = op.imms[k]
        vals.append(reg)
    dbits = _bits(op.dest)
    d = "%t1" if dbits == 32 else "%rd4"
    lines.append(op.body.format(d=d, a=vals[0], b=vals[1] if len(vals) > 1 else "",
                                c=vals[2] if len(vals) > 2 else ""))
    if combo.startswith("u"):
        # the (uniform) result picks which input word every thread stores
        idx = d if dbits == 32 else "%t2"
        if dbits == 64:
            lines.append("cvt.u32.u64 %t2, %rd4;")
        lines += [f"and.b32 %t3, {idx}, 31;", f"mul.wide.u32 %rd5, %t3, {dbits // 8};", "add.s64 %rd5, %rd1, %rd5;",
                  f"ld.global.b{dbits} {d}, [%rd5];" if dbits == 32 else "ld.global.b64 %rd4, [%rd5];"]
    lines += [f"mul.wide.u32 %rd2, %t0, {dbits // 8};", "add.s64 %rd6, %rd0, %rd2;",
              f"st.global.b{dbits} [%rd6], {d};", "ret;"]
    params = ".param .u64 out, .param .u64 in, .param .b64 s0, .param .b64 s1, .param .b64 s2"
    return f".visible .entry {name}({params})\n{{\n{_DECLS}" + "\n".join(lines) + "\n}\n"


def module(ops: list[Op] | None = None, arch: str = "sm_89") -> str:
    """One PTX module with every kernel of `ops` (default: all) in every kind combination."""
    head = f".version 8.0\n.target {arch}\n.address_size 64\n\n"
    return head + "\n".join(kernel(op, c) for op in (ops or OPS) for c in kind_combos(op))


def op_module(op: Op, arch: str = "sm_89") -> str:
    return module([op], arch)


# --- chains: results feeding results ------------------------------------------------------

CHAIN_PARAMS = (12345, 0x123456789, 77)


def chain_kernel(seed: int) -> str:
    """A random chain of 3..8 operations of `OPS` (name `chain_<seed>`), each reading earlier
    results, loaded values, parameters or its immediates, some guarded by a predicate the
    chain recomputes: what ptxas then writes mixes operand kinds, uniform and per-thread
    values and producer/reader pairs the one-operation kernels do not. Every thread stores
    the xor of all results (64 bits); `in` holds 4 slots of 8 bytes per thread."""
    import random
    rng = random.Random(seed)
    ops = [o for o in OPS if "shfl" not in o.name]
    lines = ["ld.param.u64 %rd0, [out];", "ld.param.u64 %rd1, [in];", "mov.u32 %t0, %tid.x;",
             "mul.wide.u32 %rd2, %t0, 32;", "add.s64 %rd3, %rd1, %rd2;",
             "ld.global.b32 %v32_0, [%rd3];", "ld.global.b32 %v32_1, [%rd3+4];",
             "ld.global.b64 %v64_0, [%rd3+8];", "ld.global.b64 %v64_1, [%rd3+16];",
             "ld.param.b32 %v32_2, [s0];", "ld.param.b64 %v64_2, [s1];", "ld.param.b32 %v32_3, [s2];",
             "ld.param.b64 %v64_3, [s2];", "setp.ne.u32 %g, %v32_0, 0;"]
    pools = {32: ["%v32_0", "%v32_1", "%v32_2", "%v32_3"], 64: ["%v64_0", "%v64_1", "%v64_2", "%v64_3"]}
    for _ in range(rng.randint(3, 8)):
        op = rng.choice(ops)
        srcs = [op.imms[k] if "i" in op.kinds and rng.random() < 0.15 else rng.choice(pools[_bits(ty)])
                for k, ty in enumerate(op.srcs)]
        width = _bits(op.dest)
        d = f"%v{width}_{len(pools[width])}"
        pools[width].append(d)
        body = op.body.format(d=d, a=srcs[0], b=srcs[1] if len(srcs) > 1 else "",
                              c=srcs[2] if len(srcs) > 2 else "")
        if rng.random() < 0.2:        # guarded: the destination keeps 0 where %g is false
            lines.append(f"mov.b{width} {d}, 0;")
            # setp recomputes the op's own predicate; a barrier or a warp vote stays unguarded
            # (some threads skipping bar.sync deadlock the CTA; vote.sync's -1 names them all)
            body = "\n".join(line if line.startswith(("setp", "bar.sync", "vote.sync")) else "@%g " + line
                              for line in body.split("\n"))
        lines.append(body)
        if rng.random() < 0.3:
            lines.append(f"setp.lt.u32 %g, {rng.choice(pools[32])}, {rng.choice(pools[32])};")
    lines += ["mov.b32 %acc, 0;", "mov.b64 %acc64, 0;"]
    lines += [f"xor.b32 %acc, %acc, {v};" for v in pools[32][4:]]
    lines += [f"xor.b64 %acc64, %acc64, {v};" for v in pools[64][4:]]
    lines += ["cvt.u64.u32 %rd5, %acc;", "xor.b64 %acc64, %acc64, %rd5;", "mul.wide.u32 %rd2, %t0, 8;",
              "add.s64 %rd6, %rd0, %rd2;", "st.global.b64 [%rd6], %acc64;", "ret;"]
    decl = (_DECLS + ".reg .pred %g;\n.reg .b32 %acc;\n.reg .b64 %acc64;\n"
            f".reg .b32 %v32_<{len(pools[32])}>;\n.reg .b64 %v64_<{len(pools[64])}>;\n")
    params = ".param .u64 out, .param .u64 in, .param .b64 s0, .param .b64 s1, .param .b64 s2"
    return f".visible .entry chain_{seed}({params})\n{{\n{decl}" + "\n".join(lines) + "\n}\n"


def chain_module(seeds, arch: str = "sm_89") -> str:
    return f".version 8.0\n.target {arch}\n.address_size 64\n\n" + "\n".join(chain_kernel(s) for s in seeds)


def launch_chain(cubin: bytes, seed: int, hazard_check: bool = True, decoder=None, timing=None):
    """Run `chain_<seed>` of `cubin` on 32 threads of seeded random inputs."""
    from ptx2sass.emu.launch import Param, run
    data = np.random.default_rng(seed).integers(0, 1 << 63, THREADS * 4, dtype=np.uint64)
    out = np.zeros(THREADS, dtype=np.uint64)
    res = run(cubin, f"chain_{seed}", 1, THREADS, [out, data] + [Param(type="b64", value=v) for v in CHAIN_PARAMS],
              hazard_check=hazard_check, decoder=decoder, timing=timing)
    return out, res


# --- running them ---------------------------------------------------------------------

def _immediate_bits(text: str, ty: str) -> int:
    bits = _bits(ty)
    if text.startswith("0f") or text.startswith("0d"):
        return int(text[2:], 16)
    return int(text, 0) & ((1 << bits) - 1)


def inputs(op: Op, seed: int = 0) -> tuple[np.ndarray, list[int]]:
    """Per-thread source values (THREADS x 3 slots of 8 bytes, as uint64) and the three
    parameter values: random bit patterns, with the op's immediates among them."""
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 1 << 63, size=(THREADS, 3), dtype=np.uint64) * np.uint64(2) + \
        rng.integers(0, 2, size=(THREADS, 3), dtype=np.uint64)
    params = [int(x) for x in rng.integers(0, 1 << 63, size=3, dtype=np.uint64)]
    for k, ty in enumerate(op.srcs):
        mask = (1 << _bits(ty)) - 1
        small = rng.integers(0, 40, size=THREADS, dtype=np.uint64)
        data[::3, k] = small[::3]                        # small values: shift counts, lanes
        data[1, k] = _immediate_bits(op.imms[k], ty)
        params[k] = int(params[k]) & mask if k % 2 else _immediate_bits(op.imms[k], ty) ^ 1
        data[:, k] &= np.uint64(mask)
    return data, params


def launch(cubin: bytes, op: Op, combo: str, data: np.ndarray, params: list[int],
           hazard_check: bool = True, decoder=None, timing=None):
    """Run kernel `op`/`combo` of `cubin` on `data`/`params`; returns (output array, result)."""
    from ptx2sass.emu.launch import Param, run
    dtype = np.uint32 if _bits(op.dest) == 32 else np.uint64
    srcs = np.zeros((THREADS, len(op.srcs)), dtype=np.uint64)
    srcs[:] = data[:, :len(op.srcs)]
    out = np.zeros(THREADS, dtype=dtype)
    args = [out, srcs.reshape(-1).copy()] + [Param(type="b64", value=v) for v in params]
    res = run(cubin, kernel_name(op, combo), 1, THREADS, args, hazard_check=hazard_check, decoder=decoder,
              timing=timing)
    return out, res


def reference_data(op: Op, combo: str, data: np.ndarray, params: list[int]) -> np.ndarray:
    """The per-thread values the all-register kernel needs to compute what `combo` does."""
    ref = data.copy()
    for k, (ty, kind) in enumerate(zip(op.srcs, combo)):
        if kind in "pu":
            ref[:, k] = params[k] & ((1 << _bits(ty)) - 1)
        elif kind == "i":
            ref[:, k] = _immediate_bits(op.imms[k], ty)
    return ref


def check_op(op: Op, arch: str = "sm_89", seed: int = 0) -> list[str]:
    """Every kind combination of `op` with ptxas's cubin in the emulator against the
    all-register kernel on the same values; problems as text (empty: all agree)."""
    from ptx2sass import oracle
    from ptx2sass.emu.errors import EmuFault
    run = oracle.ptxas(op_module(op, arch), arch)
    if not run.ok:
        return [f"{op.name}: ptxas rejects it: {run.stderr.strip()[:200]}"]
    data, params = inputs(op, seed)
    problems = []
    for combo in kind_combos(op):
        try:
            got, res = launch(run.output, op, combo, data, params)
            if res.hazards:
                problems.append(f"{kernel_name(op, combo)}: hazard {res.hazards[0]}")
            if combo.startswith("u"):
                continue            # the stored value is an input word: its index is checked below
            ref_in = reference_data(op, combo, data, params)
            want, _ = launch(run.output, op, "r" * len(op.srcs), ref_in, params, hazard_check=False)
            bad = np.nonzero(got != want)[0]
            if len(bad):
                t = int(bad[0])
                problems.append(f"{kernel_name(op, combo)}: thread {t} got {int(got[t]):#x}, "
                                f"all-register {int(want[t]):#x} (inputs {[hex(int(x)) for x in ref_in[t]]})")
        except EmuFault as e:
            problems.append(f"{kernel_name(op, combo)}: {e}")
    return problems


def undecodable_words(ptx: str, arch: str = "sm_89") -> dict[str, str]:
    """nvdisasm's text → word (hex) of every word of ptxas's cubin for `ptx` that our codec
    cannot decode."""
    from ptx2sass import oracle
    from ptx2sass.encoder import codec
    from tools.corpus_words import words_of_listing
    run = oracle.ptxas(ptx, arch)
    if not run.ok:
        raise SystemExit(run.stderr)
    bad = {}
    for w in words_of_listing(oracle.nvdisasm(run.output), arch, "operand_kinds", False):
        try:
            codec.decode(w.word, arch, w.offset)
        except Exception:
            bad.setdefault(w.text, f"{w.word:#034x}")
    return bad


def check_chains(seeds, arch: str = "sm_89") -> list[str]:
    """ptxas's cubins of the chains in the emulator: problems (a fault, a hazard) as text."""
    from ptx2sass import oracle
    from ptx2sass.emu.errors import EmuFault
    run = oracle.ptxas(chain_module(seeds, arch), arch)
    if not run.ok:
        return [f"chains: ptxas rejects them: {run.stderr.strip()[:200]}"]
    problems = []
    for seed in seeds:
        try:
            _, res = launch_chain(run.output, seed)
            problems += [f"chain_{seed}: {h}" for h in res.hazards[:1]]
        except EmuFault as e:
            problems.append(f"chain_{seed}: {e}")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--write-seeds", action="store_true", help=f"write {SEED_FILE.relative_to(REPO)}")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--op", action="append", default=None, help="only these operations")
    ap.add_argument("--chains", type=int, default=SEED_CHAINS,
                    help=f"random chains (seeds 0..N-1) to check / seed with (default {SEED_CHAINS})")
    ap.add_argument("--first-chain", type=int, default=0,
                    help=f"start the chains at this seed (>= {SEED_CHAINS}: chains the tables were "
                         "not seeded with, a held-back check)")
    args = ap.parse_args(argv)
    ops = [o for o in OPS if not args.op or o.name in args.op]
    chains = range(args.first_chain, args.first_chain + args.chains)
    if args.write_seeds:
        SEED_FILE.write_text("// Generated by `py -m tools.operand_kinds --write-seeds`: every operation of\n"
                             "// tools/operand_kinds.py with every kind of source operand, and random chains.\n"
                             + module(ops) + "\n" + "\n".join(chain_kernel(s) for s in chains))
        print(f"wrote {SEED_FILE.relative_to(REPO)}")
    if args.check:
        bad = undecodable_words(module(ops, args.arch), args.arch)
        if len(chains):
            bad.update(undecodable_words(chain_module(chains, args.arch), args.arch))
        for text, word in sorted(bad.items()):
            print(f"cannot decode: {word}  {text}")
        failures = 0
        for op in ops:
            for p in check_op(op, args.arch):
                failures += 1
                print(p)
        for p in check_chains(chains, args.arch) if len(chains) else ():
            failures += 1
            print(p)
        combos = sum(len(kind_combos(o)) for o in ops)
        print(f"{len(ops)} operations, {combos} kernels, {len(chains)} chains (seeds {chains.start}.."
              f"{chains.stop - 1}): {len(bad)} words not decoded, "
              f"{failures} kernels failing")
        return 1 if bad or failures else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
