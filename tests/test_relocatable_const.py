"""Module `.const` variables in relocatable output (`-c`). nvlink places each module's
`.nv.constant3` after the others', so a read of a variable must carry a relocation the linker
resolves: ptxas 13.5.37 writes R_CUDA_CONST_FIELD19_40 (type 0x40) on sm_75-89, in `.rel` for
a read at the variable's own offset and in `.rela` with the offset into it as the addend, and
leaves the word's bank and offset zero; the section is SHT 0x70000067 and the symbols carry
st_other 0x80. Before, ours wrote fixed `c[0x3][...]` offsets, so a kernel linked after
another module read that module's constants.

Expected values: the manual's (the variables' initialisers), and ptxas's own modules linked
the same way, run in the emulator."""
from __future__ import annotations

import io

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

import ptx2sass
from ptx2sass import oracle
from ptx2sass.encoder.arch import target as arch_info
from ptx2sass.emu.launch import run
from test_relocatable import _nvlink

READER = """.version 8.0
.target {arch}
.address_size 64
.const .u32 cs = 7;
.const .u32 ca[4] = {{1, 2, 3, 4}};
.const .u64 cw = 0x1122334455667788;
.visible .entry k(.param .u64 out)
{{
    .reg .b32 %r<6>;
    .reg .b64 %d<3>;
    ld.param.u64 %d0, [out];
    cvta.to.global.u64 %d0, %d0;
    ld.const.u32 %r0, [cs];
    ld.const.u32 %r1, [ca+8];
    ld.const.v2.u32 {{%r2, %r3}}, [ca+4];
    ld.const.u64 %d1, [cw];
    add.u32 %r4, %r0, %r1;
    st.global.u32 [%d0], %r4;
    st.global.v2.u32 [%d0+8], {{%r2, %r3}};
    st.global.u64 [%d0+16], %d1;
    ret;
}}
"""

# linked first, so the reader's variables do not start at offset 0 of the linked bank
OTHER = """.version 8.0
.target {arch}
.address_size 64
.const .u32 other[3] = {{100, 200, 300}};
.visible .entry k2(.param .u64 out)
{{
    .reg .b32 %r<2>;
    .reg .b64 %d<1>;
    ld.param.u64 %d0, [out];
    cvta.to.global.u64 %d0, %d0;
    ld.const.u32 %r0, [other+4];
    st.global.u32 [%d0], %r0;
    ret;
}}
"""

ARCHS = ("sm_75", "sm_86", "sm_89", "sm_90", "sm_100", "sm_110", "sm_120")


def _version(src: str, arch: str) -> str:
    """PTX 9.0 for sm_100 and later (8.0 predates them)."""
    return src.replace(".version 8.0", ".version 9.0") if int(arch[3:]) >= 100 else src


def _ours(src: str, arch: str) -> bytes:
    return ptx2sass.compile(_version(src, arch), arch, compile_only=True)


def _theirs(src: str, arch: str) -> bytes:
    r = oracle.ptxas(_version(src, arch), arch, ("-c",))
    assert r.ok, r.stderr
    return r.output


def _text_relocations(cubin: bytes) -> list[tuple[str, str, int, int | None]]:
    """The distinct (section kind, symbol, type, addend or None) of the text sections'
    relocations (ours may read one word twice where ptxas reads it once)."""
    elf = ELFFile(io.BytesIO(cubin))
    symbols = elf.get_section_by_name(".symtab")
    out = []
    for sec in elf.iter_sections():
        if isinstance(sec, RelocationSection) and ".text." in sec.name:
            for r in sec.iter_relocations():
                out.append(("rela" if sec.is_RELA() else "rel", symbols.get_symbol(r["r_info_sym"]).name,
                            r["r_info_type"], r["r_addend"] if sec.is_RELA() else None))
    return sorted(set(out), key=repr)


def _constant_bank(cubin: bytes):
    """(section type, st_other of each of its symbols) of `.nv.constant3`."""
    elf = ELFFile(io.BytesIO(cubin))
    index = next(i for i, s in enumerate(elf.iter_sections()) if s.name == ".nv.constant3")
    sec = elf.get_section(index)
    # (pyelftools reads st_other's bits 5-7 as `local`: 4 is ptxas's 0x80, 1 the 0x20 main wrote)
    others = sorted((s.name, s["st_other"]["local"]) for s in elf.get_section_by_name(".symtab").iter_symbols()
                    if s["st_shndx"] == index and s.name)
    return sec["sh_type"], others


@pytest.mark.parametrize("arch", ARCHS)
def test_reads_of_const_variables_carry_ptxas_s_relocations(arch):
    src = READER.format(arch=arch)
    ours, theirs = _text_relocations(_ours(src, arch)), _text_relocations(_theirs(src, arch))
    if arch == "sm_90":
        # ours reads the u64 as two LDCs where ptxas has one LDC.64: one more addend (cw + 4)
        assert set(theirs) <= set(ours) and {r[:3] for r in ours} == {r[:3] for r in theirs}
    elif arch_info(arch).sm >= 100:
        # the same, and ptxas reads `cs` with a uniform LDCU (type 0x73) where ours has an
        # LDC (0x42): every (symbol, addend) ptxas relocates is relocated, with either type
        assert {(r[0], r[1], r[3]) for r in theirs} <= {(r[0], r[1], r[3]) for r in ours}
        assert {r[2] for r in ours} <= set(arch_info(arch).const_relocation[:2])
    else:
        assert ours == theirs


@pytest.mark.parametrize("arch", ARCHS)
def test_const_bank_section_and_symbols_are_ptxas_s(arch):
    src = READER.format(arch=arch)
    assert _constant_bank(_ours(src, arch)) == _constant_bank(_theirs(src, arch))


@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("by", ["ours", "ptxas"])
def test_linked_after_another_module_reads_its_own_constants(arch, by, tmp_path):
    compile_c = _ours if by == "ours" else _theirs
    linked = _nvlink(compile_c(OTHER.format(arch=arch), arch), compile_c(READER.format(arch=arch), arch),
                     tmp_path=tmp_path, arch=arch)
    out = np.zeros(6, np.uint32)
    res = run(linked, "k", (1,), (1,), [out], hazard_check=by == "ours")
    assert not res.hazards
    assert out.tolist() == [7 + 3, 0, 2, 3, 0x55667788, 0x11223344]
    out2 = np.zeros(1, np.uint32)
    run(linked, "k2", (1,), (1,), [out2])
    assert out2.tolist() == [200]


# the address of a variable, as a `.const` window offset and as a generic pointer
ADDRESS = READER.replace("ld.const.u32 %r0, [cs];", """mov.u64 %d2, ca;
    ld.const.u32 %r0, [%d2+12];
    mov.u64 %d2, ca+4;
    cvta.const.u64 %d2, %d2;
    ld.u32 %r5, [%d2];
    add.u32 %r0, %r0, %r5;
    mov.u32 %r5, cw;
    st.global.u32 [%d0+4], %r5;""")


@pytest.mark.parametrize("arch", ARCHS)
def test_the_address_of_a_const_variable_is_relocated_under_c(arch, tmp_path):
    """ptxas -c writes `UMOV UR4, (ca)` with relocation type 0x3b for `mov.u64 %rd, ca`
    (the linker places the bank); ours carries the same relocation (on a MOV), and the
    module linked after another reads its own words through the address (the manual's
    values), the address itself equal to ptxas's linked module's."""
    src = ADDRESS.format(arch=arch)
    assert ("rela" if arch_info(arch).const_relocation[3] else "rel", "ca", 0x3B) in {r[:3] for r in _text_relocations(_ours(src, arch))}
    outs = {}
    for by, compile_c in (("ours", _ours), ("ptxas", _theirs)):
        linked = _nvlink(compile_c(OTHER.format(arch=arch), arch), compile_c(src, arch),
                         tmp_path=tmp_path, arch=arch)
        out = np.zeros(6, np.uint32)
        res = run(linked, "k", (1,), (1,), [out], hazard_check=by == "ours")
        assert not res.hazards
        assert out[0] == 4 + 2 + 3 and out[2:].tolist() == [2, 3, 0x55667788, 0x11223344], by
        outs[by] = out.tolist()
    assert outs["ours"] == outs["ptxas"]


LAYOUT = """.version 8.0
.target sm_89
.address_size 64
.const .u8 a1 = 1;
.const .u32 b4 = 2;
.const .u16 c2 = 3;
.const .u64 d8 = 4;
.const .align 16 .b8 e16[20] = {5};
.const .u32 f4[3] = {6, 7, 8};
.visible .const .u32 g4 = 9;
.visible .entry k(.param .u64 out)
{
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.const.u32 %r0, [b4];
    ld.const.u32 %r1, [f4+4];
    add.u32 %r0, %r0, %r1;
    ld.const.u32 %r1, [g4];
    add.u32 %r0, %r0, %r1;
    ld.const.u8 %r1, [a1];
    add.u32 %r0, %r0, %r1;
    ld.const.u16 %r1, [c2];
    add.u32 %r0, %r0, %r1;
    ld.const.u32 %r1, [d8];
    add.u32 %r0, %r0, %r1;
    ld.const.u32 %r1, [e16];
    add.u32 %r0, %r0, %r1;
    st.global.u32 [%d0], %r0;
    ret;
}
"""


@pytest.mark.parametrize("compile_only", [False, True])
def test_const_variables_are_laid_out_as_ptxas_lays_them_out(compile_only):
    """Whole-program: declaration order, the `.visible` ones first; -c: largest alignment
    first, then smallest size (as `.nv.global`); the addresses `mov` takes follow it."""
    def values(cubin: bytes) -> dict[str, int]:
        symtab = ELFFile(io.BytesIO(cubin)).get_section_by_name(".symtab")
        return {s.name: s["st_value"] for s in symtab.iter_symbols() if len(s.name) in (2, 3) and s.name[-1] in "12468"}
    ours = ptx2sass.compile(LAYOUT, "sm_89", compile_only=compile_only)
    r = oracle.ptxas(LAYOUT, "sm_89", ("-c",) if compile_only else ())
    assert r.ok, r.stderr
    assert values(ours) == values(r.output) and len(values(ours)) == 7
