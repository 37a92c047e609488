"""The pre-allocation scheduler's capped latency order (sched/pre_schedule.py): a fully
unrolled dot product whose latency order would hold every loaded operand at once (more
registers than the scheduler may reach) no longer falls back to the source order, where
each FMA waits for its own two loads; loads run ahead of their FMAs as far as the register
cap allows, as in ptxas's code (which issues 12 loads before the first DFMA of such a
chain). Results against ptxas's cubin and NumPy."""
import re

import numpy as np

from ptx2sass import codegen, oracle
from ptx2sass.emu.launch import run

STEPS = 48


def _ptx(directives: str = "") -> str:
    """The STEPS-step f64 dot product; `directives` go after the entry's parameter list
    (tests/test_pre_schedule_load_window.py: `.maxntid 64`)."""
    body = []
    for k in range(STEPS):
        body.append(f"ld.global.f64 %a{k}, [%rd5+{8 * k}];")
        body.append(f"ld.global.f64 %b{k}, [%rd6+{8 * k}];")
        body.append(f"fma.rn.f64 %acc{k + 1}, %a{k}, %b{k}, %acc{k};")
    return f""".version 8.0
.target sm_89
.address_size 64
.visible .entry k(.param .u64 out, .param .u64 a, .param .u64 x)
{directives}{{
.reg .b32 %r<4>;
.reg .b64 %rd<10>;
.reg .f64 %a<{STEPS}>;
.reg .f64 %b<{STEPS}>;
.reg .f64 %acc<{STEPS + 1}>;
ld.param.u64 %rd1, [out];
ld.param.u64 %rd2, [a];
ld.param.u64 %rd3, [x];
mov.u32 %r1, %tid.x;
mul.wide.u32 %rd4, %r1, {8 * STEPS};
add.s64 %rd5, %rd2, %rd4;
mov.b64 %rd6, %rd3;
mov.f64 %acc0, 0d0000000000000000;
{chr(10).join(body)}
mul.wide.u32 %rd7, %r1, 8;
add.s64 %rd8, %rd1, %rd7;
st.global.f64 [%rd8], %acc{STEPS};
ret;
}}
"""


def _ops(cubin) -> list[str]:
    text = oracle.nvdisasm(cubin, options=())
    return [m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+([A-Z][A-Z0-9.]*)", text)]


def _regs(cubin) -> int:
    from ptx2sass.encoder.cubin import read_cubin
    (k,) = read_cubin(cubin).kernels
    return k.regcount


def test_loads_run_ahead_of_the_fma_chain_within_the_cap():
    ptx = _ptx()
    ours = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", "k.ptx"), "sm_89", filename="k.ptx")[0]
    theirs = oracle.ptxas(ptx, "sm_89").output
    ops, theirs_ops = _ops(ours), _ops(theirs)
    ahead = sum(1 for op in ops[:ops.index("DFMA")] if op.startswith("LDG"))
    theirs_ahead = sum(1 for op in theirs_ops[:theirs_ops.index("DFMA")] if op.startswith("LDG"))
    assert theirs_ahead >= 8
    assert ahead >= 8, ops[:40]                # the source order had 2 (its own operands)
    assert _regs(ours) <= 64                   # within the scheduler's reach, not all 192

    threads = 64
    rng = np.random.default_rng(3)
    a = rng.standard_normal(threads * STEPS)
    x = rng.standard_normal(STEPS)
    outs = []
    for cubin in (ours, theirs):
        out = np.zeros(threads)
        res = run(cubin, "k", (1, 1, 1), (threads, 1, 1), [out, a.copy(), x.copy()], hazard_check=cubin is ours)
        assert not res.hazards
        outs.append(out)
    assert outs[0].tobytes() == outs[1].tobytes()
    want = np.zeros(threads)
    for k in range(STEPS):         # fma in order, as the PTX says
        want = np.array([np.float64(a[t * STEPS + k]) * x[k] + want[t] for t in range(threads)])
    np.testing.assert_allclose(outs[0], want, rtol=1e-12)
