"""A word the decoder reads with a modifier whose meaning the emulator does not know faults
when executed, rather than running the opcode's other form: sm_100's nvdisasm reads bit 76 of
IMAD as IMUL.XOR (tools/isa_soundness), and IMUL's handler would have computed a plain product
(dropping the XOR and the third source). ptxas's own cubin, run unchanged, is the control."""
import numpy as np
import pytest

from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import codec_decoder
from ptx2sass.encoder import codec

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
mad.lo.u32 %r3, %r2, %r1, %r2;
shf.l.clamp.b32 %r4, %r2, %r3, %r1;
ld.param.u32 %r5, [m];
add.u32 %r6, %r4, %r5;
xor.b32 %r6, %r6, %r2;
mul.wide.u32 %rd2, %r2, 4;
add.s64 %rd1, %rd1, %rd2;
st.global.u32 [%rd1], %r6;
ret;
}
"""


def _cubin():
    from ptx2sass import oracle
    return oracle.ptxas(PTX, "sm_100").output


def test_ptxas_cubin_runs():
    out = np.zeros(32, np.uint32)
    run(_cubin(), "k", 1, 32, [out, np.uint32(7)])
    tid = np.arange(32, dtype=np.uint64)
    hi = (tid * 7 + tid) & 0xFFFFFFFF
    shf = (((hi << 32) | tid) << 7 >> 32) & 0xFFFFFFFF        # shf.l.clamp by 7
    assert (out == (((shf + 7) & 0xFFFFFFFF) ^ tid)).all()


# (ptxas's opcode, the bit sm_100's nvdisasm reads as `.XOR`, the opcode it then prints)
XOR_BITS = [("IMAD", 76, "IMUL"), ("SHF", 77, "SHF"), ("IADD3", 76, "IADD")]


@pytest.mark.parametrize("opcode,bit,read_as", XOR_BITS)
def test_xor_form_faults_instead_of_running_the_plain_one(opcode, bit, read_as):
    flipped = []

    def decoder(text, arch, kernel):
        out = []
        for off, ins in codec_decoder(text, arch, kernel):
            if ins.opcode == opcode and not flipped:
                word = int.from_bytes(text[off:off + 16], "little") ^ (1 << bit)
                other = codec.decode(word, arch, off)
                if other.opcode == read_as and "XOR" in other.modifiers:
                    flipped.append(codec.decode_text(word, arch))
                    ins = other
            out.append((off, ins))
        return out

    out = np.zeros(32, np.uint32)
    with pytest.raises(EmuFault, match=f"unsupported instruction {read_as}.*XOR"):
        run(_cubin(), "k", 1, 32, [out, np.uint32(7)], decoder=decoder)
    assert flipped and flipped[0].startswith(read_as + ".")
