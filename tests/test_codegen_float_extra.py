"""Float forms issue 15 added: min/max .NaN and .xorsign.abs (f32, f16, f16x2, bf16x2),
fma.rn.relu (f16, f16x2), rcp.approx.ftz.f64: ours vs ptxas in the emulator, and the
emulator's FMNMX/HMNMX2/HFMA2 modifiers against the PTX ISA's semantics with NumPy."""
import numpy as np
import pytest

from codegen_harness import SPECIAL, run_both

F32_NAN = 0x7FFFFFFF
F16_NAN = 0x7FFF


def _minmax(a, b, op, nan, xorsign):
    """PTX min/max on floats (Python floats), None for a NaN result."""
    sign = (np.signbit(a) != np.signbit(b)) if xorsign else None
    if xorsign:
        a, b = abs(a), abs(b)
    an, bn = np.isnan(a), np.isnan(b)
    if an and bn or nan and (an or bn):
        return None
    if an:
        r = b
    elif bn:
        r = a
    elif a == b:
        r = (a if np.signbit(a) else b) if op == "min" else (b if np.signbit(a) else a)
    else:
        r = min(a, b) if op == "min" else max(a, b)
    if xorsign:
        r = -abs(r) if sign else abs(r)
    return r


@pytest.mark.parametrize("mods", ["NaN", "xorsign.abs", "NaN.xorsign.abs", "ftz.NaN.xorsign.abs"])
@pytest.mark.parametrize("op", ["min", "max"])
def test_min_max_f32(op, mods):
    ours, theirs, d = run_both(f"{op}.{mods}.f32 %o, %a0, %a1;", 32, 2, 32, values=SPECIAL[32])
    assert (ours == theirs).all()
    if "ftz" in mods:
        return
    want = []
    for a, b in zip(d[0::2].view(np.float32), d[1::2].view(np.float32)):
        r = _minmax(np.float32(a), np.float32(b), op, "NaN" in mods, "xorsign" in mods)
        want.append(F32_NAN if r is None else int(np.float32(r).view(np.uint32)))
    want = np.array(want, dtype=np.uint32)
    assert (theirs == want).all(), np.nonzero(theirs != want)[0][:4]


@pytest.mark.parametrize("mods", ["NaN", "xorsign.abs", "NaN.xorsign.abs"])
@pytest.mark.parametrize("op", ["min", "max"])
def test_min_max_f16x2(op, mods):
    ours, theirs, d = run_both(f"{op}.{mods}.f16x2 %o, %a0, %a1;", 32, 2, 32,
                               values=[(h << 16) | l for h, l in zip(SPECIAL[16], SPECIAL[16][3:])])
    assert (ours == theirs).all()
    want = []
    for a, b in zip(d[0::2], d[1::2]):
        out = 0
        for shift in (0, 16):
            x = np.uint16((int(a) >> shift) & 0xFFFF).view(np.float16)
            y = np.uint16((int(b) >> shift) & 0xFFFF).view(np.float16)
            r = _minmax(x, y, op, "NaN" in mods, "xorsign" in mods)
            out |= (F16_NAN if r is None else int(np.float16(r).view(np.uint16))) << shift
        want.append(out)
    want = np.array(want, dtype=np.uint32)
    assert (theirs == want).all(), np.nonzero(theirs != want)[0][:4]


@pytest.mark.parametrize("ty", ["f16", "f16x2", "bf16x2"])
def test_fma_relu(ty):
    bits = 16 if ty == "f16" else 32
    ours, theirs, d = run_both(f"fma.rn.relu.{ty} %o, %a0, %a1, %a2;", bits, 3, bits,
                               values=SPECIAL[16] if bits == 16 else None)
    assert (ours == theirs).all()
    if ty == "bf16x2":
        return
    want = []
    for a, b, c in zip(d[0::3], d[1::3], d[2::3]):
        out = 0
        for shift in ((0,) if bits == 16 else (0, 16)):
            x, y, z = (np.float64(np.uint16((int(v) >> shift) & 0xFFFF).view(np.float16))
                       for v in (a, b, c))
            r = np.float16(x * y + z)       # the product is exact; the sum rounds once
            if np.isnan(r):
                h = F16_NAN
            elif np.signbit(r):
                h = 0
            else:
                h = int(r.view(np.uint16))
            out |= h << shift
        want.append(out)
    want = np.array(want, dtype=ours.dtype)
    assert (theirs == want).all(), np.nonzero(theirs != want)[0][:4]


def test_rcp_approx_ftz_f64():
    """MUFU.RCP64H's high word with a zero low word: the reciprocal to about 20 bits."""
    ours, theirs, d = run_both("rcp.approx.ftz.f64 %o, %a0;", 64, 1, 64,
                               values=[0x3FF0000000000000, 0x4000000000000000, 0xC008000000000000])
    assert (ours == theirs).all()
    x, y = d.view(np.float64), ours.view(np.float64)
    ok = np.isfinite(x) & (np.abs(x) > 1e-300) & (np.abs(x) < 1e300)
    assert (ours.view(np.uint64)[ok] & 0xFFFFFFFF == 0).all()
    assert (np.abs(y[ok] * x[ok] - 1) < 2.0 ** -19).all()
