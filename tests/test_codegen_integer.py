"""Integer operations with a sequence behind them: division and remainder (32, 16 and 8 bits,
signed and unsigned, by registers and by constants, incl. division by zero and INT_MIN / -1),
mad.hi, 64-bit shifts by a register: our cubin against ptxas's in the emulator, bit for bit."""
import random

import numpy as np
import pytest

from codegen_harness import run_both

EDGES32 = [0, 1, 2, 3, 7, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 10, 100]
EDGES16 = [0, 1, 2, 3, 7, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0xFFFE, 10, 100]


@pytest.mark.parametrize("op", ["div.u32", "div.s32", "rem.u32", "rem.s32"])
def test_divide_32(op):
    ours, theirs, data = run_both(f"{op} %o, %a0, %a1;", 32, 2, 32, values=EDGES32)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i]))
                          for i in bad[:5]]


# div and rem of the same operands share one quotient and remainder; divisions by the same
# divisor share its reciprocal (by a register, by a constant, signed and unsigned)
SHARED_DIVISIONS = [
    "div.s32 %x0, %a0, %a1;\nrem.s32 %x1, %a0, %a1;\nmul.lo.s32 %x2, %x0, 31;\nadd.s32 %o, %x2, %x1;",
    "rem.u32 %x1, %a0, 13;\ndiv.u32 %x0, %a0, 13;\ndiv.u32 %x2, %a2, 13;\nxor.b32 %x3, %x0, %x2;\nadd.s32 %o, %x3, %x1;",
    "div.s32 %x0, %a0, -7;\nrem.s32 %x1, %a0, -7;\ndiv.s32 %x2, %a2, -7;\nxor.b32 %x3, %x0, %x2;\nadd.s32 %o, %x3, %x1;",
    "div.u32 %x0, %a0, %a1;\ndiv.u32 %x1, %a2, %a1;\nrem.u32 %x2, %a2, %a1;\nxor.b32 %x3, %x0, %x1;\nadd.s32 %o, %x3, %x2;",
]


@pytest.mark.parametrize("body", SHARED_DIVISIONS)
def test_shared_divisions(body):
    ours, theirs, data = run_both(body, 32, 3, 32, values=EDGES32)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[3 * i]), hex(data[3 * i + 1]), hex(data[3 * i + 2]),
                           hex(ours[i]), hex(theirs[i])) for i in bad[:4]]


@pytest.mark.parametrize("op", ["div.u16", "div.s16", "rem.u16", "rem.s16"])
def test_divide_16(op):
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1;", 16, 2, 16, values=EDGES16)
    assert (ours == theirs).all()


@pytest.mark.parametrize("op,k", [("div.u32", 7), ("rem.s32", -3), ("div.s32", 1), ("div.s32", -1),
                                  ("div.s32", -7), ("rem.u32", 0x80000001), ("div.u32", 1),
                                  ("rem.s32", 0x7FFFFFFF), ("div.s32", -2147483648), ("div.u32", 0),
                                  ("rem.s16", -5), ("div.u16", 13), ("div.s16", -32768)])
def test_divide_by_constant(op, k):
    bits = 16 if op.endswith("16") else 32
    ours, theirs, _ = run_both(f"{op} %o, %a0, {k};", bits, 1, bits,
                               values=EDGES32 if bits == 32 else None)
    assert (ours == theirs).all()


@pytest.mark.parametrize("op", ["mad.hi.u32", "mad.hi.s32"])
def test_mad_hi_adds_to_the_high_word(op):
    """IMAD.HI adds a register pair to the product: the addend must be {0, c}."""
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1, %a2;", 32, 3, 32, values=EDGES32)
    assert (ours == theirs).all()


@pytest.mark.parametrize("op", ["shl.b64", "shr.u64", "shr.s64"])
def test_64_bit_shift_by_a_register(op):
    """Amounts 0..70 (PTX clamps past 64)."""
    body = "cvt.u32.u64 %x0, %a1;\nand.b32 %x0, %x0, 127;\nmin.u32 %x0, %x0, 70;\n" \
           f"{op} %o, %a0, %x0;"
    ours, theirs, _ = run_both(body, 64, 2, 64, values=[0, 1, 31, 32, 33, 63, 64, 65, 70,
                                                        0x8000000000000001, 0xFFFFFFFFFFFFFFFF])
    assert (ours == theirs).all()


BITFIELD = [
    "bfe.u32 %o, %a0, %a1, %a2;", "bfe.s32 %o, %a0, %a1, %a2;", "bfe.u32 %o, %a0, 3, 9;",
    "bfe.s32 %o, %a0, 30, 9;", "bfi.b32 %o, %a0, %a1, %a2, 7;", "bfi.b32 %o, %a0, %a1, 3, 7;",
    "bfi.b32 %o, %a0, %a1, %a2, %a0;", "bfind.u32 %o, %a0;", "bfind.s32 %o, %a0;",
    "bfind.shiftamt.u32 %o, %a0;", "bmsk.clamp.b32 %o, %a0, %a1;",
]


@pytest.mark.parametrize("body", BITFIELD)
def test_bit_fields(body):
    """Positions and lengths cover 0, inside, past 32 and garbage in the high bits."""
    ours, theirs, data = run_both(body, 32, 3, 32, values=[0, 1, 5, 31, 32, 33, 40, 255, 0x105,
                                                           0x80000000, 0xFFFFFFFF, 0x7FFFFFFF])
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[3 * i]), hex(data[3 * i + 1]), hex(data[3 * i + 2]),
                           hex(ours[i]), hex(theirs[i])) for i in bad[:4]]


# 64-bit fields: positions/lengths are the low words of %a1/%a2 (0, inside, 32, 63, 64, past
# 64, garbage above the low byte), the values have both words busy.
BITFIELD64 = [
    "cvt.u32.u64 %x0, %a1;\ncvt.u32.u64 %x1, %a2;\nbfe.u64 %o, %a0, %x0, %x1;",
    "cvt.u32.u64 %x0, %a1;\ncvt.u32.u64 %x1, %a2;\nbfe.s64 %o, %a0, %x0, %x1;",
    "cvt.u32.u64 %x0, %a1;\ncvt.u32.u64 %x1, %a2;\nbfi.b64 %o, %a0, %a2, %x0, %x1;",
    "bfi.b64 %o, %a0, %a1, 32, 32;",
    "bfi.b64 %o, %a0, %a1, 5, 40;",
    "popc.b64 %x0, %a0;\ncvt.u64.u32 %o, %x0;",
    "clz.b64 %x0, %a0;\ncvt.u64.u32 %o, %x0;",
    "brev.b64 %o, %a0;",
]
EDGES64 = [0, 1, 5, 31, 32, 33, 40, 63, 64, 65, 255, 0x141, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF,
           0x7FFFFFFF00000000, 0x00000000FFFFFFFF, 0x123456789ABCDEF0]


@pytest.mark.parametrize("body", BITFIELD64)
def test_bit_operations_64(body):
    ours, theirs, data = run_both(body, 64, 3, 64, values=EDGES64)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[3 * i]), hex(data[3 * i + 1]), hex(data[3 * i + 2]),
                           hex(ours[i]), hex(theirs[i])) for i in bad[:4]]


CARRY_CHAINS = [
    "add.cc.u32 %x0, %a0, %a1;\naddc.cc.u32 %x1, %a1, %a2;\naddc.u32 %o, %x0, %x1;",
    "sub.cc.u32 %x0, %a0, %a1;\nsubc.cc.u32 %x1, %a1, %a2;\nsubc.u32 %o, %x0, %x1;",
    "sub.cc.u32 %x0, %a0, 0;\nsubc.u32 %o, %a1, 0;",
    "mad.lo.cc.u32 %x0, %a0, %a1, %a2;\nmadc.lo.cc.u32 %x1, %a1, %a2, %a0;\n"
    "madc.hi.u32 %x2, %a0, %a2, %x1;\nadd.u32 %o, %x0, %x2;",
    "add.cc.s32 %x0, %a0, %a1;\naddc.s32 %o, 0, 0;",
]


@pytest.mark.parametrize("body", CARRY_CHAINS)
def test_carry_chains(body):
    ours, theirs, _ = run_both(body, 32, 3, 32, values=EDGES32)
    assert (ours == theirs).all()


EDGES64 = [0, 1, 2, 3, 7, 10, 0xFFFFFFFF, 0x100000000, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000,
           0x8000000000000001, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE, 0x123456789ABCDEF]


@pytest.mark.parametrize("op", ["div.u64", "rem.u64", "div.s64", "rem.s64"])
def test_divide_64(op):
    ours, theirs, data = run_both(f"{op} %o, %a0, %a1;", 64, 2, 64, values=EDGES64)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i]))
                          for i in bad[:5]]


def _hard_divisions(count: int = 1024) -> np.ndarray:
    """(dividend, divisor) pairs where a reciprocal estimate is least exact: divisors at and
    next to powers of two, dividends near 2^64 and just below a multiple of the divisor,
    operands of every bit length."""
    rng = random.Random(64)
    pairs = []
    for k in range(64):
        for d in (1 << k, (1 << k) - 1, (1 << k) + 1):
            d &= (1 << 64) - 1
            if d:
                top = (1 << 64) - 1
                pairs += [(top, d), (top - top % d - 1, d), (rng.getrandbits(64), d)]
    while len(pairs) < count:
        n, d = rng.getrandbits(rng.randint(1, 64)), rng.getrandbits(rng.randint(1, 64))
        pairs.append((n, d or 1))
    return np.array([x for pair in pairs[:count] for x in pair], dtype=np.uint64)


@pytest.mark.parametrize("op", ["div.u64", "rem.u64"])
def test_divide_64_exact_on_hard_operands(op):
    """The quotient is exact however far the estimate is off, against integer arithmetic."""
    data = _hard_divisions()
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1;", 64, 2, 64, data=data)
    n, d = data[0::2].tolist(), data[1::2].tolist()
    want = [a // b if op == "div.u64" else a % b for a, b in zip(n, d)]
    assert ours.tolist() == want
    assert theirs.tolist() == want


# Immediate factors nvdisasm prints under an alias (IMAD.IADD x*1+c, IMAD.SHL x*2^k, and
# x*1 alone, which we emit as a move) and ordinary ones, as multiply and multiply-add.
IMMEDIATE_FACTORS = [
    "mad.lo.s32 %o, %a0, 1, %a1;", "mad.lo.u32 %o, %a0, 16, %a1;",
    "mad.lo.s32 %o, %a0, -1048576, %a1;", "mad.lo.s32 %o, %a0, 7, %a1;",
    "mul.lo.s32 %o, %a0, 1;", "mul.lo.u32 %o, %a0, 8;", "mul.lo.u32 %o, %a0, 0;",
    "mul.lo.s32 %o, %a0, 9;",
]


@pytest.mark.parametrize("body", IMMEDIATE_FACTORS)
def test_immediate_factor(body):
    ours, theirs, _ = run_both(body, 32, 2, 32, values=EDGES32)
    assert (ours == theirs).all()


@pytest.mark.parametrize("body", ["mul.hi.u64 %o, %a0, %a1;", "mul.hi.s64 %o, %a0, %a1;",
                                  "mul.hi.s64 %o, %a0, -4294967296;"])
def test_mul_hi_64(body):
    ours, theirs, data = run_both(body, 64, 2, 64, values=EDGES64)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i]))
                          for i in bad[:5]]


PERMUTES = ["prmt.b32 %o, %a0, %a1, %a2;"] + \
    [f"prmt.b32.{m} %o, %a0, %a1, %a2;" for m in ("f4e", "b4e", "rc8", "ecl", "ecr", "rc16")]


@pytest.mark.parametrize("body", PERMUTES)
def test_prmt_modes(body):
    ours, theirs, _ = run_both(body, 32, 3, 32, values=EDGES32 + [0x76543210, 0x01234567, 0x8888])
    assert (ours == theirs).all()


@pytest.mark.parametrize("op", ["and", "or", "xor", "add", "min", "max"])
def test_redux_every_operation(op):
    """AND is REDUX's unnamed default: it must not be spelled out (it has no encoding)."""
    ty = "u32" if op in ("add", "min", "max") else "b32"
    ours, theirs, _ = run_both(f"redux.sync.{op}.{ty} %o, %a0, -1;", 32, 1, 32, values=EDGES32)
    assert (ours == theirs).all()


SETS = ["set.lt.u32.f32 %o, %a0, %a1;", "set.eq.f32.s32 %o, %a0, %a1;",
        "set.gtu.f32.f32 %o, %a0, %a1;", "set.eq.ftz.f32.f32 %o, %a0, 0f3F800000;",
        "setp.ne.u32 %p0, %a2, 0;\nset.le.or.f32.f32 %o, 0f40000000, %a1, !%p0;",
        "set.ne.s32.u32 %o, %a0, %a1;",
        "setp.ne.u32 %p0, %a2, 0;\nset.lt.and.s32.u32 %o, %a0, %a1, %p0;",
        "setp.ne.u32 %p0, %a2, 0;\nset.ge.or.f32.s32 %o, %a0, %a1, !%p0;"]


@pytest.mark.parametrize("body", SETS)
def test_set_writes_all_ones_or_one_point_zero(body):
    ours, theirs, _ = run_both(body, 32, 3, 32, values=EDGES32 + [0x3F800000, 0x7FC00000])
    assert (ours == theirs).all()


DOTS = [f"dp4a.{a}.{b} %o, %a0, %a1, %a2;" for a in ("u32", "s32") for b in ("u32", "s32")] + \
    [f"dp2a.{h}.{a}.{b} %o, %a0, %a1, %a2;" for h in ("lo", "hi") for a in ("u32", "s32")
     for b in ("u32", "s32")]


@pytest.mark.parametrize("body", DOTS)
def test_dot_products(body):
    ours, theirs, _ = run_both(body, 32, 3, 32, values=EDGES32 + [0x80FF7F01, 0x7F80FF01])
    assert (ours == theirs).all()


@pytest.mark.parametrize("d", ["u8", "s8", "u16", "s16"])
def test_cvt_sat_narrows_s32(d):
    ours, theirs, _ = run_both(f".reg .b16 %h;\ncvt.sat.{d}.s32 %h, %a0;\ncvt.u32.u16 %o, %h;", 32, 1, 32,
                               values=EDGES32 + [255, 256, 0xFFFFFF80, 0xFFFF7FFF, 0x8000])
    assert (ours == theirs).all()


@pytest.mark.parametrize("op", ["mul24.lo.u32", "mul24.lo.s32", "mul24.hi.u32", "mul24.hi.s32"])
def test_mul24(op):
    ours, theirs, _ = run_both(f"{op} %o, %a0, %a1;", 32, 2, 32,
                               values=EDGES32 + [0xFFFFFF, 0x800000, 0x7FFFFF, 0xFF800001])
    assert (ours == theirs).all()


HALF_SETS = ["set.gtu.u32.f16x2 %o, %a0, %a1;", "set.gt.f16x2.f16x2 %o, %a0, %a1;",
             "set.lt.ftz.u32.f16x2 %o, %a0, %a1;", "set.ne.s32.f16x2 %o, %a0, %a1;",
             "setp.ne.u32 %p0, %a2, 0;\nset.ge.and.f16x2.f16x2 %o, %a0, %a1, %p0;"]


@pytest.mark.parametrize("body", HALF_SETS)
def test_set_of_half_pairs(body):
    """HSET2: one result per half (all ones, or 1.0 for an f16x2 destination)."""
    ours, theirs, _ = run_both(body, 32, 3, 32, values=[0, 0x3C003C00, 0x7E00BC00, 0x7C00FC00,
                                                        0x00010001, 0x80003C00, 0x3C000000])
    assert (ours == theirs).all()


@pytest.mark.parametrize("body", [
    "mad.wide.u32 %w, %a0, %a1, 0x123456789;", "mad.wide.s32 %w, %a0, %a1, 0x723456789;",
    "mad.wide.s32 %w, %a0, %a1, -0x500000001;", "mad.wide.u32 %w, %a0, 7, 0xFFFFFFFF00000001;",
    "mad.wide.u16 %w32, %h0, %h1, 0x12345;", "mad.wide.s16 %w32, %h0, %h1, -0x12345;"])
def test_mad_wide_keeps_a_64_bit_immediate_addend(body):
    """mad.wide's addend has twice the type's width: its immediate is not cut to the type."""
    post = "\nmov.b64 %o, %w;" if "%w," in body else "\ncvt.u64.u32 %o, %w32;"
    full = (".reg .b64 %w; .reg .b32 %w32; .reg .b16 %h<2>;\ncvt.u32.u64 %x0, %a0;\ncvt.u32.u64 %x1, %a1;\n"
            "cvt.u16.u64 %h0, %a0;\ncvt.u16.u64 %h1, %a1;\n" + body.replace("%a0", "%x0").replace("%a1", "%x1") + post)
    ours, theirs, data = run_both(full, 64, 2, 64, values=EDGES64)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i]))
                          for i in bad[:5]]


GUARDED = ["mul.hi.u64 %o, %a0, %a1;", "mul.hi.s64 %o, %a0, %a1;", "copysign.f64 %o, %a0, %a1;",
           "mul.lo.u64 %o, %a0, %a1;", "mad.lo.u64 %o, %a0, %a1, %a0;", "cvt.u8.u32 %x2, %x0;",
           "cvt.s16.u64 %x2, %a0;", "div.rn.f64 %o, %a0, %a1;", "div.rn.f32 %x2, %x0, %x1;",
           "sqrt.rn.f32 %x2, %x0;", "rcp.rn.f64 %o, %a0;", "shr.s64 %o, %a0, %x1;", "min.s64 %o, %a0, %a1;",
           "neg.s64 %o, %a0;", "selp.b64 %o, %a0, %a1, %p1;", "mov.b64 {%x2, %x3}, %a0;",
           "mad.wide.u32 %o, %x0, %x1, %a0;", "sad.u64 %o, %a0, %a1, %a0;", "cvt.rn.f32.u64 %x2, %a0;"]


@pytest.mark.parametrize("op", GUARDED)
def test_guarded_operations_keep_the_old_value_where_the_guard_is_false(op):
    """`@p op`: where p is false every destination keeps its value (an operation selected as
    several instructions must guard the ones that write the destination, copies included)."""
    body = (".reg .b16 %h0;\ncvt.u32.u64 %x0, %a0;\ncvt.u32.u64 %x1, %a1;\nmov.b32 %x2, 0x5a5a5a5a;\n"
            "mov.b32 %x3, 0x33;\nmov.b64 %o, 0x1111111122222222;\nsetp.lt.u64 %p0, %a0, %a1;\n"
            f"setp.ne.u32 %p1, %x0, 7;\n@%p0 {op}\n"
            "cvt.u64.u32 %a1, %x2;\nxor.b64 %o, %o, %a1;\ncvt.u64.u32 %a1, %x3;\nshl.b64 %a1, %a1, 32;\n"
            "xor.b64 %o, %o, %a1;")
    ours, theirs, data = run_both(body, 64, 2, 64, values=EDGES64)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i]))
                          for i in bad[:5]]


@pytest.mark.parametrize("body", [
    "setp.lt.u64 %p0, %a0, %rd2;\nselp.b64 %o, 1, 2, %p0;",                       # ISETP.EX with c[0x0][…]
    "setp.ge.s64 %p0, %rd2, %a0;\nselp.b64 %o, 1, 2, %p0;",
    "cvt.u32.u64 %x0, %a0;\ndp4a.u32.u32 %x1, %x0, 0x01020304, %x0;\ncvt.u64.u32 %o, %x1;",   # IDP with an immediate
    "cvt.u32.u64 %x0, %a0;\ndp2a.lo.s32.u32 %x1, %x0, -0x01020304, %x0;\ncvt.u64.u32 %o, %x1;",
    "cvt.u32.u64 %x0, %a0;\nld.param.u32 %x2, [in];\nshfl.sync.bfly.b32 %x1, %x0, %x2, 0x1f, -1;\ncvt.u64.u32 %o, %x1;",
    "cvt.u32.u64 %x0, %a0;\nld.param.u32 %x2, [in];\nshfl.sync.idx.b32 %x1, %x0, 3, %x2, -1;\ncvt.u64.u32 %o, %x1;",
    "cvt.u32.u64 %x0, %a0;\nld.param.u32 %x2, [in];\nprmt.b32.b4e %x1, %x0, %x0, %x2;\ncvt.u64.u32 %o, %x1;",
    "cvt.u32.u64 %x0, %a0;\nmul.lo.u32 %x1, %x0, 0x80000000;\ncvt.u64.u32 %o, %x1;",      # IMAD.SHL by 2^31
    "cvt.u32.u64 %x0, %a0;\nmad.lo.u32 %x1, %x0, 0x80000000, %x0;\ncvt.u64.u32 %o, %x1;",
])
def test_operand_kinds_that_were_internal_errors(body):
    """Each was 'internal error: cannot encode': a 64-bit compare with a 64-bit parameter,
    IDP with an immediate, SHFL/PRMT with a parameter, IMAD by 0x80000000."""
    ours, theirs, data = run_both(body, 64, 1, 64, values=EDGES64)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[i]), hex(ours[i]), hex(theirs[i])) for i in bad[:5]]


@pytest.mark.parametrize("body", [
    "set.lt.f16.f16 %h2, %h0, %h1;", "set.gtu.u16.f16 %h2, %h0, %h1;", "set.nan.s16.f16 %h2, %h0, %h1;",
    "set.lt.and.f16.f16 %h2, %h0, %h1, %p1;", "set.ge.or.u16.f16 %h2, %h0, %h1, %p1;"])
def test_set_into_16_bit_destinations(body):
    """`set` into .f16 (1.0 is 0x3C00) and 16-bit integers (all ones) was refused."""
    full = (".reg .b16 %h<3>;\ncvt.u16.u64 %h0, %a0;\ncvt.u16.u64 %h1, %a1;\ncvt.u32.u64 %x0, %a0;\n"
            "cvt.u32.u64 %x1, %a1;\nsetp.ne.u32 %p1, %x0, 7;\n" + body + "\ncvt.u64.u16 %o, %h2;")
    ours, theirs, _ = run_both(full, 64, 2, 64, values=[0, 1, 0x3C00, 0xBC00, 0x7E00, 0x7C00, 0x8000, 0xFFFF])
    assert (ours == theirs).all()


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("body,imm_b,addend", [
    ("mad.lo.u64 %o, %a0, %a1, 0xfffffffffffffff8;", None, 0xFFFFFFFFFFFFFFF8),
    ("mad.lo.s64 %o, %a0, %a1, 5;", None, 5),
    ("mad.lo.u64 %o, %a0, 7, 0x123456789;", 7, 0x123456789),
])
def test_mad_lo_64_with_an_immediate_addend(body, imm_b, addend, arch):
    """`mad.lo.{u,s}64` with an immediate addend (refused: "not supported yet"; the sm_90
    fuzz campaign met it): the addend in a register pair; the low 64 bits of a * b + c
    (exact arithmetic) and ptxas's cubin's bits (its sm_90 form `IMAD.WIDE.U32 R, R, R, UR`
    probed into the hopper table)."""
    from codegen_harness import run_both
    ours, theirs, data = run_both(body, 64, 2, 64, arch=arch)
    a = [int(x) for x in data[0::2]]
    b = [imm_b if imm_b is not None else int(x) for x in data[1::2]]
    want = np.array([(x * y + addend) % (1 << 64) for x, y in zip(a, b)], dtype=np.uint64)
    assert (ours == want).all()
    assert (ours == theirs).all()


# b's low word is known zero (a shift by >= 32, a zero-extended byte shifted up): a - b
# borrows nothing from the low word (a + ~0 + 1 carries); the realworld corpus's
# `scalar_widths` (stencil3d_params.cu) subtracts `(uint64_t)u8 << 40`
SUB_ZERO_LOW_WORD = {
    "shl.b64 %o, %a1, 40;\nsub.s64 %o, %a0, %o;": lambda a, b: a - (b << 40),
    "shl.b64 %o, %a1, 32;\nsub.s64 %o, %a0, %o;": lambda a, b: a - (b << 32),
    "and.b64 %o, %a1, -4294967296;\nsub.s64 %o, %a0, %o;": lambda a, b: a - (b & ~0xFFFFFFFF),
}


@pytest.mark.parametrize("body", SUB_ZERO_LOW_WORD)
def test_sub_64_of_a_value_with_a_zero_low_word(body):
    ours, theirs, data = run_both(body, 64, 2, 64, values=EDGES64)
    mask = (1 << 64) - 1
    want = np.array([SUB_ZERO_LOW_WORD[body](int(data[2 * i]), int(data[2 * i + 1])) & mask
                     for i in range(len(ours))], dtype=np.uint64)
    assert (theirs == want).all()
    bad = (ours != want).nonzero()[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(want[i])) for i in bad[:4]]
