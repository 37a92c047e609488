"""sm_110's F2FP `.RS` (bit 81): sm_100/sm_103's nvdisasm prints it `.RS` (cvt.rs, stochastic
rounding, sm_100a/sm_103a only), sm_110's prints `.???4`, and ptxas refuses `cvt.rs` for
sm_110/sm_110a/sm_110f ("Feature '.rs' not supported"), so no ptxas word for sm_110 holds it.
sm_110 read the bit with sm_100's forms as `.RS` (399 wrong readings, tools/isa_soundness
--arch sm_110 --opcode F2FP); now the codec refuses it there (`Target.unnamed_modifiers`),
both ways. Branch isaleft32."""
import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec

# ptxas's sm_100a word for `cvt.rs.bf16x2.f32` (reuse flags cleared)
RS_WORD = 0x000fe40000021004000000050008723e


def _nvdisasm(word, arch):
    out = oracle.nvdisasm_raw(word.to_bytes(16, "little"), arch).stdout
    return next(l for l in out.splitlines() if "F2FP" in l).split("*/")[1].split(";")[0].strip()


def test_sm100_reads_rs_and_sm110_names_it_not():
    assert _nvdisasm(RS_WORD, "sm_100") == "F2FP.BF16.F32.PACK_AB.RS R8, R0, R5, R4"
    assert ".???4" in _nvdisasm(RS_WORD, "sm_110")
    assert codec.decode_text(RS_WORD, "sm_100") == "F2FP.BF16.F32.PACK_AB.RS R8, R0, R5, R4"


@pytest.mark.parametrize("arch", ["sm_110", "sm_110a"])
def test_sm110_refuses_the_word_and_the_text(arch):
    with pytest.raises(codec.DecodeError):
        codec.decode(RS_WORD, arch)
    ins = codec.decode(RS_WORD, "sm_100")
    with pytest.raises(codec.EncodeError):
        codec.encode(ins, arch)
    plain = RS_WORD & ~(1 << 81)
    assert codec.decode_text(plain, arch) == _nvdisasm(plain, "sm_110")
