"""The command's inputs and output against the pinned ptxas: several input files in one run,
function linkage across declarations and files, odd input bytes, and the output file written
through its path (links, pipes, hard links, permissions).

Expectations are ptxas's own behaviour on the same files (cached oracle runs), never ours."""
from __future__ import annotations

import itertools
import os
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from ptx2sass import cli, oracle

HEADER = ".version 8.0\n.target sm_89\n.address_size 64\n"
PROTO = ".func (.param .u32 r) f(.param .u32 x)"
BODY = "{\n.reg .u32 %r<3>;\nld.param.u32 %r1, [x];\nadd.u32 %r2, %r1, 7;\nst.param.u32 [r], %r2;\nret;\n}"
CALLER = """.visible .entry k(.param .u64 p)
{
.reg .u64 %rd1;
.reg .u32 %r<3>;
ld.param.u64 %rd1, [p];
ld.global.u32 %r1, [%rd1];
{ .param .u32 a; .param .u32 r; st.param.u32 [a], %r1;
call (r), f, (a); ld.param.u32 %r2, [r]; }
st.global.u32 [%rd1], %r2;
ret;
}
"""
LINKAGES = {"extern": ".extern ", "visible": ".visible ", "plain": "", "weak": ".weak "}
ENTRY_ONLY = ".visible .entry k() { ret; }\n"


def _both(files: dict[str, str | bytes], argv: list[str], tmp_path: Path, capsys, monkeypatch,
          output: str = "out.o"):
    """(ptxas's run, our (rc, stderr with ptxas's name, output bytes or None))."""
    data = {name: text.encode("latin-1") if isinstance(text, str) else text
            for name, text in files.items()}
    theirs = oracle._run_cached("ptxas", argv + ["-o", output], data, output)
    for name, blob in data.items():
        (tmp_path / name).write_bytes(blob)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main(argv + ["-o", output])
    err = capsys.readouterr().err.replace("ptx2sass ", "ptxas ")
    out = tmp_path / output
    return theirs, (rc, err, out.read_bytes() if out.is_file() else None)


def _assert_same(theirs, ours):
    rc, err, output = ours
    assert (rc, err) == (theirs.returncode, theirs.stderr)
    assert (output is None) == (theirs.output is None)


# ---------------------------------------------------------------------------- linkage

def _linkage_texts():
    """One file declaring/defining `f` twice with every pair of linkages, and once alone."""
    texts = {}
    for (a, la), (b, lb) in itertools.product(LINKAGES.items(), repeat=2):
        for first, second in itertools.product(("decl", "def"), repeat=2):
            one = la + PROTO + (";" if first == "decl" else "\n" + BODY)
            two = lb + PROTO + (";" if second == "decl" else "\n" + BODY)
            texts[f"{a}_{first}-{b}_{second}"] = HEADER + one + "\n" + two + "\n" + ENTRY_ONLY
    for a, la in LINKAGES.items():
        for first in ("decl", "def"):
            one = la + PROTO + (";" if first == "decl" else "\n" + BODY)
            texts[f"{a}_{first}"] = HEADER + one + "\n" + ENTRY_ONLY
    return texts


LINKAGE_TEXTS = _linkage_texts()


@pytest.mark.parametrize("compile_only", [False, True], ids=["whole", "c"])
@pytest.mark.parametrize("name", sorted(LINKAGE_TEXTS))
def test_function_linkage_rules_match_ptxas(name, compile_only, tmp_path, capsys, monkeypatch):
    argv = ["-arch=sm_89", "x.ptx"] + (["-c"] if compile_only else [])
    theirs, ours = _both({"x.ptx": LINKAGE_TEXTS[name]}, argv, tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)


LINKAGE_PAIRS = [f"{a} {b}" for a, b in itertools.product(
    (".visible", ".extern", ".weak", ".common"), repeat=2)]


@pytest.mark.parametrize("what", ["entry", "func", "global"])
@pytest.mark.parametrize("pair", LINKAGE_PAIRS)
def test_two_linkage_directives_are_a_syntax_error_as_in_ptxas(pair, what, tmp_path, capsys,
                                                                monkeypatch):
    """ptxas takes one linkage directive per symbol ("Parsing error near '.visible'"); we
    took any run of them (the simd_video.cu harvest, 2026-11-29)."""
    item = {"entry": f"{pair} .entry e() {{ ret; }}\n",
            "func": f"{pair} .func f() {{ ret; }}\n",
            "global": f"{pair} .global .u32 g;\n"}[what]
    text = HEADER + item + ENTRY_ONLY
    theirs, ours = _both({"x.ptx": text}, ["-arch=sm_89", "x.ptx"], tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)


@pytest.mark.parametrize("directives", [".maxntid 64 .minnctapersm 2", ".maxnreg 32 .maxntid 32, 2",
                                        ".reqntid 32 .maxnreg 40 .minnctapersm 1"])
def test_several_performance_directives_compile_as_in_ptxas(directives, tmp_path, capsys, monkeypatch):
    """Beside the one-linkage rule: a run of performance directives stays legal (the first
    version of that rule refused every second directive too)."""
    text = HEADER + f".visible .entry e() {directives}\n{{ ret; }}\n"
    theirs, ours = _both({"x.ptx": text}, ["-arch=sm_89", "x.ptx"], tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)


# ---------------------------------------------------------------------------- several inputs

def _caller(linkage: str) -> str:
    return HEADER + linkage + PROTO + ";\n" + CALLER


def _callee(linkage: str) -> str:
    return HEADER + linkage + PROTO + "\n" + BODY + "\n"


@pytest.mark.parametrize("compile_only", [False, True], ids=["whole", "c"])
@pytest.mark.parametrize("order", ["caller-first", "callee-first"])
@pytest.mark.parametrize("decl,defn", [(a, b) for a in LINKAGES for b in LINKAGES if b != "extern"])
def test_calls_across_input_files_match_ptxas(decl, defn, order, compile_only, tmp_path, capsys,
                                              monkeypatch):
    """A file may call what another file of the same run defines; what is visible from one
    file to the next follows ptxas (a function without linkage belongs to its file)."""
    files = {"caller.ptx": _caller(LINKAGES[decl]), "callee.ptx": _callee(LINKAGES[defn])}
    names = list(files) if order == "caller-first" else list(reversed(files))
    argv = ["-arch=sm_89", *names] + (["-c"] if compile_only else [])
    theirs, ours = _both(files, argv, tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)


VECADD = (Path(__file__).resolve().parent.parent / "examples" / "vecadd.ptx").read_text()
VECADD2 = VECADD.replace("vecadd", "vecadd2")


def _kernel_names(cubin: bytes) -> list[str]:
    from ptx2sass.encoder.cubin import read_cubin
    return [k.name for k in read_cubin(cubin).kernels]


@pytest.mark.parametrize("names", [["a.ptx", "b.ptx"], ["b.ptx", "a.ptx"], ["a.ptx", "a.ptx"],
                                   ["a.ptx", "b.ptx", "v7.ptx"]])
def test_several_inputs_compile_as_one_program(names, tmp_path, capsys, monkeypatch):
    """ptxas compiles several files into one cubin, as if they were one file; a second
    definition is an error in the file that repeats it."""
    files = {"a.ptx": VECADD, "b.ptx": VECADD2,
             "v7.ptx": VECADD.replace(".version 8.0", ".version 7.0").replace("vecadd", "v7")}
    theirs, ours = _both(files, ["-arch=sm_89", *names], tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)
    if theirs.output is not None:
        assert _kernel_names(ours[2]) == _kernel_names(theirs.output)


def test_several_inputs_give_the_cubin_of_their_concatenation(tmp_path, capsys, monkeypatch):
    joined = VECADD + "\n".join(line for line in VECADD2.splitlines()
                                if not line.startswith((".version", ".target", ".address_size")))
    _, (rc1, _, separate) = _both({"a.ptx": VECADD, "b.ptx": VECADD2},
                                  ["-arch=sm_89", "a.ptx", "b.ptx"], tmp_path, capsys, monkeypatch)
    _, (rc2, _, together) = _both({"ab.ptx": joined}, ["-arch=sm_89", "ab.ptx"], tmp_path, capsys,
                                  monkeypatch, output="ab.o")
    assert rc1 == rc2 == 0 and separate == together


# Several inputs with errors: ptxas checks the files in turn and reports each one's
# diagnostics in its place (a parse error or a bad header ends that file only); a
# function's unknown symbols come after its other errors; `.target debug` without DWARF is
# told at the end of that file and of every later one; a `.version` too old for its
# `.target` once, last, worded from the last file's header.
_KERNEL_WITH_ERRORS = (".visible .entry {name}()\n{{\n.reg .u32 %r<3>;\nadd.u32 %r1, %{bad}, 1;\n"
                       "add.u64 %r1, %r2, 1;\nret;\n}}\n")
ERROR_FILES = {
    "syntax.ptx": HEADER + "bad;\n",
    "errors.ptx": HEADER + _KERNEL_WITH_ERRORS.format(name="e1", bad="q1"),
    "two.ptx": HEADER + _KERNEL_WITH_ERRORS.format(name="e2", bad="q2")
    + _KERNEL_WITH_ERRORS.format(name="e3", bad="q3"),
    "old.ptx": HEADER.replace("8.0", "7.0") + _KERNEL_WITH_ERRORS.format(name="e4", bad="q4"),
    "old2.ptx": HEADER.replace("8.0", "7.1") + _KERNEL_WITH_ERRORS.format(name="e5", bad="q5"),
    "debug.ptx": HEADER.replace("sm_89", "sm_89, debug") + _KERNEL_WITH_ERRORS.format(name="e6", bad="q6"),
    "nofunction.ptx": HEADER,
    "empty.ptx": "",
    "good.ptx": HEADER + ENTRY_ONLY,
}


@pytest.mark.parametrize("names", [["two.ptx"], ["old.ptx"], ["syntax.ptx", "errors.ptx"],
                                   ["errors.ptx", "syntax.ptx"], ["errors.ptx", "errors.ptx"],
                                   ["old.ptx", "errors.ptx"], ["old.ptx", "old2.ptx"],
                                   ["old.ptx", "nofunction.ptx"], ["empty.ptx", "old.ptx"],
                                   ["syntax.ptx", "empty.ptx"], ["debug.ptx", "old2.ptx"],
                                   ["errors.ptx", "empty.ptx", "good.ptx"],
                                   ["errors.ptx", "missing.ptx"], ["missing.ptx", "errors.ptx"],
                                   ["good.ptx", "missing.ptx", "missing2.ptx"]],
                         ids="+".join)
def test_several_inputs_with_errors_report_as_ptxas(names, tmp_path, capsys, monkeypatch):
    theirs, ours = _both(ERROR_FILES, ["-arch=sm_89", *names], tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)


_DOUBLES = (".visible .entry {name}()\n{{\n.reg .f64 %fd<3>;\n.reg .f32 %f<3>;\n.reg .u32 %r<3>;\n"
            "add.u32 %r1, %x2, 1;\nadd.f64 %fd1, %fd2, %fd2;\nadd.u64 %r1, %r2, 1;\n"
            "cvt.rn.f32.f64 %f1, %fd1;\nret;\n}}\n")
_CVT_FIRST = (".visible .entry {name}()\n{{\n.reg .f64 %fd<3>;\n.reg .f32 %f<3>;\n.reg .u32 %r<3>;\n"
              "cvt.rn.f32.f64 %f1, %fd1;\nadd.u64 %r1, %r2, 1;\ncvt.rn.f32.f64 %f1, %fd1;\n"
              "ret;\n}}\n")
DOUBLE_FILES = {"doubles.ptx": HEADER + _DOUBLES.format(name="d1") + _DOUBLES.format(name="d2"),
                "old.ptx": ERROR_FILES["old.ptx"],
                "cvt.ptx": HEADER + _CVT_FIRST.format(name="c1") + _CVT_FIRST.format(name="c2")}


@pytest.mark.parametrize("options", [[], ["-Werror"], ["-w"]], ids=" ".join)
@pytest.mark.parametrize("names", [["doubles.ptx"], ["doubles.ptx", "old.ptx"], ["cvt.ptx"],
                                   ["old.ptx", "cvt.ptx"], ["doubles.ptx", "cvt.ptx"]],
                         ids="+".join)
def test_double_precision_warnings_among_errors_as_ptxas(names, options, tmp_path, capsys,
                                                         monkeypatch):
    """--warn-on-double-precision-use where the checks fail: ptxas still warns, in
    instruction order among a function's errors (we said nothing)."""
    theirs, ours = _both(DOUBLE_FILES, ["-arch=sm_89", "--warn-on-double-precision-use",
                                        *options, *names], tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)


def _pid_free(text: str, pid: int) -> str:
    """stderr with the process id in the temporary file's name replaced (checked first)."""
    import re
    named = re.findall(r"tmpxft_([0-9a-f]{8})_", text)
    assert named and all(int(p, 16) == pid for p in named), text
    return re.sub(r"tmpxft_[0-9a-f]{8}_", "tmpxft_PID_", text)


def _run_with_stdin(argv: list[str], data: bytes, env: dict, cwd: Path):
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=cwd, env=env)
    out, err = proc.communicate(data, timeout=120)
    return proc.returncode, _pid_free(err.decode(), proc.pid)


@pytest.mark.parametrize("tmpdir", ["unset", "given", "trailing_slash", "empty", "missing"])
@pytest.mark.parametrize("inputs", [["-"], ["-", "-"]], ids=" ".join)
def test_stdin_input_named_as_ptxas_names_it(tmpdir, inputs, tmp_path):
    """ptxas copies a `-` input to `$TMPDIR/tmpxft_<pid>_00000000-<n>_stdin` and names that
    file in its messages (and stops, naming the file it tried, where it cannot create it)."""
    env = dict(os.environ)
    env.pop("TMPDIR", None)
    if tmpdir != "unset":
        env["TMPDIR"] = {"given": str(tmp_path), "trailing_slash": f"{tmp_path}/", "empty": "",
                         "missing": str(tmp_path / "missing")}[tmpdir]
    data = (ERROR_FILES["syntax.ptx"]).encode()
    tail = ["-arch=sm_89", *inputs, "-o", str(tmp_path / "out.o")]
    theirs = _run_with_stdin([str(oracle.tool_path("ptxas")), *tail], data, env, tmp_path)
    ours = _run_with_stdin([sys.executable, "-m", "ptx2sass", *tail], data, env, tmp_path)
    assert ours[0] == theirs[0] == 255
    assert ours[1].replace("ptx2sass ", "ptxas ") == theirs[1]


# ---------------------------------------------------------------------------- input bytes

BYTES_CASES = {
    "nul_in_comment": HEADER + "// before \0 after\n" + ENTRY_ONLY,
    "nul_at_end": HEADER + ENTRY_ONLY + "\0",
    "nul_in_statement": HEADER + ".visible .entry k() { ret\0; }\n",
    "nul_after_non_ascii": HEADER + "\xc3\xa9\n" + ENTRY_ONLY + "\0",
    "non_ascii_after_nul": HEADER + ENTRY_ONLY + "\0\xc3\xa9\n",
    "non_ascii_in_comment": HEADER + "// caf\xc3\xa9\n" + ENTRY_ONLY,
    "non_ascii_in_code": HEADER + ENTRY_ONLY.rstrip("\n") + " \xc3\xa9\n",
    "empty": "",
}


@pytest.mark.parametrize("name", sorted(BYTES_CASES))
def test_odd_input_bytes_as_ptxas(name, tmp_path, capsys, monkeypatch):
    theirs, ours = _both({"x.ptx": BYTES_CASES[name]}, ["-arch=sm_89", "x.ptx"], tmp_path,
                         capsys, monkeypatch)
    _assert_same(theirs, ours)


def test_missing_header_names_the_path_as_given(tmp_path, capsys, monkeypatch):
    """'Missing .version directive at start of file' names the input as the command line
    gave it, folders included (it named the file's base name)."""
    theirs, ours = _both({"empty.ptx": ""}, ["-arch=sm_89", "./empty.ptx"], tmp_path, capsys,
                         monkeypatch)
    assert "'./empty.ptx'" in theirs.stderr
    _assert_same(theirs, ours)


def test_directory_as_input_reads_as_empty_file(tmp_path, capsys, monkeypatch):
    theirs = oracle._run_cached("ptxas", ["-arch=sm_89", "x.ptx"], {"x.ptx": b""}, "elf.o")
    (tmp_path / "d").mkdir()
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main(["-arch=sm_89", "d"])
    err = capsys.readouterr().err.replace("ptx2sass ", "ptxas ")
    assert rc == theirs.returncode == 255
    assert err == theirs.stderr.replace("'x.ptx'", "'d'").replace("x.ptx,", "d,")


# ---------------------------------------------------------------------------- output file

def _compile_to(target: str, tmp_path: Path, capsys, monkeypatch) -> tuple[int, str]:
    (tmp_path / "k.ptx").write_text(VECADD)
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    rc = cli.main(["-arch=sm_89", "k.ptx", "-o", target])
    return rc, capsys.readouterr().err


def _reference_cubin(tmp_path, capsys, monkeypatch) -> bytes:
    rc, _ = _compile_to("plain.o", tmp_path, capsys, monkeypatch)
    assert rc == 0
    return (tmp_path / "plain.o").read_bytes()


def test_symbolic_link_is_written_through(tmp_path, capsys, monkeypatch):
    expected = _reference_cubin(tmp_path, capsys, monkeypatch)
    (tmp_path / "link.o").symlink_to("target.o")
    rc, err = _compile_to("link.o", tmp_path, capsys, monkeypatch)
    assert (rc, err) == (0, "")
    assert (tmp_path / "link.o").is_symlink()
    assert (tmp_path / "target.o").read_bytes() == expected


def test_pipe_is_written_through(tmp_path, capsys, monkeypatch):
    """A FIFO (like a device node or `/proc/self/fd/1`) is opened and written, never replaced."""
    expected = _reference_cubin(tmp_path, capsys, monkeypatch)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    received = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_bytes()))
    reader.start()
    rc, err = _compile_to("fifo", tmp_path, capsys, monkeypatch)
    reader.join(timeout=60)
    assert (rc, err) == (0, "")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert received == [expected]


def test_stdout_through_proc_link(tmp_path):
    """`-o /proc/self/fd/1` sends the cubin to standard output, as ptxas does."""
    (tmp_path / "k.ptx").write_text(VECADD)
    theirs = subprocess.run([str(oracle.tool_path("ptxas")), "-arch=sm_89", "k.ptx", "-o",
                             "/proc/self/fd/1"], cwd=tmp_path, capture_output=True)
    ours = subprocess.run([sys.executable, "-m", "ptx2sass", "-arch=sm_89", "k.ptx", "-o",
                           "/proc/self/fd/1"], cwd=tmp_path, capture_output=True)
    assert theirs.returncode == ours.returncode == 0
    assert len(theirs.stdout) > 0 and _kernel_names(ours.stdout) == _kernel_names(theirs.stdout)


def test_hard_linked_file_is_written_in_place(tmp_path, capsys, monkeypatch):
    expected = _reference_cubin(tmp_path, capsys, monkeypatch)
    (tmp_path / "out.o").write_bytes(b"previous")
    os.link(tmp_path / "out.o", tmp_path / "other.o")
    rc, _ = _compile_to("out.o", tmp_path, capsys, monkeypatch)
    assert rc == 0
    assert (tmp_path / "other.o").read_bytes() == expected
    assert os.stat(tmp_path / "out.o").st_ino == os.stat(tmp_path / "other.o").st_ino


def test_replaced_file_keeps_its_permissions(tmp_path, capsys, monkeypatch):
    expected = _reference_cubin(tmp_path, capsys, monkeypatch)
    (tmp_path / "out.o").write_bytes(b"previous")
    os.chmod(tmp_path / "out.o", 0o640)
    rc, _ = _compile_to("out.o", tmp_path, capsys, monkeypatch)
    assert rc == 0 and (tmp_path / "out.o").read_bytes() == expected
    assert stat.S_IMODE(os.stat(tmp_path / "out.o").st_mode) == 0o640


def test_file_we_may_not_write_is_refused(tmp_path, capsys, monkeypatch):
    """ptxas cannot open a file its user may not write, and says so; the file stays.
    (Run as root, every file is writable: the check is `os.access`, stubbed there.)"""
    (tmp_path / "out.o").write_bytes(b"previous")
    os.chmod(tmp_path / "out.o", 0o444)
    if os.geteuid() == 0:
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p).endswith("out.o")
                            and mode & os.W_OK else real(p, mode, **kw))
    rc, err = _compile_to("out.o", tmp_path, capsys, monkeypatch)
    assert rc == 255
    assert err == "ptx2sass fatal   : Output file 'out.o' could not be opened\n"
    assert (tmp_path / "out.o").read_bytes() == b"previous"


# ---------------------------------------------------------------------------- -v details

DIRECTIVES = HEADER + "".join(
    f".visible .entry {name}() {directive} {{ ret; }}\n"
    for name, directive in (("k1", ".maxntid 256"), ("k2", ".maxnreg 32"),
                            ("k3", ".reqntid 64"), ("k4", "")))


@pytest.mark.parametrize("limit", ["40", "16", "archmin", "archmax", "300"])
def test_maxrregcount_notes_in_verbose_output(limit, tmp_path, capsys, monkeypatch):
    """`-v -maxrregcount N`: ptxas's note per entry (or none, or the .maxnreg one), the
    value it names for archmin/archmax/too big/too small, and one compile time per kernel."""
    argv = ["-arch=sm_89", "-v", "-maxrregcount", limit, "x.ptx"]
    theirs, ours = _both({"x.ptx": DIRECTIVES}, argv, tmp_path, capsys, monkeypatch)

    def notes(err: str) -> list[str]:
        return [ln for ln in err.splitlines() if "Overriding" in ln or "warning" in ln]
    assert ours[0] == theirs.returncode == 0
    assert notes(ours[1]) == notes(theirs.stderr) and notes(theirs.stderr)
    assert ours[1].count("Compile time") == theirs.stderr.count("Compile time") == 4


def test_lines_name_ptxas_when_invoked_as_ptxas(tmp_path, capsys, monkeypatch):
    """One rule for every line: the name the command was invoked under."""
    (tmp_path / "k.ptx").write_text(VECADD)
    monkeypatch.chdir(tmp_path)
    for invoked, name in (("/usr/local/bin/ptxas", "ptxas"), ("/x/ptx2sass", "ptx2sass"),
                          ("/x/__main__.py", "ptx2sass")):
        monkeypatch.setattr(sys, "argv", [invoked])
        capsys.readouterr()
        assert cli.main(["-arch=sm_89", "-v", "k.ptx", "-maxrregcount", "999"]) == 0
        err = capsys.readouterr().err.splitlines()
        assert err and all(ln.startswith(name + " ") or ln.startswith("    ") for ln in err)


@pytest.mark.parametrize("options", [["-maxntid", "512"], ["-maxntid", "256,2"],
                                     ["-maxntid", "1024", "-maxrregcount", "100"],
                                     ["-maxntid", "128", "-override-directive-values"],
                                     ["-minnctapersm", "2"]])
def test_launch_bound_options_reach_the_cubin(options, tmp_path, capsys, monkeypatch):
    """-maxntid stands in for a missing `.maxntid` (recorded in the cubin as ptxas records
    it), unless -maxrregcount is given; with --override-directive-values it replaces one."""
    text = VECADD.replace(".entry vecadd(", ".entry vecadd(").replace(
        "\n{", "\n.maxntid 64, 1, 1\n{", 1) if "-override-directive-values" in options else VECADD
    theirs, ours = _both({"x.ptx": text}, ["-arch=sm_89", "x.ptx", *options], tmp_path, capsys,
                         monkeypatch)
    _assert_same(theirs, ours)
    from ptx2sass.encoder.cubin import read_cubin
    assert [k.max_threads for k in read_cubin(ours[2]).kernels] == \
        [k.max_threads for k in read_cubin(theirs.output).kernels]


CALL_TREE = HEADER + """.func fa(.reg .u32 a) { ret; }
.func fb(.reg .u32 a) { ret; }
.func fc(.reg .u32 a) { call fa, (a); call fb, (a); ret; }
.visible .entry e1() { call fc, (1); ret; }
.func fd(.reg .u32 a) { ret; }
.visible .entry e2() { call fb, (2); ret; }
.func fe(.reg .u32 a) { ret; }
.func zz(.reg .u32 a) { ret; }
.func yy(.reg .u32 a) { ret; }
.func aa(.reg .u32 a) { call yy, (a); call zz, (a); ret; }
.func mm(.reg .u32 a) { ret; }
.visible .entry e3() { call mm, (1); call aa, (1); ret; }
"""


@pytest.mark.parametrize("mode", [[], ["-c"]])
def test_verbose_reports_every_function_where_ptxas_does(mode, tmp_path, capsys, monkeypatch):
    """`-v` names each `.func` as ptxas does: after each entry the functions it reaches (by
    name) in whole-program mode; under -c every function first, in ptxas's compile order."""
    argv = ["-arch=sm_89", "-v", *mode, "x.ptx"]
    theirs, ours = _both({"x.ptx": CALL_TREE}, argv, tmp_path, capsys, monkeypatch)

    def names(err: str) -> list[str]:
        # under -c ptxas compiles each function apart (fc saves a register across its
        # calls: 8 bytes of frame); ours are inlined and have none, so only names compare
        return [ln for ln in err.splitlines() if "Function properties" in ln or "Compiling" in ln
                or ("stack frame" in ln and not mode)]
    assert ours[0] == theirs.returncode == 0
    assert names(ours[1]) == names(theirs.stderr)
    assert ours[1].count("Compile time") == theirs.stderr.count("Compile time")


def test_separate_compilation_keeps_every_visible_function(tmp_path, capsys, monkeypatch):
    """Under -c a `.visible .func` is a link target for other units: the cubin defines it
    as a global function, as ptxas's does, whether or not this unit calls it (the command
    used to inline it away and leave nothing to link against)."""
    from ptx2sass.encoder.cubin import read_cubin
    text = HEADER + """.visible .func (.reg .u32 r) h2(.reg .u32 a);
.visible .func (.reg .u32 r) h1(.reg .u32 a) { add.u32 r, a, 1; ret; }
.visible .func lone(.reg .u32 a) { ret; }
.visible .entry k(.param .u64 p)
{
.reg .u32 %r<3>; .reg .u64 %rd<2>;
ld.param.u64 %rd1, [p];
ld.global.u32 %r1, [%rd1];
call (%r2), h2, (%r1);
st.global.u32 [%rd1], %r2;
ret;
}
.visible .func (.reg .u32 r) h2(.reg .u32 a) { .reg .u32 t; call (t), h1, (a); mul.lo.u32 r, t, 3; ret; }
"""
    theirs, ours = _both({"x.ptx": text}, ["-arch=sm_89", "-c", "x.ptx"], tmp_path, capsys,
                         monkeypatch)
    assert ours[0] == theirs.returncode == 0

    def functions(cubin: bytes) -> set[str]:
        return {k.name for k in read_cubin(cubin).kernels if not k.is_entry}
    assert functions(ours[2]) == functions(theirs.output) == {"h1", "h2", "lone"}


# ---------------------------------------------------------------------------- ABI types

def _narrow_case(ty: str, space: str, role: str) -> str:
    if role == "param":
        if space == "reg":
            return (f".func f(.reg .{ty} a)\n{{\nret;\n}}\n"
                    f".visible .entry k() {{ .reg .{ty} %h; call f, (%h); ret; }}\n")
        return (f".func f(.param .{ty} a)\n{{\nret;\n}}\n"
                f".visible .entry k() {{ {{ .param .{ty} x; call f, (x); }} ret; }}\n")
    if space == "reg":
        return (f".func (.reg .{ty} r) f()\n{{\nret;\n}}\n"
                f".visible .entry k() {{ .reg .{ty} %h; call (%h), f, (); ret; }}\n")
    return (f".func (.param .{ty} r) f()\n{{\nret;\n}}\n"
            f".visible .entry k() {{ {{ .param .{ty} x; call (x), f, (); }} ret; }}\n")


NARROW_CASES = {f"{ty}-{space}-{role}": _narrow_case(ty, space, role)
                for ty in ("pred", "u8", "s8", "b8", "u16", "s16", "b16", "f16")
                for space in ("reg", "param") for role in ("param", "result")
                if not (ty == "pred" and space == "param")}
NARROW_CASES.update({
    "u16-uncalled": ".func f(.reg .u16 a)\n{\nret;\n}\n.visible .entry k() { ret; }\n",
    "u16-from-uncalled": (".func f(.reg .u16 a)\n{\nret;\n}\n.func g()\n{\n.reg .u16 %h;\n"
                          "call f, (%h);\nret;\n}\n.visible .entry k() { ret; }\n"),
    "u16-from-called": (".func f(.reg .u16 a)\n{\nret;\n}\n.func g()\n{\n.reg .u16 %h;\n"
                        "call f, (%h);\nret;\n}\n.visible .entry k() { call g, (); ret; }\n"),
    "v4-u16": ".func f(.reg .v4.u16 a)\n{\nret;\n}\n"
              ".visible .entry k() { .reg .v4.u16 %h; call f, (%h); ret; }\n",
    "both": ".func (.reg .u16 r) f(.reg .u16 a)\n{\nret;\n}\n"
            ".visible .entry k() { .reg .u16 %h; call (%h), f, (%h); ret; }\n",
    "multiple-returns": (".func (.reg .u32 a, .reg .u32 b) m()\n{\nret;\n}\n"
                         ".func (.reg .u32 a, .reg .u32 b) n()\n{\nret;\n}\n"
                         ".func f(.reg .u16 a)\n{\nret;\n}\n"
                         ".visible .entry k() { .reg .u16 %h; call f, (%h); ret; }\n"),
    "multiple-returns-declared": (".func (.reg .u32 a, .reg .u32 b) m();\n"
                                  ".visible .entry k() { ret; }\n"),
    "multiple-returns-with-errors": (".func (.reg .u32 a, .reg .u32 b) m()\n{\nret;\n}\n"
                                     ".visible .entry k() { .reg .u32 %r; add.u64 %r, %r, 1; ret; }\n"),
})


@pytest.mark.parametrize("options", [[], ["-c"], ["-g"], ["-Werror"]], ids=" ".join)
@pytest.mark.parametrize("name", sorted(NARROW_CASES))
def test_narrow_abi_types_refused_as_ptxas(name, options, tmp_path, capsys, monkeypatch):
    """ptxas refuses a predicate or 8/16-bit integer (`.b8`/`.b16`/`.f16` and vectors pass)
    as a parameter or result of a function it compiles (reached from an entry; with -c also
    the `.visible` ones; with -g every one), in its own words, unless a function returning
    several values turned its ABI off (one warning naming the first); we compiled them."""
    theirs, ours = _both({"x.ptx": HEADER + NARROW_CASES[name]}, ["-arch=sm_89", *options, "x.ptx"],
                         tmp_path, capsys, monkeypatch)
    _assert_same(theirs, ours)


def test_small_out_of_line_function_saves_nothing_as_ptxas(tmp_path, capsys, monkeypatch):
    """-g keeps `f` out of line under the link-time convention; with registers to spare
    that need no saving (R0, R3..R15, R20, R21 below R32) ptxas's frame is its 48-byte
    array alone. Ours took R2 (callee-saved) first and saved it: 56 bytes."""
    text = (Path(__file__).resolve().parent / "data" / "g_callee_frame.ptx").read_text()
    theirs, (rc, err, _) = _both({"f.ptx": text}, ["-arch=sm_89", "-g", "-v", "f.ptx"], tmp_path,
                                 capsys, monkeypatch)
    assert rc == theirs.returncode == 0

    def frame_of_f(lines: str) -> str:
        rows = lines.splitlines()
        at = next(i for i, r in enumerate(rows) if r.endswith("Function properties for f"))
        return rows[at + 1]
    assert frame_of_f(theirs.stdout + theirs.stderr).startswith("    48 bytes stack frame")
    assert frame_of_f(capsys.readouterr().out + err) == frame_of_f(theirs.stdout + theirs.stderr)
