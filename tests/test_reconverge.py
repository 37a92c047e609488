"""Convergence barriers (ptx2sass/reconverge.py) and the emulator's explicit reconvergence
(emu/convergence.py).

With `reconverge="explicit"` diverged lanes meet again only at a BSYNC, a WARPSYNC or a CTA
barrier, as on Volta+ hardware; a warp collective run by part of its members is a
convergence hazard. Each kernel below diverges and then runs a full-mask collective (or not,
where ptxas needs no barrier): our cubin must place BSSY/BSYNC where ptxas's does (read off
nvdisasm's listing of both) and give ptxas's outputs with zero hazards of either kind; and
the same code without its barriers must be flagged."""
import re
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run
from ptx2sass.emu.loader import codec_decoder
from ptx2sass.encoder.cubin import read_cubin

THREADS = 64
N = 13          # lanes below N take the other way: warp 0 diverges, warp 1 does not

HEAD = """.version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .pred %p<4>; .reg .b32 %r<40>; .reg .b64 %rd<8>;
  ld.param.u64 %rd0, [out];
  ld.param.u64 %rd4, [in];
  ld.param.u32 %r9, [n];
  mov.u32 %r0, %tid.x;
  cvta.to.global.u64 %rd1, %rd0;
  cvta.to.global.u64 %rd5, %rd4;
  mul.wide.u32 %rd2, %r0, 4;
  add.s64 %rd3, %rd1, %rd2;
  add.s64 %rd6, %rd5, %rd2;
"""
TAIL = """  st.global.u32 [%rd3], %r2;
  ret;
}
"""


def _work(reg: str, seed: int, n: int = 8) -> str:
    """Enough loads and arithmetic that ptxas branches instead of predicating."""
    s = f"  mov.u32 {reg}, {seed};\n"
    for i in range(n):
        s += (f"  ld.global.u32 %r30, [%rd6+{4 * i}];\n  mul.lo.u32 {reg}, {reg}, %r30;\n"
              f"  xor.b32 {reg}, {reg}, {i * 7 + seed};\n")
    return s


KERNELS = {
    "if_else_shfl": f"""  setp.lt.u32 %p1, %r0, %r9;
  @%p1 bra THEN;
{_work('%r1', 3)}  bra.uni JOIN;
THEN:
{_work('%r1', 5)}JOIN:
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
""",
    "nested_ifs_vote": f"""  mov.u32 %r1, 1;
  setp.lt.u32 %p1, %r0, %r9;
  @%p1 bra JOIN;
{_work('%r1', 3)}  setp.lt.u32 %p2, %r1, 100;
  @%p2 bra JOIN2;
{_work('%r1', 9)}JOIN2:
  add.u32 %r1, %r1, 5;
JOIN:
  setp.ne.u32 %p3, %r1, 0;
  vote.sync.ballot.b32 %r3, %p3, -1;
  add.u32 %r2, %r1, %r3;
""",
    "sequential_ifs": f"""  mov.u32 %r1, 1;
  setp.lt.u32 %p1, %r0, %r9;
  @%p1 bra J1;
{_work('%r1', 3)}J1:
  setp.lt.u32 %p2, %r0, 20;
  @%p2 bra J2;
{_work('%r1', 4)}J2:
  shfl.sync.bfly.b32 %r2, %r1, 4, 31, -1;
""",
    "else_if_chain_shfl": f"""  setp.lt.u32 %p1, %r0, %r9;
  @%p1 bra A;
  setp.lt.u32 %p2, %r0, 20;
  @%p2 bra B;
{_work('%r1', 3)}  bra.uni JOIN;
A:
{_work('%r1', 5)}  bra.uni JOIN;
B:
{_work('%r1', 7)}JOIN:
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
""",
    "loop_break_shfl": """  mov.u32 %r1, 0;
  mov.u32 %r4, 0;
LOOP:
  ld.global.u32 %r5, [%rd6];
  add.u32 %r1, %r1, %r5;
  setp.gt.u32 %p1, %r1, %r0;
  @%p1 bra DONE;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p2, %r4, %r9;
  @%p2 bra LOOP;
DONE:
  shfl.sync.down.b32 %r2, %r1, 1, 31, -1;
""",
    "side_returns_shfl": f"""  mov.u32 %r1, 1;
  setp.lt.u32 %p1, %r0, %r9;
  @%p1 bra JOIN;
{_work('%r1', 3)}  setp.lt.u32 %p2, %r1, 100;
  @%p2 bra OUT;
{_work('%r1', 9)}JOIN:
  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
  st.global.u32 [%rd3], %r2;
  ret;
OUT:
  st.global.u32 [%rd3], %r1;
  ret;
}}
""",
    # the lanes left shuffle among themselves (reading an exited lane is undefined)
    "returning_side_then_shfl": f"""  and.b32 %r7, %r0, 2;
  setp.eq.u32 %p1, %r7, 0;
  @%p1 bra OTHER;
{_work('%r1', 3)}  shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;
  st.global.u32 [%rd3], %r2;
  ret;
OTHER:
{_work('%r1', 5)}  st.global.u32 [%rd3], %r1;
  ret;
}}
""",
    "early_exit_shfl": f"""  setp.ge.u32 %p1, %r0, %r9;
  @%p1 bra END;
{_work('%r1', 3)}  shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;
  st.global.u32 [%rd3], %r2;
END:
  ret;
}}
""",
    "both_sides_return": f"""  setp.lt.u32 %p1, %r0, %r9;
  @%p1 bra THEN;
{_work('%r1', 3)}  st.global.u32 [%rd3], %r1;
  ret;
THEN:
{_work('%r1', 5)}  st.global.u32 [%rd3], %r1;
  ret;
}}
""",
    "uniform_branch_shfl": f"""  mov.u32 %r1, 1;
  setp.lt.u32 %p1, %r9, 7;
  @%p1 bra JOIN;
{_work('%r1', 3)}JOIN:
  shfl.sync.bfly.b32 %r2, %r1, 2, 31, -1;
""",
    # ptxas unrolls this loop (three regions): outputs only, no layout comparison
    "divergent_trip_redux": """  mov.u32 %r1, 0;
  mov.u32 %r4, 0;
LOOP:
  ld.global.u32 %r5, [%rd6];
  add.u32 %r1, %r1, %r5;
  add.u32 %r4, %r4, 1;
  setp.lt.u32 %p2, %r4, %r0;
  @%p2 bra LOOP;
  redux.sync.add.u32 %r2, %r1, -1;
""",
}
SAME_LAYOUT = [k for k in KERNELS if k != "divergent_trip_redux"]


def _ptx(name: str) -> str:
    k = KERNELS[name]
    return HEAD + k + ("" if k.rstrip().endswith("}") else TAIL)


def _launch(cubin: bytes, reconverge: str, n: int = N):
    out = np.full(THREADS, 0xA5A5A5A5, np.uint32)
    data = (np.arange(THREADS + 16, dtype=np.uint32) * 2654435761 >> 7) % 5 + 1
    res = run(cubin, "k", 1, THREADS, [out, data.astype(np.uint32), np.uint32(n)], reconverge=reconverge)
    return out, res


_BARRIER = re.compile(r"\b(BSSY|BSYNC) (B\d+)")


def _barriers(cubin: bytes) -> list[tuple[str, str]]:
    """The BSSY/BSYNC instructions of nvdisasm's listing, in order, with their barrier."""
    return [m.groups() for line in oracle.nvdisasm(cubin).splitlines() if (m := _BARRIER.search(line))]


@pytest.mark.parametrize("name", SAME_LAYOUT)
def test_barriers_where_ptxas_puts_them(name):
    ptx = _ptx(name)
    assert _barriers(codegen.compile_ptx(ptx)) == _barriers(oracle.ptxas(ptx).output)


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("n", [N, 45])
def test_outputs_and_no_convergence_hazards(name, n):
    """Explicit reconvergence on our cubin: ptxas's outputs (in the same mode), no hazards
    of either kind."""
    ptx = _ptx(name)
    want, theirs = _launch(oracle.ptxas(ptx).output, "explicit", n)
    assert not theirs.convergence_hazards, [str(h) for h in theirs.convergence_hazards]
    got, ours = _launch(codegen.compile_ptx(ptx), "explicit", n)
    assert not ours.hazards, [str(h) for h in ours.hazards[:3]]
    assert not ours.convergence_hazards, [str(h) for h in ours.convergence_hazards]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("name", ["if_else_shfl", "returning_side_then_shfl"])
def test_without_barriers_the_collective_runs_apart(monkeypatch, name):
    """The code our compiler wrote before it placed barriers (and WARPSYNCs): the explicit
    mode flags the SHFL after the divergent branch (after the if/else; after lanes split
    off to return, whether or not they have exited by then), and the if/else's output
    differs from ptxas's; the optimistic mode (lanes merge at the same PC) sees nothing."""
    ptx = _ptx(name)
    monkeypatch.setattr(codegen, "insert_reconvergence", lambda mf, function=False: None)
    cubin = codegen.compile_ptx(ptx)
    assert not _barriers(cubin) and "WARPSYNC" not in oracle.nvdisasm(cubin)
    _, optimistic = _launch(cubin, "optimistic")
    assert not optimistic.convergence_hazards
    got, explicit = _launch(cubin, "explicit")
    assert [h.message.split(":")[1].split()[0] for h in explicit.convergence_hazards] == ["SHFL"]
    if name == "if_else_shfl":
        want, _ = _launch(oracle.ptxas(ptx).output, "explicit")
        assert not np.array_equal(got, want)


def test_ptxas_cubin_with_its_bsync_removed_is_flagged():
    """ptxas's own cubin with the BSYNC word overwritten by a NOP (taken from its padding):
    the lanes never meet again, and the vote after the nested ifs runs apart."""
    cubin = oracle.ptxas(_ptx("nested_ifs_vote")).output
    text = read_cubin(cubin).kernel("k").text
    code = dict(codec_decoder(text, "sm_89", "k"))
    word = {off: text[off:off + 16] for off in code}
    nop = word[max(off for off, ins in code.items() if ins.opcode == "NOP")]
    patched = cubin
    for off, ins in code.items():
        if ins.opcode == "BSYNC":
            assert patched.count(word[off]) == 1
            patched = patched.replace(word[off], nop)
    assert [op for op, _ in _barriers(patched)] == ["BSSY", "BSSY"]
    _, good = _launch(cubin, "explicit")
    assert not good.convergence_hazards
    _, bad = _launch(patched, "explicit")
    assert bad.convergence_hazards and "VOTE" in bad.convergence_hazards[0].message


# Code that runs on whichever lanes arrive, by design: a warp-aggregated reduction (activemask,
# then REDUX over the lanes present) and ptxas's converged-path test for a member mask held
# in a register (REDUX.OR of the masks of the lanes present, then BRA.DIV on it). Neither is a
# collective run apart: ptxas's cubins (right on hardware) must run clean.
PRESENT_LANES = {
    "divergent_red": """  setp.lt.u32 %p1, %r0, %r9;
  mov.u32 %r2, 7;
  @%p1 bra SKIP;
  ld.global.u32 %r5, [%rd6];
  red.global.add.u32 [%rd5+256], %r5;
  mov.u32 %r2, %r5;
SKIP:
""",
    "runtime_mask_ballot": """  setp.lt.u32 %p1, %r0, %r9;
  mov.u32 %r2, 0;
  activemask.b32 %r10;
  setp.gt.u32 %p3, %r0, 40;
  @%p3 bra SKIP;
  vote.sync.ballot.b32 %r3, %p1, %r10;
  @!%p1 bra SKIP;
  ld.global.u32 %r5, [%rd6];
  setp.ne.u32 %p2, %r5, 3;
  vote.sync.ballot.b32 %r2, %p2, %r3;
SKIP:
""",
    "shrinking_mask_loop": """  and.b32 %r6, %r0, 3;
  add.u32 %r6, %r6, 1;
  mov.u32 %r7, 0;
  mov.b32 %r8, -1;
  mov.u32 %r2, 0;
LOOP:
  setp.lt.u32 %p2, %r7, %r6;
  vote.sync.ballot.b32 %r8, %p2, %r8;
  @!%p2 bra DONE;
  brev.b32 %r12, %r8;
  bfind.shiftamt.u32 %r12, %r12;
  shfl.sync.idx.b32 %r11, %r0, %r12, 0x1f, %r8;
  add.u32 %r2, %r2, %r11;
  add.u32 %r7, %r7, 1;
  bra LOOP;
DONE:
""",
}


@pytest.mark.parametrize("name", list(PRESENT_LANES))
@pytest.mark.parametrize("n", [N, 45])
def test_code_for_the_lanes_present_is_no_convergence_hazard(name, n):
    ptx = HEAD + PRESENT_LANES[name] + TAIL
    theirs = oracle.ptxas(ptx).output
    listing = oracle.nvdisasm(theirs)
    assert {"divergent_red": "VOTEU.ANY", "runtime_mask_ballot": "REDUX.OR",
            "shrinking_mask_loop": "MATCH.ANY"}[name] in listing
    want, res = _launch(theirs, "explicit", n)
    assert not res.convergence_hazards, [str(h) for h in res.convergence_hazards]
    got, ours = _launch(codegen.compile_ptx(ptx), "explicit", n)
    assert not ours.convergence_hazards, [str(h) for h in ours.convergence_hazards]
    assert np.array_equal(got, want)


@pytest.mark.parametrize("seed", ["20900001", "20900056"])
def test_ptxas_exclusive_slow_path_is_no_convergence_hazard(seed):
    """ptxas's converged path of a run-time-mask collective: `@!P BRA.CONV mask` taken, then
    BSSY; WARPSYNC.EXCLUSIVE mask; REDUX; BSYNC, then MATCH/VOTE of the same mask. BSSY and
    a BSYNC that releases every member now keep the lanes' knowledge that they are together
    on the mask (it was reset to the full warp, so the lanes of one tile running the MATCH
    were flagged); fuzz programs (warp, branch, divergent, loop features) whose ptxas cubin
    the explicit mode flagged, the 2 of seeds 20900000..099."""
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ptxas, execute, load
    text = (Path(__file__).resolve().parent / "ptxas_convergence" / f"s{seed}.ptx").read_text()
    case = read_case(text)
    case.text = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("// fuzz-case: "))
    cubin, why = compile_ptxas(case)
    assert cubin is not None, why
    assert "WARPSYNC.EXCLUSIVE" in oracle.nvdisasm(cubin)
    res = execute(load(cubin, case.kernel), case, False, reconverge="explicit")
    assert not res.convergence_hazards, [h.message for h in res.convergence_hazards]
