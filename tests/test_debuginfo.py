"""Debug information (`-lineinfo`, and any `.loc` in the PTX) against the pinned ptxas.

Three checks, each against ptxas's own output for the same PTX (cached oracle runs):
- replay: ptxas's instruction-to-PTX-line map (read off its `.nv_debug_line_sass`) fed to our
  section writer must give ptxas's debug sections byte for byte: the PTX text, both line
  programs with their `.loc` chains, inlining rows and file tables;
- structure: our cubin's debug sections, flags, symbols and relocations as ptxas's
  (`cuobjdump -elf`'s view without sizes and offsets);
- our own line tables, read back by nvdisasm (`-gp`, `-g`) and pyelftools: complete (every
  instruction has a PTX line of its function), well formed, and equal to ptxas's where
  both compilers' code maps 1:1.

Corpus sweeps take PTX2SASS_SAMPLE files per corpus (default 4; `all`: every file);
`python -m tools.line_tables` gives the figures for whole corpora.
"""
from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest

from ptx2sass import cli, codegen, oracle
from ptx2sass.encoder.cubin import read_cubin
from tools.corpora import ptx_files
from tools.line_tables import compare, debug_structure, listing, ptx_lines_of, replay

HEADER = ".version 8.8\n.target sm_89\n.address_size 64\n"
KERNEL = """.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<3>; .reg .b32 %r<3>;
ld.param.u64 %rd1, [p];
cvta.to.global.u64 %rd2, %rd1;
mov.u32 %r1, %tid.x;
st.global.u32 [%rd2], %r1;
ret;
}
"""

# What ptxas keeps of the text: leading blanks and a CR go, `//` lines, `.loc`, `.file` and
# section data rows become empty, other comments stay, trailing empty lines are dropped.
TEXT_EDGES = ("// head comment\n.version 8.8   \n.target sm_89 // trailing\n.address_size 64\n\n"
              "/* block\n   comment */ .visible .entry k(.param .u64 p) /* in */ // x\n{\n"
              "\t.reg .b64 %rd<3>;   .reg .b32 %r<3>;\t\n"
              "\tld.param.u64 \t%rd1, [p];  /* a */  /* b\n c */ cvta.to.global.u64 %rd2, %rd1;\n"
              "  mov.u32 %r1,   %tid.x;\r\n\t.loc 1 7 3\n st.global.u32 [%rd2], %r1; // \"s // t\"\n"
              " ret;\n}\n.file 1 \"a.cu\"\n\n\n")

# Inlined `.loc`s name their function in `.debug_str` and their call site; `.file` carries a
# time and size; labels, pragmas and a `.loc` inside a block comment.
INLINED = HEADER + """.file 1 "a.cu"
.file\t2 "dir/b.cu", 1700000000, 1234
   // c1
/* only */
.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<3>; .reg .b32 %r<3>; .reg .pred %p<2>;
ld.param.u64 %rd1, [p]; /* c */
.loc 1 2 3 // c
cvta.to.global.u64 %rd2, %rd1;
.loc 2 5 1, function_name $L__info_string0, inlined_at 1 2 3
mov.u32 %r1, %tid.x;
\t.pragma "nounroll";
$L__x1:
   \t   
\tsetp.eq.u32 %p1, %r1, 0; /* .loc 1 9 9
\tmore */ @%p1 bra $L__x2;
st.global.u32 [%rd2], %r1;
$L__x2:
ret;
}
\t.section\t.debug_str
\t{
$L__info_string0:
.b8 95,90,0
\t}
\t.section\t.debug_abbrev
\t{
.b8 1
.b8 0  // x
\t}
// end
"""

# `.file` indices out of order with gaps (ptxas lists them by index and keeps the index in
# the rows), directories split off, a `.loc` after the first instructions.
FILE_TABLE = HEADER + """.file 3 "x/y/c.cu"
.file 1 "a.cu", 1700000000, 1234
.file 5 "x/y/d.cu"
.file 2 "/abs/dir/b.cu"
.file 7 "z/e.cu"
.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<3>; .reg .b32 %r<3>;
.loc 1 10 3
ld.param.u64 %rd1, [p];
mov.u32 %r1, %tid.x;
.loc 5 20 1
add.u32 %r1, %r1, 7;
cvta.to.global.u64 %rd2, %rd1;
st.global.u32 [%rd2], %r1;
ret;
}
"""

# Two kernels, one without any `.loc` (no `.debug_line` sequence); the first `.loc` after
# code (the prologue takes it, the code before it continues the row).
TWO_KERNELS = HEADER + """.file 1 "a.cu"
.file 2 "/abs/dir/b.cu"
.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<3>; .reg .b32 %r<3>;
ld.param.u64 %rd1, [p];
cvta.to.global.u64 %rd2, %rd1;
.loc 1 10 3
mov.u32 %r1, %tid.x;
.loc 2 20 1
add.u32 %r1, %r1, 7;
st.global.u32 [%rd2], %r1;
ret;
}
""" + KERNEL.replace("entry k(", "entry k2(")

HAND_WRITTEN = {"text_edges": TEXT_EDGES, "inlined": INLINED, "file_table": FILE_TABLE,
                "two_kernels": TWO_KERNELS, "no_loc": HEADER + KERNEL}


def _sample(corpus: str, default: int = 4) -> list:
    files = [p for p in ptx_files(corpus) if ".G." not in p.name]
    wanted = os.environ.get("PTX2SASS_SAMPLE", str(default))
    return files if wanted == "all" else files[:: max(1, len(files) // int(wanted))][: int(wanted)]


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_sections_written_as_ptxas_writes_them(name):
    """Fed ptxas's own instruction-to-line map, our writer gives ptxas's debug sections."""
    assert replay(HAND_WRITTEN[name], "sm_89", f"{name}.ptx") == {}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_relocatable_sections_written_as_ptxas_writes_them(name):
    assert replay(HAND_WRITTEN[name], "sm_89", f"{name}.ptx", ("-lineinfo", "-c")) == {}


@pytest.mark.parametrize("path", [p for c in ("cuda", "triton", "llvm") for p in _sample(c)],
                         ids=lambda p: p.name)
def test_corpus_sections_written_as_ptxas_writes_them(path):
    assert replay(path.read_text(encoding="latin-1"), "sm_89", path.name) == {}


def _structures(ptx: str, name: str, options: tuple[str, ...], **ours):
    theirs = oracle.ptxas(ptx, "sm_89", options, name=name)
    assert theirs.ok, theirs.stderr
    return debug_structure(codegen.compile_ptx(ptx, "sm_89", name, **ours)), debug_structure(theirs.output)


STRUCTURE_CASES = {
    "loc_implies_lineinfo": (INLINED, (), {}),
    "lineinfo": (HEADER + KERNEL, ("-lineinfo",), {"lineinfo": True}),
    "lineinfo_relocatable": (HEADER + KERNEL, ("-lineinfo", "-c"), {"lineinfo": True, "compile_only": True}),
    "inlined_relocatable": (INLINED, ("-c",), {"compile_only": True}),
    "suppressed": (INLINED, ("-lineinfo", "--suppress-debug-info"),
                   {"lineinfo": True, "suppress_debug_info": True}),
    "none": (HEADER + KERNEL, (), {}),
    "two_kernels": (TWO_KERNELS, ("-lineinfo",), {"lineinfo": True}),
}


@pytest.mark.parametrize("case", sorted(STRUCTURE_CASES))
def test_debug_structure_matches_ptxas(case):
    ptx, options, ours = STRUCTURE_CASES[case]
    mine, theirs = _structures(ptx, f"{case}.ptx", options, **ours)
    assert mine == theirs


@pytest.mark.parametrize("path", [p for c in ("cuda", "triton", "llvm", "tinygrad", "zluda")
                                  for p in _sample(c, 2)], ids=lambda p: p.name)
def test_corpus_debug_structure_matches_ptxas(path):
    text = path.read_text(encoding="latin-1")
    if not oracle.ptxas(text, "sm_89", ("-lineinfo",), name=path.name).ok:
        pytest.skip("ptxas rejects it")
    try:
        mine, theirs = _structures(text, path.name, ("-lineinfo",), lineinfo=True)
    except codegen.CompileError as e:
        pytest.skip(f"not compiled yet: {e}")
    assert mine == theirs


@pytest.mark.parametrize("path", [p for c in ("cuda", "triton", "llvm", "tinygrad", "zluda")
                                  for p in _sample(c, 2)], ids=lambda p: p.name)
def test_our_line_tables_complete_and_well_formed(path):
    """Every instruction of ours maps to a PTX line of its function (nvdisasm -gp), the
    sequences decode with pyelftools in address order to the text's end, and where our
    code maps 1:1 to ptxas's the tables are equal."""
    text = path.read_text(encoding="latin-1")
    if not oracle.ptxas(text, "sm_89", ("-lineinfo",), name=path.name).ok:
        pytest.skip("ptxas rejects it")
    try:
        results = compare(text, "sm_89", path.name)
    except codegen.CompileError as e:
        pytest.skip(f"not compiled yet: {e}")
    assert results
    for r in results:
        assert r.complete and not r.problems, (r.name, r.problems)
        if r.one_to_one:
            assert r.ptx_equal and r.source_equal, r.name


def test_pyelftools_and_nvdisasm_read_the_same_table():
    """Our `.nv_debug_line_sass` decoded by pyelftools gives nvdisasm's -gp lines."""
    cubin = codegen.compile_ptx(INLINED, "sm_89", "inlined.ptx")
    decoded = ptx_lines_of(read_cubin(cubin))
    for kernel, instrs in listing(cubin, "-gp").items():
        assert [i.lines[-1][1] for i in instrs] == decoded[kernel][: len(instrs)]


def test_prologue_maps_to_the_opening_brace_and_exit_to_ret():
    """ptxas's rule: the prologue's PTX line is the function's `{`, the EXIT's the `ret`."""
    cubin = codegen.compile_ptx(HEADER + KERNEL, "sm_89", "k.ptx", lineinfo=True)
    instrs = listing(cubin, "-gp")["k"]
    lines = (HEADER + KERNEL).split("\n")
    assert lines[instrs[0].lines[-1][1] - 1] == "{"
    exit_line = next(i for i in instrs if i.opcode == "EXIT").lines[-1][1]
    assert lines[exit_line - 1] == "ret;"


@pytest.mark.parametrize("arch", ["sm_75", "sm_89", "sm_90", "sm_120"])
@pytest.mark.parametrize("options", [(), ("-lineinfo",), ("-lineinfo", "-c")])
def test_e_flags_top_byte_is_the_cuinfo_section_index(arch, options):
    """The fact our writer relies on, in ptxas's cubins: e_flags' top byte is the section
    index of `.note.nv.cuinfo` (6 without debug sections)."""
    from elftools.elf.elffile import ELFFile
    import io
    run = oracle.ptxas(INLINED.replace("sm_89", arch), arch, options, name="k.ptx")
    assert run.ok, run.stderr
    elf = ELFFile(io.BytesIO(run.output))
    names = [s.name for s in elf.iter_sections()]
    assert elf.header["e_flags"] >> 24 == names.index(".note.nv.cuinfo")


def _cli(argv, tmp_path, monkeypatch, files):
    for name, text in files.items():
        (tmp_path / name).write_text(text, encoding="latin-1")
    monkeypatch.chdir(tmp_path)
    assert cli.main(argv + ["-o", "out.cubin"]) == 0
    return (tmp_path / "out.cubin").read_bytes()


def test_command_line_lineinfo_and_suppress(tmp_path, monkeypatch):
    files = {"k.ptx": HEADER + KERNEL}
    plain = read_cubin(_cli(["-arch=sm_89", "k.ptx"], tmp_path, monkeypatch, files))
    lined = read_cubin(_cli(["-arch=sm_89", "-lineinfo", "k.ptx"], tmp_path, monkeypatch, files))
    suppressed = read_cubin(_cli(["-arch=sm_89", "-lineinfo", "--suppress-debug-info", "k.ptx"],
                                 tmp_path, monkeypatch, files))
    debug = {".debug_line", ".nv_debug_line_sass", ".nv_debug_ptx_txt"}
    assert not debug & {s.name for s in plain.sections}
    assert debug <= {s.name for s in lined.sections}
    assert not debug & {s.name for s in suppressed.sections}
    theirs = read_cubin(oracle.ptxas(HEADER + KERNEL, "sm_89", ("-lineinfo",), name="k.ptx").output)
    assert lined.section(".nv_debug_ptx_txt").data == theirs.section(".nv_debug_ptx_txt").data


def test_several_inputs_keep_the_last_text(tmp_path, monkeypatch):
    """ptxas stores only the last input file's text (and counts each kernel's lines in its
    own file)."""
    files = {"a.ptx": HEADER + KERNEL, "b.ptx": "// b\n" + HEADER + KERNEL.replace("entry k(", "entry k2(")}
    ours = read_cubin(_cli(["-arch=sm_89", "-lineinfo", "a.ptx", "b.ptx"], tmp_path, monkeypatch, files))
    run = oracle._run_cached("ptxas", ["-arch=sm_89", "-lineinfo", "a.ptx", "b.ptx", "-o", "out.cubin"],
                             {n: t.encode() for n, t in files.items()}, "out.cubin")
    theirs = read_cubin(run.output)
    assert ours.section(".nv_debug_ptx_txt").data == theirs.section(".nv_debug_ptx_txt").data
    assert ptx_lines_of(ours)["k2"][0] == ptx_lines_of(theirs)["k2"][0] == 6   # b.ptx's `{`
    assert ptx_lines_of(ours)["k"][0] == ptx_lines_of(theirs)["k"][0] == 5     # a.ptx's `{`


def test_debug_modules_not_imported_without_debug_information():
    code = ("import sys, ptx2sass\n"
            f"ptx2sass.compile({HEADER + KERNEL!r})\n"
            "assert 'ptx2sass.debuginfo' not in sys.modules, 'imported'\n"
            f"ptx2sass.compile({HEADER + KERNEL!r}, lineinfo=True)\n"
            "assert 'ptx2sass.debuginfo.sections' in sys.modules\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr


@pytest.mark.parametrize("case", ["none", "info_only", "both"])
@pytest.mark.parametrize("flags", [[], ["-Werror"], ["-w"]])
def test_g_says_which_dwarf_sections_are_missing(case, flags, tmp_path, monkeypatch, capsys):
    """ptxas -g warns about a missing `.debug_abbrev` / `.debug_info` (errors with -Werror)."""
    sections = {"none": "", "info_only": ".section .debug_info { .b32 0 }\n",
                "both": ".section .debug_abbrev { .b8 0 }\n.section .debug_info { .b32 0 }\n"}
    ptx = HEADER + KERNEL + sections[case]
    argv = ["-arch=sm_89", "-g", *flags, "k.ptx"]
    theirs = oracle._run_cached("ptxas", argv + ["-o", "out.cubin"], {"k.ptx": ptx.encode()}, "out.cubin")
    (tmp_path / "k.ptx").write_text(ptx)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main(argv + ["-o", "out.cubin"])
    err = capsys.readouterr().err.replace("ptx2sass ", "ptxas ")
    if "Checked Data was Invalid" in theirs.stderr:
        pytest.skip("ptxas reads the DWARF itself and rejects this minimal .debug_info")
    assert (rc, err) == (theirs.returncode, theirs.stderr)


@pytest.mark.parametrize("path", [p for c in ("cuda", "triton") for p in ptx_files(c)
                                  if p.name in ("control.G.ptx", "vec_add.ptx", "warp.lineinfo.ptx")],
                         ids=lambda p: p.name)
def test_g_debug_structure_matches_ptxas(path):
    """-g (`.target debug` in the -G files): the register maps, then the PTX's DWARF sections
    in ptxas's order, code labels relocated against the kernels (REL in `.debug_loc`, RELA
    in `.debug_info`).
    (calls.G.ptx is left out: ptxas -g keeps every `.func` out of line, with its own text
    and line sequence, where we inline them.)"""
    text = path.read_text(encoding="latin-1")
    try:
        mine, theirs = _structures(text, path.name, ("-g",), debug=True)
    except codegen.CompileError as e:
        pytest.skip(f"not compiled yet: {e}")
    assert mine == theirs


def test_g_code_follows_the_ptx():
    """-g keeps the PTX's order (no scheduling): every kernel's PTX lines only go forward."""
    path = next(p for p in ptx_files("cuda") if p.name == "control.G.ptx")
    cubin = codegen.compile_ptx(path.read_text(), "sm_89", path.name, debug=True, opt_level=0)
    for kernel, instrs in listing(cubin, "-gp").items():
        lines = [i.lines[-1][1] for i in instrs]
        assert lines == sorted(lines), kernel


def _register_records(cubin: bytes) -> dict[str, list[tuple]]:
    """`.nv_debug_info_reg_sass` with `.nv_debug_info_reg_type`, per function."""
    import struct
    c = read_cubin(cubin)
    sass, types = c.section(".nv_debug_info_reg_sass").data, c.section(".nv_debug_info_reg_type").data
    out, p, q = {}, 0, 0
    while p < len(sass):
        end = sass.index(b"\0", p)
        name, count = sass[p:end].decode(), struct.unpack_from("<I", sass, end + 1)[0]
        p = end + 5
        q = types.index(b"\0", q) + 5
        assert struct.unpack_from("<I", types, q - 4)[0] == count
        records = []
        for k in range(count):
            part = struct.unpack_from("<I", sass, p)[0]
            e = sass.index(b"\0", p + 4)
            reg, start, stop = struct.unpack_from("<III", sass, e + 1)
            records.append((sass[p + 4:e].decode(), part, reg, start, stop, types[q + k]))
            p = e + 13
        q += count
        out[name] = records
    return out


def test_g_register_maps_read_like_ptxas():
    """The PTX-register-to-SASS maps have ptxas's layout (our reader reads ptxas's, with
    ptxas's type codes) and ours name the PTX registers where our code keeps them."""
    ptx = HEADER + """.visible .entry k(.param .u64 p, .param .u32 n)
{
.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<2>; .reg .b16 %rs<3>; .reg .f32 %f<3>; .reg .f64 %fd<2>;
ld.param.u64 %rd1, [p];
ld.param.u32 %r1, [n];
cvta.to.global.u64 %rd2, %rd1;
mov.u32 %r2, %tid.x;
setp.lt.u32 %p1, %r2, %r1;
@%p1 bra $L1;
cvt.u16.u32 %rs1, %r2;
add.u16 %rs2, %rs1, 3;
cvt.rn.f32.u16 %f1, %rs2;
mul.f32 %f2, %f1, 0f40000000;
cvt.f64.f32 %fd1, %f2;
st.global.f64 [%rd2], %fd1;
$L1:
ret;
}
"""
    theirs = _register_records(oracle.ptxas(ptx, "sm_89", ("-g",), name="k.ptx").output)["k"]
    codes = {name: code for name, *_, code in theirs}
    assert codes == {"%r2": 2, "%rd2": 3, "%rd1": 3, "%r1": 2, "%p1": 16, "%rs1": 1, "%rs2": 1,
                     "%f1": 14, "%f2": 14, "%fd1": 15}
    cubin = codegen.compile_ptx(ptx, "sm_89", "k.ptx", debug=True, opt_level=0)
    ours = _register_records(cubin)["k"]
    listed = {i.address: i for i in listing(cubin, "-gp")["k"]}
    for name, part, reg, start, stop, code in ours:
        assert code == codes[name]
        assert reg >> 24 == (2 if name.startswith("%p") else 5)
        assert start <= stop and start in listed and stop in listed
    # every value the code keeps in a register is named, with its parts
    assert {(n, part) for n, part, *_ in ours} >= {("%rd2", 0), ("%rd2", 1), ("%p1", 0), ("%rs2", 0),
                                                  ("%f1", 0), ("%f2", 0), ("%fd1", 0), ("%fd1", 1)}


@pytest.mark.parametrize("case", ["no_loc", "inlined", "target_debug"])
def test_suppress_debug_info_alone_warns_as_ptxas(case, tmp_path, monkeypatch, capsys):
    """--suppress-debug-info without -lineinfo/-g: ptxas warns only when the PTX implies no
    debug information itself (no `.loc`, no `.target debug`)."""
    ptx = {"no_loc": HEADER + KERNEL, "inlined": INLINED,
           "target_debug": INLINED.replace(".target sm_89", ".target sm_89, debug")}[case]
    argv = ["-arch=sm_89", "--suppress-debug-info", "k.ptx"]
    theirs = oracle._run_cached("ptxas", argv + ["-o", "out.cubin"], {"k.ptx": ptx.encode()}, "out.cubin")
    (tmp_path / "k.ptx").write_text(ptx)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main(argv + ["-o", "out.cubin"])
    assert (rc, capsys.readouterr().err.replace("ptx2sass ", "ptxas ")) == (theirs.returncode, theirs.stderr)
    names = {s.name for s in read_cubin((tmp_path / "out.cubin").read_bytes()).sections}
    assert not {n for n in names if n.startswith((".debug_line", ".nv_debug"))}


def test_kernel_without_prologue_still_opens_with_its_brace():
    """A kernel whose first instruction is not its prologue (ptxas's code for ZLUDA's
    multiple_return has none) still starts its PTX table with a row for its `{`."""
    path = next((p for p in ptx_files("zluda") if p.name == "multiple_return.ptx"), None)
    if path is None:
        pytest.skip("the ZLUDA corpus is not beside this clone")
    assert replay(path.read_text(encoding="latin-1"), "sm_89", path.name) == {}


# -g's effect on code and on the module records, against ptxas -g on the same PTX: a guarded
# exit (a branch to `ret`), two kernels, executable and relocatable.
G_KERNELS = HEADER + """.visible .entry k(.param .u64 p, .param .u32 n)
{
.reg .b64 %rd<4>; .reg .b32 %r<4>; .reg .pred %p<2>;
ld.param.u64 %rd1, [p];
ld.param.u32 %r1, [n];
cvta.to.global.u64 %rd2, %rd1;
mov.u32 %r2, %tid.x;
setp.ge.u32 %p1, %r2, %r1;
@%p1 bra $L1;
mul.wide.u32 %rd3, %r2, 4;
add.s64 %rd3, %rd2, %rd3;
st.global.u32 [%rd3], %r2;
$L1:
ret;
}
""" + KERNEL.replace("entry k(", "entry k2(")


def _elf_view(cubin: bytes) -> tuple[list, list, list]:
    """`cuobjdump -elf`'s attribute names of `.nv.info` (the module's records), the text
    sections in file order and the function symbols in symbol-table order."""
    import re
    text = oracle.cuobjdump_elf(cubin)
    module = text.split("\n.nv.info\n", 1)[1].split("\n\n", 1)[0]
    from elftools.elf.elffile import ELFFile
    elf = ELFFile(io.BytesIO(cubin))
    return (re.findall(r"Attribute:\s+(\S+)", module),
            [s.name for s in elf.iter_sections() if s.name.startswith(".text.")],
            [s.name for s in elf.get_section_by_name(".symtab").iter_symbols() if s.name in ("k", "k2")])


def _exits(cubin: bytes) -> dict[str, list[list[str]]]:
    """Per function, the three instructions ending at each EXIT (opcode with modifiers and
    guard), as nvdisasm lists them."""
    out: dict[str, list[list[str]]] = {}
    for name, instrs in listing(cubin, "-gp").items():
        ops = [i.opcode for i in instrs]
        out[name] = [ops[max(0, k - 2):k + 1] for k, op in enumerate(ops) if op == "EXIT"]
    return out


@pytest.mark.parametrize("relocatable", [False, True], ids=["executable", "relocatable"])
def test_g_module_records_and_function_order_as_ptxas(relocatable):
    """ptxas -g: EIATTR_GEN_ERRBAR_AT_EXIT after each function's records, and the functions
    in PTX order (without -g, reversed)."""
    flags = ("-g", "-c") if relocatable else ("-g",)
    theirs = oracle.ptxas(G_KERNELS, "sm_89", flags, name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(G_KERNELS, "sm_89", "k.ptx", debug=True, opt_level=0,
                               compile_only=relocatable)
    assert _elf_view(ours) == _elf_view(theirs.output)
    records, texts, symbols = _elf_view(ours)
    assert "EIATTR_GEN_ERRBAR_AT_EXIT" in records
    assert texts == [".text.k", ".text.k2"] and symbols == ["k", "k2"]


def test_g_exits_wait_for_memory_errors_as_ptxas():
    """ptxas -g puts `MEMBAR.SC.VC; ERRBAR` before every EXIT; so do we (a guarded EXIT
    gets a guarded pair), and not without -g."""
    theirs = oracle.ptxas(G_KERNELS, "sm_89", ("-g",), name="k.ptx")
    assert theirs.ok, theirs.stderr
    pair = ["MEMBAR.SC.VC", "ERRBAR", "EXIT"]
    assert all(seq == pair for seqs in _exits(theirs.output).values() for seq in seqs)
    ours = _exits(codegen.compile_ptx(G_KERNELS, "sm_89", "k.ptx", debug=True, opt_level=0))
    assert ours.keys() == {"k", "k2"}
    for seqs in ours.values():
        assert seqs and all([op.split(" ")[-1] for op in seq] == pair for seq in seqs)
    plain = _exits(codegen.compile_ptx(G_KERNELS, "sm_89", "k.ptx"))
    assert not any("ERRBAR" in op for seqs in plain.values() for seq in seqs for op in seq)


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
@pytest.mark.parametrize("flags", [("-g",), ("-g", "-c"), ()], ids=["g", "g_relocatable", "plain"])
def test_debug_frame_cie_as_ptxas(arch, flags):
    """The CIE (first entry of `.debug_frame`) byte for byte as ptxas's: with -g, every
    register but R1 and RZ undefined."""
    import struct
    ptx = G_KERNELS.replace("sm_89", arch)
    theirs = oracle.ptxas(ptx, arch, flags, name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(ptx, arch, "k.ptx", debug="-g" in flags, opt_level=0 if flags else 3,
                               compile_only="-c" in flags)

    def cie(cubin):
        data = read_cubin(cubin).section(".debug_frame").data
        return data[:12 + struct.unpack_from("<Q", data, 4)[0]]
    assert cie(ours) == cie(theirs.output)
    assert (len(cie(ours)) > 1000) == ("-g" in flags)


def test_g_cubin_runs_as_ptxas_g_cubin():
    """Our -g cubin and ptxas's run in the emulator to the values the PTX means
    (out[i] = i below n, untouched above), without hazards in ours."""
    from ptx2sass.emu.launch import Param, run_buffers
    from ptx2sass.emu.loader import load_program
    from tools.emu_testing import cubin_listing_decoder
    theirs = oracle.ptxas(G_KERNELS, "sm_89", ("-g",), name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(G_KERNELS, "sm_89", "k.ptx", debug=True, opt_level=0)
    n, want = 20, b"".join(i.to_bytes(4, "little") for i in range(20)) + bytes(4 * 12)
    for cubin in (theirs.output, ours):
        program = load_program(cubin, "k", cubin_listing_decoder(cubin))
        run = run_buffers(program, (1, 1, 1), (32, 1, 1), [Param(buffer="out"), Param(type="u32", value=n)],
                          {"out": (128, bytes(128))})
        assert run.buffers["out"] == want
    assert not run.hazards, [str(h) for h in run.hazards[:3]]


def test_g_crs_stack_size_record_where_ptxas_writes_it():
    """ptxas -g writes CRS_STACK_SIZE 0 for a kernel whose code branches conditionally (k),
    not for straight-line code (k2); so do we."""
    import re

    def with_record(cubin):
        text = oracle.cuobjdump_elf(cubin)
        return {m.group(1): "CRS_STACK_SIZE" in m.group(2)
                for m in re.finditer(r"\n\.nv\.info\.(\S+)\n(.*?)(?=\n\.|\Z)", text, re.S)}
    theirs = oracle.ptxas(G_KERNELS, "sm_89", ("-g",), name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(G_KERNELS, "sm_89", "k.ptx", debug=True, opt_level=0)
    assert with_record(ours) == with_record(theirs.output) == {"k": True, "k2": False}


LINK_TARGET = HEADER + """.visible .func (.param .b32 r) addone(.param .b32 a)
{
.reg .b32 %r<3>;
ld.param.b32 %r1, [a];
add.s32 %r2, %r1, 1;
st.param.b32 [r], %r2;
ret;
}
.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<3>; .reg .b32 %r<3>;
ld.param.u64 %rd1, [p];
cvta.to.global.u64 %rd2, %rd1;
mov.u32 %r1, %tid.x;
{
.param .b32 a0;
.param .b32 r0;
st.param.b32 [a0], %r1;
call.uni (r0), addone, (a0);
ld.param.b32 %r2, [r0];
}
st.global.u32 [%rd2], %r2;
ret;
}
"""


@pytest.mark.parametrize("flags", [("-g", "-c"), ("-c",)], ids=["g", "plain"])
def test_link_target_cie_and_order_as_ptxas(flags):
    """-g -c: a link target's CIE keeps the registers its callers keep across the call
    (same_value) and marks the rest undefined, byte for byte as ptxas's; the functions'
    text sections in ptxas's order."""
    import struct
    theirs = oracle.ptxas(LINK_TARGET, "sm_89", flags, name="k.ptx")
    assert theirs.ok, theirs.stderr
    ours = codegen.compile_ptx(LINK_TARGET, "sm_89", "k.ptx", debug="-g" in flags,
                               opt_level=0, compile_only=True)

    def cies(cubin):
        data, out, at = read_cubin(cubin).section(".debug_frame").data, [], 0
        while at < len(data):
            size = 12 + struct.unpack_from("<Q", data, at + 4)[0]
            if struct.unpack_from("<q", data, at + 12)[0] == -1:
                out.append(data[at:at + size])
            at += size
        return out

    def texts(cubin):
        import io
        from elftools.elf.elffile import ELFFile
        return [s.name for s in ELFFile(io.BytesIO(cubin)).iter_sections() if s.name.startswith(".text.")]
    assert texts(ours) == texts(theirs.output) == [".text.addone", ".text.k"]
    assert cies(ours) == cies(theirs.output)
