"""64-bit values built from and split into 32-bit words: `bfi.b64` with a constant field
(nvcc joins two halves as `bfi.b64 d, hi, lo, 32, 32` after shuffling each), and 64-bit
shifts by exactly 32 (nvcc takes a high word as `shr.u64 t, x, 32; cvt.u32.u64`). Results
against ptxas's cubin in the emulator, bit for bit; the shapes against ptxas's listing."""
import re

import numpy as np
import pytest

from codegen_harness import kernel, run_both
from ptx2sass import codegen, oracle

EDGES64 = [0, 1, 5, 31, 32, 33, 40, 63, 64, 65, 255, 0x141, 0x8000000000000000, 0xFFFFFFFFFFFFFFFF,
           0x7FFFFFFF00000000, 0x00000000FFFFFFFF, 0x123456789ABCDEF0, 0xFEDCBA9876543210]

# (pos, len): word-aligned, straddling, empty, whole, and past 64 (clamped as the register
# form clamps)
FIELDS = [(32, 32), (0, 32), (0, 64), (32, 16), (0, 0), (16, 8), (5, 40), (8, 48), (31, 2),
          (33, 31), (40, 24), (63, 1), (64, 8), (70, 4), (0, 70), (48, 32), (36, 0)]


@pytest.mark.parametrize("pos,length", FIELDS)
def test_bfi64_with_a_constant_field_is_ptxas_s(pos, length):
    ours, theirs, data = run_both(f"bfi.b64 %o, %a0, %a1, {pos}, {length};", 64, 2, 64,
                                  values=EDGES64)
    bad = (ours != theirs).nonzero()[0]
    assert not len(bad), [(hex(data[2 * i]), hex(data[2 * i + 1]), hex(ours[i]), hex(theirs[i]))
                          for i in bad[:4]]


@pytest.mark.parametrize("body", [
    "shr.u64 %y0, %a0, 32;\nadd.u64 %o, %y0, %a1;",
    "shr.s64 %y0, %a0, 32;\nadd.u64 %o, %y0, %a1;",
    "shl.b64 %y0, %a0, 32;\nadd.u64 %o, %y0, %a1;",
    "shr.u64 %y0, %a0, 32;\ncvt.u32.u64 %x0, %y0;\nmul.wide.u32 %o, %x0, %x0;",
])
def test_shifts_by_32_are_ptxas_s(body):
    ours, theirs, _ = run_both(".reg .b64 %y<4>;\n" + body, 64, 2, 64, values=EDGES64)
    assert (ours == theirs).all()


# nvcc's 64-bit shuffle: split, shuffle each word, join with bfi (cuda corpus shfl_xor)
JOIN = """.reg .b64 %y<4>;
cvt.u32.u64 %x0, %a0;
shr.u64 %y0, %a0, 32;
cvt.u32.u64 %x1, %y0;
shfl.sync.bfly.b32 %x2|%p0, %x1, 5, 31, -1;
shfl.sync.bfly.b32 %x3|%p1, %x0, 5, 31, -1;
cvt.u64.u32 %y1, %x2;
cvt.u64.u32 %y2, %x3;
bfi.b64 %o, %y1, %y2, 32, 32;"""


def _opcodes(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, options=())
    return [line.split("*/", 1)[1].strip().split()[0] for line in text.splitlines()
            if "/*0" in line and "*/" in line and "NOP" not in line]


def test_joining_two_shuffled_words_is_ptxas_s():
    """ptxas writes no LOP3 or SHF for the split and the join (the words are placed, not
    masked and shifted); nor do we, and the results are ptxas's."""
    ours, theirs, _ = run_both(JOIN, 64, 1, 64, values=EDGES64)
    assert (ours == theirs).all()
    ptx = kernel(JOIN, 64, 1, 64)
    theirs_ops = _opcodes(oracle.ptxas(ptx, "sm_89").output)
    ours_ops = _opcodes(codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89",
                                                filename="k.ptx")[0])
    for op in ("LOP3.LUT", "SHF.L.U32", "SHF.R.U32.HI", "SHF.L.U64.HI"):
        assert ours_ops.count(op) <= theirs_ops.count(op), (op, ours_ops, theirs_ops)


def _zero_moves(cubin: bytes) -> int:
    """`MOV R, RZ` / `IMAD.MOV.U32 R, RZ, RZ, RZ` lines of a listing."""
    text = oracle.nvdisasm(cubin, options=())
    return len(re.findall(r"MOV(?:\.U32)? R\d+, (?:RZ, RZ, )?RZ ;", text))


def test_high_words_nobody_reads_are_not_written():
    """The zero high words of the joined halves' `cvt.u64.u32` and of `shr.u64 x, 32` are
    read by nothing (the join reads low words only): ptxas writes no `MOV R, RZ` for them,
    nor do we (isel/dead_parts.py)."""
    ptx = kernel(JOIN, 64, 1, 64)
    theirs = _zero_moves(oracle.ptxas(ptx, "sm_89").output)
    ours = _zero_moves(codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89",
                                               filename="k.ptx")[0])
    assert ours <= theirs, (ours, theirs)


# nvcc's index into a small table: a 32-bit value zero-extended, masked, added to a pointer
MASKED_INDEX = """.reg .b64 %y<4>;
cvt.u32.u64 %x0, %a0;
shl.b32 %x1, %x0, 2;
cvt.u64.u32 %y0, %x1;
and.b64 %y1, %y0, 12;
add.s64 %o, %a1, %y1;"""


def test_known_zero_high_words_are_read_as_rz():
    """The high word of a zero-extension, kept zero by the `and`, is RZ to the 64-bit add
    (ptxas: LOP3 on the low word, IADD3 + IADD3.X/IMAD.X with RZ): no LOP3 of the high
    word, no MOV R, RZ; results are ptxas's."""
    ours, theirs, _ = run_both(MASKED_INDEX, 64, 2, 64, values=EDGES64)
    assert (ours == theirs).all()
    ptx = kernel(MASKED_INDEX, 64, 2, 64)
    theirs_ops = _opcodes(oracle.ptxas(ptx, "sm_89").output)
    ours_cubin = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")[0]
    ours_ops = _opcodes(ours_cubin)
    assert ours_ops.count("LOP3.LUT") <= theirs_ops.count("LOP3.LUT"), (ours_ops, theirs_ops)
    assert _zero_moves(ours_cubin) == 0
