"""-g on sm_90 and later: the cubin's sections, symbols and relocations as ptxas 13.5.37 -g
writes them (read off its cubins of the modules below and of the cuda corpus):

- no `.nv.shared.reserved.0` and no `__nv_reservedSMEM_offset_0_alias`: only the undefined
  weak `.nv.reservedSmem.offset0` names the reserved words (plain builds have all three);
  the section stays where something of its own lives in it (sm_110's workaround words);
- `.nv_debug.shared` (extern shared variables' symbols) holds the reserved words at least
  (1 KiB), an extern variable no kernel names sits at its end, and their symbols follow
  `.nv.reservedSmem.offset0`;
- addresses in variables' initial bytes are RELA with a zero addend too (plain, -g, -c);
- the literal banks' empty `.rela.nv.constant2.<k>` come before the debug sections'
  relocations and `.rela.nv.constant4`.

Expected values are ptxas's own cubins; the emulator runs ours as ptxas's."""
from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

CUDA = Path(__file__).parent / "corpus" / "cuda"


def _head(arch: str) -> str:
    return f".version {'9.0' if int(arch[3:].rstrip('af')) >= 100 else '8.0'}\n.target {arch}\n.address_size 64\n"


_BODY = """
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r0, %tid.x;
  shl.b32 %r5, %r0, 2;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd1, %rd1, %rd2;
"""

MODULES = {
    # no shared memory at all
    "plain": """
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;""" + _BODY + """
  mad.lo.u32 %r1, %r0, 3, 7;
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
    # a kernel's own shared array and a module one
    "shared": """
.shared .align 8 .b32 gsh[64];
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 ksh[64];""" + _BODY + """
  mov.u32 %r6, ksh; add.u32 %r6, %r6, %r5;
  st.shared.u32 [%r6], %r0;
  bar.sync 0;
  ld.shared.u32 %r1, [%r6];
  mov.u32 %r6, gsh; add.u32 %r6, %r6, %r5;
  st.shared.u32 [%r6], 9;
  ld.shared.u32 %r2, [%r6];
  add.u32 %r1, %r1, %r2;
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
    # extern (dynamic) shared memory only, and an extern variable nothing names
    "extern_shared": """
.extern .shared .align 16 .b32 dyn[];
.extern .shared .align 4 .b32 unused[];
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;""" + _BODY + """
  mov.u32 %r6, dyn; add.u32 %r6, %r6, %r5;
  st.shared.u32 [%r6], %r0;
  ld.shared.u32 %r1, [%r6];
  add.u32 %r1, %r1, 5;
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
    # two kernels, one with shared memory, one without
    "two_kernels": """
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  .shared .align 4 .b32 ksh[64];""" + _BODY + """
  mov.u32 %r6, ksh; add.u32 %r6, %r6, %r5;
  st.shared.u32 [%r6], %r0;
  ld.shared.u32 %r1, [%r6];
  add.u32 %r1, %r1, 11;
  st.global.u32 [%rd1], %r1;
  ret;
}
.visible .entry k2(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;""" + _BODY + """
  st.global.u32 [%rd1], %r5;
  ret;
}
""",
    # addresses in initial bytes (zero and non-zero addends), a switch table, a call
    "initialised": """
.global .align 4 .u32 v[4] = {1, 2, 3, 4};
.global .align 8 .u64 ptrs[2] = {generic(v), generic(v)+8};
.const .align 8 .u64 cp = generic(v)+4;
.func (.param .b32 r) f(.param .b32 a)
{
  .reg .b32 %t;
  ld.param.b32 %t, [a];
  add.u32 %t, %t, 3;
  st.param.b32 [r], %t;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<6>; .reg .pred %q;""" + _BODY + """
  and.b32 %r1, %r0, 3;
  ts: .branchtargets L0, L1, L2, L3;
  brx.idx %r1, ts;
L0: mov.u32 %r2, 10; bra Le;
L1: mov.u32 %r2, 11; bra Le;
L2: mov.u32 %r2, 12; bra Le;
L3: mov.u32 %r2, 13;
Le:
  { .param .b32 a; .param .b32 r; st.param.b32 [a], %r2; call (r), f, (a); ld.param.b32 %r3, [r]; }
  ld.global.u64 %rd3, [ptrs+8];
  ld.const.u64 %rd4, [cp];
  sub.s64 %rd3, %rd3, %rd4;
  cvt.u32.u64 %r4, %rd3;
  add.u32 %r3, %r3, %r4;
  st.global.u32 [%rd1], %r3;
  ret;
}
""",
}

CORPUS = ["bits", "control", "patterns", "calls", "warp"]


def _source(name: str, arch: str) -> str:
    if name in MODULES:
        return _head(arch) + MODULES[name]
    text = (CUDA / f"{name}.ptx").read_text()
    head, _, rest = text.partition(".address_size 64")
    return _head(arch) + rest


def _mercury(name: str) -> bool:
    return name.startswith((".nv.merc.", ".nv.capmerc."))


def _structure(cubin: bytes) -> dict:
    """Sections (shared ones' sizes too), symbols (objects' value and size), relocations
    (symbol, type) per section; ptxas's Mercury sections (sm_100+) left out."""
    elf = ELFFile(io.BytesIO(cubin))
    names = [s.name for s in elf.iter_sections()]
    symbols = list(elf.get_section_by_name(".symtab").iter_symbols())
    return {
        "sections": [(s.name, s["sh_type"], s["sh_flags"], s["sh_addralign"],
                      s["sh_size"] if s.name.startswith((".nv.shared", ".nv_debug.shared")) else None)
                     for s in elf.iter_sections() if not _mercury(s.name)],
        "symbols": [(s.name, s["st_info"]["type"], s["st_info"]["bind"], s["st_other"]["local"],
                     names[s["st_shndx"]] if isinstance(s["st_shndx"], int) else s["st_shndx"],
                     (s["st_value"], s["st_size"]) if s["st_info"]["type"] == "STT_OBJECT" else None)
                    for s in symbols],
        # (addends of data relocations only: in code and line tables they follow the code)
        "relocations": {s.name: sorted((symbols[r["r_info_sym"]].name, r["r_info_type"],
                                        r["r_addend"] if r.is_RELA() and ".nv." in s.name
                                        and ".text." not in s.name else None)
                                       for r in s.iter_relocations())
                        for s in elf.iter_sections() if isinstance(s, RelocationSection)},
    }


def _ptxas(src: str, arch: str, options: tuple[str, ...]) -> bytes:
    r = oracle.ptxas(src, arch, options, name="k.ptx")
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _ours(src: str, arch: str, options: tuple[str, ...]) -> bytes:
    return codegen.compile_ptx(src, arch, "k.ptx", debug="-g" in options, opt_level=0 if "-g" in options else 3,
                               compile_only="-c" in options)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100", "sm_120"])
@pytest.mark.parametrize("name", list(MODULES) + CORPUS)
def test_debug_cubin_is_laid_out_as_ptxas(name, arch):
    src = _source(name, arch)
    assert _structure(_ours(src, arch, ("-g",))) == _structure(_ptxas(src, arch, ("-g",)))


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name", ["shared", "extern_shared"])
def test_reserved_words_named_only_by_the_offset_symbol(name, arch):
    """What the first test compares, spelled out: plain builds have the section and the
    alias; -g only the undefined offset symbol."""
    src = _source(name, arch)
    for options, present in (((), True), (("-g",), False)):
        for cubin in (_ours(src, arch, options), _ptxas(src, arch, options)):
            st = _structure(cubin)
            assert (".nv.shared.reserved.0" in [s[0] for s in st["sections"]]) == present
            assert ("__nv_reservedSMEM_offset_0_alias" in [s[0] for s in st["symbols"]]) == present
            assert [s[4] for s in st["symbols"] if s[0] == ".nv.reservedSmem.offset0"] == ["SHN_UNDEF"]


def test_sm110_debug_keeps_the_workaround_section():
    src = _source("shared", "sm_110")
    ours, theirs = _structure(_ours(src, "sm_110", ("-g",))), _structure(_ptxas(src, "sm_110", ("-g",)))
    assert ours == theirs
    assert ".nv.shared.reserved.0" in [s[0] for s in ours["sections"]]


@pytest.mark.parametrize("options", [(), ("-c",)])
def test_initialiser_relocations_are_rela_on_sm_90(options):
    src = _source("initialised", "sm_90")
    ours, theirs = _structure(_ours(src, "sm_90", options)), _structure(_ptxas(src, "sm_90", options))
    for key in (".rela.nv.global.init", ".rela.nv.constant3"):
        assert ours["relocations"][key] == theirs["relocations"][key]
    assert ".rel.nv.global.init" not in ours["relocations"]


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name", ["shared", "extern_shared", "two_kernels", "initialised"])
def test_debug_cubin_runs_as_ptxas(name, arch):
    src = _source(name, arch)
    ours, theirs = _ours(src, arch, ("-g",)), _ptxas(src, arch, ("-g",))
    kernels = ["k", "k2"] if name == "two_kernels" else ["k"]
    for kernel in kernels:
        results = []
        for cubin, check in ((ours, True), (theirs, False)):
            out = np.zeros(64, np.uint32)
            res = run(cubin, kernel, 1, 64, [out], hazard_check=check, dynamic_shared_bytes=256)
            if check:
                assert res.hazards == [], [str(h) for h in res.hazards[:3]]
            results.append(out)
        np.testing.assert_array_equal(*results)
        assert results[0].any()
