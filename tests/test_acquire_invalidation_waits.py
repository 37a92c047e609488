"""An acquire access (`atom.acq_rel`/`ld.acquire` beyond the CTA) is followed by CCTL.IVALL,
and the invalidation waits for the access's result: no later load may be served from L1
before the access is performed. ptxas 13.5 sets that wait (the access's write scoreboard in
the CCTL's wait mask); the control-code pass and the SM model honour it."""
from pathlib import Path

import numpy as np
import pytest

from ptx2sass import codegen, oracle
from ptx2sass.encoder.model import Control

ROOT = Path(__file__).resolve().parent.parent
ATOMICS_MIX = ROOT / "tests" / "corpus" / "triton" / "atomics_mix.ptx"

ACQUIRE_PTX = """
.version 8.0
.target sm_89
.address_size 64
.visible .entry acq(.param .u64 a, .param .u64 b, .param .u64 out)
{
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [a];
    ld.param.u64 %rd2, [b];
    ld.param.u64 %rd3, [out];
    mov.u32 %r1, %tid.x;
    mul.wide.u32 %rd4, %r1, 4;
    add.s64 %rd5, %rd1, %rd4;
    add.s64 %rd6, %rd2, %rd4;
    atom.global.acq_rel.gpu.add.u32 %r2, [%rd5], 1;
    ld.acquire.gpu.global.u32 %r3, [%rd6];
    add.s64 %rd7, %rd3, %rd4;
    add.u32 %r4, %r2, %r3;
    st.global.u32 [%rd7], %r4;
    ret;
}
"""


def _controls(cubin: bytes) -> list[tuple[str, Control]]:
    """(text, control) of each instruction nvdisasm prints."""
    import re
    lines = oracle.nvdisasm(cubin).splitlines()
    out = []
    for i, line in enumerate(lines):
        m = re.match(r"\s+/\*[0-9a-f]{4}\*/\s*(.*?)\s*;?\s*/\* 0x[0-9a-f]{16} \*/", line)
        if m:
            hi = int(re.search(r"0x([0-9a-f]{16})", lines[i + 1]).group(1), 16)
            out.append((m.group(1), Control.unpack(hi >> 41)))
    return out


def _acquire_waits(cubin: bytes) -> list[bool]:
    """For each CCTL.IVALL: has the last strong load or atomic before it arrived (a wait on
    its write scoreboard at the CCTL or since the access)? ptxas waits at the CCTL after an
    atomic, and after an acquire load moves the CCTL below the load's first reader."""
    last_sb, arrived, out = None, False, []
    for text, c in _controls(cubin):
        body = text.split(" ", 1)[-1] if text.startswith("@") else text
        op = body.split(" ", 1)[0]
        if last_sb is not None and c.wait >> last_sb & 1:
            arrived = True
        if op.startswith(("ATOMG", "LDG", "ATOM.", "LD.")) and "STRONG" in op:
            last_sb, arrived = (c.wr_sb if c.wr_sb < 6 else None), False
        elif op.startswith("CCTL.IVALL"):
            out.append(last_sb is not None and arrived)
    return out


def _ours(ptx: str, name: str) -> bytes:
    module = codegen.lower_ptx(ptx, "sm_89", name)
    return codegen.generate_module(module, "sm_89", filename=name)[0]


@pytest.mark.parametrize("source", ["atomics_mix", "acquire_load"])
def test_the_invalidation_after_an_acquire_waits_for_the_access(source):
    ptx = ATOMICS_MIX.read_text() if source == "atomics_mix" else ACQUIRE_PTX
    run = oracle.ptxas(ptx, "sm_89")
    assert run.ok, run.stderr
    expected = _acquire_waits(run.output)        # the fact the rule stands on: ptxas's cubin
    assert expected and all(expected)
    ours = _acquire_waits(_ours(ptx, source + ".ptx"))
    assert len(ours) == len(expected) and all(ours), ours


def test_the_sm_model_holds_the_invalidation_until_the_acquire_arrives():
    """ATOMG.STRONG (a DRAM miss) -> CCTL.IVALL -> LDG (another miss): the load issues only
    once the atomic's result is back, so the warp takes about two DRAM latencies; after a
    relaxed atomic (no `.STRONG`) or a fence in between, about one."""
    from ptx2sass.emu.timing import facts_for, simulate
    from ptx2sass.emu.timing.trace import CtaTrace, TraceOp
    f = facts_for("sm_89")
    dram = f.memory["dram_latency"]
    lanes = np.arange(32, dtype=np.int64) * 4

    def run(atom_mods, between=()):
        atom = TraceOp("ATOMG", atom_mods, (("R", 2), ("R", 3), ("R", 4)), (("R", 5),), 32,
                       "global", lanes + (1 << 40), 4)
        cctl = TraceOp("CCTL", ("IVALL",), (), (), 32)
        ldg = TraceOp("LDG", ("E",), (("R", 6), ("R", 7)), (("R", 8),), 32, "global",
                      lanes + (2 << 40), 4)
        ops = [atom, *between, cctl, ldg, TraceOp("EXIT", (), (), (), 32)]
        return simulate([CtaTrace((0, 0, 0), [ops])], f, 16, 32).cycles

    strong = ("E", "ADD", "STRONG", "GPU")
    assert run(strong) >= 2 * dram
    assert run(("E", "ADD")) < 1.5 * dram
    assert run(strong, [TraceOp("MEMBAR", ("ALL", "GPU"), (), (), 32)]) < 1.5 * dram
