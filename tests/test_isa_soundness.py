"""Words our tables read as other instructions (tools/isa_soundness: single-bit neighbours of
each table form's base word that nvdisasm reads): the ones found on 2026-11-27 were probed into
the tables (tools/isa_seeds/soundness_<family>.words) and now decode as nvdisasm prints them;
the half and byte selectors among them (`c[0x0][0x0].H1` on MUFU.F16/I2F/F2I, `R.H1` on
F2I.F16, `.B2` on I2F.U8) changed what the emulator computes. The tool itself finds nothing
near turing's ATOMG forms (92 wrong readings with the table before the XOR-as-INC fix)."""
from pathlib import Path

import pytest

from ptx2sass.encoder import codec
from tools.isa_probe import disassemble
from tools.isa_soundness import _canonical, normalised, wrong_readings

SEEDS = Path(__file__).parent.parent / "tools" / "isa_seeds"
FILES = {"soundness_turing.words": "sm_75", "soundness_ampere.words": "sm_89",
         "soundness_hopper.words": "sm_90", "soundness_blackwell.words": "sm_120",
         "soundness_sm100.words": "sm_100", "soundness_sm80.words": "sm_80",
         "soundness29_sm100.words": "sm_100", "soundness29b_sm100.words": "sm_100"}


# words the probe learned a form for that an older, looser form still takes first (xfail)
SHADOWED: dict[int, str] = {}


def _words():
    for name, arch in FILES.items():
        for line in (SEEDS / name).read_text().splitlines():
            if line.startswith("0x"):
                word, _, text = line.partition("#")
                w = int(word, 16)
                marks = [pytest.mark.xfail(strict=True, reason=SHADOWED[w])] if w in SHADOWED else []
                yield pytest.param(w, arch, id=f"{arch}:{text.strip()}", marks=marks)


@pytest.mark.parametrize("word,arch", list(_words()))
def test_soundness_word_decodes_as_nvdisasm_prints(word, arch):
    [text] = disassemble([word], arch)
    assert normalised(codec.decode_text(word, arch)) == normalised(_canonical(text))


def test_no_wrong_reading_near_turing_atomics():
    assert wrong_readings("sm_75", "ATOMG") == {}


@pytest.mark.parametrize("opcode", ["HFMA2", "I2IP"])
def test_no_wrong_reading_near_sm80_hfma2_and_i2ip(opcode):
    """sm_80's nvdisasm ignores HFMA2's bit 86 (.H0_NH1 from sm_86 on) and reads I2IP's
    saturation differently: sm_80 forms of their own."""
    assert wrong_readings("sm_80", opcode) == {}


def test_no_wrong_reading_near_sm100_uisetp():
    """sm_100 read sm_120's UISETP forms, whose bit 80 means a 64-bit compare."""
    assert wrong_readings("sm_100", "UISETP") == {}


# hopper's HFMA2 forms with UR as b: Ra's negation (bit 72), |abs| (73) and half selector
# (74-75) were three groups, each printing the whole operand, so the codec kept only the last
# (`-|R13|.H1_H1` read as `R13.H1_H1`); tools/isa_probe now merges groups that change one
# operand. Expected texts are nvdisasm's.
HFMA2_UR_BASES = (0x8050818200000050d187c31, 0x80f0eff0000000b21217c31)


def test_hopper_hfma2_ur_forms_read_every_a_operand_modifier_combination():
    from ptx2sass.encoder.codec import put_bits
    words = [put_bits(base, [72, 73, 74, 75], v) for base in HFMA2_UR_BASES for v in range(16)]
    wrong = []
    for w, text in zip(words, disassemble(words, "sm_90")):
        if text is None or "INVALID" in text:
            continue
        if normalised(codec.decode_text(w, "sm_90")) != normalised(_canonical(text)):
            wrong.append((hex(w), text))
    assert not wrong
    assert sum(t is not None and "INVALID" not in t for t in disassemble(words, "sm_90")) >= 24


def test_pair_neighbours_change_two_bits_of_two_different_groups():
    from tools.isa_soundness import neighbours
    form = next(f for f in codec.table_for("sm_90").forms_of("HFMA2", "sm_90") if f.base in HFMA2_UR_BASES)
    group_of = {b: gi for gi, g in enumerate(form.groups) for b in g["bits"]}
    near = neighbours(form, pairs=True)
    assert near and len(set(near)) == len(near)
    for w in near:
        a, b = [i for i in range(128) if (w ^ form.base) >> i & 1]
        assert group_of[a] != group_of[b]
    assert len(neighbours(form)) == 105


# hopper's and ampere's HFMA2 with b's `.H0_NH1` (bit 86, one bit of the 8-bit group of c's
# modifiers and the rounding tokens) and b's negation/|abs| (bits 62/63, with the half selector
# 60-61): 12 bits together were over the probe's limit, so the codec kept one group's operand
# shape and read `-R5.H0_NH1` as `R5.H0_NH1` (isa_soundness --pairs: sm_90 12, sm_89 4 wrong
# readings). tools/isa_probe now splits the big group and merges bit 86 with b's group.
# Expected texts are nvdisasm's.
HFMA2_NH1_BASES = {"sm_90": (0x380801d000000150a1d7231, 0x381900700000006050a7231,
                             0x3a1900a0000000307077231, 0x21100300000007060b7231,
                             0x110060000000504037231, 0x80f0eff0000000b21217c31),
                   "sm_89": (0x200005e0007077a31, 0x380801800005f00111d7a31)}


@pytest.mark.parametrize("arch", sorted(HFMA2_NH1_BASES))
def test_hfma2_b_operand_h0_nh1_reads_with_its_negation_and_abs(arch):
    from ptx2sass.encoder.codec import put_bits
    words = [put_bits(base, [60, 61, 62, 63, 86], v)
             for base in HFMA2_NH1_BASES[arch] for v in range(32)]
    texts = disassemble(words, arch)
    nh1 = [(w, t) for w, t in zip(words, texts) if t is not None and ".H0_NH1" in t]
    assert len(nh1) >= 4 * len(HFMA2_NH1_BASES[arch])
    wrong = [(hex(w), t) for w, t in nh1
             if normalised(codec.decode_text(w, arch)) != normalised(_canonical(t))]
    assert not wrong


# sm_100's and sm_103's nvdisasm read bit 77 of SHF and bit 76 of IADD3 as `.XOR` (SHF.XOR,
# IADD.XOR), which sm_110's and sm_120's read as plain SHF / IADD3: the blackwell table (probed
# with sm_120) read them as plain SHF / IADD3 on sm_100 too (isa_soundness --arch sm_100
# --opcode SHF: 5, IADD3: 8 wrong readings). sm_100's own forms now read them, and sm_110's
# own forms (which win over sm_100's there) keep them plain. Expected texts are nvdisasm's.
XOR_WORDS = SEEDS / "open14_xor_sm100.words"


@pytest.mark.parametrize("arch", ["sm_100", "sm_103", "sm_110", "sm_120"])
def test_sm100_xor_words_read_as_each_archs_nvdisasm(arch):
    words = [int(line.split("#")[0], 16) for line in XOR_WORDS.read_text().splitlines()
             if line.startswith("0x")]
    texts = disassemble(words, arch)
    assert len(words) == 13 and all(t is not None for t in texts)
    assert sum(".XOR" in t for t in texts) == (13 if arch in ("sm_100", "sm_103") else 0)
    wrong = [(hex(w), t) for w, t in zip(words, texts)
             if normalised(codec.decode_text(w, arch)) != normalised(_canonical(t))]
    assert not wrong


def test_no_wrong_reading_near_sm100_shf():
    assert wrong_readings("sm_100", "SHF") == {}


# sm_100's and sm_103's nvdisasm read bit 76 of IMAD as `.XOR` (IMUL.XOR, IMUL.WIDE.XOR.U32),
# which sm_110's and sm_120's read as plain IMAD: the blackwell table read them as IMAD /
# IMAD.WIDE on sm_100 (isa_soundness --arch sm_100 --opcode IMAD: 26 wrong readings near 26
# forms), so the emulator would have run a multiply-add where ptxas's word says otherwise.
# Expected texts are each arch's nvdisasm's.
IMUL_XOR_WORDS = SEEDS / "soundness29_sm100.words"


@pytest.mark.parametrize("arch", ["sm_100", "sm_103", "sm_110", "sm_120"])
def test_sm100_imul_xor_words_read_as_each_archs_nvdisasm(arch):
    words = [int(line.split("#")[0], 16) for line in IMUL_XOR_WORDS.read_text().splitlines()
             if line.startswith("0x")]
    texts = disassemble(words, arch)
    assert len(words) == 26 and all(t is not None for t in texts)
    assert sum(".XOR" in t for t in texts) == (26 if arch in ("sm_100", "sm_103") else 0)
    wrong = [(hex(w), t) for w, t in zip(words, texts)
             if normalised(codec.decode_text(w, arch)) != normalised(_canonical(t))]
    assert not wrong


@pytest.mark.parametrize("arch", ["sm_100", "sm_110"])
def test_no_wrong_reading_near_blackwell_imad(arch):
    assert wrong_readings(arch, "IMAD") == {}


# sm_100's (and sm_103's, sm_110's) nvdisasm read ISETP's bit 80 as nothing (a 32-bit compare)
# where sm_120's reads .S64, and I2F.U8 of a UR with its byte selector; sm_100/103 read SEL's
# neighbours as a four-operand IMNMX.U32 where sm_110/120 print seven. The table read sm_120's
# meaning on sm_100 (isa_soundness --arch sm_100 --opcode ISETP 6, SEL 2, I2F 2). Expected
# texts are each arch's nvdisasm's.
SM100_B_WORDS = SEEDS / "soundness29b_sm100.words"


@pytest.mark.parametrize("arch", ["sm_100", "sm_103", "sm_110", "sm_120"])
def test_sm100_isetp_imnmx_i2f_words_read_as_each_archs_nvdisasm(arch):
    words = [int(line.split("#")[0], 16) for line in SM100_B_WORDS.read_text().splitlines()
             if line.startswith("0x")]
    texts = disassemble(words, arch)
    assert len(words) == 10 and all(t is not None for t in texts)
    assert sum(".S64" in t for t in texts) == (6 if arch == "sm_120" else 0)
    wrong = [(hex(w), t) for w, t in zip(words, texts)
             if normalised(codec.decode_text(w, arch)) != normalised(_canonical(t))]
    assert not wrong


@pytest.mark.parametrize("opcode", ["ISETP", "SEL", "I2F"])
def test_no_wrong_reading_near_sm100_isetp_sel_i2f(opcode):
    assert wrong_readings("sm_100", opcode) == {}


# sm_120-probed blackwell forms whose base words sm_100/103/110 read differently (branch
# sound30): MOV/UMOV bit 80 (sm_120's .64; nothing on sm_100), VIADD R, R, R bits 72-75/80
# (sm_120's type, -Rb and .ISAT; sm_100 reads only bit 73, .16x2), UF2FP (sm_120's FP8 packs;
# sm_100 prints `UF2FP.???13` or a UF2FP with no type), and MOV R, UR with a lane mask, which
# no form held (sm_120 too). Expected: each arch's nvdisasm text, or a refusal where nvdisasm
# itself prints an unknown value (`???`). On main 8cf8e1f4 all 534 read wrong on sm_100/103,
# 434 on sm_110 (100 it rejects), 4 on sm_120/121.
SOUND30_WORDS = SEEDS / "sound30_wrong.words"


@pytest.mark.parametrize("arch", ["sm_100", "sm_103", "sm_110", "sm_120", "sm_121"])
def test_sound30_words_read_as_each_archs_nvdisasm(arch):
    words = [int(line.split("#")[0], 16) for line in SOUND30_WORDS.read_text().splitlines()
             if line.startswith("0x")]
    assert len(words) == 534
    wrong, refused = [], 0
    for w, text in zip(words, disassemble(words, arch)):
        if text is None or "INVALID" in text:
            continue
        if "???" in text:
            with pytest.raises(codec.DecodeError):
                codec.decode(w, arch)
            refused += 1
        elif normalised(codec.decode_text(w, arch)) != normalised(_canonical(text)):
            wrong.append((hex(w), text))
    assert not wrong
    assert refused == (0 if arch in ("sm_120", "sm_121") else 167)


@pytest.mark.parametrize("arch,opcode", [(a, op) for a in ("sm_100", "sm_110", "sm_120")
                                         for op in ("MOV", "VIADD", "UF2FP")])
def test_no_wrong_reading_near_blackwell_mov_viadd_uf2fp(arch, opcode):
    assert wrong_readings(arch, opcode) == {}


# sm_120-probed blackwell texture/surface forms (TEX, TLD, TLD4, TXD, SULD, SUST, SURED) read
# bits 48-55 as a second uniform register and bits 57/58 as .UAOFFI/.UAI on every blackwell
# arch (branch sound31); sm_100/103/110's nvdisasm prints nothing there (bit 57 of TEX, TLD,
# TXD: INVALID2, which is refused). Expected: each arch's nvdisasm text. On main 34a469fe:
# wrong on sm_100/103/110 (252 each), right on sm_120/121.
SOUND31_WORDS = SEEDS / "sound31_wrong.words"


@pytest.mark.parametrize("arch", ["sm_100", "sm_103", "sm_110", "sm_120", "sm_121"])
def test_sound31_texture_surface_words_read_as_each_archs_nvdisasm(arch):
    words = [int(line.split("#")[0], 16) for line in SOUND31_WORDS.read_text().splitlines()
             if line.startswith("0x")]
    assert len(words) == 280
    wrong, refused = [], 0
    for w, text in zip(words, disassemble(words, arch)):
        if text is None or "INVALID" in text:
            with pytest.raises(codec.DecodeError):
                codec.decode(w, arch)
            refused += 1
        elif normalised(codec.decode_text(w, arch)) != normalised(_canonical(text)):
            wrong.append((hex(w), text))
    assert not wrong
    assert refused == (0 if arch in ("sm_120", "sm_121") else 7)


def test_soundness_checks_store_neighbours():
    """A SUST word with control bits 0 (write scoreboard 0) is rejected by nvdisasm; the tool
    disassembles it again without scoreboards, so SUST/SURED neighbours are checked at all
    (before, none was: every one was rejected)."""
    from tools.isa_soundness import disassemble_any_control
    sust = 0x810a10010ff041808007f9b        # SUST.P.1D.STRONG.SM.R.TRAP [R8], R24, UR4
    assert disassemble([sust], "sm_120") == [None]
    [(text, pc)] = disassemble_any_control([sust], "sm_120")
    assert text == "SUST.P.1D.STRONG.SM.R.TRAP [R8], R24, UR4" and pc == 0


@pytest.mark.parametrize("arch,opcode", [(a, op) for a in ("sm_100", "sm_120")
                                         for op in ("TEX", "SULD", "SUST", "SURED")])
def test_no_wrong_reading_near_blackwell_texture_surface(arch, opcode):
    assert wrong_readings(arch, opcode) == {}


LEPC_NEAR = 0x1014694e          # @P6 LEPC R20, target = its address + 0x20


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
def test_lepc_target_is_compared_as_an_address(arch):
    """nvdisasm prints LEPC's target as an address (`0x120` at 0x100), the decoder as that
    address's label: decoded at nvdisasm's address they are one text; at another address the
    target differs and still counts as a wrong reading."""
    [text] = disassemble([0x7918] * 16 + [LEPC_NEAR], arch)[16:]
    assert text == "@P6 LEPC R20, 0x120"
    at = normalised(_canonical(text))
    from ptx2sass.encoder.sass_text import format_instruction
    assert format_instruction(codec.decode(LEPC_NEAR, arch, 0x100)) == "@P6 LEPC R20, `(.L_120)"
    assert normalised(format_instruction(codec.decode(LEPC_NEAR, arch, 0x100))) == at
    assert normalised(format_instruction(codec.decode(LEPC_NEAR, arch, 0x0))) != at
    assert wrong_readings(arch, "LEPC") == {}


# Found by isa_soundness once it checked words nvdisasm rejects at control 0 (branch sound31):
# a BRA.U.ANY with bit 87 clear, which the plain BRA form read as `BRA.U P6` on every blackwell
# arch (the emulator would branch on P6 without .ANY's vote), and LDCU words with bit 81 set,
# sm_120's `.HDRUNPACK`, which sm_100/103/110's nvdisasm prints without it.
SOUND31_MORE = {0x0313fffffffffffd00d40947: "@P0 BRA.U.ANY P6",
                0x0802040000c00240ff0677ac: "LDCU.U16 UR6, c[0x3][0x12]",
                0x0802080000007100ff0587ac: "@!UP0 LDCU UR5, c[0x0][0x388]",
                0x0802080000801100040477ac: "LDCU UR4, c[0x2][UR4+0x88]"}


@pytest.mark.parametrize("arch", ["sm_100", "sm_103", "sm_110", "sm_120", "sm_121"])
@pytest.mark.parametrize("word", sorted(SOUND31_MORE), ids=lambda w: SOUND31_MORE[w])
def test_sound31_bra_any_and_ldcu_words_read_as_each_archs_nvdisasm(word, arch):
    from ptx2sass.encoder.sass_text import format_instruction
    from tools.isa_soundness import disassemble_any_control
    [(text, pc)] = disassemble_any_control([word], arch)
    assert text is not None and text.startswith(SOUND31_MORE[word].split(",")[0].split(" UR")[0])
    ours = format_instruction(codec.decode(word, arch, pc))
    assert normalised(ours) == normalised(_canonical(text))
