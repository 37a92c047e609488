"""Where ptxas 13.5.37 keeps `.func`s out of line outside -g, and in which order it writes
them: under -c every local function with a body (a text section of its own, a LOCAL symbol,
called with `CALL.ABS.NOINC` through relocations; `.weak` ones WEAK, with -g too), under -c
--enable-func-clone-sc only those a `.visible`/`.weak` function reaches (the others copied
into the kernels), under -Ofc min/mid/max every function a kernel reaches (the others
dropped), -Ofc max with -O0's code. Orders (cubin and -v): -c the local functions first,
each group a postorder of its calls; -c -O0 and -c -Ofc max the link targets and `.visible`
kernels in PTX order, then the others in declaration order; -Ofc min/mid the kernels in PTX
order, each after a postorder of what it calls (the last-called first); -Ofc max each
kernel before a preorder of what it calls. Expected values: ptxas's cubins and messages;
outputs from the emulator on both compilers' code."""
from __future__ import annotations

import io
import re
import subprocess

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from elftools.elf.relocation import RelocationSection

from ptx2sass import cli, codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.encoder.cubin import read_cubin

HEAD = ".version 8.0\n.target sm_89\n.address_size 64\n"


def _func(name: str, calls: tuple[str, ...] = (), link: str = "") -> str:
    """name(a) = a * 3 + len(name) + ord(last letter), then each callee applied in turn."""
    body = (f"  .reg .b32 %r<3>;\n  ld.param.b32 %r1, [a];\n  mul.lo.u32 %r1, %r1, 3;\n"
            f"  add.u32 %r1, %r1, {len(name) + ord(name[-1])};\n")
    for c in calls:
        body += (f"  {{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), {c}, (pa);"
                 f" ld.param.b32 %r1, [pr]; }}\n")
    return f"{link}.func (.param .b32 r) {name}(.param .b32 a)\n{{\n{body}  st.param.b32 [r], %r1;\n  ret;\n}}\n"


def _kernel(name: str, calls: tuple[str, ...], link: str = ".visible ") -> str:
    """out[tid] = the calls applied to tid in turn."""
    body = ("  ld.param.u64 %rd1, [p];\n  cvta.to.global.u64 %rd1, %rd1;\n  mov.u32 %r1, %tid.x;\n"
            "  mul.wide.u32 %rd2, %r1, 4;\n  add.s64 %rd1, %rd1, %rd2;\n")
    for c in calls:
        body += (f"  {{ .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), {c}, (pa);"
                 f" ld.param.b32 %r1, [pr]; }}\n")
    return (f"{link}.entry {name}(.param .u64 p)\n{{\n  .reg .b32 %r<3>; .reg .b64 %rd<3>;\n{body}"
            f"  st.global.u32 [%rd1], %r1;\n  ret;\n}}\n")


MODULES = {
    # k calls f then g (declared g, f)
    "chain": _func("g") + _func("f") + _kernel("k", ("f", "g")),
    # k -> f -> g -> h, k -> h
    "nest": _func("h") + _func("g", ("h",)) + _func("f", ("g",)) + _kernel("k", ("f", "h")),
    # a `.visible` function between a kernel and a local one
    "visible": _func("h") + _func("v", ("h",), ".visible ") + _kernel("k", ("v",)),
    # an uncalled `.visible` function, one declared after the kernel
    "uncalled": _func("h") + _func("v", ("h",), ".visible ") + _func("u", (), ".visible ")
    + _kernel("k", ("h",)) + _func("w", ("h",), ".visible "),
    # two kernels, one reaching a local function through a `.visible` one
    "two_kernels": _func("h") + _func("v", ("h",), ".visible ") + _kernel("k", ("h",)) + _kernel("k0", ("v",)),
    # a kernel without `.visible`, functions both kernels call
    "local_kernel": _func("fa") + _func("fb") + _func("v", ("fb",), ".visible ")
    + _kernel("k2", ("fa",), "") + _kernel("k", ("v", "fb", "fa")),
    # a prototype first, the body after the kernel
    "prototype": ".func (.param .b32 r) z(.param .b32 a);\n" + _func("y") + _kernel("k", ("y", "z")) + _func("z"),
    "weak": _func("f", (), ".weak ") + _kernel("k", ("f", "f")),
    # a local chain below a `.visible` function, its end also called by the kernel
    "below_link_target": _func("h2") + _func("h1", ("h2",)) + _func("v", ("h1",), ".visible ") + _kernel("k", ("h2",)),
}
MODULES = {name: HEAD + text for name, text in MODULES.items()}


def _layout(cubin: bytes) -> dict:
    """Section names in file order, symbols (name, type, binding, section), relocations
    (section, symbol, type; offsets are the code's own)."""
    elf = ELFFile(io.BytesIO(cubin))
    sections = [s.name for s in elf.iter_sections()]
    symtab = elf.get_section_by_name(".symtab")
    symbols = list(symtab.iter_symbols())
    relocations = [(s.name, symbols[r["r_info_sym"]].name, r["r_info_type"])
                   for s in elf.iter_sections() if isinstance(s, RelocationSection)
                   and not s.name.endswith("debug_frame") for r in s.iter_relocations()]
    return {"sections": sections,
            "symbols": [(s.name, s["st_info"]["type"], s["st_info"]["bind"],
                         sections[s["st_shndx"]] if isinstance(s["st_shndx"], int) else s["st_shndx"])
                        for s in symbols],
            "relocations": relocations}


def _texts(cubin: bytes) -> list[str]:
    return [s for s in _layout(cubin)["sections"] if s.startswith(".text.")]


def _ptxas(name: str, options: tuple[str, ...]) -> oracle.ToolRun:
    try:
        theirs = oracle.ptxas(MODULES[name], "sm_89", options, name="k.ptx")
    except oracle.OracleMissing as e:
        pytest.skip(str(e))
    assert theirs.ok, theirs.stderr
    return theirs


def _ours(name: str, options: tuple[str, ...], tmp_path) -> tuple[bytes, str]:
    """Our cubin and stderr for the module compiled through the command line."""
    src = tmp_path / "k.ptx"
    src.write_text(MODULES[name])
    out = tmp_path / "out.cubin"
    err = io.StringIO()
    from contextlib import redirect_stderr
    with redirect_stderr(err):
        rc = cli.main(["-arch=sm_89", *options, str(src), "-o", str(out)])
    assert rc == 0, err.getvalue()
    return out.read_bytes(), err.getvalue()


OPTION_SETS = [("-c",), ("-c", "-O0"), ("-c", "-Ofc", "max"), ("-c", "-Ofc", "min"),
               ("-c", "--enable-func-clone-sc=true"),
               ("-Ofc", "min"), ("-Ofc", "mid"), ("-Ofc", "max")]
CASES = [(n, o) for o in OPTION_SETS for n in MODULES]


# Known: without optimisation (-O0, -Ofc max) ptxas writes the local function symbols of a
# kernel in another order than its calls' when a prototype comes first (here z, y; ours y, z).
KNOWN = {("prototype", o) for o in (("-c", "-O0"), ("-c", "-Ofc", "max"), ("-Ofc", "max"))}


@pytest.mark.parametrize("name,options", CASES, ids=[f"{n}[{' '.join(o)}]" for n, o in CASES])
def test_layout_as_ptxas(name, options, tmp_path):
    """Sections, symbols and relocations (text and `.nv.info`) equal ptxas's. (Cloning:
    ptxas's copies in a kernel's text have symbols `$kernel$function`, ours none.)"""
    ours, _ = _ours(name, options, tmp_path)
    theirs = _layout(_ptxas(name, options).output)
    theirs["symbols"] = [s for s in theirs["symbols"] if not s[0].startswith("$")]
    if (name, options) in KNOWN:
        assert _layout(ours) != theirs, "now as ptxas: drop it from KNOWN"
    else:
        assert _layout(ours) == theirs


def test_weak_function_under_g_is_weak(tmp_path):
    """-g (with or without -c): a `.weak .func` kept out of line has a WEAK symbol, as ptxas's
    (it was LOCAL)."""
    for options in (("-g",), ("-c", "-g")):
        ours, _ = _ours("weak", options, tmp_path)
        theirs = _ptxas("weak", options).output
        binding = [(s[0], s[2]) for s in _layout(ours)["symbols"] if s[0] == "f"]
        assert binding == [("f", "STB_WEAK")]
        assert binding == [(s[0], s[2]) for s in _layout(theirs)["symbols"] if s[0] == "f"]


def _verbose(text: str, ours: bool) -> list[str]:
    """-v/-v2 lines without compile times, register counts and spill figures (the code
    generators' own)."""
    text = re.sub(r"(?m)^ptx2sass " if ours else r"(?m)^ptxas ", "X ", text)
    text = re.sub(r"Compile time = [0-9.]+ ms", "T", text)
    text = re.sub(r"Used \d+ registers", "Used N registers", text)
    text = re.sub(r"\d+ bytes spill (stores|loads)", r"S bytes spill \1", text)
    return text.splitlines()


@pytest.mark.parametrize("name", ["nest", "two_kernels", "uncalled", "visible"])
@pytest.mark.parametrize("level", ["min", "max"])
def test_fast_compile_verbose_order_as_ptxas(name, level, tmp_path):
    """-Ofc -v2: a `Processing` line and a `Function properties` block (with its compile time)
    per function, in the cubin's order."""
    options = ("-Ofc", level, "-v2")
    _, err = _ours(name, options, tmp_path)
    assert _verbose(err, True) == _verbose(_ptxas(name, options).stderr, False)


@pytest.mark.parametrize("level", ["min", "mid", "max"])
@pytest.mark.parametrize("name", ["nest", "two_kernels", "local_kernel", "below_link_target", "weak"])
def test_fast_compile_runs_as_ptxas(name, level, tmp_path):
    """Our -Ofc cubin computes what ptxas's does, with no hazards."""
    ours, _ = _ours(name, ("-Ofc", level), tmp_path)
    theirs = _ptxas(name, ("-Ofc", level)).output
    _run_alike(ours, theirs, [k.name for k in read_cubin(ours).kernels if k.is_entry])


def _run_alike(ours: bytes, theirs: bytes, kernels: list[str]) -> None:
    """Each kernel of our cubin writes what ptxas's does (64 threads), ours with no hazards."""
    for kernel in kernels:
        results = []
        for cubin, check in ((ours, True), (theirs, False)):
            out = np.zeros(64, np.uint32)
            res = run(cubin, kernel, 1, 64, [out], hazard_check=check)
            if check:
                assert res.hazards == [], [str(h) for h in res.hazards[:3]]
            results.append(out)
        np.testing.assert_array_equal(*results)


def _nvlink(cubin: bytes, tmp_path) -> bytes:
    nvlink = oracle.tool_path("ptxas").parent / "nvlink"
    if not nvlink.is_file():
        pytest.skip("nvlink not installed")
    (tmp_path / "m.cubin").write_bytes(cubin)
    r = subprocess.run([str(nvlink), "-arch=sm_89", str(tmp_path / "m.cubin"), "-o", str(tmp_path / "l.cubin")],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return (tmp_path / "l.cubin").read_bytes()


@pytest.mark.parametrize("options", [("-c",), ("-c", "--enable-func-clone-sc=true")])
@pytest.mark.parametrize("name", ["nest", "two_kernels", "local_kernel", "below_link_target"])
def test_separate_compilation_links_and_runs_as_ptxas(name, options, tmp_path):
    """Our -c object, linked by nvlink, computes what ptxas's linked object does."""
    ours = _nvlink(_ours(name, options, tmp_path)[0], tmp_path)
    theirs = _nvlink(_ptxas(name, options).output, tmp_path)
    _run_alike(ours, theirs, [k.name for k in read_cubin(theirs).kernels if k.is_entry])


SWITCH = HEAD + """.func (.param .b32 r) sw(.param .b32 a)
{
  .reg .b32 %r<4>;
  ld.param.b32 %r1, [a];
  and.b32 %r1, %r1, 3;
  ts: .branchtargets L0, L1, L2, L3;
  brx.idx %r1, ts;
L0: mov.u32 %r2, 10; bra.uni D;
L1: mov.u32 %r2, 21; bra.uni D;
L2: mov.u32 %r2, 32; bra.uni D;
L3: mov.u32 %r2, 43;
D:
  st.param.b32 [r], %r2;
  ret;
}
""" + _kernel("k", ("sw",))


# the same switch in a `.visible` function, and in the kernel itself
SWITCH_VISIBLE = SWITCH.replace(".func (.param .b32 r) sw", ".visible .func (.param .b32 r) sw")
SWITCH_KERNEL = HEAD + """.visible .entry k(.param .u64 p)
{
  .reg .b32 %r<4>; .reg .b64 %rd<3>;
  ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;
  mov.u32 %r1, %tid.x; and.b32 %r1, %r1, 3;
  ts: .branchtargets L0, L1, L2, L3;
  brx.idx %r1, ts;
L0: mov.u32 %r2, 10; bra.uni D;
L1: mov.u32 %r2, 21; bra.uni D;
L2: mov.u32 %r2, 32; bra.uni D;
L3: mov.u32 %r2, 43;
D:
  mul.wide.u32 %rd1, %r1, 4; add.s64 %rd2, %rd2, %rd1; st.global.u32 [%rd2], %r2; ret;
}
"""
# two tables in one function: an object each (`sw.const_opt.0.16`, `sw.const_opt.16.24`)
SWITCH_TWO = SWITCH.replace("""D:
  st.param.b32 [r], %r2;""", """D:
  and.b32 %r3, %r2, 1;
  ts2: .branchtargets M0, M1;
  brx.idx %r3, ts2;
M0: add.u32 %r2, %r2, 100; bra.uni E;
M1: add.u32 %r2, %r2, 200;
E:
  st.param.b32 [r], %r2;""")
JUMP_TABLE_MODULES = {"switch": SWITCH, "switch_visible": SWITCH_VISIBLE, "switch_kernel": SWITCH_KERNEL,
                      "switch_two": SWITCH_TWO}


@pytest.mark.parametrize("name", sorted(JUMP_TABLE_MODULES))
def test_c_function_with_jump_table_runs(name, tmp_path):
    """-c keeps a local function holding a `brx.idx` table out of line as ptxas does (was
    inlined): each table is an object `<f>.const_opt.<start>.<end>` of `.nv.constant2.<f>`,
    which nvlink places in each calling kernel's bank 2; the linked object computes what
    ptxas's does (the `.visible` function's tables were read at the bank's start, wherever
    nvlink put them)."""
    MODULES[name] = JUMP_TABLE_MODULES[name]
    try:
        test_separate_compilation_links_and_runs_as_ptxas(name, ("-c",), tmp_path)
    finally:
        del MODULES[name]


def _jump_table_objects(cubin: bytes) -> dict:
    """`.nv.constant2.*` sections (name, type), their objects (name, type, binding, other,
    size) and the relocations against them (section, symbol, type, addend)."""
    elf = ELFFile(io.BytesIO(cubin))
    symbols = list(elf.get_section_by_name(".symtab").iter_symbols())
    names = [s.name for s in elf.iter_sections()]
    return {
        "sections": [(s.name, s["sh_type"]) for s in elf.iter_sections() if s.name.startswith(".nv.constant2")],
        "objects": [(s.name, s["st_info"]["type"], s["st_info"]["bind"], s["st_other"]["visibility"],
                     s["st_size"]) for s in symbols
                    if isinstance(s["st_shndx"], int) and names[s["st_shndx"]].startswith(".nv.constant2")],
        "relocations": sorted((s.name, symbols[r["r_info_sym"]].name, r["r_info_type"], r.entry.get("r_addend"))
                              for s in elf.iter_sections() if isinstance(s, RelocationSection)
                              for r in s.iter_relocations() if ".const_opt." in symbols[r["r_info_sym"]].name),
    }


@pytest.mark.parametrize("arch", ["sm_89", "sm_90"])
@pytest.mark.parametrize("name", sorted(JUMP_TABLE_MODULES))
def test_c_jump_tables_are_relocated_objects_as_ptxas(name, arch, tmp_path):
    """-c: every function's (and kernel's) `brx.idx` table is a local CUDA_OBJECT of its
    `.nv.constant2.<f>` (type 0x70000066), read through R_CUDA_CONST_FIELD21_38 with addend
    -0x8000 (ptxas 13.5.37 biases the index by 0x8000); layout as ptxas's."""
    ptx = JUMP_TABLE_MODULES[name].replace("sm_89", arch)
    theirs = oracle.ptxas(ptx, arch, ("-c",), name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch, "k.ptx", compile_only=True)
    assert _jump_table_objects(ours) == _jump_table_objects(theirs.output)
    if arch == "sm_89":       # (sm_90: ptxas also writes an empty `.rela.nv.constant2.<f>`)
        assert _layout(ours) == _layout(theirs.output)


CORPUS = "tests/corpus/cuda"


@pytest.mark.parametrize("path,level", [("memory.ptx", "min"), ("memory.ptx", "max"), ("calls.ptx", "min"),
                                        ("calls.ptx", "mid")])
def test_fast_compile_corpus_sections_as_ptxas(path, level):
    """-Ofc on CUDA corpus files: -g's variable layout (`.rel.text.<k>` for `.global`
    addresses, no bank 4; `.nv_debug.shared`) and the address-taken functions of a table,
    placed where the kernel naming the table is. (`.nv.global`'s place aside: our -g puts
    it after `.nv_debug.shared`, ptxas before.)"""
    from pathlib import Path
    ptx = (Path(__file__).parent / "corpus" / "cuda" / path).read_text()
    try:
        theirs = oracle.ptxas(ptx, "sm_89", ("-Ofc", level), name=path)
    except oracle.OracleMissing as e:
        pytest.skip(str(e))
    ours = codegen.compile_ptx(ptx, "sm_89", path, fast_compile=level)

    def names(cubin):
        return [s for s in _layout(cubin)["sections"] if s != ".nv.global"]
    assert names(ours) == names(theirs.output)


@pytest.mark.parametrize("options", [("-g",), ("-Ofc", "min"), ("-Ofc", "max")])
@pytest.mark.parametrize("name", ["nest", "two_kernels"])
def test_calls_of_own_functions_are_no_system_calls(name, options, tmp_path):
    """A `CALL.ABS` of one of the module's functions kept out of line is not a system call:
    ptxas lists no EIATTR_SYSCALL_OFFSETS for it (ours did, -g too); every function's
    `.nv.info` records as ptxas's."""
    ours, _ = _ours(name, options, tmp_path)
    theirs = _ptxas(name, options).output

    def records(cubin):
        return {k.name: [r.attr for r in k.attributes] for k in read_cubin(cubin).kernels}
    from ptx2sass.encoder.nvinfo import ATTRIBUTE_CODES
    assert all(ATTRIBUTE_CODES["SYSCALL_OFFSETS"] not in r for r in records(ours).values())
    assert records(ours) == records(theirs)


def _section_names(cubin: bytes) -> list[str]:
    return [s.name for s in ELFFile(io.BytesIO(cubin)).iter_sections()
            if not s.name.startswith((".nv.merc.", ".nv.capmerc."))]


@pytest.mark.parametrize("arch", ["sm_90", "sm_120"])
@pytest.mark.parametrize("options", [("-c",), ("-g",), ("-Ofc", "min")], ids=["c", "g", "Ofc"])
@pytest.mark.parametrize("name", ["switch", "switch_visible", "switch_two"])
def test_jump_table_relocation_sections_in_ptxas_s_order(name, options, arch):
    """sm_90+: `.rela.nv.constant2.<f>` where ptxas 13.5.37 puts it: under -c right after
    its function's `.rela.text.<f>`; under -g/-Ofc, for a kernel whose bank holds only its
    functions' tables, after `.rela.debug_frame` (ours: before the debug sections'
    relocations in both); the sections but Mercury = ptxas's."""
    ptx = JUMP_TABLE_MODULES[name].replace("sm_89", arch).replace(".version 8.0", ".version 8.7")
    theirs = oracle.ptxas(ptx, arch, options, name="k.ptx")
    assert theirs.ok, theirs.stderr
    kw = {"compile_only": True} if options == ("-c",) else {"debug": True, "opt_level": 0} \
        if options == ("-g",) else {"fast_compile": options[1]}
    assert _section_names(codegen.compile_ptx(ptx, arch, "k.ptx", **kw)) == _section_names(theirs.output)


# SWITCH_KERNEL's index uniform (%ctaid.x: no BSSY around the BRX), and SWITCH's function
# called under a lane-varying branch
SWITCH_UNIFORM = SWITCH_KERNEL.replace("mov.u32 %r1, %tid.x;", "mov.u32 %r1, %ctaid.x;")
SWITCH_DIVERGED = SWITCH[:SWITCH.index(".visible .entry")] + """.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<4>; .reg .b64 %rd<4>; .reg .pred %q;
 ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;
 mov.u32 %r1, %tid.x; mov.u32 %r2, 5;
 setp.lt.u32 %q, %r1, 16; @%q bra SKIP;
 { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1; call (pr), sw, (pa); ld.param.b32 %r2, [pr]; }
SKIP:
 mul.wide.u32 %rd3, %r1, 4; add.s64 %rd2, %rd2, %rd3; st.global.u32 [%rd2], %r2; ret;
}
"""


@pytest.mark.parametrize("options", [(), ("-c",), ("-g",), ("-Ofc", "min")], ids=["plain", "c", "g", "Ofc"])
@pytest.mark.parametrize("ptx", [SWITCH_KERNEL, SWITCH_UNIFORM, SWITCH_DIVERGED, SWITCH_VISIBLE],
                         ids=["kernel", "uniform", "diverged_call", "visible"])
def test_lane_varying_switch_has_crs_stack_size(ptx, options):
    """A function whose `brx.idx` index varies by lane (its BRX inside BSSY/BSYNC) gets a
    CRS_STACK_SIZE of 0 from ptxas 13.5.37 in every mode, none where the index is uniform
    (ours wrote none: the kernel's in a whole program, the function's under -c/-g/-Ofc)."""
    from ptx2sass.encoder.nvinfo import ATTRIBUTE_CODES
    theirs = oracle.ptxas(ptx, "sm_89", options, name="k.ptx")
    assert theirs.ok, theirs.stderr
    kw = {"compile_only": True} if options == ("-c",) else {"debug": True, "opt_level": 0} \
        if options == ("-g",) else {"fast_compile": options[1]} if options else {}
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx", **kw)

    def crs(cubin):
        return {k.name: [r.value for r in k.attributes if r.attr == ATTRIBUTE_CODES["CRS_STACK_SIZE"]]
                for k in read_cubin(cubin).kernels}
    assert crs(ours) == crs(theirs.output)


# a call through a pointer that holds one of two local functions' addresses
POINTER_CALL = HEAD + _func("f") + _func("g") + """.visible .entry k(.param .u64 p)
{
 .reg .b32 %r<4>; .reg .b64 %rd<6>; .reg .pred %q;
 ld.param.u64 %rd1, [p]; cvta.to.global.u64 %rd2, %rd1;
 mov.u32 %r1, %tid.x; and.b32 %r3, %r1, 1; setp.eq.u32 %q, %r3, 0;
 mov.u64 %rd3, f; mov.u64 %rd4, g; selp.b64 %rd5, %rd3, %rd4, %q;
 { .param .b32 pa; .param .b32 pr; st.param.b32 [pa], %r1;
   proto: .callprototype (.param .b32 _) _ (.param .b32 _);
   call (pr), %rd5, (pa), proto; ld.param.b32 %r2, [pr]; }
 mul.wide.u32 %rd1, %r1, 4; add.s64 %rd2, %rd2, %rd1;
 st.global.u32 [%rd2], %r2; ret;
}
"""


@pytest.mark.parametrize("options", [("-g",), ("-Ofc", "min"), ("-Ofc", "max")])
def test_calls_through_pointers_are_no_system_calls(options, tmp_path):
    """A `CALL.ABS.NOINC R` through a pointer is no system call either (ptxas 13.5.37: no
    EIATTR_SYSCALL_OFFSETS; ours listed it, as a vprintf's, which reads alike); the module
    still runs as ptxas's."""
    MODULES["pointer_call"] = POINTER_CALL
    try:
        test_calls_of_own_functions_are_no_system_calls("pointer_call", options, tmp_path)
        if options != ("-g",):
            test_fast_compile_runs_as_ptxas("pointer_call", options[1], tmp_path)
    finally:
        del MODULES["pointer_call"]


@pytest.mark.parametrize("options", [("-c", "-v"), ("-c", "-O0", "-v"), ("-c", "-Ofc", "max", "-v")])
@pytest.mark.parametrize("name", ["nest", "local_kernel", "uncalled", "prototype"])
def test_separate_compilation_verbose_order_as_ptxas(name, options, tmp_path):
    """-c -v: the functions' lines in the object's order (a kernel without `.visible` among
    the local functions; -O0 / -Ofc max: link targets and kernels as defined, then the
    others as declared)."""
    _, err = _ours(name, options, tmp_path)
    assert _verbose(err, True) == _verbose(_ptxas(name, options).stderr, False)


def test_c_address_taken_local_functions():
    """-c on a module whose vtables hold local functions' addresses (realworld
    calls_objects): each stays a LOCAL function with its text, as in ptxas's object, and the
    call graph has a prototype string for each (an internal error when they were first kept
    out of line without one)."""
    from pathlib import Path
    path = Path(__file__).parent / "corpus" / "realworld" / "cuda" / "calls_objects.sm_89.ptx"
    ptx = path.read_text()
    try:
        theirs = oracle.ptxas(ptx, "sm_89", ("-c",), name="k.ptx")
    except oracle.OracleMissing as e:
        pytest.skip(str(e))
    ours = codegen.compile_ptx(ptx, "sm_89", "k.ptx", compile_only=True)

    def local_functions(cubin):      # (less ptxas's own `__cuda_sm20_*` subroutines)
        return sorted(s[0] for s in _layout(cubin)["symbols"] if s[1:3] == ("STT_FUNC", "STB_LOCAL")
                      and not s[0].startswith("__cuda_"))
    assert local_functions(ours) == local_functions(theirs.output)
    assert len(local_functions(ours)) >= 10


@pytest.mark.parametrize("level", ["min", "max"])
def test_fast_compile_records_of_a_diverging_caller(level, tmp_path):
    """-Ofc: a kernel that calls an out-of-line function under a branch has ptxas's
    CRS_STACK_SIZE 0 (as under -c); every function's `.nv.info` records as ptxas's."""
    from tools.ptxas_options_audit import PROBE
    MODULES["probe"] = PROBE
    try:
        ours, _ = _ours("probe", ("-Ofc", level), tmp_path)
        theirs = _ptxas("probe", ("-Ofc", level)).output
    finally:
        del MODULES["probe"]

    def records(cubin):
        return {k.name: [r.attr for r in k.attributes] for k in read_cubin(cubin).kernels}
    assert records(ours) == records(theirs)
