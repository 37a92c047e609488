"""`-c` (separate compilation): the bytes of `.strtab` and `.shstrtab` equal ptxas 13.5.37's.

ptxas's string tables under -c name only the sections it writes (no `.nv.shared` for a
function, no parameter bank or `.rel.nv.constant0` for one, no `.nv.rel.action`), each text's
relocation sections in section order, and interleave the LOCAL symbols' names with the
section names (`_param` once, after the first parameter bank; a local function's name before
its text; variables after their sections), the GLOBAL/WEAK names last.
Rules found on `_module` seeds 0-59 of the generator below (and test_relocatable_order's
seeds 0-19); the seeds tested here (4000-4029, `_module`; 2000-2019 of
test_relocatable_order's `_with_uncalled_locals`) were not looked at while finding them.
Expected values: ptxas's cubins."""
import io
import random

import pytest
from elftools.elf.elffile import ELFFile

from ptx2sass import codegen, oracle
from test_relocatable_order import HEAD, _with_uncalled_locals
from test_relocatable_order import _module as _calls_module


def _variables(seed: int) -> str:
    """0-4 module variables of random kinds (local/visible/weak/extern `.global`, `.const`,
    with and without initial values, one holding another's address) and the reads of them
    a kernel makes."""
    r = random.Random(seed * 7 + 1)
    decls, reads = [], []
    for i in range(r.randint(0, 4)):
        kind = r.choice(["global", "visible", "weak", "extern", "init", "addr"])
        name = f"g{i}"
        if kind == "global":
            decls.append(f".global .align 4 .u32 {name}[{r.randint(1, 4)}];")
        elif kind == "visible":
            decls.append(f".visible .global .align 8 .u64 {name}[2];")
        elif kind == "weak":
            decls.append(f".weak .global .align 4 .u32 {name} = {r.randint(1, 9)};")
        elif kind == "extern":
            decls.append(f".extern .global .align 4 .u32 {name};")
        elif kind == "init":
            decls.append(f".global .align 4 .u32 {name}[2] = {{{r.randint(1, 9)}, 3}};")
        elif kind == "addr" and decls:
            target = f"g{r.randrange(i)}"
            decls.append(f".global .align 8 .u64 {name} = generic({target});")
        else:
            continue
        reads.append(f"ld.global.u32 %s, [{name}]; add.u32 %r, %r, %s; ")
    return "".join(d + "\n" for d in decls), "".join(reads)


def _module(seed: int) -> str:
    """test_relocatable_order's call-graph modules with `.global` variables its kernels read."""
    decls, reads = _variables(seed)
    body = _calls_module(seed)[len(HEAD):]
    out = []
    for line in body.splitlines(keepends=True):
        if line.startswith(".visible .entry"):
            line = line.replace("{ .reg .b32 %r;", "{ .reg .b32 %r; .reg .b32 %s;", 1)
            line = line.replace("ld.global.u32 %r, [%a]; ", "ld.global.u32 %r, [%a]; " + reads, 1)
        out.append(line)
    return HEAD + decls + "".join(out)


def _tables(cubin: bytes) -> dict:
    elf = ELFFile(io.BytesIO(cubin))
    return {n: elf.get_section_by_name(n).data() for n in (".shstrtab", ".strtab")}


def _both(ptx: str):
    try:
        theirs = oracle.ptxas(ptx, "sm_89", ("-c",), name="k.ptx")
    except oracle.OracleMissing as e:
        pytest.skip(str(e))
    assert theirs.ok, theirs.stderr
    return _tables(codegen.compile_ptx(ptx, "sm_89", "k.ptx", compile_only=True)), _tables(theirs.output)


@pytest.mark.parametrize("seed", range(4000, 4030))
def test_string_tables_as_ptxas_with_variables(seed):
    ours, theirs = _both(_module(seed))
    assert ours == theirs


@pytest.mark.parametrize("seed", range(2000, 2020))
def test_string_tables_as_ptxas_with_uncalled_locals(seed):
    ours, theirs = _both(_with_uncalled_locals(seed))
    assert ours == theirs
