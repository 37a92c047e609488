"""-g's module layout as ptxas 13.5.37 -g writes it (read off its cubins for the inputs
below): a function's address in a `.global` initialiser (a table of function pointers) is
an R_CUDA_64 relocation against the function, kept in a text section of its own, with zero
bytes in `.nv.global.init`; the code builds `.global` addresses from `32@lo/hi(sym)`
relocations (no bank-4 table); the module's `.shared` and `.global` symbols come in PTX
declaration order (`.visible`/`.common` ones GLOBAL and `.weak` ones WEAK, after the
kernel's symbol), the first kernel's out-of-line functions after them; relocation sections
of the debug sections before those of banks and data. The hazard model recognises ptxas's
unscheduled -g code by its control fields, with or without DWARF in the PTX.
Expected values are ptxas's own cubins; outputs from the emulator on both."""
import io

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import load_program
from ptx2sass.encoder.cubin import read_cubin
from test_debug_functions import HEAD, _func, _kernel, _structure

_FUNCS = """.func (.reg .u32 r) fa(.reg .u32 a)
{
  add.u32 r, a, 3;
  ret;
}
.func (.reg .u32 r) fb(.reg .u32 a)
{
  mul.lo.u32 r, a, 5;
  ret;
}
"""


def _table_kernel(name: str = "k", extra: str = "") -> str:
    """out[tid] = tab[tid & 1](tid), through a pointer loaded from the table."""
    return f""".visible .entry {name}(.param .u64 p)
{{
  .reg .b32 %r<4>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  and.b32 %r2, %r1, 1;
  mul.wide.u32 %rd3, %r2, 8;
  mov.u64 %rd4, tab;
  add.u64 %rd4, %rd4, %rd3;
  ld.global.u64 %rd5, [%rd4];
{extra}  {{ proto: .callprototype (.reg .u32 _) _ (.reg .u32 _);
    call (%r3), %rd5, (%r1), proto; }}
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r3;
  ret;
}}
"""


def _variables_kernel(order: str) -> str:
    """A kernel naming the module's `ga` (global) and `sa` (shared), `order` first."""
    uses = {"g": "  st.global.u32 [ga], %r1;\n",
            "s": "  st.shared.u32 [sa], %r1;\n  ld.shared.u32 %r1, [sa+4];\n"}
    return _kernel("k", []).replace("  st.global.u32 [%rd1], %r1;\n",
                                    "".join(uses[c] for c in order) + "  st.global.u32 [%rd1], %r1;\n")


_GA = ".global .align 4 .u32 ga[64];\n"
_SA = ".shared .align 4 .u32 sa[16];\n"

MODULES = {
    # a table of function pointers in a `.global` initialiser (cuda calls.ptx's op_table)
    "table": HEAD + _FUNCS + ".global .align 8 .u64 tab[2] = {fa, fb};\n" + _table_kernel(),
    "table_reversed": HEAD + _FUNCS + ".global .align 8 .u64 tab[2] = {fb, fa};\n" + _table_kernel(),
    # the table in `.const` (bank 3): R_CUDA_64 in `.rel.nv.constant3`
    "const_table": HEAD + _FUNCS + ".const .align 8 .u64 tab[2] = {fa, fb};\n"
    + _table_kernel().replace("ld.global.u64 %rd5", "ld.const.u64 %rd5"),
    # the table after an uninitialised global the kernel also names
    "table_and_global": HEAD + _FUNCS + ".global .align 4 .u32 gz[4];\n"
    ".global .align 8 .u64 tab[2] = {fa, fb};\n" + _table_kernel(extra="  st.global.u32 [gz], %r1;\n"),
    # the table's address taken in code too (fb, before the table)
    "table_and_pointer": HEAD + _FUNCS + ".global .align 8 .u64 tab[4] = {fa, fb};\n"
    + _table_kernel(extra="  mov.u64 %rd2, fb;\n  st.global.u64 [%rd4+16], %rd2;\n"),
    # a directly called function and a global: the function's symbol after the global's
    "call_and_global": HEAD + _func("fa") + _GA + _kernel("k", ["fa"]).replace(
        "  st.global.u32 [%rd1], %r1;\n", "  st.global.u32 [ga], %r1;\n  st.global.u32 [%rd1], %r1;\n"),
    # module shared and global variables: symbols in declaration order, whichever the
    # code names first
    "global_then_shared": HEAD + _GA + _SA + _variables_kernel("sg"),
    "shared_then_global": HEAD + _SA + _GA + _variables_kernel("gs"),
    "shared_between_globals": HEAD + ".global .align 4 .u32 g0 = 3;\n" + _SA + _GA + _variables_kernel("gs"),
    # linkage: `.visible`/`.common` GLOBAL and `.weak` WEAK after the kernel's symbol, a
    # plain one LOCAL (numba's `.common` environment variables)
    "linkage": HEAD + ".visible .global .align 4 .u32 gv;\n.common .global .align 4 .u32 gc;\n"
    ".weak .global .align 4 .u32 gw;\n.global .align 4 .u32 gp;\n" + _kernel("k", []).replace(
        "  st.global.u32 [%rd1], %r1;\n", "".join(f"  st.global.u32 [{g}], %r1;\n  ld.global.u32 %r2, [{g}];\n"
                                                  "  add.u32 %r1, %r1, %r2;\n" for g in ("gv", "gc", "gw", "gp"))
        + "  st.global.u32 [%rd1], %r1;\n"),
    "shared_global_call": HEAD + _func("fa") + _SA + _GA + _kernel("k", ["fa"]).replace(
        "  st.global.u32 [%rd1], %r1;\n", "  st.global.u32 [ga], %r1;\n  st.shared.u32 [sa], %r1;\n"
        "  st.global.u32 [%rd1], %r1;\n"),
}


def _ptxas(ptx: str, flags: tuple[str, ...] = ("-g",)) -> bytes:
    try:
        theirs = oracle.ptxas(ptx, "sm_89", flags, name="k.ptx")
    except oracle.OracleMissing as e:
        pytest.skip(str(e))
    assert theirs.ok, theirs.stderr
    return theirs.output


def _ours(ptx: str, **options) -> bytes:
    return codegen.compile_ptx(ptx, "sm_89", "k.ptx", **(options or {"debug": True, "opt_level": 0}))


@pytest.mark.parametrize("name", list(MODULES))
def test_sections_symbols_and_relocations_as_ptxas_g(name):
    assert _structure(_ours(MODULES[name])) == _structure(_ptxas(MODULES[name]))


def _init_bytes(cubin: bytes) -> bytes:
    return ELFFile(io.BytesIO(cubin)).get_section_by_name(".nv.global.init").data()


def test_an_initialisers_function_addresses_are_relocations():
    """ptxas -g: zeros in `.nv.global.init`, R_CUDA_64 (2) against fa at 0 and fb at 8; the
    functions in `.text.fa`/`.text.fb`; `tab` through `32@lo/hi(tab)` (no `.nv.constant4`)."""
    theirs, ours = _ptxas(MODULES["table"]), _ours(MODULES["table"])
    for cubin in (theirs, ours):
        assert _init_bytes(cubin) == bytes(16)
        structure = _structure(cubin)
        assert structure["relocations"][".rel.nv.global.init"] == [("fa", 2), ("fb", 2)]
        assert sorted(structure["relocations"][".rel.text.k"]) == [("tab", 56), ("tab", 57)]      # ABS32_LO_32, ABS32_HI_32
        assert {".text.fa", ".text.fb"} <= set(structure["sections"])
        assert ".nv.constant4" not in structure["sections"]


@pytest.mark.parametrize("name", ["table", "table_reversed", "const_table", "table_and_global",
                                  "table_and_pointer", "call_and_global", "shared_global_call", "linkage"])
def test_runs_as_ptxas_g_cubin_without_hazards(name):
    """Calls through the table give ptxas -g's values; neither cubin has hazards (ptxas's
    unscheduled code is run serialised: its PTX has no DWARF, which the model used to need)."""
    results = []
    for cubin in (_ours(MODULES[name]), _ptxas(MODULES[name])):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k", 1, 64, [out], hazard_check=True)
        assert res.hazards == [], [str(h) for h in res.hazards[:3]]
        results.append(out)
    np.testing.assert_array_equal(*results)
    if "table" in name:
        tid = np.arange(64, dtype=np.uint32)
        first, second = (tid + 3, tid * 5) if name != "table_reversed" else (tid * 5, tid + 3)
        np.testing.assert_array_equal(results[0], np.where(tid & 1, second, first))


def test_only_unscheduled_code_runs_serialised():
    """ptxas -g's code (every control field stall 0, no scoreboard, no wait) is recognised as
    unscheduled without `.debug_info`; ours under -g is scheduled and checked."""
    theirs, ours = _ptxas(MODULES["table"]), _ours(MODULES["table"])
    assert not any(s.name == ".debug_info" for s in read_cubin(theirs).sections)
    assert load_program(theirs, "k").debug_build
    assert not load_program(ours, "k").debug_build
    assert not load_program(_ptxas(MODULES["table"], ()), "k").debug_build


def test_debug_relocations_come_before_data_relocations():
    """-lineinfo and -g: `.rel.nv_debug_line_sass` before `.rel.nv.constant4` (plain's bank
    of addresses) and `.rel.nv.global.init` (an initialiser holding an address), as ptxas."""
    ptx = HEAD + """.global .align 4 .u32 g0[4] = {1, 2, 3, 4};
.global .align 8 .u64 pg = generic(g0);
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<6>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  ld.global.u64 %rd2, [pg];
  ld.u32 %r1, [%rd2+4];
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
    for flags, options in ((("-lineinfo",), {"lineinfo": True}), (("-g",), {"debug": True, "opt_level": 0})):
        theirs = _structure(_ptxas(ptx, flags))["sections"]
        assert [n for n in _structure(_ours(ptx, **options))["sections"] if n.startswith(".rel")] == \
            [n for n in theirs if n.startswith(".rel")]
