"""`max.xorsign.abs.f16x2` with a constant operand, held to the PTX manual's definition (the
larger magnitude, with the xor of the operands' signs) computed in NumPy per half. ptxas keeps
this constant in a register; the immediate-pair form (`HMNMX2.BF16_V2.XORSIGN R, |R|, imm,
imm`, fuzz seed 9301152, whose re-read of the signs raised a TypeError in the emulator) is
what ptxas writes for a bf16x2 constant whose halves are both positive: the second test."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.launch import run

PTX = """.version 8.0
.target ARCH
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in)
{
  .reg .b64 %rd<6>; .reg .b32 %r<4>; .reg .u32 %t;
  ld.param.u64 %rd1, [out]; ld.param.u64 %rd2, [in];
  mov.u32 %t, %tid.x;
  mul.wide.u32 %rd3, %t, 4;
  add.s64 %rd4, %rd2, %rd3;
  add.s64 %rd5, %rd1, %rd3;
  ld.global.b32 %r1, [%rd4];
  mov.b32 %r3, 0xC2003C00;
  max.xorsign.abs.f16x2 %r2, %r1, %r3;
  st.global.b32 [%rd5], %r2;
  ret;
}
"""


def _want(x: np.ndarray) -> np.ndarray:
    a = x.view(np.float16).reshape(-1, 2)
    b = np.array([0x3C00, 0xC200], np.uint16).view(np.float16)      # (low 1.0, high -3.0)
    mag = np.maximum(np.abs(a), np.abs(b))
    neg = np.signbit(a) ^ np.signbit(b)
    return np.where(neg, -mag, mag).astype(np.float16).reshape(-1).view(np.uint32)


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
def test_xorsign_abs_max_with_a_constant_pair(arch):
    build = oracle.ptxas(PTX.replace("ARCH", arch), arch)
    assert build.ok
    assert "XORSIGN" in oracle.nvdisasm(build.output, ())
    halves = np.array([1.5, -2.0, -0.5, 4.0, 0.0, -7.0, 3.0, 2.5, -1.0, -3.5, 6.0, -0.25] * 4, np.float16)
    x = halves.view(np.uint32)
    out = np.zeros_like(x)
    run(build.output, "k", (1, 1, 1), (len(x), 1, 1), [out, x])
    assert [hex(v) for v in out] == [hex(v) for v in _want(x)]


def _bf16(bits: np.ndarray) -> np.ndarray:
    return (bits.astype(np.uint32) << 16).view(np.float32)


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("constant", [0x40003C00, 18133])
def test_xorsign_abs_max_bf16_immediate_pair(arch, constant):
    """ptxas folds a positive bf16x2 constant into the instruction's immediate pair
    (`HMNMX2.BF16_V2.XORSIGN R, |R|, 2, 0.0078125`); the result per half is the larger
    magnitude with the xor of the signs (the manual), the halves exact in float32."""
    ptx = PTX.replace("ARCH", arch).replace("max.xorsign.abs.f16x2", "max.xorsign.abs.bf16x2") \
        .replace("0xC2003C00", str(constant))
    build = oracle.ptxas(ptx, arch)
    assert build.ok
    line = next(x for x in oracle.nvdisasm(build.output, ()).splitlines() if "HMNMX2" in x)
    assert "XORSIGN" in line and line.count("|") == 2        # one register operand, an immediate pair
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << 16, 128, dtype=np.uint32).astype(np.uint16)
    a[(a & 0x7F80) == 0x7F80] &= 0xBFFF                       # no NaN/inf halves: finite inputs only
    x = a.view(np.uint32)
    out = np.zeros_like(x)
    run(build.output, "k", (1, 1, 1), (len(x), 1, 1), [out, x])
    b = np.array([constant & 0xFFFF, constant >> 16], np.uint16)
    av, bv = _bf16(a.reshape(-1, 2)), _bf16(np.broadcast_to(b, (len(x), 2)))
    mag = np.maximum(np.abs(av), np.abs(bv))
    neg = np.signbit(av) ^ np.signbit(bv)
    want = (np.where(neg, -mag, mag).view(np.uint32) >> 16).astype(np.uint16).reshape(-1).view(np.uint32)
    assert [hex(v) for v in out] == [hex(v) for v in want]
