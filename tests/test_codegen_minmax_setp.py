"""min/max of every float and 64-bit integer type, and setp on f64/f16 (bf16 compares are
sm_90 features, refused on sm_89 as ptxas does): our cubin
against ptxas's in the emulator, bit for bit, over special values and random bits."""
import numpy as np
import pytest

from codegen_harness import run_both

FLOAT_MINMAX = [
    ("f32", 32, op) for op in ("max", "min", "max.ftz", "min.NaN", "max.ftz.NaN")
] + [("f64", 64, op) for op in ("max", "min")] + [
    ("f16", 16, op) for op in ("max", "min", "max.NaN", "min.ftz")
] + [("bf16", 16, op) for op in ("max", "min.NaN")]


@pytest.mark.parametrize("ty,bits,op", FLOAT_MINMAX, ids=lambda x: str(x))
def test_float_min_max(ty, bits, op):
    ours, theirs, data = run_both(f"{op}.{ty} %o, %a0, %a1;", bits, 2, bits)
    bad = np.nonzero(ours != theirs)[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i]))
                          for i in bad[:5]]


@pytest.mark.parametrize("op", ["max.s64", "min.s64", "max.u64", "min.u64"])
def test_int64_min_max(op):
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1;", 64, 2, 64)
    assert (ours == theirs).all()


SETP = [("f64", 64, cmp) for cmp in ("lt", "ge", "neu", "equ", "num", "nan", "gtu")] + \
       [("f16", 16, cmp) for cmp in ("lt", "le", "ne", "geu", "nan")] + \
       [("f16", 16, "lt.ftz")]


@pytest.mark.parametrize("ty,bits,cmp", SETP, ids=lambda x: str(x))
def test_setp(ty, bits, cmp):
    body = (f"setp.{cmp}.{ty} %p0, %a0, %a1;\n"
            f"setp.{cmp.split('.')[0]}.and.{ty} %p1, %a1, %a0, %p0;\n")
    body += "selp.u32 %x0, 1, 0, %p0;\nselp.u32 %x1, 2, 0, %p1;\nor.b32 %o, %x0, %x1;"
    ours, theirs, _ = run_both(body, bits, 2, 32)
    assert (ours == theirs).all()


# `set` into an f16 destination from a non-f16 source (ptxas takes every source type; the
# frontend refused them): 1.0 (0x3c00) or +0.0, against ptxas and the comparison itself.
SET_F16 = [("lt.f16.f32", 32), ("gtu.ftz.f16.f32", 32), ("ge.and.f16.f32", 32), ("ne.f16.f64", 64),
           ("lo.f16.u32", 32), ("gt.f16.s32", 32), ("le.f16.s64", 64), ("eq.f16.b16", 16)]


@pytest.mark.parametrize("spelling,bits", SET_F16, ids=lambda x: str(x))
def test_set_into_f16(spelling, bits):
    combine = ", %p0" if ".and." in spelling else ""
    body = (f"{{ .reg .b16 %h; setp.ne.b{bits} %p0, %a0, 7; set.{spelling} %h, %a0, %a1{combine};\n"
            f"cvt.u{bits}.u16 %o, %h; }}" if bits != 16 else
            f"{{ setp.ne.b16 %p0, %a0, 7; set.{spelling} %o, %a0, %a1{combine}; }}")
    ours, theirs, data = run_both(body, bits, 2, bits)
    bad = np.nonzero(ours != theirs)[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i]))
                          for i in bad[:5]]
    assert set(int(v) for v in ours) <= {0, 0x3C00} and len(set(int(v) for v in ours)) == 2


def test_guarded_set():
    """`@p set`: where p is false the destination keeps its value (was refused)."""
    body = ("mov.b32 %o, 0x5555;\nsetp.lt.u32 %p1, %a0, 0x80000000;\n"
            "@%p1 set.lt.u32.u32 %o, %a0, %a1;")
    ours, theirs, data = run_both(body, 32, 2, 32)
    a, b = data[0::2].astype(np.int64), data[1::2].astype(np.int64)
    want = np.where(a < 0x80000000, np.where(a < b, 0xFFFFFFFF, 0), 0x5555)
    assert (ours == want).all() and (theirs == want).all()


HALF_PAIR_VALUES = [0, 0x3C003C00, 0x7E00BC00, 0x7C00FC00, 0x00010001, 0x80003C00, 0x3C000000,
                    0xBC003C00, 0x3C00BC00, 0x7E007E00]


@pytest.mark.parametrize("cmp", ["lt", "ge", "equ", "ne", "nan"])
@pytest.mark.parametrize("ty,bool_op", [("f16x2", ""), ("f16x2", ".and"), ("f16x2", ".or"),
                                        ("f16x2.ftz", ".xor")])
def test_setp_with_two_results_on_halves(cmp, ty, bool_op):
    """`setp.<cmp>.f16x2 p|q`: p compares the low halves, q the high ones (each then
    combined with c), in one HSETP2 (not one FSETP on the 32-bit pattern, whose q is !p)."""
    c = ", %p2" if bool_op else ""
    body = (f"setp.ne.u32 %p2, %a2, 0;\nsetp.{cmp}{bool_op}.{ty.replace('.ftz', '')} %p0|%p1, %a0, %a1{c};"
            f"\nselp.b32 %x0, 1, 0, %p0;\nselp.b32 %x1, 2, 0, %p1;\nor.b32 %o, %x0, %x1;")
    if ty.endswith(".ftz"):
        body = body.replace(f".{cmp}{bool_op}.", f".{cmp}{bool_op}.ftz.")
    ours, theirs, data = run_both(body, 32, 3, 32, values=HALF_PAIR_VALUES)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[3 * i]), hex(data[3 * i + 1]), ours[i], theirs[i]) for i in bad[:4]]
