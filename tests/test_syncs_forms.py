"""The SYNCS-unit forms of the mbarrier family and griddepcontrol (sm_90, sm_120) in the
encoding tables: every word ptxas writes for tools/isa_seeds/mbarrier_sm90.ptx's kernels
(one per PTX form) encodes from nvdisasm's text to the same bits and decodes to that text.
Expected words are ptxas's; before the probe the tables had no SYNCS/ACQBULK/PREEXIT forms.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from ptx2sass import oracle
from ptx2sass.encoder import codec
from ptx2sass.encoder.sass_text import format_instruction
from tools.corpus_words import words_of_listing

SEED = Path(__file__).resolve().parent.parent / "tools" / "isa_seeds" / "mbarrier_sm90.ptx"
UNIT = ("SYNCS", "ARRIVES", "ACQBULK", "PREEXIT", "NANOSLEEP.SYNCS", "CGAERRBAR")
DATA = (1 << 105) - 1 | 3 << 126


def _words(arch: str):
    run = oracle.ptxas(SEED.read_bytes(), arch, name="mbarrier_sm90")
    assert run.ok, run.stderr
    words = words_of_listing(oracle.nvdisasm(run.output), arch, "mbarrier_sm90")
    return [w for w in words if any(u in w.text for u in UNIT)]


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
def test_syncs_words_encode_and_decode_as_ptxas_writes_them(arch):
    words = _words(arch)
    opcodes = {w.text.split()[1] if w.text.startswith("@") else w.text.split()[0] for w in words}
    # every SYNCS sub-operation the seed makes ptxas write is there to check
    assert {"SYNCS.EXCH.64", "SYNCS.ARRIVE.TRANS64.A1T0", "SYNCS.ARRIVE.TRANS64.ART0",
            "SYNCS.ARRIVE.TRANS64.RED.A0TR", "SYNCS.ARRIVE.TRANS64.RED.A0TX",
            "SYNCS.ARRIVE.TRANS64.RED.A0T1", "SYNCS.ARRIVE.TRANS64",
            "SYNCS.ARRIVE.TRANS64.OPTOUT", "SYNCS.ARRIVE.TRANS64.TMASK.ART0",
            "SYNCS.PHASECHK.TRANS64", "SYNCS.PHASECHK.TRANS64.TRYWAIT", "SYNCS.CCTL.IV",
            "NANOSLEEP.SYNCS", "ARRIVES.LDGSTSBAR.64.TRANSCNT", "ARRIVES.LDGSTSBAR.64.ARVCNT",
            "ACQBULK", "PREEXIT"} <= opcodes, opcodes
    bad = []
    for w in {w.word: w for w in words}.values():
        try:
            enc = codec.encode(w.instruction(), arch, w.offset)
            text = format_instruction(codec.decode(w.word, arch, w.offset))
        except (codec.EncodeError, codec.DecodeError) as e:
            bad.append((w.text, str(e)))
            continue
        if enc & DATA != w.word & DATA or text != w.text:
            bad.append((w.text, f"xor {(enc ^ w.word) & DATA:#x}, decoded {text!r}"))
    assert bad == []


GRIDDEP = """.version 8.0
.target sm_90
.address_size 64
.visible .entry gdc(.param .u64 out, .param .u32 n)
{
	.reg .b64 %rd<4>;
	.reg .b32 %r<4>;
	ld.param.u64 %rd1, [out];
	ld.param.u32 %r1, [n];
	cvta.to.global.u64 %rd1, %rd1;
	griddepcontrol.wait;
	ld.global.u32 %r2, [%rd1];
	add.u32 %r2, %r2, %r1;
	st.global.u32 [%rd1], %r2;
	griddepcontrol.launch_dependents;
	ret;
}
"""


def _order(cubin: bytes, arch: str) -> list[str]:
    keep = ("ACQBULK", "PREEXIT", "LDG", "STG", "EXIT")
    return [w.text.split()[0].split(".")[0]
            for w in words_of_listing(oracle.nvdisasm(cubin), arch, "gdc")
            if w.text.split()[0].split(".")[0] in keep]


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
def test_griddepcontrol_is_acqbulk_and_preexit_in_ptxas_order(arch):
    """The wait comes before the global load, launch_dependents after the store, as in
    ptxas's cubin (the scheduler must not move memory accesses across either)."""
    from ptx2sass.compiler import compile as compile_ptx
    ref = oracle.ptxas(GRIDDEP.encode(), arch, name="gdc")
    assert ref.ok, ref.stderr
    assert _order(compile_ptx(GRIDDEP, arch), arch) == _order(ref.output, arch) \
        == ["ACQBULK", "LDG", "STG", "PREEXIT", "EXIT"]


def _preexit_attribute(cubin: bytes) -> list[str]:
    import re
    return re.findall(r"EIATTR_PREEXIT_USED\s+Format:\s+\S+\s+Value:\s+(\S+)",
                      oracle.cuobjdump_elf(cubin))


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
@pytest.mark.parametrize("launch", [True, False])
def test_preexit_used_attribute_is_ptxas_s(arch, launch):
    """EIATTR_PREEXIT_USED is 1 exactly when the kernel has PREEXIT (ptxas's cubin says
    which); it was 0 in every kernel we wrote."""
    from ptx2sass.compiler import compile as compile_ptx
    ptx = GRIDDEP if launch else GRIDDEP.replace("griddepcontrol.launch_dependents;", "")
    ref = oracle.ptxas(ptx.encode(), arch, name="gdc")
    assert ref.ok, ref.stderr
    assert _preexit_attribute(compile_ptx(ptx, arch)) == _preexit_attribute(ref.output) \
        == (["0x1"] if launch else ["0x0"])
