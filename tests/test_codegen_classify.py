"""testp.*, slct, szext, bmsk.wrap: our cubin against ptxas's in the emulator, and both
against a NumPy reference of the PTX semantics (the emulator's SGXT.W/BMSK.W and the
classification compares are checked, not only assumed)."""
import math
import struct

import numpy as np
import pytest

from codegen_harness import SPECIAL, run_both

CLASSES = ["finite", "infinite", "number", "notanumber", "normal", "subnormal"]


def _classify(bits: int, wide: bool, cls: str) -> bool:
    v = struct.unpack("<d" if wide else "<f", bits.to_bytes(8 if wide else 4, "little"))[0]
    tiny = 2.0 ** (-1022 if wide else -126)
    return {"finite": math.isfinite(v), "infinite": math.isinf(v), "number": not math.isnan(v),
            "notanumber": math.isnan(v),
            "normal": math.isfinite(v) and (v == 0 or abs(v) >= tiny),   # zero counts as normal
            "subnormal": v != 0 and abs(v) < tiny}[cls]


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("bits", [32, 64])
def test_testp(cls, bits):
    body = f"testp.{cls}.f{bits} %p0, %a0;\nselp.b{bits} %o, 1, 0, %p0;"
    ours, theirs, data = run_both(body, bits, 1, bits, values=SPECIAL[bits] + [
        0x00800000 if bits == 32 else 0x0010000000000000, 0x807FFFFF if bits == 32 else 0x800FFFFFFFFFFFFF])
    want = np.array([_classify(int(v), bits == 64, cls) for v in data], dtype=ours.dtype)
    assert (theirs == want).all()
    assert (ours == want).all()


def _slct_reference(a, b, c, cty, ftz):
    c = c.astype(np.uint64) & 0xFFFFFFFF
    if cty == "f32":
        cf = c.astype(np.uint32).view(np.float32)
        if ftz:
            cf = np.where(np.abs(cf) < np.float32(2.0 ** -126), np.float32(0), cf)
        take_a = cf >= 0
    else:
        take_a = c.astype(np.uint32).view(np.int32) >= 0
    return np.where(take_a, a, b)


@pytest.mark.parametrize("form", ["b32.s32", "s32.s32", "f32.f32", "u32.f32", "ftz.f32.f32"])
def test_slct(form):
    ours, theirs, data = run_both(f"slct.{form} %o, %a0, %a1, %a2;", 32, 3, 32,
                                  values=SPECIAL[32] + [0x80000000, 5])
    want = _slct_reference(data[0::3], data[1::3], data[2::3], form.split(".")[-1],
                           form.startswith("ftz"))
    assert (theirs == want).all()
    assert (ours == want).all()


@pytest.mark.parametrize("form", ["b64.s32", "f64.f32"])
def test_slct_64(form):
    body = f"mov.b64 {{%x0, %x1}}, %a2;\nslct.{form} %o, %a0, %a1, %x0;"
    ours, theirs, data = run_both(body, 64, 3, 64, values=SPECIAL[64] + [0x80000000, 5])
    want = _slct_reference(data[0::3], data[1::3], data[2::3], form.split(".")[-1], False)
    assert (theirs == want).all()
    assert (ours == want).all()


def _szext(a, n, signed, wrap):
    n = n % 32 if wrap else min(n, 32)
    if n == 0:
        return 0
    v = a & ((1 << n) - 1) if n < 32 else a
    if signed and n < 32 and v >> (n - 1) & 1:
        v |= 0xFFFFFFFF ^ ((1 << n) - 1)
    return v


@pytest.mark.parametrize("form", ["clamp.u32", "clamp.s32", "wrap.u32", "wrap.s32"])
def test_szext(form):
    mode, ty = form.split(".")
    values = [0, 1, 5, 15, 16, 31, 32, 33, 63, 64, 255, 256, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF]
    ours, theirs, data = run_both(f"szext.{form} %o, %a0, %a1;", 32, 2, 32, values=values)
    want = np.array([_szext(int(a), int(n), ty == "s32", mode == "wrap")
                     for a, n in zip(data[0::2], data[1::2])], dtype=np.uint32)
    # SGXT reads the low 8 bits of the width (the emulator's model, as for bfe's length):
    # for .clamp, widths of 256 and more are where that and PTX's "min(b, 32)" could part,
    # so the reference is checked below 256; ours and ptxas's agree everywhere
    sure = (data[1::2] < 256) | (mode == "wrap")
    assert (ours == theirs).all()
    assert (theirs[sure] == want[sure]).all()


def _bmsk(pos, width, wrap):
    if wrap:
        pos, width = pos % 32, width % 32
    pos, width = min(pos, 32), min(width, 32)      # clamp: positions/widths past 32 saturate
    return (((1 << width) - 1) << pos) & 0xFFFFFFFF if pos < 32 else 0


@pytest.mark.parametrize("mode", ["clamp", "wrap"])
def test_bmsk(mode):
    values = [0, 1, 5, 15, 16, 31, 32, 33, 40, 63, 64, 255, 256, 0xFFFFFFFF]
    ours, theirs, data = run_both(f"bmsk.{mode}.b32 %o, %a0, %a1;", 32, 2, 32, values=values)
    want = np.array([_bmsk(int(p) & 0xFFFFFFFF, int(w) & 0xFFFFFFFF, mode == "wrap")
                     for p, w in zip(data[0::2], data[1::2])], dtype=np.uint32)
    # clamp compares the whole register with 32 (the PTX manual; an H200 in GPU run 27, fuzz
    # 9500790: a width of 0x111 gave every bit above the position): checked at every value
    assert (ours == theirs).all()
    assert (theirs == want).all()
