"""An independent Python model of PTX's scalar video instructions and `sad`, written from
the PTX ISA manual's pseudo-code (section "Scalar Video Instructions"): operands are
selected and extended to unbounded integers, the operation is exact, then saturation, the
secondary operation or the data merge. Tests compare ptxas's cubin with it in the emulator,
so a misreading of the manual shows up as ptxas disagreeing."""
from __future__ import annotations

M32 = 0xFFFFFFFF


def part(x: int, ty: str, sel: str | None) -> int:
    """partSelectSignExtend: the selected byte/half/word of `x`, extended per `ty`."""
    if sel is None:
        v, bits = x & M32, 32
    elif sel[0] == "b":
        v, bits = (x >> (8 * int(sel[1]))) & 0xFF, 8
    else:
        v, bits = (x >> (16 * int(sel[1]))) & 0xFFFF, 16
    if ty[0] == "s" and v >> (bits - 1):
        v -= 1 << bits
    return v


def _width(dsel: str | None) -> int:
    return 32 if dsel is None else (8 if dsel[0] == "b" else 16)


def saturate(v: int, signed: bool, dsel: str | None) -> int:
    bits = _width(dsel)
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    return min(max(v, lo), hi)


def secondary(op2: str | None, tmp: int, c: int, signed: bool) -> int:
    if op2 is None:
        return tmp
    cv = part(c, "s32" if signed else "u32", None)
    return {"add": tmp + cv, "min": min(tmp, cv), "max": max(tmp, cv)}[op2]


def merge(dsel: str | None, tmp: int, c: int) -> int:
    if dsel is None:
        return tmp & M32
    shift = 8 * int(dsel[1]) if dsel[0] == "b" else 16 * int(dsel[1])
    mask = (0xFF if dsel[0] == "b" else 0xFFFF) << shift
    return (c & ~mask | (tmp << shift) & mask) & M32


COMPARE = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
           "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}


def video(op: str, types: tuple[str, ...], mods: tuple[str, ...], a: int, b: int, c: int = 0,
          sel: tuple = (None, None), dsel: str | None = None, neg: tuple = (False, False, False)) -> int:
    """The 32-bit result of `op.<types>.<mods> d[.dsel], a[.sel0], b[.sel1][, c]`.
    `types` is (dtype, atype, btype), or (atype, btype) for vset."""
    op2 = next((m for m in mods if m in ("add", "min", "max")), None) if op != "vset" \
        else next((m for m in mods[1:] if m in ("add", "min", "max")), None)
    if op == "vset":
        atype, btype = types
        tmp = int(COMPARE[mods[0]](part(a, atype, sel[0]), part(b, btype, sel[1])))
        return merge(dsel, secondary(op2, tmp, c, False), c)
    dtype, atype, btype = types
    signed = dtype[0] == "s"
    ta, tb = part(a, atype, sel[0]), part(b, btype, sel[1])
    if op == "vmad":
        return _vmad(types, mods, ta, tb, c, neg)
    if op in ("vshl", "vshr"):
        tb = min(tb, 32) if "clamp" in mods else tb & 31
        tmp = ta << tb if op == "vshl" else ta >> tb
    else:
        tmp = {"vadd": lambda: ta + tb, "vsub": lambda: ta - tb, "vabsdiff": lambda: abs(ta - tb),
               "vmin": lambda: min(ta, tb), "vmax": lambda: max(ta, tb)}[op]()
    if "sat" in mods:
        tmp = saturate(tmp, signed, dsel)
    return merge(dsel, secondary(op2, tmp, c, signed), c)


def _vmad(types, mods, ta, tb, c, neg) -> int:
    _, atype, btype = types
    signed = atype[0] == "s" or btype[0] == "s" or (neg[0] != neg[1]) or neg[2]
    tmp = ta * tb
    lsb = 0
    if "po" in mods:
        lsb = 1
    elif neg[0] != neg[1]:
        tmp, lsb = ~tmp, 1
    elif neg[2]:
        c, lsb = ~c, 1
    cv = part(c & M32, "s32" if signed else "u32", None)
    tmp = tmp + cv + lsb
    if "shr7" in mods:
        tmp >>= 7
    elif "shr15" in mods:
        tmp >>= 15
    tmp = ((tmp + (1 << 63)) & ((1 << 64) - 1)) - (1 << 63)   # 64-bit result
    if "sat" in mods:
        tmp = min(max(tmp, -(1 << 31)), (1 << 31) - 1) if signed else min(max(tmp, 0), M32)
    return tmp & M32


def sad(ty: str, a: int, b: int, c: int) -> int:
    bits = int(ty[1:])
    mask = (1 << bits) - 1

    def ext(x):
        x &= mask
        return x - (1 << bits) if ty[0] == "s" and x >> (bits - 1) else x
    return (abs(ext(a) - ext(b)) + c) & mask
