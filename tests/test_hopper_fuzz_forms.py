"""Forms ptxas 13.5 writes for sm_90 that the emulator's codec could not decode: the words of
ptxas's cubins of fuzz seeds 9,600,000-9,600,149 (tools/isa_seeds/fuzz_sm90_emufail.words;
9,600,200-349 and 9,600,400-549 in fuzz_sm90_emufail2.words; 9,610,000-149 in
fuzz_sm90_emufail3.words; 9,600,600-749 (after hopper5 took its held-back figure) in
fuzz_sm90_emufail4.words; fuzz campaign 13 (25,000,000-25,001,523) in campaign13_hopper.words,
gathered by `python -m tools.fuzz_emu_fail --words`, probed into encoder/tables/hopper.json by
tools/isa_probe). Each word must decode to exactly nvdisasm's text (kept beside it in the
file) and encode back to the same 128 bits."""
from pathlib import Path

import pytest

SEEDS = Path(__file__).resolve().parents[1] / "tools" / "isa_seeds"
CASES = [(int(line.split("#")[0], 16), line.split("#", 1)[1].strip())
         for name in ("fuzz_sm90_emufail.words", "fuzz_sm90_emufail2.words", "fuzz_sm90_emufail3.words",
                     "fuzz_sm90_emufail4.words", "imad_shl_pow2_sm90.words", "ushf_ldl_sm90.words",
                     "campaign13_hopper.words")
         for line in (SEEDS / name).read_text().splitlines() if line.split("#")[0].strip()]


@pytest.mark.parametrize("word,text", CASES, ids=[t for _, t in CASES])
def test_sm90_fuzz_word_round_trips(word, text):
    from ptx2sass.encoder import codec
    from ptx2sass.encoder.sass_text import format_instruction
    ins = codec.decode(word, "sm_90", 0)
    assert format_instruction(ins) == text
    assert codec.encode(ins, "sm_90", pc=0) == word


@pytest.mark.parametrize("text", ["HFMA2.BF16_V2 R28, -RZ.H0_H0, RZ.H0_H0, |UR4.H0_H0|",
                                  "HMNMX2.NAN.XORSIGN R0, |R26|.H1_H1, |UR4.H0_H0|, PT"])
def test_uniform_swizzle_prints_inside_the_bars(text):
    """nvdisasm prints a uniform register's half swizzle inside |…| (a vector register's
    after it): the text must parse and print back the same."""
    from ptx2sass.encoder.sass_text import format_instruction, parse_instruction
    assert format_instruction(parse_instruction(text)) == text


@pytest.mark.parametrize("dtype", ["u4", "s4", "u8", "s8"])
def test_cvt_pack_sat_to_4_and_8_bits(dtype):
    """`cvt.pack.sat.{u4,s4}.s32.b32` (ptxas: I2IP.U4.S32.SAT; fuzz seed 9600042 crashed the
    emulator) against the PTX manual's formula: d = c << 2n | sat(a) << n | sat(b)."""
    import sys
    import numpy as np
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from codegen_harness import kernel
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    n = int(dtype[1:])
    lo, hi = (-(1 << (n - 1)), (1 << (n - 1)) - 1) if dtype[0] == "s" else (0, (1 << n) - 1)
    body = f"cvt.pack.sat.{dtype}.s32.b32 %o, %a0, %a1, %a2;"
    build = oracle.ptxas(kernel(body, 32, 3, 32, target="sm_90"), "sm_90")
    assert build.ok, build.stderr
    rows = [(-100, 3, 0x12345678), (200, -1, 0xFFFFFFFF), (5, 7, 0), (-3, 300, 0xABCDEF01), (0, 0, 0x1)]
    data = np.array(rows, dtype=np.int64).astype(np.uint32)
    out = np.zeros(len(rows), np.uint32)
    run(build.output, "k", 1, len(rows), [out, data.reshape(-1)])
    mask = (1 << n) - 1
    want = [((c << 2 * n) | ((min(max(a, lo), hi) & mask) << n) | (min(max(b, lo), hi) & mask)) & 0xFFFFFFFF
            for a, b, c in rows]
    assert [hex(v) for v in out] == [hex(v) for v in want]
