"""Encoding families interleaved in one process give the bytes a fresh process gives.

The codec keeps caches across compiles (operand shapes by text, words by text, decoded
instructions by word), and the encoding families read the same text differently: URZ is 63
in the 6-bit uniform-register fields of sm_75..sm_90 and 255 in the blackwell table's 8-bit
fields (sm_100, sm_120). A number that depends on the family must never be served from a
cache filled for another: once a module-level switch decided URZ's number and the cache of
operand shapes was keyed by the text alone, so after an sm_120 compile sm_90's `[R3+URZ]`
came back as 255 (and the full test suite failed where single files passed).

Here one process compiles the same kernel for sm_90, sm_120, sm_100, sm_90 again, ...
and each cubin must equal the one a fresh process writes for that arch alone; the emulator's
decoder reads the cubins with the families interleaved (whole sections, then word by word)
and each word must read as in the fresh process and encode back to itself.
"""
from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from ptx2sass import compile as compile_ptx
from ptx2sass.emu.loader import codec_decoder
from ptx2sass.encoder import codec, sass_text
from ptx2sass.encoder.cubin import read_cubin

# `atom.shared.add 1` with its result unused is `ATOMS.POPC.INC.32 RZ, [R3+URZ]` for sm_90,
# sm_100 and sm_120 alike (sm_89: `[R0.X4+URZ]`): the same operand text, URZ 63 in one
# family and 255 in the other
KERNEL = r"""
.version 8.8
.target TARGET
.address_size 64

.visible .entry k(.param .u64 out, .param .u32 n)
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .shared .align 4 .b32 counts[32];

    ld.param.u64 %rd1, [out];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r4, %tid.x;
    shl.b32 %r3, %r2, 8;
    add.s32 %r12, %r3, %r1;
    and.b32 %r5, %r4, 31;
    shl.b32 %r6, %r5, 2;
    mov.u32 %r7, counts;
    add.s32 %r8, %r7, %r6;
    st.shared.u32 [%r8], 0;
    bar.sync 0;
    atom.shared.add.u32 %r9, [%r8], 1;
    bar.sync 0;
    ld.shared.u32 %r10, [%r8];
    add.s32 %r11, %r10, %r12;
    cvta.to.global.u64 %rd2, %rd1;
    mul.wide.u32 %rd3, %r4, 4;
    add.s64 %rd4, %rd2, %rd3;
    st.global.u32 [%rd4], %r11;
    ret;
}
"""

# 6-bit and 8-bit uniform fields in turn, each family met again after the other
SEQUENCE = ("sm_90", "sm_120", "sm_100", "sm_90", "sm_89", "sm_120", "sm_90")
ARCHS = tuple(dict.fromkeys(SEQUENCE))


def kernel_for(arch: str) -> str:
    return KERNEL.replace("TARGET", arch)


def text_of(cubin: bytes) -> bytes:
    (kernel,) = read_cubin(cubin).kernels
    return kernel.text


def listing(text: bytes, arch: str) -> list[str]:
    """Each word as our decoder reads it, through the emulator's decoder."""
    return [sass_text.format_instruction(ins) for _off, ins in codec_decoder(text, arch, "k")]


# What a process that has compiled nothing else writes and reads for one arch.
_FRESH = """
import json, sys
from tests.test_family_interleaving import kernel_for, listing, text_of
from ptx2sass import compile as compile_ptx
arch = sys.argv[1]
cubin = compile_ptx(kernel_for(arch), arch, "k.ptx")
print(json.dumps({"cubin": cubin.hex(), "listing": listing(text_of(cubin), arch)}))
"""


@pytest.fixture(scope="module")
def fresh() -> dict[str, dict]:
    out = {}
    for arch in ARCHS:
        run = subprocess.run([sys.executable, "-c", _FRESH, arch], capture_output=True, text=True,
                             check=True, cwd=Path(__file__).resolve().parent.parent)
        got = json.loads(run.stdout.strip().splitlines()[-1])
        out[arch] = {"cubin": bytes.fromhex(got["cubin"]), "listing": got["listing"]}
    return out


def test_kernel_has_a_zero_uniform_register_in_both_families(fresh):
    """The premise: the same URZ operand text in a 6-bit and an 8-bit family's code."""
    for arch in ARCHS:
        assert any(re.search(r"\[R\d+(\.X4)?\+URZ\]", line) for line in fresh[arch]["listing"]), arch


def test_interleaved_compiles_equal_fresh_ones(fresh):
    got = [(arch, compile_ptx(kernel_for(arch), arch, "k.ptx")) for arch in SEQUENCE]
    differ = [f"#{i} {arch}" for i, (arch, cubin) in enumerate(got) if cubin != fresh[arch]["cubin"]]
    assert not differ, f"cubins unlike a fresh process's: {differ}"


def test_interleaved_decoding_equals_fresh_and_round_trips(fresh):
    # whole sections through the emulator's decoder, the families in turn
    for arch in SEQUENCE:
        assert listing(text_of(fresh[arch]["cubin"]), arch) == fresh[arch]["listing"], arch
    # word by word, the families alternating at every word, each decoded word encoded back
    texts = {arch: text_of(fresh[arch]["cubin"]) for arch in ARCHS}
    longest = max(len(t) for t in texts.values())
    wrong = []
    for off in range(0, longest, 16):
        for arch in SEQUENCE:
            text = texts[arch]
            if off + 16 > len(text):
                continue
            word = int.from_bytes(text[off:off + 16], "little")
            ins = codec.decode(word, arch, off)
            if sass_text.format_instruction(ins) != fresh[arch]["listing"][off // 16]:
                wrong.append(f"{arch} {off:#x}: reads {sass_text.format_instruction(ins)!r}")
            elif codec.encode(ins, arch, off) != word:
                wrong.append(f"{arch} {off:#x}: {fresh[arch]['listing'][off // 16]!r} encodes "
                             f"to {codec.encode(ins, arch, off):#034x}, not {word:#034x}")
    assert not wrong, wrong[:5]


def test_text_round_trip_with_zero_registers_alternating():
    """encode_text/decode_text of the same URZ texts, families alternating: URZ's field is
    63 in sm_90's word and 255 in sm_120's, and each reads back as URZ."""
    texts = ("ATOMS.POPC.INC.32 RZ, [R3+URZ]",)
    words = {}
    for _round in range(2):
        for arch in SEQUENCE:
            for text in texts:
                word = codec.encode_text(text, arch)
                assert words.setdefault((arch, text), word) == word, (arch, text)
                assert re.sub(r"\s+", " ", codec.decode_text(word, arch)) == text, (arch, text)


def test_numbering_is_an_argument_not_a_mode():
    """The same text lifts to each numbering's URZ whatever was read before: 63 in a 6-bit
    uniform field, 255 in an 8-bit one (all ones either way); a table carries its own."""
    from ptx2sass.encoder.fields import numbering, operand_shape, render_shape
    six, eight = numbering(63), numbering(255)
    for _round in range(2):
        assert operand_shape("URZ", eight) == ("{UR}", [255])
        assert operand_shape("URZ", six) == ("{UR}", [63])
    assert render_shape("{UR}", [63], six) == "URZ"
    assert render_shape("{UR}", [63], eight) == "UR63"
    assert {arch: codec.table_for(arch).numbers.uniform_zero for arch in ARCHS} == {
        "sm_90": 63, "sm_120": 255, "sm_100": 255, "sm_89": 63}
