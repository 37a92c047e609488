"""Integer forms issue 15 added: sub.sat.s32, mad.hi.sat.s32, mad24 (every form), 64-bit
mad.hi, abs.s64/abs.s16: ours vs ptxas in the emulator, and against exact arithmetic."""
import numpy as np
import pytest

from codegen_harness import run_both

E32 = [0, 1, 2, 0x7FFFFFFF, 0x80000000, 0x80000001, 0xFFFFFFFF, 0xFFFFFFFE, 0x7FFFFF, 0x800000,
       0xFFFFFF, 0x1000000, 0xFF800000, 12345]
E64 = [0, 1, 0x7FFFFFFFFFFFFFFF, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFF,
       0x100000000, 0x8000000000000001, 0x123456789ABCDEF0]


def s32(v):
    v = int(v) & 0xFFFFFFFF
    return v - (1 << 32) if v >> 31 else v


def s64(v):
    v = int(v) & 0xFFFFFFFFFFFFFFFF
    return v - (1 << 64) if v >> 63 else v


def sat32(v):
    return max(-(1 << 31), min((1 << 31) - 1, v)) & 0xFFFFFFFF


def s24(v):
    v = int(v) & 0xFFFFFF
    return v - (1 << 24) if v >> 23 else v


def _check(ours, theirs, want):
    want = np.array(want, dtype=ours.dtype)
    assert (theirs == want).all(), np.nonzero(theirs != want)[0][:4]
    assert (ours == want).all(), np.nonzero(ours != want)[0][:4]


def test_sub_sat_s32():
    ours, theirs, d = run_both("sub.sat.s32 %o, %a0, %a1;", 32, 2, 32, values=E32)
    _check(ours, theirs, [sat32(s32(a) - s32(b)) for a, b in zip(d[0::2], d[1::2])])


def test_mad_hi_sat_s32():
    ours, theirs, d = run_both("mad.hi.sat.s32 %o, %a0, %a1, %a2;", 32, 3, 32, values=E32)
    _check(ours, theirs, [sat32(((s32(a) * s32(b)) >> 32) + s32(c))
                          for a, b, c in zip(d[0::3], d[1::3], d[2::3])])


@pytest.mark.parametrize("form", ["lo.u32", "lo.s32", "hi.u32", "hi.s32", "hi.sat.s32"])
def test_mad24(form):
    ours, theirs, d = run_both(f"mad24.{form} %o, %a0, %a1, %a2;", 32, 3, 32, values=E32)
    signed = form.endswith("s32")
    want = []
    for a, b, c in zip(d[0::3], d[1::3], d[2::3]):
        x, y = (s24(a), s24(b)) if signed else (int(a) & 0xFFFFFF, int(b) & 0xFFFFFF)
        p = x * y
        part = (p >> 16) if form.startswith("hi") else p
        if form.startswith("hi") and signed:
            part = s32(part & 0xFFFFFFFF)      # bits 16..47 of the 48-bit product
        if "sat" in form:
            want.append(sat32(part + s32(c)))
        else:
            want.append((part + int(c)) & 0xFFFFFFFF)
    _check(ours, theirs, want)


@pytest.mark.parametrize("ty", ["u64", "s64"])
def test_mad_hi_64(ty):
    ours, theirs, d = run_both(f"mad.hi.{ty} %o, %a0, %a1, %a2;", 64, 3, 64, values=E64)
    conv = s64 if ty == "s64" else int
    _check(ours, theirs, [(((conv(a) * conv(b)) >> 64) + int(c)) & 0xFFFFFFFFFFFFFFFF
                          for a, b, c in zip(d[0::3], d[1::3], d[2::3])])


def test_abs_s64():
    ours, theirs, d = run_both("abs.s64 %o, %a0;", 64, 1, 64, values=E64)
    _check(ours, theirs, [abs(s64(a)) & 0xFFFFFFFFFFFFFFFF for a in d])


def test_abs_s16():
    values = [0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF, 0x1234]
    ours, theirs, d = run_both("abs.s16 %o, %a0;", 16, 1, 16, values=values)
    def ref(v):
        v = int(v) & 0xFFFF
        return abs(v - 0x10000 if v >> 15 else v) & 0xFFFF
    _check(ours, theirs, [ref(a) for a in d])


@pytest.mark.parametrize("form", ["u64", "s64", "shiftamt.u64", "shiftamt.s64"])
def test_bfind_64(form):
    values = E64 + [2, 3, 0x80000000, 0x7FFFFFFF, 0xFFFFFFFF00000000, 0xFFFFFFFF80000000,
                    0xFFFFFFFE00000000, 0x0000000100000000]
    body = f"bfind.{form} %x0, %a0;\ncvt.u64.u32 %o, %x0;"
    ours, theirs, d = run_both(body, 64, 1, 64, values=values)
    want = []
    for a in d:
        v = s64(a) if form.endswith("s64") else int(a)
        if v < 0:
            v = ~v
        idx = v.bit_length() - 1
        if idx < 0:
            want.append(0xFFFFFFFF)
        else:
            want.append(63 - idx if form.startswith("shiftamt") else idx)
    _check(ours, theirs, want)


@pytest.mark.parametrize("form", ["lt.s64", "le.u64", "eq.b64", "hs.u64", "gt.and.s64",
                                  "ne.or.u64", "ge.xor.s64"])
def test_setp_64_two_results(form):
    """`setp.<cmp>[.<bool>].<64-bit> p|q, a, b[, c]`: p = cmp BOOL c, q = !cmp BOOL c."""
    import operator
    parts = form.split(".")
    cmp, ty = parts[0], parts[-1]
    boolop = parts[1] if len(parts) == 3 else None
    c = ", %p2" if boolop else ""
    body = ("cvt.u32.u64 %x0, %a2;\nsetp.ne.b32 %p2, %x0, 0;\n" if boolop else "") + \
        f"setp.{form} %p0|%p1, %a0, %a1{c};\nselp.b64 %o, 1, 0, %p0;\nselp.b64 %x4x, 2, 0, %p1;"
    body = body.replace("selp.b64 %x4x, 2, 0, %p1;", "@%p1 add.u64 %o, %o, 2;")
    ours, theirs, d = run_both(body, 64, 3, 64, values=E64)
    rel = {"lt": operator.lt, "le": operator.le, "eq": operator.eq, "ne": operator.ne,
           "gt": operator.gt, "ge": operator.ge, "hs": operator.ge, "lo": operator.lt}[cmp]
    conv = s64 if ty == "s64" else int
    comb = {None: lambda x, y: x, "and": operator.and_, "or": operator.or_, "xor": operator.xor}[boolop]
    want = []
    for a, b, cc in zip(d[0::3], d[1::3], d[2::3]):
        r = rel(conv(a), conv(b))
        q = (int(cc) & 0xFFFFFFFF) != 0
        want.append(int(comb(r, q)) + 2 * int(comb(not r, q)))
    _check(ours, theirs, want)
