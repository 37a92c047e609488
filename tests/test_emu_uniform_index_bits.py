"""Bits 48-55 and 58 of the blackwell texture/surface words (branch sound31): sm_120's nvdisasm
reads them as a second uniform register after the handle (`SULD ... [R2], UR4, UR6`) and as
`.UAI` (bit 57: `.UAOFFI`); sm_100/103/110's prints nothing there (bit 57: `INVALID2`). The
blackwell table read every arch with sm_120's forms, so on sm_100 the decoder showed a
register and a modifier nvdisasm does not, and the texture handler took that second register
as the handle. Now sm_100 has its own forms (the bits are don't-cares, ptxas's values kept),
and the emulator faults by name on sm_120's meanings, which it does not know (ptxas 13.5
writes neither).

Each test swaps the one SULD/TEX word of ptxas's cubin for a changed one (control bits kept);
the expected values are NumPy's (the surface's texels), after asserting nvdisasm's text."""
import numpy as np
import pytest

from ptx2sass import oracle
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import codec_decoder
from ptx2sass.emu.textures import Surface
from ptx2sass.encoder import codec
from tools.isa_probe import disassemble

THREADS = 32
SULD = """.version 8.7
.target sm_100
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 sh)
{
.reg .b64 %rd<6>;
.reg .b32 %r<6>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [sh];
mov.u32 %r1, %tid.x;
and.b32 %r2, %r1, 7;
shl.b32 %r3, %r2, 2;
shr.u32 %r4, %r1, 3;
suld.b.2d.b32.trap {%r5}, [%rd2, {%r3, %r4}];
mul.wide.u32 %rd3, %r1, 4;
add.s64 %rd4, %rd1, %rd3;
st.global.u32 [%rd4], %r5;
ret;
}
"""
TEX = SULD.replace("suld.b.2d.b32.trap {%r5}, [%rd2, {%r3, %r4}];",
                   "tex.2d.v4.u32.s32 {%r5, %r6, %r7, %r8}, [%rd2, {%r2, %r4}];").replace(
    ".reg .b32 %r<6>;", ".reg .b32 %r<9>;")

SECOND_UR = 0xFE << 48          # bits 48-55: UR254 on sm_120, nothing on sm_100
UAI = 1 << 58


def _cubin(ptx, arch):
    out = oracle.ptxas(ptx.replace("sm_100", arch), arch)
    assert out.ok, out.stderr
    return out.output


def _swap(opcode, change):
    """A decoder reading the first `opcode` word with its bits 48-55 cleared and `change` set;
    `seen` gets nvdisasm's text of ptxas's word and of the changed one."""
    seen = []

    def decoder(text, arch, kernel):
        out = []
        for off, ins in codec_decoder(text, arch, kernel):
            if ins.opcode == opcode and not seen:
                old = int.from_bytes(text[off:off + 16], "little")
                word = old & ~(0xFF << 48) | change
                seen.extend(disassemble([old, word], arch))
                ins = codec.decode(word, arch, off)
            out.append((off, ins))
        return out
    return decoder, seen


def _surface():
    data = np.random.default_rng(31).integers(0, 2**32, size=(4, 8), dtype=np.uint64).astype(np.uint32)
    return Surface(data, "2d")


def _run_suld(arch, decoder=None):
    surf = _surface()
    res = np.zeros(THREADS, np.uint32)
    run(_cubin(SULD, arch), "k", 1, THREADS, [res, surf], decoder=decoder)
    tid = np.arange(THREADS)
    return res, surf.data[tid >> 3, tid & 7]


@pytest.mark.parametrize("arch", ["sm_100", "sm_120"])
def test_ptxas_suld_cubin_runs(arch):
    got, want = _run_suld(arch)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("change", [SECOND_UR, 0xFF << 48 | UAI, SECOND_UR | UAI],
                         ids=["ur254", "uai", "both"])
def test_sm100_suld_ignores_bits_48_55_and_58(change):
    """sm_100's nvdisasm prints the changed word as ptxas's: it loads the same texels (main's
    table read `SULD ... UR4, UR254` / `.UAI` there)."""
    decoder, seen = _swap("SULD", change)
    got, want = _run_suld("sm_100", decoder)
    assert seen[1] == seen[0] and seen[0].startswith("SULD.D.BA.2D.STRONG.SM.TRAP ")
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("change,match", [(SECOND_UR, "second uniform register"),
                                          (0xFF << 48 | UAI, "unsupported instruction SULD")],
                         ids=["ur254", "uai"])
def test_sm120_suld_with_a_uniform_index_faults(change, match):
    """sm_120's nvdisasm reads the same words as `SULD ... UR4, UR254` / `SULD...UAI...`: the
    emulator knows neither meaning (main's loaded the texels, dropping them)."""
    decoder, seen = _swap("SULD", change)
    with pytest.raises(EmuFault, match=match):
        _run_suld("sm_120", decoder)
    assert ("UR4, UR254" if change == SECOND_UR else "SULD.D.BA.2D.UAI.") in seen[1]


COUNTED = 0x0820140800000604240073ba     # sm_100: UBLKCP.G.S.COUNTED (bit 85), sm_120: UBLKCP.G.S


def test_ublkcp_counted_reads_as_each_archs_nvdisasm_and_is_not_run():
    """sm_100's nvdisasm prints bit 85 of UBLKCP as `.COUNTED` (main's table read a plain
    UBLKCP.G.S there, which the emulator ran as a plain copy); sm_120's prints nothing."""
    from ptx2sass.emu.program import unknown_meaning
    for arch in ("sm_100", "sm_120"):
        [text] = disassemble([COUNTED], arch)
        assert codec.decode_text(COUNTED, arch) == text
    ins = codec.decode(COUNTED, "sm_100")
    assert "COUNTED" in ins.modifiers and unknown_meaning(ins.opcode, ins.modifiers)
    ins = codec.decode(COUNTED, "sm_120")
    assert not unknown_meaning(ins.opcode, ins.modifiers)
