"""Kernels declared without `.visible` (`.entry k`, what nvcc writes for internal-linkage
kernels): ptxas 13.5.37 binds their symbols LOCAL, each before its text's section symbol, in
whole-program and `-c` output; under `-c` they come first in the cubin, the last declared
first, and the module's MIN_STACK_SIZE records (whole program) list them first. Ours bound
them GLOBAL, so two `-c` objects with a local kernel of the same name did not link ("Multiple
definition" from nvlink). Read off one five-kernel module (LOCALS); checked on others."""
from __future__ import annotations

import pytest

from ptx2sass import codegen, oracle
from test_relocatable import _nvlink, _structure


def _entry(linkage: str, name: str, value: int) -> str:
    return f"""{linkage} .entry {name}(.param .u64 p)
{{
  .reg .b32 %r<2>; .reg .b64 %rd<2>;
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, {value};
  st.global.u32 [%rd1], %r1;
  ret;
}}
"""


def _module(arch: str, *entries: tuple[str, str, int]) -> str:
    return f".version 9.0\n.target {arch}\n.address_size 64\n" + "".join(_entry(*e) for e in entries)


LOCALS = (("", "b", 2), (".visible", "a", 1), ("", "d", 4), (".weak", "e", 5), (".visible", "c", 3))
OTHERS = ((".visible", "x", 1), ("", "y", 2), ("", "z", 3))       # (not looked at before the test)


def _ptxas(src: str, arch: str, relocatable: bool) -> bytes:
    r = oracle.ptxas(src, arch=arch, options=("-c",) if relocatable else ())
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _comparable(st: dict) -> dict:
    st.pop("elf")       # (whole program on sm_100: ptxas's Mercury flag; compared in test_relocatable)
    return st


@pytest.mark.parametrize("arch", ["sm_89", "sm_90", "sm_100"])
@pytest.mark.parametrize("relocatable", [False, True], ids=["whole", "c"])
@pytest.mark.parametrize("entries", [LOCALS, OTHERS], ids=["locals", "others"])
def test_local_kernels_are_bound_and_placed_like_ptxas(entries, relocatable, arch):
    src = _module(arch, *entries)
    ours = codegen.compile_ptx(src, arch=arch, compile_only=relocatable)
    theirs = _ptxas(src, arch, relocatable)
    assert _comparable(_structure(ours)) == _comparable(_structure(theirs))


def _functions(cubin: bytes) -> list[tuple[str, str]]:
    """(name, binding) of the FUNC symbols, sorted."""
    from elftools.elf.elffile import ELFFile
    import io
    symtab = ELFFile(io.BytesIO(cubin)).get_section_by_name(".symtab")
    return sorted((s.name, s["st_info"]["bind"]) for s in symtab.iter_symbols() if s["st_info"]["type"] == "STT_FUNC")


@pytest.mark.parametrize("arch", ["sm_89", "sm_100"])
def test_two_objects_with_a_local_kernel_of_one_name_link(arch, tmp_path):
    """Each object has its own `.entry lk` (not `.visible`) and a visible kernel: nvlink links
    ours (before: 'Multiple definition of lk') into a program with both `lk`s LOCAL, as it
    links ptxas's. (Not run: the linked cubin has two `.text.lk` sections, which our cubin
    reader, and so the emulator, does not take yet.)"""
    a = _module(arch, ("", "lk", 7), (".visible", "ka", 1))
    b = _module(arch, ("", "lk", 8), (".visible", "kb", 2))
    linked = {by: _nvlink(*(compile_c(s) for s in (a, b)), tmp_path=tmp_path, arch=arch)
              for by, compile_c in (("ours", lambda s: codegen.compile_ptx(s, arch=arch, compile_only=True)),
                                    ("ptxas", lambda s: _ptxas(s, arch, True)))}
    assert _functions(linked["ours"]) == _functions(linked["ptxas"]) == [
        ("ka", "STB_GLOBAL"), ("kb", "STB_GLOBAL"), ("lk", "STB_LOCAL"), ("lk", "STB_LOCAL")]


@pytest.mark.parametrize("relocatable", [False, True], ids=["whole", "c"])
@pytest.mark.parametrize("entries", [LOCALS, OTHERS], ids=["locals", "others"])
def test_debug_builds_place_local_kernels_after_the_others(entries, relocatable):
    """-g (sm_89): ptxas writes the kernels with `.visible`/`.weak` first, then those without,
    each group in PTX order; sections and symbols as ptxas's (the line table's and frame's
    relocation offsets differ with the code, not compared)."""
    src = _module("sm_89", *entries)
    ours = _structure(codegen.compile_ptx(src, arch="sm_89", compile_only=relocatable, debug=True, opt_level=0))
    r = oracle.ptxas(src, arch="sm_89", options=("-g",) + (("-c",) if relocatable else ()))
    assert r.ok, r.stderr
    theirs = _structure(r.output)
    for key in ("sections", "symbols", "module records", "kernel records", "callgraph"):
        assert ours[key] == theirs[key], key
