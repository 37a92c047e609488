"""`mul.hi.s64` by a constant: the signed correction (subtract the other operand when an
operand is negative) needs no run-time test for a constant, whose sign is known (Triton's
int64_rows divides by 13 through `mul.hi.s64 x, 0x4ec4ec4ec4ec4ec5`). Exact arithmetic and
ptxas's cubin in the emulator give the expectations; ptxas's instruction count the bar."""
import pytest

from codegen_harness import kernel, run_both
from ptx2sass import codegen, oracle
from test_codegen_int_extra import E64, s64
from test_codegen_quality import _instructions
from ptx2sass.tinygrad import sass_listing

CONSTANTS = [5675921253449092805, -7, 0x7FFFFFFFFFFFFFFF, -(1 << 63), 3]


@pytest.mark.parametrize("c", CONSTANTS)
def test_mul_hi_s64_constant_exact(c):
    body = f"mul.hi.s64 %o, %a0, {c};"
    ours, theirs, d = run_both(body, 64, 1, 64, values=E64)
    want = [((s64(x) * c) >> 64) & 0xFFFFFFFFFFFFFFFF for x in d]
    assert [int(v) for v in theirs] == want
    assert [int(v) for v in ours] == want


@pytest.mark.parametrize("c", [c for c in CONSTANTS if c != -(1 << 63)])   # ptxas: a shift
def test_mul_hi_s64_constant_no_sign_test(c):
    """No compare or select of the constant's sign: as many ISETPs and SELs as ptxas's
    code (one run-time correction, for the loaded operand), and within two instructions of
    ptxas's count (before: a second ISETP and two more SELs, 6 instructions more)."""
    ptx = kernel(f"mul.hi.s64 %o, %a0, {c};", 64, 1, 64, "8.0", "sm_89")
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    mine = _instructions(sass_listing(ours))
    theirs = _instructions(sass_listing(oracle.ptxas(ptx).output))
    for op in ("ISETP", "SEL"):
        assert sum(o.startswith(op) for o in mine) <= sum(o.startswith(op) for o in theirs), (mine, theirs)
    assert len(mine) <= len(theirs) + 2, (mine, theirs)


LO_CONSTANTS = [13, 0xFFFFFFFF, (1 << 32) + 1, -13, 1]


@pytest.mark.parametrize("c", LO_CONSTANTS)
def test_mul_lo_s64_constant_exact(c):
    ours, theirs, d = run_both(f"mul.lo.s64 %o, %a0, {c};", 64, 1, 64, values=E64)
    want = [(s64(x) * c) & 0xFFFFFFFFFFFFFFFF for x in d]
    assert [int(v) for v in theirs] == want
    assert [int(v) for v in ours] == want


@pytest.mark.parametrize("c", [13, 0xFFFFFFFF])
def test_mul_lo_s64_by_a_32_bit_constant_adds_no_zero_cross_product(c):
    """A constant whose high word is zero has one cross product (high word of x times the
    constant), not two: no `IADD3 R, R, RZ, RZ` adding the zero one (Triton int64_rows' `x / 13 * 13`).
    At most ptxas's instruction count (before: one more)."""
    ptx = kernel(f"mul.lo.s64 %o, %a0, {c};", 64, 1, 64, "8.0", "sm_89")
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")
    mine = _instructions(sass_listing(ours))
    theirs = _instructions(sass_listing(oracle.ptxas(ptx).output))
    assert not [o for o in mine if o.startswith("IADD3") and o.count("RZ") >= 2], mine
    assert len(mine) <= len(theirs), (mine, theirs)


def _moved_words(listing: list[str], c: int) -> list[str]:
    """Moves of an immediate that is a word of `c` (or its negation/inversion) into a register."""
    m = 0xFFFFFFFF
    lo, hi = c & m, (c >> 32) & m
    words = {w for w in (lo, hi, -lo & m, ~hi & m) if w >= 16}
    moves = [o for o in listing if o.startswith(("MOV ", "IMAD.MOV"))]
    return [o for o in moves if o.split(",")[-1].strip().lstrip("-").startswith("0x")
            and int(o.split(",")[-1].strip(), 0) & m in words]


@pytest.mark.parametrize("arch", ["sm_89", "sm_100"])
@pytest.mark.parametrize("c", [5675921253449092805, -7, 0x7FFFFFFFFFFFFFFF])
def test_mul_hi_s64_constant_words_are_immediates(c, arch):
    """The constant's words sit in IMAD.WIDE's multiplier slot and the correction's IADD3s
    as immediates (ptxas's `IMAD.WIDE.U32 R8, R5, -0x3b13b13b, RZ`, `IADD3 R, P0, PT, R,
    0x3b13b13b, RZ`), not moved into registers first (before: `MOV R0, 0x4ec4ec4e`,
    `IMAD.MOV.U32 R8, RZ, RZ, -0x3b13b13b`, two registers held across the product); the
    results exact and equal to ptxas's in the emulator."""
    body = f"mul.hi.s64 %o, %a0, {c};"
    ptx = kernel(body, 64, 1, 64, "8.8", "sm_89" if arch == "sm_89" else arch)
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, arch, "k.ptx"), arch, filename="k.ptx")
    mine = _instructions(sass_listing(ours))
    assert not _moved_words(mine, c), mine
    ours_out, theirs_out, d = run_both(body, 64, 1, 64, values=E64, version="8.8", arch=arch,
                                       target="sm_89" if arch == "sm_89" else arch)
    want = [((s64(x) * c) >> 64) & 0xFFFFFFFFFFFFFFFF for x in d]
    assert [int(v) for v in theirs_out] == want
    assert [int(v) for v in ours_out] == want
