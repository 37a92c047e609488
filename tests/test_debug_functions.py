"""-g keeps every `.func` out of line, as ptxas -g does (ptxas 13.5.37, read off its cubins
for the inputs below): each function in a text section of its own after the kernels, called
with `CALL.ABS.NOINC` through a relocation, a local function symbol (a `.visible` one
global) after the text of the first kernel that calls it; a kernel's MIN_STACK_SIZE counts
the deepest chain of callee frames, or is unknowable (0xffffffff, CRS_STACK_SIZE too) where
a chain recurses, and ptxas -g then warns once per function the kernel calls that recurses.
Expected values are ptxas's own cubins and messages; outputs from the emulator on both."""
import io
import re

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from ptx2sass import cli, codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _func(name: str, callee: str | None = None, local_bytes: int = 0, visible: bool = False) -> str:
    """f(a) = a + ord(last letter) [+ callee(a - 1) where a % 4 != 0: chains end within 3
    calls], through a local array indexed by a where `local_bytes` is given."""
    body = (f"  .reg .b32 %r<5>; .reg .pred %p; .reg .b64 %rd<3>;\n  ld.param.b32 %r0, [a];\n"
            f"  add.u32 %r1, %r0, {ord(name[-1])};\n")
    if local_bytes:
        body = (f"  .local .align 4 .b8 lb[{local_bytes}];\n" + body
                + f"  st.local.u32 [lb], 0;\n  and.b32 %r2, %r1, {local_bytes // 4 - 1};\n"
                  "  mul.wide.u32 %rd1, %r2, 4;\n  mov.u64 %rd2, lb;\n"
                  "  add.u64 %rd1, %rd1, %rd2;\n  st.local.u32 [%rd1], %r1;\n  ld.local.u32 %r3, [lb];\n"
                  "  add.u32 %r1, %r1, %r3;\n")
    if callee:
        body += (f"  and.b32 %r2, %r0, 3;\n  setp.eq.u32 %p, %r2, 0;\n  @%p bra D;\n  sub.u32 %r2, %r0, 1;\n"
                 f"  {{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r2; call (pr), {callee}, (pa);"
                 f" ld.param.b32 %r4, [pr]; }}\n  add.u32 %r1, %r1, %r4;\nD:\n")
    return (f"{'.visible ' if visible else ''}.func (.param .b32 r) {name}(.param .b32 a)\n{{\n{body}"
            f"  st.param.b32 [r], %r1;\n  ret;\n}}\n")


def _kernel(name: str, calls: list[str]) -> str:
    body = ("  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r1, %tid.x;\n"
            "  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd1, %rd1, %rd2;\n")
    for c in calls:
        body += (f"  {{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), {c}, (pa);"
                 f" ld.param.b32 %r1, [pr]; }}\n")
    return (f".visible .entry {name}(.param .u64 p)\n{{\n  .reg .b32 %r<4>; .reg .b64 %rd<4>;\n{body}"
            f"  st.global.u32 [%rd1], %r1;\n  ret;\n}}\n")


def _declare(name: str) -> str:
    return f".func (.param .b32 r) {name}(.param .b32 a);\n"


def _vector_module(ty: str, count: int, scalar: bool = False) -> str:
    """A `.func` with a `.reg .v<count> .<ty>` parameter (and a `.u32` one after) and result:
    r = a rotated by one element, its first element + the scalar; the kernel sums r."""
    names = [f"%e{i}" for i in range(count)]
    conv = "cvt.rn.f32.u32" if ty == "f32" else f"cvt.{ty}.u32"
    back = "cvt.rzi.u32.f32" if ty == "f32" else f"cvt.u32.{ty}"
    vec = ", ".join(names)
    rotated = ", ".join(names[1:] + names[:1])
    return HEAD + f""".func (.reg .v{count} .{ty} r) vf(.reg .v{count} .{ty} a{', .reg .u32 s' if scalar else ''})
{{
  .reg .{ty} {vec}, %t;
  mov.v{count}.{ty} {{{vec}}}, a;
  {f'{conv} %t, s;' if scalar else f'mov.{ty} %t, {names[-1]};'}
  add.{ty} %e0, %e0, %t;
  mov.v{count}.{ty} r, {{{rotated}}};
  ret;
}}
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .v{count} .{ty} %v, %w; .reg .{ty} {vec}, %t;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  {conv} %t, %r1;
""" + "".join(f"  add.{ty} %e{i}, %t, {i + 1}{'.0' if ty == 'f32' else ''};\n" for i in range(count)) + f"""  mov.v{count}.{ty} %v, {{{vec}}};
  call (%w), vf, (%v{', %r1' if scalar else ''});
  mov.v{count}.{ty} {{{vec}}}, %w;
""" + "".join(f"  add.{ty} %e0, %e0, %e{i};\n" for i in range(1, count)) + f"""  {back} %r1, %e0;
  st.global.u32 [%rd1], %r1;
  ret;
}}
"""


MODULES = {
    # `.reg` vector parameters and results: ptxas -g passes their elements in consecutive
    # registers from R4 (`.v2.u32` R4, R5; `.v2.u64` R4:R5, R6:R7)
    "vector_u32": _vector_module("u32", 2),
    "vector_u64": _vector_module("u64", 2),
    "vector_f32": _vector_module("f32", 4, scalar=True),
    # 8/16-bit elements: ptxas -g packs them, little-endian, 4 / size to a register, each
    # vector from a register of its own (`.v4.u16` x, y in R4 and z, w in R5, the `.u32` in R6)
    "vector_u16": _vector_module("u16", 4, scalar=True),
    "vector_s16": _vector_module("s16", 2),
    "vector_u8": HEAD + """.func (.reg .v2 .u8 r) vf(.reg .v4 .u8 a, .reg .v2 .s8 b, .reg .u32 s)
{
  .reg .u16 %h<8>;
  cvt.u16.u8 %h0, a.x; cvt.u16.u8 %h1, a.y; cvt.u16.u8 %h2, a.z; cvt.u16.u8 %h3, a.w;
  cvt.s16.s8 %h4, b.x; cvt.s16.s8 %h5, b.y; cvt.u16.u32 %h7, s;
  add.u16 %h6, %h0, %h4; add.u16 %h6, %h6, %h2; add.u16 %h6, %h6, %h7;
  sub.u16 %h7, %h1, %h5; add.u16 %h7, %h7, %h3;
  cvt.u8.u16 r.x, %h6; cvt.u8.u16 r.y, %h7;
  ret;
}
.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .u16 %h<4>;
  .reg .v4 .u8 %va; .reg .v2 .s8 %vb; .reg .v2 .u8 %vr;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  cvt.u16.u32 %h0, %r1;
  cvt.u8.u16 %va.x, %h0; add.u16 %h1, %h0, 7; cvt.u8.u16 %va.y, %h1;
  add.u16 %h1, %h0, 100; cvt.u8.u16 %va.z, %h1; mul.lo.u16 %h1, %h0, 3; cvt.u8.u16 %va.w, %h1;
  sub.u16 %h1, 5, %h0; cvt.s8.s16 %vb.x, %h1; add.u16 %h1, %h0, 60; cvt.s8.s16 %vb.y, %h1;
  call (%vr), vf, (%va, %vb, %r1);
  cvt.u32.u8 %r2, %vr.x; cvt.u32.u8 %r3, %vr.y; shl.b32 %r3, %r3, 8; or.b32 %r2, %r2, %r3;
  st.global.u32 [%rd1], %r2;
  ret;
}
""",
    # functions whose address the kernel takes, called through a pointer chosen per thread:
    # ptxas -g keeps them in their own sections too, `MOV R, 32@lo(f)`/`32@hi(f)` relocated
    # against their symbols, `CALL.ABS.NOINC R`
    "pointer": HEAD + _func("fa") + _func("fb") + """.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<5>; .reg .pred %q;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  and.b32 %r2, %r1, 1;
  setp.eq.u32 %q, %r2, 0;
  mov.u64 %rd4, fb;
  mov.u64 %rd3, fa;
  selp.b64 %rd3, %rd3, %rd4, %q;
  { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1;
    proto: .callprototype (.param .b32 _) _ (.param .b32 _);
    call (pr), %rd3, (pa), proto; ld.param.b32 %r1, [pr]; }
  st.global.u32 [%rd1], %r1;
  ret;
}
""",
    # one function, one kernel
    "one": HEAD + _func("fa") + _kernel("k", ["fa"]),
    # three functions (one visible) called from two kernels, in another order than declared
    "three": HEAD + _func("fa") + _func("fb", visible=True) + _func("fc") + _kernel("k0", ["fb"])
             + _kernel("k1", ["fc", "fa"]),
    # a chain with frames: k -> fa -> fb (no recursion)
    "chain": HEAD + _func("fb", local_bytes=32) + _func("fa", "fb", local_bytes=16) + _kernel("k", ["fa"]),
    # recursion: self, mutual, and a kernel calling two recursive functions
    "self": HEAD + _declare("fa") + _func("fa", "fa") + _kernel("k", ["fa"]),
    "mutual": HEAD + _declare("fb") + _func("fa", "fb") + _func("fb", "fa") + _kernel("k", ["fa"]),
    "two": HEAD + _declare("fa") + _declare("fb") + _func("fa", "fa") + _func("fb", "fb")
           + _kernel("k", ["fa", "fb", "fb"]),
    # a function returning a struct (12 bytes): ptxas -g returns it in R4..R6
    # a function with a `brx.idx` table, called by two kernels (one with a table of its
    # own): ptxas -g puts every table at a module-wide place in the callers' constant bank 2
    "switch": HEAD + """.func (.param .b32 r) sw(.param .b32 a)
{
  .reg .b32 %r<5>; .reg .pred %p;
  ld.param.b32 %r0, [a];
  and.b32 %r1, %r0, 3;
  ts: .branchtargets L0, L1, L2, L3;
  brx.idx %r1, ts;
L0:
  add.u32 %r2, %r0, 100;
  bra.uni D;
L1:
  mul.lo.u32 %r2, %r0, 5;
  bra.uni D;
L2:
  xor.b32 %r2, %r0, 0x77;
  bra.uni D;
L3:
  sub.u32 %r2, 9, %r0;
D:
  st.param.b32 [r], %r2;
  ret;
}

.visible .entry k0(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), sw, (pa); ld.param.b32 %r2, [pr]; }
  st.global.u32 [%rd1], %r2;
  ret;
}

.visible .entry k1(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mov.u32 %r3, %ctaid.x;
  and.b32 %r3, %r3, 1;
  ks: .branchtargets M0, M1;
  brx.idx %r3, ks;
M0:
  xor.b32 %r3, %r3, 8;
M1:
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), sw, (pa); ld.param.b32 %r2, [pr]; }
  add.u32 %r2, %r2, %r3;
  st.global.u32 [%rd1], %r2;
  ret;
}
""",
    "struct_return": HEAD + """.func (.param .align 4 .b8 r[12]) trio(.param .b32 a)
{
  .reg .b32 %r<5>;
  ld.param.b32 %r0, [a];
  add.u32 %r1, %r0, 7;
  mul.lo.u32 %r2, %r0, 3;
  xor.b32 %r3, %r0, 0x55;
  st.param.b32 [r], %r1;
  st.param.b32 [r+4], %r2;
  st.param.b32 [r+8], %r3;
  ret;
}

.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<8>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
  mul.wide.u32 %rd2, %r1, 4;
  add.s64 %rd1, %rd1, %rd2;
  { .param .b32 pa; .param .align 4 .b8 pr[12]; st.param.b32 [pa], %r1; call (pr), trio, (pa);
    ld.param.b32 %r2, [pr]; ld.param.b32 %r3, [pr+4]; ld.param.b32 %r4, [pr+8]; }
  add.u32 %r5, %r2, %r3;
  sub.u32 %r5, %r5, %r4;
  st.global.u32 [%rd1], %r5;
  ret;
}
""",
}


def _structure(cubin: bytes) -> dict:
    elf = ELFFile(io.BytesIO(cubin))
    names = [s.name for s in elf.iter_sections()]
    symbols = list(elf.get_section_by_name(".symtab").iter_symbols())
    return {
        "sections": names,
        "symbols": [(s.name, s["st_info"]["type"], s["st_info"]["bind"],
                     names[s["st_shndx"]] if isinstance(s["st_shndx"], int) else s["st_shndx"])
                    for s in symbols],
        "relocations": {s.name: sorted((symbols[r["r_info_sym"]].name, r["r_info_type"])
                                       for r in s.iter_relocations())
                        for s in elf.iter_sections() if isinstance(s, RelocationSection)},
    }


def _ptxas_g(name: str) -> oracle.ToolRun:
    run_ = oracle.ptxas(MODULES[name], "sm_89", ("-g",), name="k.ptx")
    assert run_.ok, run_.stderr
    return run_


def _ours_g(name: str) -> bytes:
    return codegen.compile_ptx(MODULES[name], "sm_89", "k.ptx", debug=True, opt_level=0)


@pytest.mark.parametrize("name", ["one", "three", "chain", "self", "mutual", "struct_return", "switch",
                                  "pointer", "vector_u32", "vector_u64", "vector_f32", "vector_u16",
                                  "vector_s16", "vector_u8"])
def test_sections_symbols_and_relocations_as_ptxas(name):
    assert _structure(_ours_g(name)) == _structure(_ptxas_g(name).output)


@pytest.mark.parametrize("name", ["one", "three", "chain", "self", "mutual", "two", "pointer"])
def test_separate_compilation_with_g_as_ptxas(name):
    """-c -g: the same order; only `.visible` functions are link targets with a prototype."""
    theirs = oracle.ptxas(MODULES[name], "sm_89", ("-c", "-g"), name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(MODULES[name], "sm_89", "k.ptx", debug=True, opt_level=0, compile_only=True)
    assert _structure(ours) == _structure(theirs.output)


def _stack_records(cubin: bytes) -> dict:
    return {k.name: (k.min_stack_size, k.crs_stack_size) for k in read_cubin(cubin).kernels if k.is_entry}


@pytest.mark.parametrize("name", ["self", "mutual", "two"])
def test_recursion_records_and_warnings_as_ptxas(name, tmp_path, capsys):
    theirs = _ptxas_g(name)
    assert _stack_records(_ours_g(name)) == _stack_records(theirs.output) == \
        {"k": (0xFFFFFFFF, 0xFFFFFFFF)}
    (tmp_path / "k.ptx").write_text(MODULES[name])
    capsys.readouterr()
    assert cli.main(["-arch=sm_89", "-g", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")]) == 0
    warning = r"(?m)^\w+ warning : Stack size for entry function 'k' cannot be statically determined$"
    assert len(re.findall(warning, capsys.readouterr().err)) == len(re.findall(warning, theirs.stderr))


def test_a_chain_of_frames_counts_in_the_kernels_stack():
    """ptxas: MIN_STACK_SIZE = the kernel's frame (0) + fa's + fb's; FRAME_SIZE its own."""
    def frames(cubin):
        listing = oracle.cuobjdump_elf(cubin)
        return {m[0]: int(m[1], 16) for m in
                re.findall(r"EIATTR_FRAME_SIZE\s+Format:\s+\S+\s+Value:\s+function: (\w+)\(0x[0-9a-f]+\)"
                           r"\s+frame size: (0x[0-9a-f]+)", listing)}
    for cubin in (_ptxas_g("chain").output, _ours_g("chain")):
        f = frames(cubin)
        assert f["k"] == 0 and f["fa"] > 0 and f["fb"] > 0
        assert _stack_records(cubin)["k"][0] == f["fa"] + f["fb"]


def test_call_graph_of_calls_through_pointers_as_ptxas():
    """ptxas -g's `.nv.callgraph` for a call through a pointer: the address-taken functions
    after the second marker, the kernel after the third, its reachable targets after the last."""
    def graph(cubin):
        return read_cubin(cubin).callgraph
    theirs = graph(_ptxas_g("pointer").output)
    assert graph(_ours_g("pointer")) == theirs
    assert len(theirs) == 9


@pytest.mark.parametrize("name", ["three", "chain", "mutual", "struct_return", "switch", "pointer", "vector_u32", "vector_u64", "vector_f32",
                                  "vector_u16", "vector_s16", "vector_u8"])
def test_runs_as_ptxas_g_cubin(name):
    theirs = _ptxas_g(name).output
    ours = _ours_g(name)
    kernels = [k.name for k in read_cubin(ours).kernels if k.is_entry]
    for kernel in kernels:
        results = []
        for cubin, check in ((ours, True), (theirs, False)):
            out = np.zeros(64, np.uint32)
            res = run(cubin, kernel, 1, 64, [out], hazard_check=check)
            if check:
                assert res.hazards == [], [str(h) for h in res.hazards[:3]]
            results.append(out)
        np.testing.assert_array_equal(*results)


def test_each_function_has_its_lines():
    """nvdisasm's PTX line table (-gp) of our -g cubin: every instruction of each
    function's own text section maps to a PTX line inside that function's body, as in
    ptxas's cubin."""
    from tools.line_tables import body, listing
    lines = MODULES["three"].splitlines()
    bodies = {}
    for name in ("fa", "fb", "fc", "k0", "k1"):
        start = next(i for i, text in enumerate(lines, 1) if re.search(rf"\b{name}\(", text) and "call" not in text)
        end = next(i for i, text in enumerate(lines, 1) if i > start and text == "}")
        bodies[name] = set(range(start, end + 1))
    for cubin in (_ptxas_g("three").output, _ours_g("three")):
        table = listing(cubin, "-gp")
        assert set(table) == set(bodies)
        for name, ptx_lines in bodies.items():
            code = body(table[name])
            assert code and all(ins.lines for ins in code)
            assert {line for ins in code for _, line, *_ in ins.lines} <= ptx_lines


def test_a_jump_table_in_a_function_as_ptxas():
    """llvm's switch_op: its `.func` with a `brx.idx` table stays out of line, the table in
    the kernel's constant bank 2 after the kernel's own (sections, symbols, relocations and
    the bank's words as ptxas -g writes them)."""
    from pathlib import Path
    ptx = (Path(__file__).parent / "corpus" / "llvm" / "switch_op.ptx").read_text()
    theirs = oracle.ptxas(ptx, "sm_89", ("-g",), name="switch_op.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, "sm_89", "switch_op.ptx", debug=True, opt_level=0)
    assert _structure(ours) == _structure(theirs.output)
    banks = [{k.name: (len(k.const2 or b""), k.const2_align) for k in read_cubin(c).kernels}
             for c in (ours, theirs.output)]
    assert banks[0] == banks[1]


def test_jump_tables_place_module_wide():
    """Each kernel's constant bank 2 holds its tables and those of the functions it calls,
    at ptxas -g's places (zeros where another kernel's tables are); the targets differ
    (ptxas -g's code is not ours), so the places are compared, not the words."""
    ours, theirs = _ours_g("switch"), _ptxas_g("switch").output
    def places(cubin):
        return {k.name: [bool(w) for w in np.frombuffer(k.const2, np.uint32)]
                for k in read_cubin(cubin).kernels if k.const2}
    assert places(ours) == places(theirs) == {"k0": [False, False, True, True, True, True],
                                              "k1": [True] * 6}


def test_function_with_arguments_past_r15_stays_out_of_line_under_g():
    """A `.func` with 26 `.reg .u32` parameters (more than R4..R15): ptxas -g keeps it out of
    line and passes the rest on the stack; so does ours now (branch abi28; before, the module
    was compiled with the function inlined), and both programs compute the reference.
    (`.shared` variables in functions: out of line since branch cli10, test_debug_shared.py;
    vector elements: the vector_* modules here.)"""
    n = 26
    ptx = HEAD + f""".func (.reg .u32 r) sw({", ".join(f".reg .u32 a{i}" for i in range(n))})
{{
  mov.u32 r, a0;
""" + "".join(f"  mul.lo.u32 r, r, 3;\n  add.u32 r, r, a{i};\n" for i in range(1, n)) + f"""  ret;
}}
.visible .entry k(.param .u64 p)
{{
  .reg .b32 %r<{n + 2}>; .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [p];
  cvta.to.global.u64 %rd1, %rd1;
  mov.u32 %r1, %tid.x;
""" + "".join(f"  add.u32 %r{i + 2}, %r1, {i};\n" for i in range(n)) + f"""  call (%r1), sw, ({", ".join(f"%r{i + 2}" for i in range(n))});
  st.global.u32 [%rd1], %r1;
  ret;
}}
"""
    theirs = oracle.ptxas(ptx, "sm_89", ("-g",), name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx", debug=True, opt_level=0)
    assert [k.name for k in read_cubin(ours).kernels] == [k.name for k in read_cubin(theirs.output).kernels] \
        == ["k", "sw"]
    want = 0
    for i in range(n):
        want = (want * 3 + i) & 0xFFFFFFFF
    for cubin in (ours, theirs.output):
        out = np.zeros(1, np.uint32)
        run(cubin, "k", (1, 1, 1), (1, 1, 1), [out], hazard_check=cubin is ours)
        assert int(out[0]) == want


@pytest.mark.parametrize("name", ["three", "mutual", "chain"])
def test_verbose_order_with_g_as_ptxas(name, tmp_path, capsys):
    """-g -v: the functions' `Function properties` lines in the cubin's order (`.visible`
    ones first, the others after the last kernel, in declaration order), as ptxas's."""
    theirs = oracle.ptxas(MODULES[name], "sm_89", ("-g", "-v"), name="k.ptx")
    (tmp_path / "k.ptx").write_text(MODULES[name])
    capsys.readouterr()
    assert cli.main(["-arch=sm_89", "-g", "-v", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")]) == 0
    heads = r"(?m)info    : (Compiling entry function '\w+'|Function properties for \w+)"
    assert re.findall(heads, capsys.readouterr().err) == re.findall(heads, theirs.stderr)


_SEVERAL = HEAD + """
.func (.param .b32 r0, .param .b64 r1) two(.param .b32 a)
{
  .reg .b32 %r0; .reg .b64 %rd0;
  ld.param.b32 %r0, [a];
  cvt.u64.u32 %rd0, %r0;
  st.param.b32 [r0], %r0;
  st.param.b64 [r1], %rd0;
  ret;
}
.visible .entry k()
{
  ret;
}
"""


@pytest.mark.parametrize("variant", ["definition", "brace_on_head_line", "declared_first", "one_param_result",
                                     "head_over_lines"])
@pytest.mark.parametrize("flags", [(), ("-g",)])
def test_several_param_results_refused_as_ptxas(variant, flags, tmp_path, capsys):
    """Several results must be `.reg` ones: ptxas refuses `.param` among them (with or
    without -g), at the token after the function's head."""
    head = ".func (.param .b32 r0, .param .b64 r1) two(.param .b32 a)\n{"
    ptx = {"definition": _SEVERAL,
           "brace_on_head_line": _SEVERAL.replace(head, head.replace("\n{", " {")),
           "declared_first": _SEVERAL.replace(head, head.replace("\n{", ";\n\n") + head),
           "one_param_result": _SEVERAL.replace(head, head.replace(".param .b32 r0", ".reg .b32 r0"))
                                       .replace("st.param.b32 [r0], %r0;", "mov.b32 r0, %r0;"),
           "head_over_lines": _SEVERAL.replace(head, head.replace(", ", ",\n").replace("(.param .b32 a)",
                                                                                       "(\n.param .b32 a\n)"))}[variant]
    theirs = oracle.ptxas(ptx, "sm_89", flags, name="k.ptx")
    assert not theirs.ok
    (tmp_path / "k.ptx").write_text(ptx)
    capsys.readouterr()
    assert cli.main(["-arch=sm_89", *flags, str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")]) != 0
    ours = capsys.readouterr().err

    def errors(text):
        return re.findall(r"(?m)line (\d+); error   : (.*)$", text)
    assert errors(ours) == errors(theirs.stderr) != []


def test_a_divergent_switch_before_a_call_reconverges_as_ptxas():
    """k1 switching on a lane-varying index, one case falling into the other, which then
    calls `sw` and exits: the fall-through target is where the lanes meet (a BSSY/BSYNC
    region, as ptxas writes), not a panic side that only leads to an EXIT through a call
    (it had no region; the emulator then ran away in the split warp's call)."""
    ptx = MODULES["switch"].replace("  mov.u32 %r3, %ctaid.x;\n  and.b32 %r3, %r3, 1;", "  and.b32 %r3, %r1, 1;")
    assert ptx != MODULES["switch"]
    theirs = oracle.ptxas(ptx, "sm_89", ("-g",), name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx", debug=True, opt_level=0)

    def barriers(cubin):
        from ptx2sass.encoder.codec import decode_text
        return {k.name: [text.split()[0] for pc in range(0, len(k.text), 16)
                         for text in [decode_text(int.from_bytes(k.text[pc:pc + 16], "little"), "sm_89", pc)]
                         if text.split()[0] in ("BSSY", "BSYNC")]
                for k in read_cubin(cubin).kernels}
    assert barriers(ours) == barriers(theirs.output)
    results = []
    for cubin in (ours, theirs.output):
        out = np.zeros(64, np.uint32)
        res = run(cubin, "k1", 1, 64, [out], hazard_check=cubin is ours)
        assert res.hazards == []
        results.append(out)
    np.testing.assert_array_equal(*results)


def _arriving(cubin: bytes, function: str) -> set[str]:
    """The R registers `function`'s code reads before writing them (nvdisasm; the first
    operand of an instruction other than a store or branch is its destination): its
    arguments and return address as the convention delivers them."""
    listing = oracle.nvdisasm(cubin, ())
    body = listing[listing.index(f"\n{function}:"):]
    written, read = {"RZ"}, set()
    for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(\S+)\s+([^;]*);", body):
        opcode, operands = m[1], [o.strip() for o in m[2].split(",")]
        if opcode.startswith(("RET", "BRA", "EXIT")):
            read |= set(re.findall(r"\bR\d+\b", m[2])) - written
            break
        dests = [] if opcode.startswith(("ST", "RED", "CALL")) else operands[:1]
        read |= {r for o in operands[len(dests):] for r in re.findall(r"\bR\d+\b", o)} - written
        written |= {r for o in dests for r in re.findall(r"\bR\d+\b", o)}
    return {r for r in read if int(r[1:]) >= 4}      # (below R4: no argument; ptxas's PRMT
                                                      # inserting into R3 "reads" it)


@pytest.mark.parametrize("name", ["vector_u16", "vector_s16", "vector_u8", "vector_u32"])
def test_vector_arguments_arrive_where_ptxas_g_passes_them(name):
    """8/16-bit `.reg` vector elements packed 4 / size to a register (ptxas -g)."""
    assert _arriving(_ours_g(name), "vf") == _arriving(_ptxas_g(name).output, "vf")


@pytest.mark.parametrize("name", ["mma_m16n8k32_s32_s8_s8_s32", "mma_m16n8k32_s32_s8_s8_s32_interleave"])
def test_zluda_packed_vector_functions_run_without_hazards(name):
    """ZLUDA's `pack_u8`-style functions (`.reg .v4 .u8` results) out of line under -g: the
    kernel's STL still reading R0 when the callee's first instruction overwrites it was a
    hazard (the callee's entry now waits on every scoreboard); ZLUDA's expected output."""
    from tools import emu_testing as testing
    entry = next(e for e in testing.zluda_manifest() if e["name"] == name)
    cubin = codegen.compile_ptx(testing.zluda_ptx(entry), "sm_89", entry["ptx"], debug=True, opt_level=0)
    out = testing.run_zluda(entry, hazard_check=True, cubin=cubin)
    assert out.passed, out.reason
    assert out.result.hazards == [], [str(h) for h in out.result.hazards[:3]]
