"""A guarded load and its else-value share a register: the second write waits for the load.

`@p ld.global.f32 x, [a]; @!p mov.f32 x, 0` (tinygrad's masked loads: triu/tril, padding)
selects to `@P LDG R, [..]` and `@!P MOV R, RZ` in one register. The MOV waits on the load's
scoreboard (a write after a write in flight), so placed right after its load by the list
scheduler after allocation (where the write-after-write edge counted one cycle) it stalled
for the whole memory latency, and every load behind it waited too: tinygrad
triu_tril_f32__E_5_5_8_2_4, four guarded loads one after another, SM model 1735 cycles
against ptxas's 1188 (ptxas loads into other registers and SELs after all loads). With the
load's latency on that edge, all loads issue before the first else-MOV (sched/list_schedule.py
`overwrite_latency`).

Expected values: ptxas's cubin (its outputs, its SM-model time) and the order ptxas's listing has."""
from __future__ import annotations

import re

import pytest

from ptx2sass import codegen, oracle
from ptx2sass.emu.timing.model import from_result
from ptx2sass.emu.timing.trace import Tee


def _ops(cubin: bytes) -> list[str]:
    text = oracle.nvdisasm(cubin, options=())
    return [m.group(1).strip() for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(@?!?P?\d?\s*[A-Z][A-Z0-9.]*)", text)]


@pytest.mark.parametrize("name", ["triu_tril_f32__E_5_5_8_2_4", "triu_tril_f32__E_5_5_8_2_4_2"])
def test_guarded_loads_issue_before_their_else_values(name):
    """Every guarded load is issued before the first else-value write (ptxas: all loads,
    then FSEL/SEL); outputs = ptxas's, no hazards, SM cycles within 1.05x ptxas's (main at
    6d7fb8fb: 1735 against 1188 and 1169, the first `@!P MOV` right after its load)."""
    from tools.emu_testing import TINYGRAD_DIR, run_tinygrad, tinygrad_cubin, tinygrad_manifest
    (entry,) = [e for e in tinygrad_manifest() if e["file"] == name + ".ptx"]
    ptx = (TINYGRAD_DIR / entry["file"]).read_text()
    ours, _ = codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", entry["file"]), "sm_89",
                                      filename=entry["file"])
    ops = _ops(ours)
    loads = [i for i, op in enumerate(ops) if "LDG" in op]
    first_else = min(i for i, op in enumerate(ops) if op.startswith("@!P") and "MOV" in op)
    assert loads[-1] < first_else, ops
    runs = [run_tinygrad(entry, cubin=c, timing=Tee.checked) for c in (ours, tinygrad_cubin(entry, "sm_89"))]
    assert all(r.ok for r in runs), [r.reason for r in runs]
    assert not runs[0].result.hazards
    assert all(runs[0].result.buffers[n] == b for n, b in runs[1].result.buffers.items())
    mine, theirs = (from_result(r.result, "sm_89").cycles for r in runs)
    assert mine <= 1.05 * theirs, (mine, theirs)
