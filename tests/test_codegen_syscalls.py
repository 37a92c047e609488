"""Calls of bodiless `.extern .func`s, ptxas's system calls (`vprintf`, `__assertfail`, ...):
the code cannot run without the driver, so our cubin's structure is compared with ptxas's
(sections in order, symbols, relocations, call graph, `.nv.info` records, register count),
nvdisasm must read our code back, and the cubin builder must rebuild ptxas's own cubins
from their facts byte for byte (ptx2sass/abi.py has the convention)."""
from __future__ import annotations

import re
import struct
from pathlib import Path

import pytest

from ptx2sass import CompileError, codegen, oracle
from ptx2sass.encoder.cubin import read_cubin, write_cubin
from ptx2sass.encoder.cubin_builder import build_cubin

ZLUDA = Path("/work/shared/corpus/zluda") if Path("/work/shared/corpus/zluda").is_dir() else \
    Path(__file__).resolve().parents[2] / "shared" / "corpus" / "zluda"
HEADER = ".version 7.8\n.target sm_89\n.address_size 64\n"
VPRINTF = ".extern .func (.param .b32 r) vprintf(.param .b64 f, .param .b64 a);\n"
ASSERTFAIL = (".extern .func __assertfail(.param .b64 a, .param .b64 b, .param .b32 c, "
              ".param .b64 d, .param .b64 e);\n")

# Values live across the call (loaded, so they cannot be recomputed), a predicate among
# them, a global's address, and the call's result used afterwards.
LIVE_ACROSS = HEADER + VPRINTF + """
.global .align 1 .b8 fmt[4] = {65, 10, 0, 0};
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<16>; .reg .pred %p1;
  ld.param.u64 %a0, [p];
  ld.global.u32 %r1, [%a0];
  ld.global.u32 %r2, [%a0+4];
  ld.global.u32 %r3, [%a0+8];
  ld.global.u32 %r4, [%a0+12];
  setp.gt.u32 %p1, %r1, 7;
  mov.u64 %a1, fmt;
  cvta.global.u64 %a2, %a1;
  { .param .b64 f; st.param.b64 [f], %a2; .param .b64 a; st.param.b64 [a], %a0;
    .param .b32 r; call.uni (r), vprintf, (f, a); ld.param.b32 %r9, [r]; }
  add.u32 %r10, %r1, %r2; add.u32 %r10, %r10, %r3; add.u32 %r10, %r10, %r4;
  add.u32 %r10, %r10, %r9; selp.u32 %r11, 1, 2, %p1; add.u32 %r10, %r10, %r11;
  st.global.u32 [%a0], %r10;
  ret;
}
"""

# Two kernels, two system functions and two variables: symbol order, bank-4 slots, EXTERNS
# and call-graph pairs across kernels.
TWO_KERNELS = HEADER + VPRINTF + ASSERTFAIL + """
.global .align 1 .b8 fmt[4] = {65, 10, 0, 0};
.global .align 4 .u32 g2;
.visible .entry k(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<4>;
  ld.param.u64 %a0, [p];
  mov.u64 %a1, fmt;
  mov.u64 %a3, g2;
  st.global.u64 [%a0], %a3;
  { .param .b64 a; st.param.b64 [a], %a0; .param .b64 b; st.param.b64 [b], %a0;
    .param .b32 c; st.param.b32 [c], 1; .param .b64 d; st.param.b64 [d], %a0;
    .param .b64 e; st.param.b64 [e], %a0;
    call.uni __assertfail, (a, b, c, d, e); }
  { .param .b64 f; st.param.b64 [f], %a1; .param .b64 a; st.param.b64 [a], %a0;
    .param .b32 r; call.uni (r), vprintf, (f, a); ld.param.b32 %r1, [r]; }
  st.global.u32 [%a0], %r1;
  ret;
}
.visible .entry k2(.param .u64 p)
{
  .reg .u64 %a<4>; .reg .u32 %r<4>;
  ld.param.u64 %a0, [p];
  { .param .b64 f; st.param.b64 [f], %a0; .param .b64 a; st.param.b64 [a], %a0;
    .param .b32 r; call.uni (r), vprintf, (f, a); ld.param.b32 %r1, [r]; }
  st.global.u32 [%a0], %r1;
  ret;
}
"""


def _sources() -> dict[str, str]:
    out = {"live_across": LIVE_ACROSS}
    path = ZLUDA / "compile_only" / "assertfail.ptx"
    if path.is_file():
        out["zluda_assertfail"] = path.read_text()
    return out


def _ptxas(ptx: str, *options: str) -> bytes:
    r = oracle.ptxas(ptx, options=options) if options else oracle.ptxas(ptx)
    if r.returncode != 0 and "not found" in r.stderr:
        pytest.skip("ptxas not installed")
    assert r.ok, r.stderr
    return r.output


def _section_names(data: bytes) -> list[str]:
    """Section names in ELF header order (the file's own order, not the model's)."""
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [struct.unpack_from("<IIQQQQ", data, shoff + i * shentsize) for i in range(shnum)]
    strtab_off = headers[shstrndx][4]

    def name(at: int) -> str:
        end = data.index(b"\0", strtab_off + at)
        return data[strtab_off + at:end].decode()
    return [name(h[0]) for h in headers[1:]]


def _structure(data: bytes) -> dict:
    """What must agree between two cubins of the same PTX, whatever their code."""
    c = read_cubin(data)
    names = [s.name for s in c.symbols]
    return {
        "sections": _section_names(data),
        "symbols": [(s.name, s.type, s.bind, s.other, s.section) for s in c.symbols],
        "relocations": {rs.name: [(r.offset, names[r.symbol], r.type) for r in rs.relocations]
                        for rs in c.reloc_sections},
        "callgraph": [(names[a] if a > 0 else a, names[b] if b > 0 else b) for a, b in c.callgraph],
        "module records": [(r.name, names[r.u32s()[0]]) for r in c.module_attributes],
        "kernels": {k.name: ([r.name for r in k.attributes], k.regcount, k.frame_size,
                             [names[i] for r in k.attribute("EXTERNS") for i in r.u32s()],
                             len(k.attribute("SYSCALL_OFFSETS")[0].u32s()) if k.attribute("SYSCALL_OFFSETS") else 0)
                    for k in c.kernels},
    }


def _kernel_listing(data: bytes, kernel: str) -> list[tuple[int, str]]:
    text = oracle.nvdisasm(data, ())
    part = text.split(f".text.{kernel}:")[1].split("//----")[0]
    return [(int(o, 16), t.strip()) for o, t in re.findall(r"/\*([0-9a-f]{4})\*/\s+([^;]*);", part)]


@pytest.mark.parametrize("name", sorted(_sources()) + ["two_kernels"])
def test_system_call_cubin_is_built_like_ptxas(name):
    ptx = {**_sources(), "two_kernels": TWO_KERNELS}[name]
    theirs, ours = _ptxas(ptx), codegen.compile_ptx(ptx)
    assert _structure(ours) == _structure(theirs)
    # nvdisasm reads ours back; SYSCALL_OFFSETS name our CALL.ABS instructions, and the
    # return address in R20:R21 is LEPC's pc plus the distance to the instruction after CALL
    for k in read_cubin(ours).kernels:
        listing = _kernel_listing(ours, k.name)
        for off in k.attribute("SYSCALL_OFFSETS")[0].u32s():
            call = next(t for o, t in listing if o == off)
            assert call.startswith("CALL.ABS.NOINC R"), call
            before = [(o, t) for o, t in listing if o < off]
            lepc_at, lepc = next((o, t) for o, t in reversed(before) if t.startswith("LEPC"))
            add = next(t for o, t in before if o > lepc_at and t.startswith("IADD3 R20,"))
            assert re.fullmatch(rf"IADD3 R20, P\d, {lepc.split()[1]}, 0x{off + 16 - lepc_at:x}, RZ", add), add


def test_values_live_across_a_system_call_avoid_what_it_clobbers():
    """Every register the code reads after the CALL without writing it first is the result
    (R4) or one the callee preserves: R16 and up but R20/R21 (ptxas keeps its own values
    there too); a predicate read after the call was written after it."""
    listing = _kernel_listing(codegen.compile_ptx(LIVE_ACROSS), "k")
    call = next(i for i, (_, t) in enumerate(listing) if t.startswith("CALL.ABS"))
    written = {("R", 4)}
    for _, t in listing[call + 1:]:
        if t.startswith("EXIT"):
            break
        opcode, _, ops = t.partition(" ")
        regs = [(f, int(i)) for f, i in re.findall(r"\b(R|P)(\d+)\b", ops)]
        defs = [] if opcode.startswith("ST") else regs[:1] + [r for r in regs[1:2] if r[0] == "P"]
        for r in regs[len(defs):]:
            assert r in written or (r[0] == "R" and r[1] >= 16 and r[1] not in (20, 21)), t
        written.update(defs)


def test_builder_rebuilds_ptxas_system_call_cubins():
    """ptxas's own cubins, rebuilt from the facts a code generator has (text, externs by
    name, bank-4 slots, the SYSCALL_OFFSETS record), byte for byte."""
    from test_cubin import _facts
    for ptx in [*_sources().values(), TWO_KERNELS]:
        data = _ptxas(ptx)
        theirs = read_cubin(data)
        names = [s.name for s in theirs.symbols]
        facts = _facts(theirs, with_frame_programs=True)
        for k in facts["kernels"]:
            externs = [r for r in k.extra_attributes if r.name == "EXTERNS"]
            k.externs = [names[i] for r in externs for i in r.u32s()]
            k.extra_attributes = [r for r in k.extra_attributes if r.name != "EXTERNS"]
        assert write_cubin(build_cubin("sm_89", toolkit=theirs.tkinfo, **facts)) == data


def test_unresolved_extern_is_refused_in_ptxas_words():
    """A bodiless function other than ptxas's system calls: whole-program mode refuses it as
    ptxas does; a module lowered for -c but compiled without `compile_only` a clear refusal
    (relocatable output: tests/test_relocatable.py)."""
    path = ZLUDA / "compile_only" / "extern_func.ptx"
    ptx = path.read_text() if path.is_file() else HEADER + """
.extern .func (.param .align 16 .b8 r[16]) foobar(.param .b64 x);
.visible .entry extern_func(.param .u64 p)
{ .reg .u64 %a<2>; ld.param.u64 %a0, [p];
  { .param .b64 x; st.param.b64 [x], %a0; .param .align 16 .b8 r[16];
    call.uni (r), foobar, (x); ld.param.u64 %a1, [r]; }
  st.u64 [%a0], %a1; ret; }
"""
    r = oracle.ptxas(ptx)
    assert not r.ok and "Unresolved extern function 'foobar'" in r.stderr
    with pytest.raises(CompileError, match="Unresolved extern function 'foobar'"):
        codegen.compile_ptx(ptx)
    from ptx2sass.frontend import check, parse
    from ptx2sass.frontend.to_ssa import lower_module
    from ptx2sass.inline import inline_calls
    module = parse(ptx, "extern_func.ptx")
    check(module, "sm_89", whole_program=False)           # -c: ptxas accepts it
    with pytest.raises(CompileError, match="not supported yet"):
        codegen.compile_module(lower_module(inline_calls(module)))
