"""Control flow inside one selected PTX instruction: the IEEE-exact float operations test
their operands and branch to slow paths for the hard cases, like ptxas's subroutines, but
laid out inline (forward edges only, so the loop-depth estimate of regalloc/loops.py sees
no back edge) and reached by plain branches instead of CALL/RET.

Usage, from a selection method:

    done = self.flow_block("done")
    self.flow_goto(done, when=fast)     # @fast BRA done; the code after it is a new block
    ...slow path...
    self.flow_enter(done)               # falls through into `done`; the PTX block goes on there

A block's unconditional exit is its `fallthrough` (layout adds the BRA when the target is
not next, as for PTX's own `bra`). The machine block current at the end becomes the one
the IR block's terminator and successors hang on (see Selector.run).

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
"""
from __future__ import annotations

from ptx2sass.encoder.model import Label
from ptx2sass.mir import MBlock, MInstr, VOp


class FlowBuilding:
    def flow_block(self, tag: str) -> MBlock:
        """A new, not yet placed block, named after the current IR block."""
        self._flow_count = getattr(self, "_flow_count", 0) + 1
        base = self.current.name.split("$")[0]
        return MBlock(f"{base}${tag}{self._flow_count}")

    def _flow_link(self, src: MBlock, dst: MBlock) -> None:
        src.succs.append(dst)
        dst.preds.append(src)

    def flow_goto(self, target: MBlock, when: VOp | None = None) -> None:
        """Branch to `target` (only the lanes where `when` holds, if given). An unconditional
        branch ends the current block (the next code must start with flow_enter); a
        conditional one continues in a fresh fall-through block."""
        cur = self.current
        if when is None:
            cur.fallthrough = target
            self._flow_link(cur, target)
            self._flow_closed = True
            return
        self.out.append(MInstr("BRA", (), [Label(target.name)], 0, when, self.line))
        self._flow_link(cur, target)
        self.flow_enter(self.flow_block("f"))

    def flow_enter(self, block: MBlock) -> None:
        """Place `block` next in layout and continue there; the current block falls through
        into it unless it ended in an unconditional branch."""
        cur = self.current
        if not getattr(self, "_flow_closed", False):
            cur.fallthrough = block
            self._flow_link(cur, block)
        self._flow_closed = False
        self.mf.blocks.append(cur)
        self.current, self.out = block, block.instrs
