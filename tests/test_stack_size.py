"""A kernel's stack size where it calls out-of-line functions (ptxas 13.5.37's rule, read off
its cubins and messages): only recursion (a chain of calls that comes back to a function on
it) or a growing stack (alloca) makes the stack unknowable, with the MIN_STACK_SIZE and
CRS_STACK_SIZE records 0xffffffff and the warning "Stack size for entry function ... cannot
be statically determined". Calls through a pointer to functions that do not recurse have a
known stack: MIN_STACK_SIZE and the kernel's FRAME_SIZE record are its own frame plus the
deepest chain of callee frames, CRS_STACK_SIZE 0, no warning; `-v` still reports the
kernel's own frame. (We used to call every kernel with an out-of-line callee unknowable.)"""
import re
from pathlib import Path

import pytest

from ptx2sass import cli, codegen, oracle
from ptx2sass.encoder.cubin import read_cubin

HERE = Path(__file__).parent
CALLS = (HERE / "corpus" / "cuda" / "calls.ptx").read_text()
FRAMES = (HERE / "data" / "indirect_frames.ptx").read_text()     # k: 48-byte frame; f1 64, f2 128
UNKNOWN = 0xFFFFFFFF


def _records(cubin: bytes) -> tuple[dict[str, tuple], list[int]]:
    """function -> (FRAME_SIZE, MIN_STACK_SIZE), and the CRS_STACK_SIZE values, as
    cuobjdump reads them."""
    listing = oracle.cuobjdump_elf(cubin)
    found: dict[str, dict] = {}
    crs = re.findall(r"EIATTR_CRS_STACK_SIZE\s+Format:\s+\S+\s+Value:\s+(0x[0-9a-f]+)", listing)
    for attr, name, value in re.findall(
            r"EIATTR_(FRAME_SIZE|MIN_STACK_SIZE)\s+Format:\s+\S+\s+Value:\s+function: ([^(\s]+)\(0x[0-9a-f]+\)"
            r"\s+(?:frame size|min stack size): (0x[0-9a-f]+)", listing):
        found.setdefault(name, {})[attr] = int(value, 16)
    return {n: (v.get("FRAME_SIZE"), v.get("MIN_STACK_SIZE")) for n, v in found.items()}, [int(c, 16) for c in crs]


def _ours_and_ptxas(ptx: str, tmp_path, capsys, extra=()):
    (tmp_path / "k.ptx").write_text(ptx)
    capsys.readouterr()
    rc = cli.main(["-arch=sm_89", *extra, str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")])
    err = capsys.readouterr().err
    theirs = oracle.ptxas(ptx, "sm_89", tuple(extra), name="k.ptx")
    return rc, err, (tmp_path / "k.cubin").read_bytes(), theirs


def _messages(text: str) -> list[str]:
    """The lines that are not timings or register/cmem counts (instruction choices)."""
    text = re.sub(r"(?m)^ptx2sass ", "ptxas ", text).replace(str(Path.cwd()), "")
    return [re.sub(r"\S*k\.ptx", "k.ptx", line) for line in text.splitlines()
            if "Compile time" not in line and "Used " not in line]


@pytest.mark.parametrize("extra", [(), ("-O0",)], ids=["O3", "O0"])
def test_warnings_as_ptxas_on_the_calls_corpus(extra, tmp_path, capsys):
    """calls.ptx: a recursive kernel (warned about) and one calling through a pointer (not)."""
    rc, err, cubin, theirs = _ours_and_ptxas(CALLS, tmp_path, capsys, extra)
    assert (rc, _messages(err)) == (theirs.returncode, _messages(theirs.stderr))
    ours, _ = _records(cubin)
    want, _ = _records(theirs.output)
    for name in ("_Z13call_indirectPKjPKiS2_Pi", "_Z14call_recursivePKiPKjS2_Pj"):
        assert ours[name][1] == want[name][1]          # 0 (every callee's frame is 0) / unknown


def test_frames_below_a_kernel_count_in_its_stack(tmp_path, capsys):
    rc, err, cubin, theirs = _ours_and_ptxas(FRAMES, tmp_path, capsys, ("-v",))
    assert rc == theirs.returncode == 0
    assert "statically determined" not in err and "statically determined" not in theirs.stderr
    # ptxas's records: own frame 48 + its deepest callee frame (f2: 128)
    want, want_crs = _records(theirs.output)
    assert want["k"] == (48 + 128, 48 + 128) and want_crs == [0]
    # ours: the same rule on our frames (f2's holds 16 bytes of saved registers more)
    ours, crs = _records(cubin)
    deepest = max(ours["$k$f1"][0], ours["$k$f2"][0])
    assert ours["k"] == (48 + deepest, 48 + deepest) and crs == [0]
    # -v: the kernel's own frame, as ptxas's line
    line = "    48 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads"
    assert line in theirs.stderr.splitlines() and line in err.splitlines()


def test_recursion_stays_unknowable():
    from tests.test_codegen_calls import FIB
    cubin = codegen.compile_ptx(FIB)
    (k,) = [k for k in read_cubin(cubin).kernels if k.is_entry]
    theirs = [k for k in read_cubin(oracle.ptxas(FIB, "sm_89").output).kernels if k.is_entry][0]
    assert k.min_stack_size == theirs.min_stack_size == UNKNOWN


def _named(text: str, pattern: str) -> list[str]:
    return re.findall(pattern, text)


def test_functions_reached_through_pointers_reported_as_ptxas(tmp_path, capsys):
    """`-v` follows a kernel with the functions a call through a pointer may reach (every
    address-taken one), and `--warn-on-local-memory-usage` names each function with a
    frame, those inside the kernel's text too; the frame sizes are our code's."""
    rc, err, _, theirs = _ours_and_ptxas(FRAMES, tmp_path, capsys, ("-v",))
    properties = r"(?m)info    : Function properties for (\S+)$"
    assert _named(err, properties) == _named(theirs.stderr, properties) == ["k", "f1", "f2"]
    rc, err, _, theirs = _ours_and_ptxas(FRAMES, tmp_path, capsys, ("--warn-on-local-memory-usage",))
    used = r"Local memory used for function '(\w+)'"
    assert _named(err, used) == _named(theirs.stderr, used) == ["k", "f1", "f2"]
    rc, err, _, theirs = _ours_and_ptxas(CALLS, tmp_path, capsys, ("-v",))
    after_indirect = r"(?s)entry function '_Z13call_indirectPKjPKiS2_Pi'.*?(?=Compiling|$)"
    assert _named(re.search(after_indirect, err).group(), properties) == \
        _named(re.search(after_indirect, theirs.stderr).group(), properties)


def test_calls_after_an_unguarded_trap_do_not_recurse(tmp_path, capsys):
    """llvm's switch_op_debug: `.noreturn` panic helpers call `gpu_$_fail`, whose `trap` is
    followed by a call back into a helper. ptxas drops what follows an unguarded `trap` (no
    recursion, no warning, known stack); we warned and kept the call."""
    ptx = (HERE / "corpus" / "llvm" / "switch_op_debug.ptx").read_text()
    rc, err, cubin, theirs = _ours_and_ptxas(ptx, tmp_path, capsys)
    assert rc == theirs.returncode == 0
    assert "statically determined" not in theirs.stderr and "statically determined" not in err
    ours, crs = _records(cubin)
    want, want_crs = _records(theirs.output)
    assert ours["switch_op"][1] != UNKNOWN and want["switch_op"][1] != UNKNOWN
    assert crs == want_crs


TRAP_THEN_STORE = """.version 8.5
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 n)
{
    .reg .pred %p<2>;
    .reg .b32 %r<3>;
    .reg .b64 %d<2>;
    ld.param.u64 %d0, [out];
    ld.param.u32 %r0, [n];
    setp.gt.u32 %p0, %r0, 10;
    @%p0 bra BAD;
    st.global.u32 [%d0], %r0;
    ret;
BAD:
    trap;
    st.global.u32 [%d0], 7;
    ret;
}
"""


def test_nothing_after_an_unguarded_trap_is_compiled():
    """The store of 7 and the `ret` after `trap` never run: ptxas's code ends with BPT.TRAP
    (one STG, nothing but its end-of-code branch after the trap); ours the same."""
    for cubin in (oracle.ptxas(TRAP_THEN_STORE, "sm_89").output,
                  codegen.compile_ptx(TRAP_THEN_STORE, "sm_89", "k.ptx")):
        sass = [line.split("*/", 1)[1].split(";")[0].strip()
                for line in oracle.cuobjdump_sass(cubin).splitlines() if re.match(r"\s+/\*[0-9a-f]{4}\*/", line)]
        after = sass[sass.index("BPT.TRAP 0x1") + 1:]
        assert sum("STG" in s for s in sass) == 1
        assert [s.split()[0] for s in after if s != "NOP"] == ["BRA"]
