"""-preserve-relocs before sm_90 (ptxas 13.5.37; on sm_90+ it only warns): the whole
program's cubin keeps the relocations ptxas resolved itself, in `.nv.resolvedrela.<target>`
sections (type 0x70000003, RELA entries with the resolved addends) after the ordinary
relocation sections, and names each kernel's parameter area with a `_param` symbol (an
internal STT_OBJECT in its constant bank 0). Here: `.debug_frame`'s FDE-to-CIE pointers.
Not yet: the code's own resolved relocations (shared, `.const` and global variables'
addresses: `.nv.resolvedrela.text.<kernel>`). Expected values: ptxas's cubins."""
from __future__ import annotations

import io
import struct

import pytest
from elftools.elf.elffile import ELFFile

from ptx2sass import codegen, oracle

MODULE = """.version 8.0
.target {arch}
.address_size 64

.visible .entry k(.param .u64 p, .param .u32 n)
{{
  .reg .b64 %rd<4>;
  .reg .b32 %r<4>;
  .reg .pred %p1;
  ld.param.u64 %rd1, [p];
  ld.param.u32 %r2, [n];
  mov.u32 %r1, %tid.x;
  setp.ge.u32 %p1, %r1, %r2;
  @%p1 bra DONE;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd3, %rd1, %rd2;
  st.global.u32 [%rd3], %r1;
DONE:
  ret;
}}

.visible .entry k2(.param .u64 p)
{{
  .reg .b64 %rd<2>;
  .reg .b32 %r<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %ctaid.x;
  st.global.u32 [%rd1], %r1;
  ret;
}}

.visible .entry k3()
{{
  ret;
}}
"""


def _view(cubin: bytes) -> dict:
    elf = ELFFile(io.BytesIO(cubin))
    symbols = list(elf.get_section_by_name(".symtab").iter_symbols())
    resolved = {}
    for s in elf.iter_sections():
        if s.name.startswith(".nv.resolvedrela."):
            data = s.data()
            resolved[s.name] = [(off, symbols[info >> 32].name, info & 0xFFFFFFFF, addend)
                                for off, info, addend in struct.iter_unpack("<QQq", data)]
    return {"sections": [(s.name, s["sh_type"], s["sh_entsize"], s["sh_link"],
                          s["sh_info"] & 0xFFFFFF)      # (a text's top byte: its register count)
                         for s in elf.iter_sections()],
            "symbols": [(s.name, s["st_info"]["type"], s["st_info"]["bind"], s["st_other"]["visibility"],
                         s["st_value"] if s.name == "_param" else None, s["st_size"] if s.name == "_param" else None)
                        for s in symbols],
            "resolved": resolved}


@pytest.mark.parametrize("arch", ["sm_75", "sm_80", "sm_86", "sm_89", "sm_90"])
def test_preserve_relocs_as_ptxas(arch):
    ptx = MODULE.format(arch=arch)
    try:
        theirs = oracle.ptxas(ptx, arch, ("-preserve-relocs",), name="k.ptx")
    except oracle.OracleMissing as e:
        pytest.skip(str(e))
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch, "k.ptx", preserve_relocs=True)
    assert _view(ours) == _view(theirs.output)


def test_c_kernel_without_parameters_names_its_bank():
    """-c: a kernel without parameters has `_SREG` (its bank 0's driver words, an internal
    CUDA object) where the others have `_param`, as in ptxas's object."""
    ptx = MODULE.format(arch="sm_89")
    try:
        theirs = oracle.ptxas(ptx, "sm_89", ("-c",), name="k.ptx")
    except oracle.OracleMissing as e:
        pytest.skip(str(e))
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx", compile_only=True)
    assert _view(ours)["symbols"] == _view(theirs.output)["symbols"]
    assert "_SREG" in [s[0] for s in _view(ours)["symbols"]]
