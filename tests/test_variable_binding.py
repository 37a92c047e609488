"""Module `.global`/`.const` variables in plain and -lineinfo builds as ptxas 13.5.37 writes
them (sm_89; read off its cubins for the modules below): `.visible` and `.common` ones bound
GLOBAL, `.weak` ones WEAK, their symbols after the kernel's, in declaration order; plain
`.global`s LOCAL before it. Bank-4 address slots and the ties of `.nv.global`'s layout
(largest alignment, then smallest size) take the exported variables first; section symbols
come in the order of the exported variables' sections, then the LOCAL ones'.
Expected values are ptxas's own cubins; outputs from the emulator on both."""
import io
import itertools
import random

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _module(decls: list[str], kernels: int = 1) -> str:
    """`decls` (PTX declarations, `name[n]` last) and kernels that add one word of each."""
    names = [("const" if ".const" in d else "global", d.split("[")[0].split()[-1]) for d in decls]
    body = "".join(f"  ld.{space}.u32 %r2, [{n}+4];\n  add.u32 %r1, %r1, %r2;\n" for space, n in names)
    kernels_ = "".join(f""".visible .entry k{i}(.param .u64 p)
{{
  .reg .u32 %r<4>; .reg .u64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
{body}  mov.u32 %r3, %tid.x;
  mul.wide.u32 %rd2, %r3, 4;
  add.s64 %rd1, %rd1, %rd2;
  st.global.u32 [%rd1], %r1;
  ret;
}}
""" for i in range(kernels))
    return HEAD + "".join(d + ";\n" for d in decls) + kernels_


MODULES = {
    "visible_first": _module([".visible .global .u32 a[4]", ".global .u32 b[4]"]),
    "local_first": _module([".global .u32 a[4]", ".visible .global .u32 b[4]"]),
    "linkages_sizes": _module([".visible .global .u32 a[16]", ".global .u32 b[2]",
                               ".weak .global .u32 c[8]", ".global .u32 d[4]"]),
    "two_kernels": _module([".visible .global .u32 a[16]", ".global .u32 b[2]",
                            ".weak .global .u32 c[8]", ".global .u32 d[4]"], kernels=2),
    "initialised": _module([".common .global .u32 a[4] = {1,2,3,4}", ".global .u32 b[2] = {5,6}",
                            ".weak .global .u32 c[8]"]),
    "init_and_zero": _module([".global .u32 a[4] = {1,2,3,4}", ".visible .global .u32 b[2] = {5,6}",
                              ".global .u32 c[8]", ".visible .global .u32 d[1]"]),
    "const_and_global": _module([".visible .const .u32 a[4] = {7,8,9,10}", ".const .u32 b[2]",
                                 ".visible .global .u32 g[8]"]),
    # the lead's module: four `.global`s of one size (a tie ptxas's merge sort breaks)
    "five_linkages": _module([".visible .global .u32 gv[4]", ".global .u32 hv[4]",
                              ".weak .global .u32 wv[4]", ".common .global .u32 cv[4]",
                              ".visible .const .u32 cc[4]"]),
}


def _ptxas(ptx: str, flags=(), arch: str = "sm_89") -> bytes:
    try:
        theirs = oracle.ptxas(ptx, arch, flags, name="k.ptx")
    except oracle.OracleMissing as e:
        pytest.skip(str(e))
    assert theirs.ok, theirs.stderr
    return theirs.output


def _symbols(cubin: bytes, values: bool = True) -> list:
    """(name, type, binding, section, value, size) of every symbol, in table order."""
    elf = ELFFile(io.BytesIO(cubin))
    names = [s.name for s in elf.iter_sections()]
    out = []
    for s in elf.get_section_by_name(".symtab").iter_symbols():
        code = s["st_info"]["type"] == "STT_FUNC"       # (code sizes differ)
        out.append((s.name, s["st_info"]["type"], s["st_info"]["bind"],
                    names[s["st_shndx"]] if isinstance(s["st_shndx"], int) else s["st_shndx"],
                    s["st_value"] if values else None, None if code else s["st_size"]))
    return out


def _data_sections(cubin: bytes) -> list:
    """(name, type, flags, alignment) of every section, and the data sections' sizes
    (without sm_100's `.nv.merc.*`/`.nv.capmerc.*` sections, which we do not write)."""
    elf = ELFFile(io.BytesIO(cubin))
    return [(s.name, s["sh_type"], s["sh_flags"], s["sh_addralign"],
             s["sh_size"] if s.name.startswith((".nv.global", ".nv.constant3", ".nv.constant4")) else None)
            for s in elf.iter_sections() if s.name != ".note.nv.tkinfo" and "merc" not in s.name]


@pytest.mark.parametrize("flags", [(), ("-lineinfo",)], ids=["plain", "lineinfo"])
@pytest.mark.parametrize("name", list(MODULES))
def test_symbols_and_sections_as_ptxas(name, flags):
    ours = codegen.compile_ptx(MODULES[name], "sm_89", "k.ptx", lineinfo=bool(flags))
    theirs = _ptxas(MODULES[name], flags)
    assert _symbols(ours) == _symbols(theirs)
    assert _data_sections(ours) == _data_sections(theirs)


def _generated(seed: int) -> str:
    """3..12 `.global`s of random element type, count, `.align`, linkage and initialiser
    (ties of one size and alignment are frequent), read with byte loads."""
    rng = random.Random(seed)
    decls = []
    for i in range(rng.randint(3, 12)):
        ty, count = rng.choice([("u8", 1), ("u16", 2), ("u32", 4), ("u64", 8)]), rng.choice([1, 2, 3, 4, 8])
        align = rng.choice([None, None, 4, 8, 16])
        align = align if align and align >= ty[1] else None
        link = rng.choice(["", "", ".visible ", ".weak ", ".common "])
        decl = f"{link}.global {f'.align {align} ' if align else ''}.{ty[0]} g{i}[{count}]"
        if rng.random() < 0.3 and link != ".common ":
            decl += " = {" + ",".join(str(j + 1) for j in range(count)) + "}"
        decls.append(decl)
    return _module(decls).replace("ld.global.u32", "ld.global.u8")


# ties of 3..N variables of one size. The rule was found on probes of 3..40 equal
# variables and 120 other random modules; none of these seeds were looked at
TIE_MODULES = {f"equal{n}": _module([f".global .u32 v{i}[4]" for i in range(n)]) for n in (3, 5, 8, 13, 21)}
TIE_MODULES["equal_and_other"] = _module([".global .u32 v0[4]", ".global .u32 o[2]"]
                                         + [f".global .u32 v{i}[4]" for i in range(1, 6)])


@pytest.mark.parametrize("name", list(TIE_MODULES))
def test_ties_as_ptxas(name):
    ours, theirs = codegen.compile_ptx(TIE_MODULES[name], "sm_89", "k.ptx"), _ptxas(TIE_MODULES[name])
    assert _symbols(ours) == _symbols(theirs)


@pytest.mark.parametrize("seed", list(range(0, 30, 3)) + list(range(1000, 1030)))
def test_generated_layouts_as_ptxas(seed):
    """Offsets, order and binding of every variable's symbol and the sections, = ptxas's."""
    ptx = _generated(seed)
    ours, theirs = codegen.compile_ptx(ptx, "sm_89", "k.ptx"), _ptxas(ptx)
    assert _symbols(ours) == _symbols(theirs)
    assert _data_sections(ours) == _data_sections(theirs)


@pytest.mark.parametrize("arch", ["sm_90", "sm_100"])
@pytest.mark.parametrize("name", ["local_first", "linkages_sizes", "initialised", "const_and_global"])
def test_symbols_as_ptxas_on_later_archs(name, arch):
    """The same rules on sm_90 (hopper cubin style) and sm_100."""
    ptx = MODULES[name].replace(".version 8.0\n.target sm_89", f".version 8.8\n.target {arch}")
    ours, theirs = codegen.compile_ptx(ptx, arch, "k.ptx"), _ptxas(ptx, (), arch)
    assert _symbols(ours) == _symbols(theirs)
    assert _data_sections(ours) == _data_sections(theirs)


def test_bindings_of_the_five_linkages():
    """gv/cv/cc GLOBAL, wv WEAK, hv LOCAL and before the kernel (were all LOCAL)."""
    binds = {s[0]: s[2] for s in _symbols(codegen.compile_ptx(MODULES["five_linkages"], "sm_89", "k.ptx"))}
    assert [binds[n] for n in ("gv", "hv", "wv", "cv", "cc")] == [
        "STB_GLOBAL", "STB_LOCAL", "STB_WEAK", "STB_GLOBAL", "STB_GLOBAL"]


@pytest.mark.parametrize("name", ["initialised", "init_and_zero", "const_and_global", "two_kernels"])
def test_runs_as_ptxas_cubin(name):
    results = []
    for cubin in (codegen.compile_ptx(MODULES[name], "sm_89", "k.ptx"), _ptxas(MODULES[name])):
        out = np.zeros(32, np.uint32)
        res = run(cubin, "k0", 1, 32, [out], hazard_check=True)
        assert res.hazards == []
        results.append(out)
    np.testing.assert_array_equal(*results)
    if name == "initialised":       # tid + a[1] + b[1] + c[1]
        np.testing.assert_array_equal(results[0], np.arange(32) + 2 + 6)


def _weak_module(var_link: str, func_link: str, entry_link: str, space: str) -> str:
    return HEAD + f"""{var_link}.{space} .u32 w[4];
.visible .global .u32 g[2];
{func_link}.func (.reg .u32 r) f(.reg .u32 a) {{ add.u32 r, a, 1; ret; }}
{entry_link}.entry k0(.param .u64 p)
{{ .reg .u32 %r<4>; .reg .u64 %rd<2>; ld.param.u64 %rd1, [p]; ld.{space}.u32 %r1, [w+4];
   ld.global.u32 %r2, [g]; add.u32 %r1, %r1, %r2; call (%r3), f, (%r1); st.global.u32 [%rd1], %r3; ret; }}
.visible .entry k1(.param .u64 p) {{ ret; }}
"""


@pytest.mark.parametrize("compile_only", [False, True], ids=["plain", "c"])
@pytest.mark.parametrize("space", ["global", "const"])
@pytest.mark.parametrize("var_link, func_link, entry_link", [
    (".weak ", ".weak ", ".weak "), (".weak ", ".visible ", ".visible "), (".visible ", ".weak ", ".visible "),
    ("", ".visible ", ".weak "), (".common ", ".weak ", ".weak ")])
def test_weak_symbols_as_ptxas(var_link, func_link, entry_link, space, compile_only):
    """`.weak` variables, functions and kernels: WEAK symbols, plain and `-c` (ptxas 13.5.37;
    under -c ours bound them GLOBAL and inlined a `.weak .func`)."""
    if var_link == ".common " and space == "const":
        pytest.skip(".common is for .global only")
    ptx = _weak_module(var_link, func_link, entry_link, space)
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx", compile_only=compile_only)
    theirs = _ptxas(ptx, ("-c",) if compile_only else ())
    # (ptxas keeps the plain build's call as an in-text subroutine `$k0$f`; we inline it)
    assert _symbols(ours, values=False) == [s for s in _symbols(theirs, values=False) if s[0] != "$k0$f"]


MIXED = [".weak .const .u32 wc[2]", ".global .u32 gi[2] = {1,2}", ".visible .global .u32 gz[2]",
         ".const .u32 lc[2]", ".visible .global .u32 vi[1] = {3}", ".global .u32 lz[4]"]


@pytest.mark.parametrize("compile_only", [False, True], ids=["plain", "c"])
@pytest.mark.parametrize("perm", list(itertools.permutations(range(len(MIXED)), 4))[::23])
def test_mixed_spaces_and_linkages_as_ptxas(perm, compile_only):
    """Four of `MIXED` in every order (a fixed sample of the 360): bank 3 holds the exported
    `.const`s first; under -c each section's symbol comes before its first variable, the
    exported variables' sections first (ours put `.nv.global`'s first and the `.const`s in
    declaration order)."""
    ptx = _module([MIXED[i] for i in perm])
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx", compile_only=compile_only)
    assert _symbols(ours) == _symbols(_ptxas(ptx, ("-c",) if compile_only else ()))


COMMON_MODULES = {
    "common_extern_visible": [".common .global .u32 c1[4]", ".extern .global .u32 e1[2]",
                              ".visible .global .u32 v1[2]", ".common .global .align 8 .u32 c2[3]",
                              ".extern .global .u32 e2[2]", ".visible .global .u32 v2[2]"],
    "common_initialised": [".common .global .u32 c1[4] = {1,2,3,4}", ".global .u32 b[2]",
                           ".common .global .align 16 .u64 c2[3]", ".weak .global .u32 w[1]"],
}


@pytest.mark.parametrize("name", list(COMMON_MODULES))
def test_common_and_extern_variables_under_c_as_ptxas(name):
    """ptxas -c (13.5.37): an uninitialised `.common` variable is a COMMON symbol (value: its
    alignment), an initialised one GLOBAL in `.nv.global.init`; `.extern` and COMMON ones
    take no bytes of `.nv.global`; the exported symbols in declaration order (ours: LOCAL in
    `.nv.global`, `.extern` ones after the others and counted in `.nv.global`'s size)."""
    ptx = _module(COMMON_MODULES[name])
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx", compile_only=True)
    theirs = _ptxas(ptx, ("-c",))
    assert _symbols(ours) == _symbols(theirs)
    assert _data_sections(ours) == _data_sections(theirs)
