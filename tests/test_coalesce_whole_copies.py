"""A wide register filled part by part from the same parts of another (a pipelined loop's
tile group filled from the tiles its preheader loaded: matmul_w8s4's 12 MOVs before the
loop, none in ptxas's code) becomes one whole copy that coalescing removes. Expected: the
allocation puts both in one quad (no move left) and passes `allocate.verify`; where the
source is rewritten between the part copies, the parts stay copies."""
from __future__ import annotations

from ptx2sass.mir import COPY, IMPLICIT_DEF, MBlock, MFunction, MInstr, VMem, VOp
from ptx2sass.regalloc import allocate
from ptx2sass.regalloc.coalesce_parts import coalesce_parts


def _filled(rewrite_between: bool) -> tuple[MFunction, object, object]:
    """t = LDS.128; IMPLICIT_DEF s; COPY s.k = t.k (k = 0..3, a store of t.0 after the
    second copy, or with `rewrite_between` an LDS that rewrites t there); STS.128 s."""
    mf = MFunction("k")
    b = MBlock("entry")
    mf.blocks = [b]
    base, t, s = mf.new_vreg("R", 1), mf.new_vreg("R", 4), mf.new_vreg("R", 4)
    b.instrs += [MInstr(IMPLICIT_DEF, (), [VOp(base)], 1),
                 MInstr("LDS", ("128",), [VOp(t), VMem(VOp(base), 0)], 1),
                 MInstr(IMPLICIT_DEF, (), [VOp(s)], 1)]
    for k in range(4):
        b.instrs.append(MInstr(COPY, (), [VOp(s, k), VOp(t, k)], 1))
        if k == 1:
            b.instrs.append(MInstr("LDS", ("128",), [VOp(t), VMem(VOp(base), 32)], 1) if rewrite_between
                            else MInstr("STS", (), [VMem(VOp(base), 64), VOp(t, 0)], 0))
    b.instrs += [MInstr("STS", ("128",), [VMem(VOp(base), 16), VOp(s)], 0),
                 MInstr("STS", ("128",), [VMem(VOp(base), 48), VOp(t)], 0) if rewrite_between
                 else MInstr("EXIT", (), [], 0),
                 MInstr("EXIT", (), [], 0)]
    return mf, s, t


def test_part_copies_become_one_coalesced_copy():
    mf, s, t = _filled(False)
    alloc, _ = allocate.allocate_with_spilling(mf)
    allocate.verify(mf, alloc.color)
    assert not any(i.opcode == COPY for i in mf.blocks[0].instrs)
    stores = [i for i in mf.blocks[0].instrs if i.opcode == "STS" and i.modifiers == ("128",)]
    assert alloc.color[stores[0].operands[1].reg.id] == alloc.color[t.id]      # s merged into t


def test_source_rewritten_between_keeps_the_part_copies():
    mf, s, t = _filled(True)
    assert coalesce_parts(mf) == 0
    assert sum(i.opcode == COPY for i in mf.blocks[0].instrs) == 4
    alloc, _ = allocate.allocate_with_spilling(mf)
    allocate.verify(mf, alloc.color)
