"""Atomics the selection writes as compare-and-swap loops (16-bit `atom.cas.b16` and
`atom.add.noftz.f16` in any space; shared-memory f32/f64/64-bit ones ATOMS cannot do), now
under a guard (a branch around the loop, ptx2sass/guard_branches.py; refused before: fuzz
campaign 9 seeds 20000097, 20000446), and 16-bit shared CAS with a memory order (ptxas: its
release fence once before the loop, no acquire side; refused before, seed 20000560). Each:
ours and ptxas's cubin in the emulator on the same inputs, every output and the final
memory compared; lanes whose guard is false keep their destination. (Where the old values a
loop returns depend on which lane's CAS wins first, 64-bit max, only the final memory and
the untouched lanes are compared: two valid serialisations.)"""
import numpy as np
import pytest

import ptx2sass
from ptx2sass import oracle
from ptx2sass.emu.launch import run

THREADS = 64

BODIES = {
    "shared_add_f32": ("f32", "@%p1 atom.shared.add.f32 %f3, [%r9], %f1;"),
    "shared_red_add_f32": ("f32", "@%p1 red.shared.add.f32 [%r9], %f1; mov.f32 %f3, %f1;"),
    "shared_add_u64": ("u64", "@%p1 atom.shared.add.u64 %rd3, [%r9], %rd2;"),
    "shared_max_s64": ("u64", "@%p1 atom.shared.max.s64 %rd3, [%r9], %rd2;"),   # order-dependent
    "global_cas_b16": ("b16", "@%p1 atom.global.cas.b16 %h3, [%rd6], %h1, %h2;"),
    "shared_cas_b16": ("b16", "@%p1 atom.shared.cas.b16 %h3, [%r9], %h1, %h2;"),
    "shared_cas_b16_release": ("b16", "atom.release.shared.cas.b16 %h3, [%r9], %h1, %h2;"),
    "shared_cas_b16_acq_rel_cta": ("b16", "atom.acq_rel.cta.shared.cas.b16 %h3, [%r9], %h1, %h2;"),
    "global_add_f16": ("b16", "@%p1 atom.global.add.noftz.f16 %h3, [%rd6], %h1;"),
}


def _ptx(kind: str, stmt: str) -> str:
    store = {"f32": "st.global.f32 [%rd5], %f3;", "u64": "st.global.u64 [%rd5], %rd3;",
             "b16": "st.global.u16 [%rd5], %h3;"}[kind]
    # four (two for 64-bit) contended slots, each aligned for the type
    slot = {"f32": "and.b32 %r2, %r0, 3; shl.b32 %r2, %r2, 2;",
            "u64": "and.b32 %r2, %r0, 1; shl.b32 %r2, %r2, 3;",
            "b16": "and.b32 %r2, %r0, 3; shl.b32 %r2, %r2, 1;"}[kind]
    return f""".version 8.3
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 in, .param .u64 mem)
{{
  .reg .pred %p<3>; .reg .b16 %h<4>; .reg .f32 %f<4>; .reg .b32 %r<12>; .reg .b64 %rd<8>;
  .shared .align 8 .b8 sh[64];
  ld.param.u64 %rd0, [out]; ld.param.u64 %rd1, [in]; ld.param.u64 %rd6, [mem];
  cvta.to.global.u64 %rd0, %rd0; cvta.to.global.u64 %rd1, %rd1; cvta.to.global.u64 %rd6, %rd6;
  mov.u32 %r0, %tid.x;
  mul.wide.u32 %rd4, %r0, 8; add.s64 %rd5, %rd0, %rd4; add.s64 %rd4, %rd1, %rd4;
  ld.global.u64 %rd2, [%rd4];
  cvt.u32.u64 %r1, %rd2; mov.b32 %f1, %r1; mov.b32 {{%h1, %h2}}, %r1;
  {slot} cvt.u64.u32 %rd7, %r2; add.s64 %rd6, %rd6, %rd7;
  mov.u32 %r9, sh; add.u32 %r9, %r9, %r2;
  and.b32 %r3, %r0, 7;
  setp.ne.u32 %p0, %r3, 0;
  @%p0 bra INIT_DONE;
  st.shared.u64 [sh], 0x3f80000040000000;
  st.shared.u64 [sh+8], 0x0001000200030004;
INIT_DONE:
  bar.sync 0;
  rem.u32 %r4, %r0, 3;
  setp.eq.u32 %p1, %r4, 0;
  mov.f32 %f3, 0f7FC00001; mov.u64 %rd3, 77; mov.b16 %h3, 0x5555;
  {stmt}
  {store}
  bar.sync 0;
  setp.ne.u32 %p2, %r0, 0;
  @%p2 bra END;
  ld.shared.u64 %rd3, [sh]; st.global.u64 [%rd0+512], %rd3;
  ld.shared.u64 %rd3, [sh+8]; st.global.u64 [%rd0+520], %rd3;
END:
  ret;
}}
"""


@pytest.mark.parametrize("name", list(BODIES))
def test_atomic_loops_equal_ptxas(name):
    ptx = _ptx(*BODIES[name])
    theirs = oracle.ptxas(ptx, "sm_89")
    assert theirs.ok, theirs.stderr
    ours = ptx2sass.compile(ptx, "sm_89", "k.ptx")
    rng = np.random.default_rng(5)
    data = rng.integers(0, 1 << 63, THREADS, dtype=np.uint64)
    data[::5] = 0x0001000200030004      # half the b16 compares hit
    results = []
    for cubin, hazards in ((theirs.output, False), (ours, True)):
        out = np.zeros(THREADS + 2, np.uint64)
        mem = np.array([0x0001000200030004, 0], np.uint64)
        res = run(cubin, "k", 1, THREADS, [out, data.copy(), mem], hazard_check=hazards)
        assert not (hazards and res.hazards), [str(h) for h in res.hazards[:2]]
        results.append((out.tolist(), mem.tolist()))
    if name == "shared_max_s64":
        guarded = [t % 3 == 0 for t in range(THREADS)]
        results = [([v for v, g in zip(out, guarded) if not g] + out[THREADS:], mem) for out, mem in results]
        assert all(v == 77 for v in results[1][0][:-2])
    assert results[0] == results[1]
