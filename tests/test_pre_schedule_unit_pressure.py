"""The register pressure `sched.pre_schedule` weighs a block's orders by is counted per
part, as the allocator's liveness is (`liveness.unit_liveness`).

Counted per whole register, an mma fragment gathered part by part (`IMPLICIT_DEF g; COPY g.k
= v_k`, the COPYs that `coalesce_parts` folds into the values' writers) held all its parts
from the IMPLICIT_DEF on, plus the value being copied: one or more registers too many, enough
to make a loop's latency order look costlier than its source order and be dropped (a
flash-attention loop kept its source order: 88 -> 89 whole-register count, 86 in both orders
per part)."""
import pytest

from ptx2sass import codegen
from ptx2sass.mir import COPY, IMPLICIT_DEF, MInstr, VMem, VOp, VReg
from ptx2sass.regalloc.liveness import UNIT_BITS, fresh_writes, unit_liveness, unit_use_def
from ptx2sass.sched import pre_schedule
from tools.corpora import corpus_dirs


def test_a_group_filled_by_copies_counts_only_its_written_parts():
    """x and the address pair base live in; four values computed from x, each copied into a
    part of g, g stored. Live at once, at most: base's 2, three parts of g and x (or the
    fourth value, once x is dead) = 6. Per whole register: g's 4 + base's 2 + x + a value
    = 8."""
    x, base, g = VReg(0, "R", 1), VReg(1, "R", 2), VReg(2, "R", 4)
    vs = [VReg(3 + k, "R", 1) for k in range(4)]
    block = [MInstr(IMPLICIT_DEF, (), [VOp(g)], ndefs=1)]
    for k, v in enumerate(vs):
        block += [MInstr("FADD", (), [VOp(v), VOp(x), VOp(x)], ndefs=1),
                  MInstr(COPY, (), [VOp(g, k), VOp(v)], ndefs=1)]
    block.append(MInstr("STS", ("128",), [VMem(VOp(base)), VOp(g)], ndefs=0))
    width = {r.id: r.width for r in (x, base, g, *vs)}
    assert pre_schedule._pressure(block, set(), width) == 6


def _allocator_peak(mf, bi: int, b) -> int:
    """The most R units live at once in block `bi` by the allocator's per-part liveness."""
    fresh = fresh_writes(mf)
    live = {u for u in unit_liveness(mf, fresh)[bi]
            if mf.vregs[u >> UNIT_BITS].cls == "R"}
    peak = len(live)
    for ins in reversed(b.instrs):
        uses, kills, _ = unit_use_def(ins, fresh)
        live.difference_update(kills)
        live.update(u for u in uses if mf.vregs[u >> UNIT_BITS].cls == "R")
        peak = max(peak, len(live))
    return peak


@pytest.mark.parametrize("name", ["matmul_int8", "flash_attn_causal"])
def test_block_pressure_is_the_allocators(name, monkeypatch):
    """Triton mma kernels of the tuning part (fragments gathered in and around the loop;
    pairs whose high half is dead at a block's end): the pressure the pre-scheduler weighs
    each block's source order by equals the peak of the allocator's per-part liveness."""
    seen, counted = [], []
    real_schedule, real_pressure = codegen.pre_schedule, pre_schedule._pressure

    def pressure(instrs, *args, **kwargs):
        got = real_pressure(instrs, *args, **kwargs)
        counted.append((instrs, got))
        return got

    def check(mf, limit=None, solved=None, **options):
        peaks = {id(b.instrs): _allocator_peak(mf, bi, b) for bi, b in enumerate(mf.blocks)}
        blocks = {id(b.instrs): b.name for b in mf.blocks}
        counted.clear()
        n = real_schedule(mf, limit, solved, **options)
        # the first count of a block's own instruction list is its source order's
        for instrs, got in counted:
            if id(instrs) in peaks:
                seen.append((blocks[id(instrs)], got, peaks.pop(id(instrs))))
        return n

    monkeypatch.setattr(pre_schedule, "_pressure", pressure)
    monkeypatch.setattr(codegen, "pre_schedule", check)
    ptx = (corpus_dirs()["triton"] / f"{name}.ptx").read_text()
    codegen.generate_module(codegen.lower_ptx(ptx, "sm_89", f"{name}.ptx"), "sm_89", filename=f"{name}.ptx")
    assert seen and all(ours == allocator for _, ours, allocator in seen), seen
