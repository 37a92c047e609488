"""A module of uncalled functions only (no kernel, e.g. `ld.param::func` in a lone
`.func`): ptxas 13.5 writes a cubin without code; ours was refused ('the module has no
kernels'). Compared with ptxas's cubin: section names and types, the symbols (name,
value, size, type, binding, section), and the module `.nv.info` record (0x5f; sm_90+ its
0x101 value)."""
import pytest
from elftools.elf.elffile import ELFFile
import io

from ptx2sass import codegen, oracle

MODULE = """.version {version}
.target {arch}
.address_size 64
.func fbody(.param .b64 fparam)
{{
.reg .b64 %rd<4>;
ld.param::func.b64 %rd1, [fparam];
ret;
}}
"""


def _shape(cubin: bytes):
    elf = ELFFile(io.BytesIO(cubin))
    sections = [(s.name, s["sh_type"]) for s in elf.iter_sections()
                if not s.name.startswith(".note")]
    names = {i: s.name for i, s in enumerate(elf.iter_sections())}
    symbols = [(s.name, s["st_value"], s["st_size"], s["st_info"]["type"], s["st_info"]["bind"],
                names.get(s["st_shndx"], s["st_shndx"]))
               for s in elf.get_section_by_name(".symtab").iter_symbols()]
    return sections, symbols, elf.get_section_by_name(".nv.info").data()


@pytest.mark.parametrize("arch,version", [("sm_80", "8.3"), ("sm_89", "8.3"), ("sm_90", "8.3"),
                                          ("sm_120", "8.8")])
def test_module_without_kernels_is_ptxas_cubin(arch, version):
    text = MODULE.format(arch=arch, version=version)
    theirs = oracle.ptxas(text, arch)
    assert theirs.ok, theirs.stderr
    ours, codes = codegen.generate_module(codegen.lower_ptx(text, arch, "m.ptx"), arch, filename="m.ptx")
    assert codes == []
    want = _shape(theirs.output)
    got = _shape(ours)
    if arch == "sm_120":          # ptxas's mercury copies (.nv.merc.*): not written by us anywhere
        want = ([s for s in want[0] if not s[0].startswith(".nv.merc")], want[1], want[2])
    assert got == want
