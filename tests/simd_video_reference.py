"""An independent Python model of PTX's SIMD video instructions (vadd2 … vset4), written
from the PTX ISA manual's pseudo-code (section "SIMD Video Instructions"): the lanes of
each operand are picked from the 64-bit pair {b, a} by its selector and extended by its
type, the operation is exact on unbounded integers, `.sat` clamps each lane to the
destination type's 16-bit (2-way) or 8-bit (4-way) range, then either the lanes the mask
names replace those of c (merge) or their sum is added to c (`.add`). Tests compare
ptxas's cubin with it in the emulator, so a misreading of the manual shows up as ptxas
disagreeing."""
from __future__ import annotations

M32 = 0xFFFFFFFF
COMPARE = {"eq": lambda x, y: x == y, "ne": lambda x, y: x != y, "lt": lambda x, y: x < y,
           "le": lambda x, y: x <= y, "gt": lambda x, y: x > y, "ge": lambda x, y: x >= y}


def lanes(a: int, b: int, sel: str, signed: bool, n: int) -> list[int]:
    """Lane i (low first) of `.hxy` / `.bxyzw` (digits written from the top lane down)."""
    width = 32 // n
    pool = (b & M32) << 32 | (a & M32)
    out = []
    for digit in reversed(sel[1:]):
        v = (pool >> (width * int(digit))) & ((1 << width) - 1)
        out.append(v - (1 << width) if signed and v >> (width - 1) else v)
    return out


def default_sel(n: int, operand: int) -> str:
    return ("h10", "h32")[operand] if n == 2 else ("b3210", "b7654")[operand]


def mask_lanes(mask: str | None, n: int) -> set[int]:
    return set(range(n)) if mask is None else {int(d) for d in mask[1:]}


def simd(op: str, types: tuple[str, ...], mods: tuple[str, ...], a: int, b: int, c: int,
         sel: tuple = (None, None), mask: str | None = None) -> int:
    """The 32-bit result of `op.<types>.<mods> d[.mask], a[.asel], b[.bsel], c`; `op` ends
    in 2 or 4; `types` is (dtype, atype, btype), or (atype, btype) for vset2/vset4 whose
    first modifier is the comparison."""
    n = int(op[-1])
    base = op[:-1]
    width = 32 // n
    if base == "vset":
        dtype, (atype, btype) = "u32", types
    else:
        dtype, atype, btype = types
    va = lanes(a, b, sel[0] or default_sel(n, 0), atype[0] == "s", n)
    vb = lanes(a, b, sel[1] or default_sel(n, 1), btype[0] == "s", n)
    t = []
    for x, y in zip(va, vb):
        if base == "vset":
            r = int(COMPARE[mods[0]](x, y))
        elif base == "vadd":
            r = x + y
        elif base == "vsub":
            r = x - y
        elif base == "vavrg":
            r = (x + y + 1) >> 1 if x + y >= 0 else (x + y) >> 1
        elif base == "vabsdiff":
            r = abs(x - y)
        elif base == "vmin":
            r = min(x, y)
        else:
            r = max(x, y)
        if "sat" in mods:
            if dtype[0] == "s":
                r = min(max(r, -(1 << (width - 1))), (1 << (width - 1)) - 1)
            else:
                r = min(max(r, 0), (1 << width) - 1)
        t.append(r)
    chosen = mask_lanes(mask, n)
    if "add" in mods:
        return (c + sum(t[i] for i in chosen)) & M32
    d = c & M32
    for i in chosen:
        part = ((1 << width) - 1) << (width * i)
        d = d & ~part | (t[i] << (width * i)) & part
    return d & M32
