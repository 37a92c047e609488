"""Control instructions beyond plain branches: `trap`, `brx.idx` (and, as they grow, calls
and returns; `nanosleep` is selected in isel/memory.py; `.func` calls are inlined before
SSA, see ptx2sass/inline.py).

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
What ptxas emits for sm_8x (seen with the pinned ptxas + nvdisasm):
* `trap` → `BPT.TRAP 0x1`; a guarded `@p trap` is branched around by ptxas, here it is
  the guarded instruction itself (same effect: only the lanes with `p` trap);
* `brx.idx i, table` → the table of target offsets in `.nv.constant2.<kernel>`, then
  `IMAD.SHL.U32 t, i, 0x4, RZ; LDC r, c[0x2][t+base]; SHF.R.S32.HI r+1, RZ, 0x1f, r;
  BRX r -(pc of the next instruction)` (the offsets are absolute in .text); ptxas also wraps
  a divergent switch in BSSY/BSYNC, which is not emitted here (the lanes reconverge at the
  join anyway). The table and the BRX immediate are filled after layout (codegen).
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Label
from ptx2sass.isel.common import RZ
from ptx2sass.mir import IMPLICIT_DEF, MInstr, VOp

TRAP_CODE = 0x1      # the immediate ptxas gives BPT.TRAP for PTX `trap`


class CallSelection:
    def sel_trap(self, ins):
        self.emit("BPT", ("TRAP",), [Imm(TRAP_CODE)], ndefs=0)

    def select_brx(self, term, mb) -> None:
        """The terminator `brx.idx index, table` of block `mb` (its successors: the table)."""
        if term.guard is not None:
            raise self.unsupported("guarded `brx.idx`")
        index, targets = term.srcs[0], [t.name for t in term.srcs[1:]]
        if not targets or any(not isinstance(t, ir.Symbol) for t in term.srcs[1:]):
            raise self.unsupported("`brx.idx` without a .branchtargets list")
        if isinstance(index, ir.Const):          # a known entry: a plain branch
            self.out.append(MInstr("BRA", (), [Label(targets[index.value % len(targets)])], 0, None, term.line))
            return
        base = 4 * sum(len(t) for t in self.mf.jump_tables)
        offset = VOp(self.mf.new_vreg())
        self.emit("IMAD", ("SHL", "U32"), [offset, self.part_of(index, 0), Imm(4), RZ], guarded=False)
        target = self.mf.new_vreg("R", 2)
        self.emit(IMPLICIT_DEF, (), [VOp(target)], guarded=False)
        self.emit("LDC", (), [VOp(target, 0), ConstRef(2, base, ureg=offset)], guarded=False)
        self.emit("SHF", ("R", "S32", "HI"), [VOp(target, 1), RZ, Imm(0x1F), VOp(target, 0)], guarded=False)
        self.emit("BRX", (), [VOp(target), Imm(0)], ndefs=0, guarded=False)
        self.mf.jump_tables.append(targets)
