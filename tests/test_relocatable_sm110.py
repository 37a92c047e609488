"""`-c` on sm_110 (Thor), whose cubins reserve 128 more shared bytes for the GB10B
workaround: ptxas 13.5.37 writes them under -c as a `.nv.shared.reserved.0` section of the
CUDA shared type (0x70000015, 128 bytes, align 16) holding `__nv_reservedSMEM_gb10b_war_var`
(a weak CUDA object, value 16: its alignment, st_other 0xa0) after the module's variables'
symbols; the section's symbol and place come after the exported variables' sections and
before the LOCAL ones'. A `.func` has no RESERVED_SMEM_USED record (-c or -g), a kernel has.

The rule was read off 11 hand-written linkage/initialiser mixes and test_relocatable's
modules; the generated modules below (seeds 100-129) were not looked at before the test."""
from __future__ import annotations

import random

import pytest

from test_relocatable import _structure
from ptx2sass import codegen, oracle
from ptx2sass.encoder.cubin import read_cubin

ARCH = "sm_110"
LINKAGES = ("", ".visible", ".weak", ".extern", ".common")


def _module(seed: int) -> tuple[str, int]:
    """1-4 module variables of random linkage, space and initialiser, each read by the
    kernel, which stores their sum; a leading `.visible .func` in some (and the number of
    variables)."""
    rng = random.Random(seed)
    decls, reads = [], []
    for i in range(rng.randint(1, 4)):
        linkage = rng.choice(LINKAGES)
        space = ".global" if linkage == ".common" or rng.random() < 0.7 else ".const"
        init = f" = {rng.randint(1, 99)}" if linkage not in (".extern", ".common") and rng.random() < 0.5 else ""
        if space == ".const" and linkage == ".extern":      # (ours: "not supported yet")
            space = ".global"
        decls.append(f"{linkage} {space} .align 4 .u32 v{i}{init};".strip())
        reads.append(f"  ld{space}.u32 %r{i + 1}, [v{i}];\n  add.u32 %r0, %r0, %r{i + 1};")
    func = ""
    if rng.random() < 0.3:
        func = (".visible .func (.param .b32 r) f(.param .b32 a)\n{\n  .reg .b32 %t;\n"
                "  ld.param.b32 %t, [a];\n  add.u32 %t, %t, 1;\n  st.param.b32 [r], %t;\n  ret;\n}\n")
    body = "\n".join(reads)
    return f""".version 9.0
.target {ARCH}
.address_size 64
{chr(10).join(decls)}
{func}.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<8>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r0, 0;
{body}
  st.global.u32 [%rd1], %r0;
  ret;
}}
""", len(decls)


def _c(ptx: str, by: str) -> bytes:
    if by == "ours":
        return codegen.compile_ptx(ptx, arch=ARCH, compile_only=True)
    r = oracle.ptxas(ptx, arch=ARCH, options=("-c",))
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _layout(cubin: bytes) -> dict:
    """test_relocatable's structure but for the text relocations' types, which the code
    decides (ptxas reads a `.const` with LDCU, type 0x73, where ours has LDC, 0x42): which
    symbols the text relocates is compared."""
    st = _structure(cubin)
    st["text relocations"] = {k: sorted({r[0] for r in v}) for k, v in st["text relocations"].items()}
    return st


@pytest.mark.parametrize("seed", range(100, 130))
def test_generated_modules_are_built_like_ptxas(seed):
    ptx, _ = _module(seed)
    assert _layout(_c(ptx, "ours")) == _layout(_c(ptx, "ptxas"))


def test_reserved_words_section_and_object():
    ptx, _ = _module(100)
    c = read_cubin(_c(ptx, "ours"))
    sec = next(s for s in c.sections if s.name == ".nv.shared.reserved.0")
    assert (sec.type, sec.flags, sec.align, sec.nobits_size) == (0x70000015, 0x3, 16, 0x80)
    sym = next(s for s in c.symbols if s.name == "__nv_reservedSMEM_gb10b_war_var")
    assert (sym.value, sym.size, sym.type, sym.bind, sym.other) == (16, 128, 13, 2, 0xA0)


FUNC_DEBUG = """.version 9.0
.target sm_110
.address_size 64
.func (.param .b32 r) f(.param .b32 a)
{
  .reg .b32 %r<4>;
  ld.param.b32 %r1, [a];
  mul.lo.s32 %r2, %r1, 3;
  st.param.b32 [r], %r2;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<6>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, %tid.x;
  { .param .b32 a0; .param .b32 r0;
    st.param.b32 [a0], %r1;
    call.uni (r0), f, (a0);
    ld.param.b32 %r2, [r0]; }
  st.global.u32 [%rd1], %r2;
  ret;
}
"""


def test_debug_function_has_no_reserved_smem_record():
    """-g keeps `f` out of line with its own `.nv.info.f`: ptxas writes no RESERVED_SMEM_USED
    there on sm_110 (ours did), the kernel's has it."""
    r = oracle.ptxas(FUNC_DEBUG, arch=ARCH, options=("-g",))
    assert r.ok, r.stderr
    theirs = {k.name: [a.name for a in k.attributes] for k in read_cubin(r.output).kernels}
    ours = {k.name: [a.name for a in k.attributes]
            for k in read_cubin(codegen.compile_ptx(FUNC_DEBUG, arch=ARCH, debug=True, opt_level=0)).kernels}
    assert "RESERVED_SMEM_USED" not in theirs["f"] and "RESERVED_SMEM_USED" in theirs["k"]
    assert ours["f"] == theirs["f"] and "RESERVED_SMEM_USED" in ours["k"]
