"""Compares decided by immediates fold (`opt/fold_compares.py`): `setp`/`set` of every
comparison and integer/float type, `.and/.or/.xor` with a predicate, predicate logic, `selp`,
and branches on the decided predicates (unconditional or gone, with the code they skipped).
Expected values: ptxas's cubin for the same module run in the emulator on the same inputs
(outputs bit-identical), and the PTX ISA's rules for the float NaN cases (checked on the
values ptxas's cubin stores). Our listing, as ptxas's, keeps no compare and no branch for them."""
from __future__ import annotations

import struct

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.compiler import compile as compile_ptx
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin
from ptx2sass.tinygrad import sass_listing

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"
REGS = (".reg .b16 %h<8>; .reg .b32 %r<40>; .reg .f32 %f<8>; .reg .b64 %rd<40>; .reg .f64 %fd<8>; "
        ".reg .pred %p<16>;")


def _kernel(body: str) -> str:
    return (HEAD + ".visible .entry k(.param .u64 out)\n{\n" + REGS + "\nld.param.u64 %rd1, [out];\n"
            "mov.u32 %r1, %tid.x;\nmul.wide.u32 %rd2, %r1, 4;\n" + body + "\nret;\n}\n")


def _store(k: int, value: str) -> str:
    """Store `value` (a b32 register) at word k of the thread's row of 1024 words."""
    return f"st.global.u32 [%rd3+{4 * k}], {value};"


ROW = "mul.wide.u32 %rd2, %r1, 4096;\nadd.s64 %rd3, %rd1, %rd2;\n"


def _ops(cubin: bytes) -> list[str]:
    return [line.split("*/", 1)[1].strip().rstrip(" ;") for line in sass_listing(cubin).splitlines()
            if "/*" in line and "*/" in line and "Function" not in line]


def _run_both(ptx: str, words: int, threads: int = 32):
    ref = oracle.ptxas(ptx)
    assert ref.ok, ref.stderr
    theirs = ref.output
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    outs = []
    for cubin in (ours, theirs):
        out = np.full((threads, 1024), 0xDEADBEEF, dtype=np.uint32)
        res = run(cubin, "k", (1, 1, 1), (threads, 1, 1), [out], hazard_check=True)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(out[:, :words])
    assert outs[0].tobytes() == outs[1].tobytes()
    return _ops(ours), _ops(theirs), outs[0]


def _decided(ops: list[str]) -> list[str]:
    """What a decided compare would leave: compares, guarded instructions, branches (but the
    final self-branch)."""
    ops = [o for o in ops if o != "NOP"][:-1]          # the final self-branch aside
    return [o for o in ops if "SETP" in o or o.startswith(("@", "BRA", "PLOP3", "SEL", "FSEL", "FSET", "ISET"))]


INT_PAIRS = [(5, 7), (7, 7), (-1, 1), (0x8000, 1), (1 << 63, 1), (-3, -2)]
INT_CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs"]


def _int_cases(ty: str):
    bits = int(ty[1:])
    cmps = {"u": INT_CMPS, "s": INT_CMPS[:6], "b": INT_CMPS[:2]}[ty[0]]     # what ptxas accepts
    for a, b in INT_PAIRS:
        for cmp in cmps:
            yield cmp, a & ((1 << bits) - 1), b & ((1 << bits) - 1)


@pytest.mark.parametrize("ty", ["s16", "u16", "b16", "s32", "u32", "b32", "s64", "u64", "b64"])
def test_integer_compares_of_immediates_fold(ty):
    bits = int(ty[1:])
    reg = {16: "%h2", 32: "%r2", 64: "%rd4"}[bits]
    lines, expect = [ROW], []
    for k, (cmp, a, b) in enumerate(_int_cases(ty)):
        if k % 2:     # half through a register the optimiser knows the value of
            lines.append(f"mov.b{bits} {reg}, {a}; setp.{cmp}.{ty} %p1, {reg}, {b};")
        else:
            lines.append(f"setp.{cmp}.{ty} %p1, {a}, {b};")
        lines.append("selp.u32 %r10, 1, 0, %p1; " + _store(k, "%r10"))
        # the manual's rule: s types signed, lo/ls/hi/hs and u/b types unsigned
        x, y = a, b
        if ty[0] == "s" and cmp not in ("lo", "ls", "hi", "hs"):
            x, y = (v - (1 << bits) if v >> (bits - 1) else v for v in (a, b))
        op = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp)
        expect.append({"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[op])
    mine, theirs, out = _run_both(_kernel("\n".join(lines)), len(expect))
    assert (out == np.array(expect, dtype=np.uint32)).all()
    assert not _decided(theirs), theirs             # ptxas folds them all
    assert not _decided(mine), mine


def _f32(x: float) -> str:
    return "0f%08X" % struct.unpack("<I", struct.pack("<f", x))[0]


def _f64(x: float) -> str:
    return "0d%016X" % struct.unpack("<Q", struct.pack("<d", x))[0]


NAN, INF = float("nan"), float("inf")
FLOAT_PAIRS = [(1.0, 2.0), (2.0, 2.0), (3.0, -1.0), (NAN, 1.0), (NAN, NAN), (-0.0, 0.0), (INF, 1.0)]
FLOAT_CMPS = ["eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan"]


def _float_rule(cmp: str, x: float, y: float) -> bool:
    """The PTX ISA's `setp` on floats: ordered compares false with a NaN, unordered true."""
    unordered = x != x or y != y
    if cmp in ("num", "nan"):
        return unordered == (cmp == "nan")
    base = cmp[:2]
    if unordered:
        return cmp.endswith("u")
    return {"eq": x == y, "ne": x != y, "lt": x < y, "le": x <= y, "gt": x > y, "ge": x >= y}[base]


@pytest.mark.parametrize("ty", ["f32", "f64"])
def test_float_compares_of_immediates_fold_with_nan_semantics(ty):
    imm, reg = (_f32, "%f2") if ty == "f32" else (_f64, "%fd2")
    lines, expect, k = [ROW], [], 0
    for a, b in FLOAT_PAIRS:
        for cmp in FLOAT_CMPS:
            if k % 2:
                lines.append(f"mov.{ty} {reg}, {imm(a)}; setp.{cmp}.{ty} %p1, {reg}, {imm(b)};")
            else:
                lines.append(f"setp.{cmp}.{ty} %p1, {imm(a)}, {imm(b)};")
            lines.append("selp.u32 %r10, 1, 0, %p1; " + _store(k, "%r10"))
            expect.append(_float_rule(cmp, a, b))
            k += 1
    if ty == "f32":   # .ftz: the smallest subnormal compares as +0 (and -0): equal to -0
        for ftz, want in (("", False), (".ftz", True)):
            lines.append(f"setp.eq{ftz}.f32 %p1, 0f00000001, 0f80000000; selp.u32 %r10, 1, 0, %p1; "
                         + _store(k, "%r10"))
            expect.append(want)
            k += 1
    mine, theirs, out = _run_both(_kernel("\n".join(lines)), len(expect))
    assert (out == np.array(expect, dtype=np.uint32)).all()
    assert not _decided(theirs), theirs
    assert not _decided(mine), mine


SET_AND_LOGIC = ROW + """setp.lt.u32 %p2, %r1, 16;
setp.eq.and.u32 %p3|%p4, 1, 1, %p2;
selp.u32 %r10, 1, 0, %p3; selp.u32 %r11, 1, 0, %p4;
st.global.u32 [%rd3], %r10; st.global.u32 [%rd3+4], %r11;
setp.gt.or.s32 %p5|%p6, -1, 0, !%p2;
selp.u32 %r10, 1, 0, %p5; selp.u32 %r11, 1, 0, %p6;
st.global.u32 [%rd3+8], %r10; st.global.u32 [%rd3+12], %r11;
setp.hi.xor.u32 %p7, 5, 3, 1;
selp.u32 %r10, 1, 0, %p7; st.global.u32 [%rd3+16], %r10;
setp.nan.and.f32 %p8, 0f7FC00000, 0f00000000, %p2;
and.pred %p9, %p8, %p3;
or.pred %p10, %p4, %p8;
xor.pred %p11, %p10, %p2;
not.pred %p12, %p4;
selp.u32 %r10, 1, 0, %p9; st.global.u32 [%rd3+20], %r10;
selp.u32 %r10, 1, 0, %p11; st.global.u32 [%rd3+24], %r10;
selp.u32 %r10, 11, 22, %p12; st.global.u32 [%rd3+28], %r10;
set.lt.u32.s32 %r12, -4, 2; st.global.u32 [%rd3+32], %r12;
set.lt.u32.u32 %r12, -4, 2; st.global.u32 [%rd3+36], %r12;
set.neu.f32.f32 %f3, 0f7FC00000, 0f7FC00000; st.global.f32 [%rd3+40], %f3;
set.ge.s32.f64 %r12, 0d3FF0000000000000, 0d4000000000000000; st.global.u32 [%rd3+44], %r12;
set.eq.or.u32.u16 %r12, 3, 4, %p2; st.global.u32 [%rd3+48], %r12;
set.num.and.f32.f32 %f3, 0f3F800000, 0f00000000, !%p2; st.global.f32 [%rd3+52], %f3;
"""


def test_set_predicate_combinations_and_logic_fold():
    """`p|q` with `.and/.or/.xor` and a run-time predicate (p is that predicate or a
    constant), predicate logic on decided predicates, `set` into integers and floats."""
    mine, theirs, out = _run_both(_kernel(SET_AND_LOGIC), 14)
    low = np.arange(32) < 16
    assert (out[:, 0] == low).all() and (out[:, 1] == 0).all()        # p3 = p2, p4 = false
    assert (out[:, 2] == ~low).all() and (out[:, 3] == 1).all()       # p5 = !p2, p6 = true
    assert (out[:, 4] == 0).all() and (out[:, 7] == 11).all()
    assert (out[:, 8] == 0xFFFFFFFF).all() and (out[:, 9] == 0).all()
    assert (out[:, 10] == 0x3F800000).all() and (out[:, 11] == 0).all()
    assert (out[:, 12] == np.where(low, 0xFFFFFFFF, 0)).all()
    assert (out[:, 13] == np.where(low, 0, 0x3F800000)).all()
    # one compare of the thread index is left (ptxas's too) and nothing else decides
    assert len([o for o in mine if "SETP" in o]) <= len([o for o in theirs if "SETP" in o]), (mine, theirs)
    assert not [o for o in _decided(mine) if o.startswith("BRA")], mine


BRANCHES = ROW + """mov.u32 %r5, 3;
setp.ne.s32 %p1, %r5, 3;
@%p1 bra SKIP1;
st.global.u32 [%rd3], %r1;
SKIP1:
setp.gtu.f32 %p2, 0f7FC00000, 0f3F800000;
@!%p2 bra SKIP2;
st.global.u32 [%rd3+4], 5;
SKIP2:
setp.lt.f64 %p3, 0d7FF8000000000000, 0d3FF0000000000000;
@%p3 st.global.u32 [%rd3+8], 6;
@%p3 exit;
mov.u32 %r6, 0;
LOOP:
add.u32 %r6, %r6, 1;
st.global.u32 [%rd3+12], %r6;
setp.lo.u32 %p4, 5, 3;
@%p4 bra LOOP;
setp.ge.u64 %p5, 1, 2;
@!%p5 bra SKIP3;
st.global.u32 [%rd3+16], 7;
SKIP3:
st.global.u32 [%rd3+20], 8;
"""


def test_branches_on_decided_predicates_go():
    """Never-taken branches vanish, always-taken ones take their path unconditionally; the
    code no thread reaches (stores, a loop's back edge, a guarded exit) goes."""
    mine, theirs, out = _run_both(_kernel(BRANCHES), 6)
    assert (out[:, 0] == np.arange(32)).all() and (out[:, 1] == 5).all()
    assert (out[:, 2] == 0xDEADBEEF).all() and (out[:, 3] == 1).all()
    assert (out[:, 4] == 0xDEADBEEF).all() and (out[:, 5] == 8).all()
    assert not _decided(theirs), theirs
    assert not _decided(mine), mine
    assert sum(o.startswith("STG") for o in mine) == 4, mine
    assert [o for o in mine if "EXIT" in o] == ["EXIT"], mine


NEVER_CALLED = HEAD + """.func g(.param .b64 a)
{
.reg .b64 %rd<4>; .reg .b32 %r<4>;
ld.param.b64 %rd1, [a];
mov.u32 %r1, %tid.x;
st.global.u32 [%rd1], %r1;
ret;
}
.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<8>; .reg .b32 %r<8>; .reg .pred %p<4>;
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
setp.eq.u32 %p1, 1, 0;
@!%p1 bra L;
{ .param .b64 a0; st.param.b64 [a0], %rd1; call.uni g, (a0); }
L:
st.global.u32 [%rd1+4], %r1;
ret;
}
"""


def _crs(cubin):
    return {k.name: [r.u32s()[0] for r in k.attributes if r.name == "CRS_STACK_SIZE"]
            for k in read_cubin(cubin).kernels}


def test_never_taken_call_leaves_no_crs_record():
    """The call behind a decided branch goes, and with it CRS_STACK_SIZE (ptxas writes none)."""
    ref = oracle.ptxas(NEVER_CALLED).output
    ours = compile_ptx(NEVER_CALLED, "sm_89")
    assert _crs(ref) == {"k": []}
    assert _crs(ours) == _crs(ref)
    mine = _ops(ours)
    assert not _decided(mine), mine
    assert sum(o.startswith("STG") for o in mine) == 1, mine


F16_PAIRS = [(0x3C00, 0x4000), (0x4000, 0x4000), (0x7E00, 0x3C00), (0x8000, 0x0000), (0x0001, 0x8000)]


def _f16(bits: int) -> float:
    return float(np.array([bits], dtype=np.uint16).view(np.float16)[0])


def test_f16_compares_of_known_values_fold():
    """`setp.f16` of values moved into registers as bits (PTX has no f16 immediates). ptxas
    keeps a few of these HSETP2s (its listing is not asserted); the outputs are equal."""
    lines, expect, k = [ROW], [], 0
    for a, b in F16_PAIRS:
        for cmp in FLOAT_CMPS:
            lines.append(f"mov.b16 %h1, {a}; mov.b16 %h2, {b}; setp.{cmp}.f16 %p1, %h1, %h2; "
                         "selp.u32 %r10, 1, 0, %p1; " + _store(k, "%r10"))
            expect.append(_float_rule(cmp, _f16(a), _f16(b)))
            k += 1
    mine, theirs, out = _run_both(_kernel("\n".join(lines)), len(expect))
    assert (out == np.array(expect, dtype=np.uint32)).all()
    assert not _decided(mine), mine


def test_decided_branch_keeps_a_guarded_writes_constant_else_value():
    """Fuzz 33000385: a decided branch leaves a phi of two equal constants with one input;
    `@p min` keeps that constant where p is false, and its else-value must stay defined (it
    named a dropped phi, so the register kept the min's operand instead)."""
    body = ROW + """
    mov.u32 %r9, 7;
    setp.ne.u32 %p1, %r9, 3;
    @!%p1 bra L1;
    mov.b32 %r2, 18133;
    bra.uni J;
L1:
    mov.b32 %r2, 18133;
J:
    xor.b32 %r3, %r1, 410668283;
    setp.lt.u32 %p0, %r1, 4;
    @%p0 min.u32 %r2, %r3, %r3;
    """ + _store(0, "%r2")
    _, _, out = _run_both(_kernel(body), 1)
    expect = [(t ^ 410668283) if t < 4 else 18133 for t in range(32)]
    assert out[:, 0].tolist() == expect
