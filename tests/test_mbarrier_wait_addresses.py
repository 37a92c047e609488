"""sm_90 mbarrier addresses and wait loops as ptxas writes them (docs/STATUS.md, branch
quality36b), and double constants in uniform register pairs.

* A wait loop (`LAB_WAIT: mbarrier.test_wait ...; @!p bra LAB_WAIT`) on a shared object
  in code the whole warp runs: the object's address (`S2UR SR_CgaCtaId; UMOV; ULEA`) is
  computed before the loop, not on every spin (isel/invariant_uniform_runs.py), and
  arrivals on it in one block compute it once.
* The same where the address register is written in divergent code: ptxas keeps it in
  a general register, `[R+URZ]`, computed once (isel/mbarrier_syncs.py).
* The phase test of one object is the same in every lane, so the loop's exit keeps the
  warp together: no BSSY/BSYNC round it (divergence.py).
* A double constant whose low word no immediate holds is read from a UR pair
  (`DMUL R, R, UR8`), not two general registers (isel/uniform_datapath.py).

ptxas's own listing is each expectation; every kernel also runs in the emulator with
ptxas's outputs and no hazards."""
import re

import numpy as np

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run
from test_loop_constant_loads import loop_bodies

HEAD = """
.version 8.0
.target sm_90
.address_size 64
"""

WAIT = ("{{ .reg .pred p; LAB_WAIT: mbarrier.test_wait.parity.shared::cta.b64 p, [{a}], {ph}; "
        "@!p bra LAB_WAIT; }}")
ARRIVE = "{{ .reg .b64 st; mbarrier.arrive.shared::cta.b64 st, [{a}]; }}"

# every thread arrives twice on one object for each of two phases and waits for each;
# the object's address is named directly
CONVERGED = HEAD + f"""
.visible .entry converged(.param .u64 out)
{{
  .reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<6>;
  .shared .align 8 .b8 bar[8];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  shl.b32 %r2, %r2, 1;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INITED;
  mbarrier.init.shared::cta.b64 [bar], %r2;
INITED:
  bar.sync 0;
  mov.u32 %r3, 0;
  mov.u32 %r4, 1;
  {ARRIVE.format(a="bar")}
  {ARRIVE.format(a="bar")}
  {WAIT.format(a="bar", ph="%r3")}
  {ARRIVE.format(a="bar")}
  {ARRIVE.format(a="bar")}
  {WAIT.format(a="bar", ph="%r4")}
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  add.s32 %r5, %r1, 7;
  st.global.u32 [%rd4], %r5;
  ret;
}}
"""

# the second warp waits for both; its address register is written in the branch
DIVERGED = HEAD + f"""
.visible .entry diverged(.param .u64 out)
{{
  .reg .pred %p<3>; .reg .b32 %r<12>; .reg .b64 %rd<6>;
  .shared .align 8 .b8 bar[8];
  ld.param.u64 %rd1, [out];
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ntid.x;
  setp.ne.u32 %p1, %r1, 0;
  @%p1 bra INITED;
  mbarrier.init.shared::cta.b64 [bar], %r2;
INITED:
  bar.sync 0;
  mov.u32 %r5, 1;
  setp.lt.u32 %p2, %r1, 32;
  @%p2 bra FIRST;
  mov.u32 %r6, bar;
  mov.u32 %r3, 0;
  {ARRIVE.format(a="%r6")}
  {WAIT.format(a="%r6", ph="%r3")}
  mov.u32 %r5, 2;
  bra.uni DONE;
FIRST:
  {ARRIVE.format(a="bar")}
DONE:
  cvta.to.global.u64 %rd2, %rd1;
  mul.wide.u32 %rd3, %r1, 4;
  add.s64 %rd4, %rd2, %rd3;
  st.global.u32 [%rd4], %r5;
  ret;
}}
"""

DOUBLES = HEAD + """
.visible .entry doubles(.param .u64 out, .param .u64 in, .param .u32 n)
{
  .reg .pred %p<3>; .reg .b32 %r<8>; .reg .b64 %rd<8>; .reg .f64 %fd<4>;
  ld.param.u64 %rd1, [out];
  ld.param.u64 %rd2, [in];
  ld.param.u32 %r2, [n];
  mov.u32 %r1, %tid.x;
  cvta.to.global.u64 %rd3, %rd2;
  cvta.to.global.u64 %rd4, %rd1;
  mul.wide.u32 %rd5, %r1, 8;
  add.s64 %rd6, %rd3, %rd5;
  ld.global.f64 %fd1, [%rd6];
  mov.u32 %r3, 0;
LOOP:
  fma.rn.f64 %fd1, %fd1, 0d3FE0000000000000, 0d3F50624DD2F1A9FC;
  mul.f64 %fd1, %fd1, 0d3EB0C6F7A0B5ED8D;
  add.s32 %r3, %r3, 1;
  setp.lt.u32 %p1, %r3, %r2;
  @%p1 bra LOOP;
  add.s64 %rd7, %rd4, %rd5;
  st.global.f64 [%rd7], %fd1;
  ret;
}
"""

_LINE = re.compile(r"/\*([0-9a-f]{4})\*/\s+(.*?)\s*;")


def listing(cubin: bytes) -> list[str]:
    return [m.group(2) for line in oracle.nvdisasm(cubin).splitlines() if (m := _LINE.search(line))]


def wait_loops(cubin: bytes) -> list[list[str]]:
    return [loop for loop in loop_bodies(cubin) if any("PHASECHK" in t for t in loop)]


def address_work(code: list[str]) -> list[str]:
    return [t for t in code if re.match(r"(S2UR|ULEA|UMOV|S2R|LEA|IADD3)\b", t)]


def syncs_forms(code: list[str]) -> set[str]:
    """How arrivals and phase tests name the object: `UR` ([URn+o]) or `R` ([Rn+URZ+o])."""
    forms = set()
    for t in code:
        m = re.match(r"SYNCS\.(ARRIVE|PHASECHK)\S*\s+\S+,\s*\[(U?R)\d+", t)
        if m:
            forms.add(m.group(2))
    return forms


def both(src: str):
    theirs = oracle.ptxas(src, "sm_90")
    assert theirs.ok, theirs.stderr
    return ptx2sass.compile(src, "sm_90", "waits.ptx"), theirs.output


def same_outputs(ours: bytes, theirs: bytes, kernel: str, threads: int, make_args) -> None:
    outs = []
    for cubin in (ours, theirs):
        args = make_args()
        res = run(cubin, kernel, (1, 1, 1), (threads, 1, 1), args)
        assert not res.hazards, [str(h) for h in res.hazards[:3]]
        outs.append(args[0])
    assert np.array_equal(outs[0], outs[1])


def test_wait_loop_computes_its_address_before_it():
    ours, theirs = both(CONVERGED)
    their_loops, our_loops = wait_loops(theirs), wait_loops(ours)
    assert len(their_loops) == len(our_loops) == 2
    for loop in their_loops:
        assert address_work(loop) == [], loop          # the oracle: only the test spins
    for loop in our_loops:
        assert address_work(loop) == [], loop
    # arrivals and tests read the object from a uniform register, as ptxas's
    assert syncs_forms(listing(ours)) == syncs_forms(listing(theirs)) == {"UR"}
    # ... computed once for all of them (ptxas: once for the kernel; ours once more in
    # the init branch, divergent code, which computes it for itself)
    def rank_reads(code):
        return sum(t.startswith("S2UR") for t in code)
    assert rank_reads(listing(ours)) <= rank_reads(listing(theirs)) + 1


def test_wait_loop_keeps_the_warp_together():
    ours, theirs = both(CONVERGED)

    def barriers_after_init(code):     # (the init branch before `bar.sync` has its own)
        at = next(k for k, t in enumerate(code) if t.startswith("BAR.SYNC"))
        return [t for t in code[at:] if t.startswith(("BSSY", "BSYNC"))]
    assert barriers_after_init(listing(theirs)) == []
    assert barriers_after_init(listing(ours)) == []


def test_converged_waits_run():
    ours, theirs = both(CONVERGED)
    same_outputs(ours, theirs, "converged", 64, lambda: [np.zeros(64, np.uint32)])


def test_address_written_in_divergent_code_stays_in_a_register():
    ours, theirs = both(DIVERGED)
    (their_loop,) = wait_loops(theirs)
    (our_loop,) = wait_loops(ours)
    assert address_work(their_loop) == [] and address_work(our_loop) == [], our_loop
    # ptxas: the second warp's arrival and test read `[R+URZ]`; the first warp's arrival
    # (the symbol named in its own branch) too
    assert syncs_forms(their_loop) == syncs_forms(our_loop) == {"R"}
    same_outputs(ours, theirs, "diverged", 64, lambda: [np.zeros(64, np.uint32)])


def test_double_constant_in_uniform_pair():
    ours, theirs = both(DOUBLES)
    pattern = re.compile(r"DMUL R\d+, R\d+, UR\d+$")
    assert any(pattern.match(t) for t in listing(theirs))       # the oracle
    assert any(pattern.match(t) for t in listing(ours)), listing(ours)
    rng = np.random.default_rng(36)
    x = rng.standard_normal(64)
    same_outputs(ours, theirs, "doubles", 64,
                 lambda: [np.zeros(64, np.float64), x.copy(), np.uint32(5)])
