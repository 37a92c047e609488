"""Words sm_100's nvdisasm reads differently from sm_120's run as sm_100 reads them (branch
sound30): bit 80 of MOV is sm_120's `.64` but nothing on sm_100, bits 74/80 of VIADD are
sm_120's `.S32.ISAT` but nothing on sm_100; before, the blackwell table read them with
sm_120's forms on sm_100 and the emulator ran a 64-bit move (overwriting the next register) or
a saturating add. A UF2FP word sm_100 reads with no type (`UF2FP.PACK_AB`, an FP8 pack on
sm_120) faults: what sm_100 computes for it is not known. MOV R, UR with a lane mask other
than 0xf had no form on any blackwell arch (MOV.64's form read it without the mask, so every
lane of the quad was written).

Each test swaps one word of ptxas's sm_100 cubin for a constructed one; the expected values
follow nvdisasm's sm_100 text (asserted first), not our decoder."""
import numpy as np
import pytest

from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import codec_decoder
from ptx2sass.encoder import codec
from tools.isa_probe import disassemble

# ptxas 13.5 for sm_100: LDC R4 <- m at 0x40, IADD3 R5 = tid + 5 at 0x60, STG.E.64 [out + 8 tid],
# {R4, R5} at 0x70
PTX = """.version 8.7
.target sm_100
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 m)
{
.reg .b32 %r<7>;
.reg .b64 %rd<3>;
ld.param.u64 %rd1, [out];
ld.param.u32 %r1, [m];
mov.u32 %r2, %tid.x;
mul.wide.u32 %rd2, %r2, 8;
add.s64 %rd1, %rd1, %rd2;
add.u32 %r3, %r2, 5;
st.global.v2.u32 [%rd1], {%r1, %r3};
ret;
}
"""

MOV_R4_R2_BIT80 = 0x0000000000010f000000000200047202      # sm_100: MOV R4, R2; sm_120: MOV.64
VIADD_R5_R5_R4_BITS_74_80 = 0x00000000000104000000000405057236   # sm_100: VIADD; sm_120: .S32.ISAT
UF2FP_PACK_AB = 0x000000000c242cff00000004040472ba   # sm_100: UF2FP.PACK_AB UR4, UR4, UR4


def _cubin(arch="sm_100"):
    from ptx2sass import oracle
    return oracle.ptxas(PTX.replace("sm_100", arch), arch).output


def _swap(opcode: str, word: int):
    """A decoder that reads `word` (with the original control bits) in place of the first
    instruction of `opcode`."""
    def decoder(text, arch, kernel):
        out, done = [], False
        for off, ins in codec_decoder(text, arch, kernel):
            if ins.opcode == opcode and not done:
                old = int.from_bytes(text[off:off + 16], "little")
                ins, done = codec.decode(word | old & ~((1 << 105) - 1), arch, off), True
            out.append((off, ins))
        assert done
        return out
    return decoder


def _run(m, decoder=None, arch="sm_100"):
    out = np.zeros(64, np.uint32)
    run(_cubin(arch), "k", 1, 32, [out, np.uint32(m)], decoder=decoder)
    return out[0::2], out[1::2]


def test_ptxas_cubin_runs():
    lo, hi = _run(7)
    assert (lo == 7).all() and (hi == np.arange(32) + 5).all()


def test_mov_bit80_is_a_32bit_move_on_sm100():
    assert disassemble([MOV_R4_R2_BIT80], "sm_100") == ["MOV R4, R2"]
    lo, hi = _run(7, _swap("IADD3", MOV_R4_R2_BIT80))     # R5 = tid + 5 becomes R4 = R2
    assert (hi == np.arange(32)).all()                    # R5 keeps tid (MOV.64 wrote R3 there)
    assert (lo - lo[0] == 8 * np.arange(32)).all()        # R2: the low half of out + 8 tid


def test_viadd_bits_74_80_wrap_on_sm100():
    assert disassemble([VIADD_R5_R5_R4_BITS_74_80], "sm_100") == ["VIADD R5, R5, R4"]
    lo, hi = _run(0x7FFFFFFF, _swap("IADD3", VIADD_R5_R5_R4_BITS_74_80))  # R5 = tid + m
    assert (lo == 0x7FFFFFFF).all()
    assert (hi == (np.arange(32, dtype=np.uint64) + 0x7FFFFFFF).astype(np.uint32)).all()  # no ISAT


def test_uf2fp_without_a_type_faults_on_sm100():
    assert disassemble([UF2FP_PACK_AB], "sm_100") == ["UF2FP.PACK_AB UR4, UR4, UR4"]
    with pytest.raises(EmuFault, match="unsupported instruction UF2FP"):
        _run(7, _swap("IADD3", UF2FP_PACK_AB))


@pytest.mark.parametrize("word", [0x000000000c342cff00000008ff0872ba, 0x000000000c3420ff00000011ff0a02ba])
def test_uf2fp_fp8_words_are_refused_on_sm100(word):
    """sm_100's nvdisasm prints these (sm_120's FP8 packs) as `UF2FP.???13` / `???12`: the
    decoder refuses them on sm_100 and sm_103 and reads sm_120's text on sm_120."""
    assert "???" in disassemble([word], "sm_100")[0]
    for arch in ("sm_100", "sm_103"):
        with pytest.raises(codec.DecodeError):
            codec.decode(word, arch)
    assert codec.decode_text(word, "sm_120") == disassemble([word], "sm_120")[0]


MOV_R5_URZ_MASK5 = 0x0000000008000500000000ff00057c02  # MOV R5, URZ, 0x5


@pytest.mark.parametrize("arch,opcode", [("sm_120", "IADD"), ("sm_100", "IADD3")])
def test_mov_from_ur_with_a_lane_mask_writes_only_its_lanes(arch, opcode):
    """ptxas's R5 = tid + 5 (IADD on sm_120, IADD3 on sm_100) becomes `MOV R5, URZ, 0x5`:
    lanes 0 and 2 of each quad get 0, lanes 1 and 3 keep R5 = tid (the handler's lane-mask
    rule, ptxas's tex.grad code); on main the mask was not read and every lane got 0."""
    assert disassemble([MOV_R5_URZ_MASK5], arch) == ["MOV R5, URZ, 0x5"]
    lo, hi = _run(7, _swap(opcode, MOV_R5_URZ_MASK5), arch)
    tid = np.arange(32)
    assert (lo == 7).all() and (hi == np.where(tid % 4 % 2 == 0, 0, tid)).all()
