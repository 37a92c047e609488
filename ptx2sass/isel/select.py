"""Select SASS instructions for one IR function, imitating ptxas's choices for sm_8x.

Conventions:
* a PTX value lives in one virtual register of its width (64-bit values in an even-aligned
  pair, predicates in P); 8- and 16-bit values sit in a 32-bit register whose high bits may
  hold garbage: every operation whose result depends on those bits (compares, right shifts,
  widening conversions, min/max) extends its operands first, as PTX's type says;
* phis become copies: at the end of each predecessor into a fresh register, then at the top
  of the block into the phi's own (Sreedhar's method I: no critical-edge splitting needed);
  the allocator's biased colouring removes most of those copies;
* a guarded PTX instruction with results becomes `COPY d <- else-value` then the guarded
  SASS, so the partial write keeps the value PTX's register had.

Anything not handled raises `CompileError("... not supported yet")` naming the PTX
instruction and its line.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Label, Reg, SpecialReg
from ptx2sass.encoder.sass_text import float_bits_text, parse_operand
from ptx2sass.errors import CompileError
from ptx2sass.opt.uses import reads
from ptx2sass.mir import COPY, IMPLICIT_DEF, MBlock, MFunction, MInstr, VOp, VReg, register_operands
from ptx2sass.isel.common import CBANK_SPECIALS, LUT, NOT_PT, PT, RZ, S2R_NAMES, _bits, _signed
from ptx2sass.isel.bits64 import Bits64
from ptx2sass.isel.cache_policy import CachePolicy
from ptx2sass.isel.calls import CallSelection
from ptx2sass.isel.warp_aggregated_atomics import combine_registers
from ptx2sass.isel.convert import ConvertSelection
from ptx2sass.isel.floating import FloatSelection
from ptx2sass.isel.flow import FlowBuilding
from ptx2sass.isel.ieee import IeeeFloat
from ptx2sass.isel.rounding import DirectedRounding
from ptx2sass.isel.integer import IntegerSelection
from ptx2sass.isel.intdiv import IntDivision
from ptx2sass.isel.carry import CarryArithmetic
from ptx2sass.isel.cache_ops import CacheOps
from ptx2sass.isel.classify import Classify
from ptx2sass.isel.special_regs import SpecialRegisters
from ptx2sass.isel.logic_ops import LogicOps
from ptx2sass.isel.loop_groups import LoopGroups
from ptx2sass.isel.mma import MatrixMultiply
from ptx2sass.isel.mbarrier import MbarrierSelection
from ptx2sass.isel.mbarrier_syncs import SyncsMbarrierSelection
from ptx2sass.isel.bulk_copy import BulkCopySelection
from ptx2sass.isel.cluster_launch_control import ClusterLaunchControl
from ptx2sass.isel.tensor_copy import TensorCopySelection
from ptx2sass.isel.tensormap import TensorMapSelection
from ptx2sass.isel.memory import MemorySelection
from ptx2sass.isel.multimem import MultimemSelection
from ptx2sass.isel.video import VideoSelection
from ptx2sass.isel.simd_video import SimdVideoSelection
from ptx2sass.isel.texture import TextureSelection
from ptx2sass.isel.wgmma import WarpgroupMma
from ptx2sass.isel.tcgen05 import TensorMemorySelection


# Types of 8/16-bit results that the selected loads and shifts leave zero-extended.
ZERO_EXTENDED_RESULTS = frozenset({"u8", "b8", "u16", "b16"})


class Selector(MemorySelection, ClusterLaunchControl, IntegerSelection, Bits64, IntDivision, CarryArithmetic, MatrixMultiply,
               FloatSelection, IeeeFloat, DirectedRounding, FlowBuilding, ConvertSelection, CallSelection,
               CachePolicy, VideoSelection, SimdVideoSelection, LoopGroups, LogicOps,
               Classify, SpecialRegisters, CacheOps, MbarrierSelection, SyncsMbarrierSelection, TextureSelection,
               BulkCopySelection, TensorCopySelection, TensorMapSelection, MultimemSelection, WarpgroupMma, TensorMemorySelection):
    """One IR function to machine IR; the `sel_<opcode>` handlers live in the mixins."""
    def __init__(self, fn: ir.Function, arch_info, filename: str | None, layout=None,
                 callees: dict | None = None, pointers: dict | None = None,
                 keep_order: bool = False):
        self.fn = fn
        # -g: the code follows the PTX line by line: nothing hoisted out of loops, and a
        # guarded branch to a block that only exits stays a branch to the `ret` line (as
        # ptxas keeps it) instead of becoming a guarded EXIT
        self.keep_order = keep_order
        self.callees = callees or {}     # out-of-line functions it may call: name -> ir.Function
        self.pointers = pointers or {}   # address-taken functions: name -> pointer value
        # Where the variables the code names live (ptx2sass.variables.KernelLayout).
        self.placements = layout.placements if layout is not None else {}
        self.arch = arch_info
        self.file = filename
        self.mf = MFunction(fn.name, target=arch_info)
        self.values: dict[int, VReg] = {}
        # values PTX reads before writing (`undef`): a register group that holds one leaves
        # that element unwritten rather than copying garbage into it, as ptxas does
        self.undefined: set[int] = {d.id for b in fn.blocks for ins in b.instrs
                                    if ins.opcode == "undef" for d in ins.dests}
        self.param_values: dict[int, list[ConstRef]] = {}    # see note_param_value
        self.const_regs: dict[tuple, VOp] = {}                 # see reg_part
        self.param_moves: dict[int, list[MInstr]] = {}
        self.blocks: dict[int, MBlock] = {}
        self.params = {p.name: p for p in fn.params}
        self.out: list[MInstr] = []
        self.guard: VOp | None = None
        self.line: int | None = None
        self.ins: ir.Instr | None = None
        self._mov_parity = 0
        self.wide_regs: dict = {}        # mma/ldmatrix -> (result register, fragment groups)
        self.part_home: dict = {}        # value id -> (group register, part) it was selected into
        self.gathered: dict = {}         # (machine block, value ids) -> group a gather filled
        self.reciprocals: dict = {}      # (block, type, divisor) -> its 32-bit division reciprocal
        self.block_ends: dict = {}       # IR block id -> the machine block its selection ended in
        self.ir_block = None             # the IR block being selected
        self._loop_nest = None
        self.quotients: dict = {}        # (block, type, divisor, dividend) -> (quotient, remainder)
        self.divrem_pairs = None         # (dividend, divisor, type) that both div and rem use
        self.phi_copy_blocks: dict = {}  # (IR pred, IR succ) -> machine block with the phi copies
        self._fresh_values = 0           # see fresh_value
        self._read_ids: set[int] | None = None   # see never_read
        # 8/16-bit values whose register is known zero above their width (a U8/U16 load,
        # a logical right shift of an extended value): `extend` needs no mask for them
        self.zero_above: dict[int, int] = {}
        # (value id, word) of 64-bit values whose word is known to be zero (the high word of
        # a zero-extension, an `and` with a mask whose word is zero ...): readers of that
        # word take RZ, and the write nothing then reads goes (isel/dead_parts.py)
        self.zero_words: set[tuple[int, int]] = set()
        self.wgmma_reads: list = []      # A groups the tensor core may still read (isel/wgmma.py)
        self.wgmma_uncommitted: list = []    # MMAs since the last wgmma.commit_group
        self.wgmma_groups: list = []     # accumulator value ids of committed, unwaited groups
        self.wgmma_open: set = set()     # ... of the MMAs since the last commit
        self.wgmma_arrive = None             # the last wgmma.fence's WARPGROUP.ARRIVE
        from ptx2sass.divergence import after_divergent_branches, divergent_values
        # values that may differ between lanes, and the IR blocks a branch on one may lead to
        # (where a `.sync.aligned` instruction needs a WARPSYNC first): fixed for the
        # function before anything is selected
        self.divergent: set[int] = divergent_values(fn)
        self.diverged_blocks: set[ir.Block] = after_divergent_branches(fn, self.divergent)

    # ------------------------------------------------------------------ helpers
    def unsupported(self, what: str) -> CompileError:
        return CompileError(f"{what} not supported yet", self.file, self.line)

    def emit(self, opcode: str, modifiers=(), operands=(), ndefs: int = 1, guarded: bool = True,
             widths=None) -> MInstr:
        mi = MInstr(opcode, tuple(modifiers), list(operands), ndefs,
                    self.guard if guarded else None, self.line, dict(widths or {}))
        self.out.append(mi)
        return mi

    def vreg(self, v: ir.Value) -> VReg:
        r = self.values.get(v.id)
        if r is None:
            if v.type == "pred":
                r = self.mf.new_vreg("P")
            else:
                r = self.mf.new_vreg("R", max(1, _bits(v.type) // 32))
            self.values[v.id] = r
            if v.name and v.name != "_":
                self.mf.value_names[r.id] = ((v.name, v.type),)
        return r

    def never_read(self, v: ir.Value) -> bool:
        """Nothing in the function reads `v` (an atomic's unused old value). The read set
        is built on first use: few functions ask."""
        if self._read_ids is None:
            self._read_ids = {value.id for _, _, value in reads(self.fn)}
        return v.id not in self._read_ids

    def fresh_value(self, ty: str) -> ir.Value:
        """An IR value of type `ty` that only selection knows (an intermediate result of one
        PTX instruction); negative ids keep it apart from the function's own values."""
        self._fresh_values -= 1
        return ir.Value(self._fresh_values, ty)

    def dst(self, v: ir.Value, part: int | None = None) -> VOp:
        r = self.vreg(v)
        return VOp(r, part if r.width > 1 else None)

    def begin_wide(self, v: ir.Value) -> None:
        """Start the live range of a value written in parts (unless guarded: then the
        else-copy already defined it)."""
        if self.guard is None:
            self.emit(IMPLICIT_DEF, (), [VOp(self.vreg(v))], guarded=False)

    def mov_op(self) -> tuple[str, tuple[str, ...], list]:
        """ptxas alternates MOV (ALU pipe) and IMAD.MOV.U32 (FMA pipe) for plain moves."""
        self._mov_parity ^= 1
        return ("MOV", ()) if self._mov_parity else ("IMAD", ("MOV", "U32"))

    def move(self, d: VOp, src) -> None:
        op, mods = self.mov_op()
        if op == "MOV":
            self.emit("MOV", mods, [d, src])
        else:
            self.emit("IMAD", mods, [d, RZ, RZ, src])

    def imm32(self, value: int) -> Imm:
        return Imm(value & 0xFFFFFFFF)

    # ------------------------------------------------------------------ parameters in place
    # A kernel parameter loaded with `ld.param` stays readable in constant bank 0: operand
    # slots that take an immediate take `c[0x0][offset]` as well, as in ptxas's code. The
    # load's moves are still emitted (a register is needed wherever a slot wants one) and
    # are dropped after selection when nothing read the register.
    def note_param_value(self, v: ir.Value, parts: list[ConstRef], moves: list[MInstr]) -> None:
        self.param_values[v.id] = parts
        self.param_moves[self.vreg(v).id] = moves

    def drop_unread_param_moves(self) -> None:
        if not self.param_moves:
            return
        own = {id(mi) for moves in self.param_moves.values() for mi in moves}
        read: set[int] = set()
        for mb in self.mf.blocks:
            for mi in mb.instrs:
                if id(mi) in own:
                    continue
                read.update(op.reg.id for _, op, _ in register_operands(mi))
                read.update(op.reg.id for op in combine_registers(mi))
        dead = {id(mi) for reg, moves in self.param_moves.items() if reg not in read for mi in moves}
        if dead:
            for mb in self.mf.blocks:
                mb.instrs[:] = [mi for mi in mb.instrs if id(mi) not in dead]

    def part_of(self, op, part: int, ty: str | None = None):
        """A 32-bit source operand for part `part` of an IR operand: a register, an
        immediate, a kernel parameter in constant bank 0, or RZ for zero."""
        if isinstance(op, ir.Value) and op.id in self.param_values:
            return self.param_values[op.id][part]
        if isinstance(op, ir.Value):
            r = self.vreg(op)
            if r.width == 1:
                return VOp(r)
            if (op.id, part) in self.zero_words:
                return RZ
            return VOp(r, part)
        if isinstance(op, ir.Const):
            word = (op.value >> (32 * part)) & 0xFFFFFFFF
            return RZ if word == 0 else self.imm32(word)
        if isinstance(op, ir.SpecialReg):
            return self.special(op, part)
        raise self.unsupported(f"operand {op!r} of `{self.ins.opcode}`")

    def note_zero_word(self, v: ir.Value, part: int) -> None:
        """Record that word `part` of the 64-bit value `v` was written zero, unguarded."""
        if self.guard is None and self.vreg(v).width == 2:
            self.zero_words.add((v.id, part))

    def is_zero_word(self, op, part: int) -> bool:
        w = self.part_of(op, part)
        return isinstance(w, Reg) and w.is_zero

    def reg_part(self, op, part: int = 0) -> VOp | Reg:
        """Like part_of, but an immediate is first moved into a register."""
        if isinstance(op, ir.Value) and op.id in self.param_values:    # its register
            r = self.vreg(op)
            return VOp(r, part if r.width > 1 else None)
        src = self.part_of(op, part)
        if isinstance(src, Imm):
            # one register per constant and machine block (unguarded: a guarded move would
            # leave it undefined on the other lanes)
            key = (id(self.current), src.value, src.neg, src.text)
            if self.guard is None and key in self.const_regs:
                return self.const_regs[key]
            t = VOp(self.mf.new_vreg())
            self.move(t, src)
            if self.guard is None:
                self.const_regs[key] = t
            return t
        return src

    def in_register(self, op) -> VOp:
        """`op` in a register of its own, even a zero constant (RZ cannot take modifiers such
        as |.| or be written by a guarded copy)."""
        src = self.reg_part(op)
        if isinstance(src, VOp):
            return src
        t = VOp(self.mf.new_vreg())
        self.move(t, src)
        return t

    def new_pair(self) -> VOp:
        """A fresh register pair, defined as a whole (IMPLICIT_DEF) before its halves are
        written one by one, so liveness sees no partial definition."""
        t = VOp(self.mf.new_vreg("R", 2))
        self.emit(IMPLICIT_DEF, (), [t], guarded=False)
        return t

    def pair_of(self, op) -> VOp:
        """A 64-bit operand (immediate, parameter…) moved into a fresh register pair."""
        t = self.new_pair()
        for k in range(2):
            self.move(VOp(t.reg, k), self.part_of(op, k))
        return t

    def float_imm(self, op: ir.Const, bits: int = 32) -> Imm | VOp | Reg:
        if op.value == 0:
            return RZ
        text = float_bits_text(op.value & 0xFFFFFFFF, 32)
        if "NAN" in text:
            return self.reg_part(op)
        return parse_operand(text)

    def fsrc(self, op, allow_imm: bool = True):
        if isinstance(op, ir.Const):
            return self.float_imm(op) if allow_imm else self.reg_part(op)
        return self.part_of(op, 0)

    def special(self, sr: ir.SpecialReg, part: int = 0):
        if sr.name in CBANK_SPECIALS:
            which, offset = CBANK_SPECIALS[sr.name]
            return ConstRef(0, self.arch.block_dims_cbank[which] + offset)
        if sr.name in S2R_NAMES:
            t = VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg(S2R_NAMES[sr.name])])
            return t
        if sr.name == "%warpsize" or sr.name == "WARP_SZ":
            return Imm(32)
        src = self.other_special(sr, part)          # isel/special_regs.py
        if src is None:
            raise self.unsupported(f"special register {sr.name}")
        return src

    def extend(self, op, ty: str, part: int = 0):
        """A 32-bit operand holding `op` (of 8/16-bit type `ty`) properly zero/sign-extended."""
        src = self.part_of(op, part)
        bits = _bits(ty)
        known = self.zero_above.get(op.id) if isinstance(op, ir.Value) and part == 0 else None
        if known is not None and isinstance(src, VOp) and (known < bits or (known == bits and not _signed(ty))):
            return src
        if bits < 32 and isinstance(src, ConstRef):
            src = self.as_reg(src)      # a parameter word: its high bits are the value's own
        if bits >= 32 or not isinstance(src, VOp):
            if isinstance(src, Imm) and bits < 32:
                v = src.value & ((1 << bits) - 1)
                if _signed(ty) and v >> (bits - 1):
                    v -= 1 << bits
                return self.imm32(v)
            return src
        t = VOp(self.mf.new_vreg())
        if _signed(ty):
            self.emit("SGXT", (), [t, src, Imm(bits)])
        else:
            self.emit("LOP3", ("LUT",), [t, src, Imm((1 << bits) - 1), RZ, Imm(LUT["and"]), NOT_PT])
        return t

    # ------------------------------------------------------------------ driver
    def run(self) -> MFunction:
        for b in self.fn.blocks:
            self.blocks[id(b)] = MBlock(b.name)
        order = [b for b in self.fn.blocks if b.preds or b is self.fn.entry]
        # Temporaries the phis of each block read at its top (filled per predecessor).
        self.phi_temps: dict[int, list[tuple[ir.Phi, VReg]]] = {}
        loop_groups = self.plan_loop_groups()
        for b in order:
            temps = []
            for phi in b.phis:
                d = self.vreg(phi.dest)
                temps.append((phi, self.mf.new_vreg(d.cls, d.width)))
            self.phi_temps[id(b)] = temps
        for b in order:
            mb = self.current = self.blocks[id(b)]
            self.ir_block = b
            self.out = mb.instrs
            self.guard = None
            if b is self.fn.entry and not self.fn.is_entry:
                self.begin_function()            # isel/calls.py
            for phi, tmp in self.phi_temps[id(b)]:
                self.emit(COPY, (), [VOp(self.vreg(phi.dest)), VOp(tmp)], guarded=False)
            body = b.instrs
            term = body[-1] if body and body[-1].is_terminator else None
            for ins in (body[:-1] if term else body):
                self.select(ins)
            self.phi_copies(b)
            mb = self.current           # a selection that made a loop continues in a new block
            mb.succs = [self.blocks[id(s)] for s in b.succs]
            for s in mb.succs:
                s.preds.append(mb)
            self.terminator(b, mb, term)
            self.block_ends[id(b)] = mb
            self.mf.blocks.append(mb)
        if not self.fn.is_entry:
            self.end_function()                  # isel/calls.py
        self.place_loop_groups(loop_groups)
        self.place_entry_values()                # isel/memory.py
        self.drop_unread_param_moves()
        if {1, 2} <= self.mf.tmem_cta_groups:     # ptxas's function-wide check (no line)
            raise CompileError(f"Function '{self.fn.name}' uses single CTA(.cta_group::1) and CTA pair "
                               "granularity(.cta_group::2) and that is not allowed.", None, None)
        return self.mf

    def start_block(self, suffix: str) -> MBlock:
        """End the current machine block (falling through) and continue in a new one, for
        selections that need control flow of their own (a compare-and-swap loop). The
        caller links any extra edges; the IR block's tail then lands in the new block."""
        prev = self.current
        nb = MBlock(f"{prev.name.split('$')[0]}${suffix}{len(self.mf.blocks)}")
        prev.succs.append(nb)
        nb.preds.append(prev)
        prev.fallthrough = nb
        self.mf.blocks.append(prev)
        self.current, self.out = nb, nb.instrs
        return nb

    def enter_block(self, nb: MBlock, falls_in: bool) -> None:
        """End the current machine block and continue in `nb`, made earlier as a branch
        target; `falls_in`: the current block runs on into it (else it ends in a BRA)."""
        prev = self.current
        if falls_in:
            prev.succs.append(nb)
            nb.preds.append(prev)
            prev.fallthrough = nb
        self.mf.blocks.append(prev)
        self.current, self.out = nb, nb.instrs

    def branch_to(self, target: MBlock, pred=None, taken_when: bool = True) -> None:
        """A BRA from the current block to `target` (a block entered later): unconditional,
        or taken where `pred` is `taken_when`."""
        guard = None if pred is None else VOp(pred.reg, inv=not taken_when)
        self.out.append(MInstr("BRA", (), [Label(target.name)], 0, guard, self.line))
        self.current.succs.append(target)
        target.preds.append(self.current)

    def hoist_target(self, inputs) -> ir.Block | None:
        """The IR block (a loop preheader, already selected) where a computation from
        `inputs` alone may go instead of inside the loops around the current block."""
        if self.ir_block is None or self.guard is not None or self.keep_order:
            return None
        if self._loop_nest is None:
            from ptx2sass.isel.loop_invariants import LoopNest
            self._loop_nest = LoopNest(self.fn)
        pre = self._loop_nest.preheader_for(self.ir_block, inputs)
        return pre if pre is not None and id(pre) in self.block_ends else None

    def emitting_at_end_of(self, ir_block: ir.Block):
        """A context in which `emit` appends to the machine block where `ir_block`'s
        selection ended, before its branch (that block is done: only its tail moves)."""
        import contextlib

        @contextlib.contextmanager
        def ctx():
            mb = self.block_ends[id(ir_block)]
            tail = []
            while mb.instrs and mb.instrs[-1].opcode in ("BRA", "EXIT") :
                tail.insert(0, mb.instrs.pop())
            saved = self.out, self.current
            self.out, self.current = mb.instrs, mb
            try:
                yield
            finally:
                mb.instrs.extend(tail)
                self.out, self.current = saved
        return ctx()

    def phi_copies(self, b: ir.Block) -> None:
        self.guard = None
        for s in b.succs:
            self.phi_copy_blocks[(id(b), id(s))] = self.current
            for phi, tmp in self.phi_temps.get(id(s), []):
                for pred, v in phi.incoming:
                    if pred is b:
                        self.line = None
                        self.copy_into(VOp(tmp), v, phi.dest.type)

    def copy_into(self, d: VOp, v, ty: str) -> None:
        if isinstance(v, ir.Value):
            self.emit(COPY, (), [d, VOp(self.vreg(v))], guarded=False)
        elif isinstance(v, ir.Const):
            if d.reg.cls == "P":
                self.emit("PLOP3", ("LUT",), [d, PT, PT, PT, PT, Imm(0xFF if v.value else 0), Imm(0)],
                          ndefs=1)
                return
            if d.reg.width > 1 and self.guard is None:
                self.emit(IMPLICIT_DEF, (), [d], guarded=False)
            for k in range(d.reg.width):
                word = (v.value >> (32 * k)) & 0xFFFFFFFF
                self.move(VOp(d.reg, k if d.reg.width > 1 else None), RZ if word == 0 else Imm(word))
        else:
            raise self.unsupported(f"phi operand {v!r}")

    def terminator(self, b: ir.Block, mb: MBlock, term: ir.Instr | None) -> None:
        self.guard = None
        if term is None:
            mb.fallthrough = mb.succs[0] if mb.succs else None
            last = b.instrs[-1] if b.instrs else None
            traps = last is not None and last.opcode == "trap" and last.guard is None
            if not mb.succs and not traps:     # after BPT.TRAP nothing runs: ptxas writes no EXIT
                self.emit("EXIT", (), [], ndefs=0)
            return
        self.line = term.line
        self.ins = term
        if term.opcode == "ret" and not self.fn.is_entry:
            return self.select_return(term, mb)           # isel/calls.py
        if term.opcode in ("ret", "exit"):
            guard = self.guard_of(term)
            self.out.append(MInstr("EXIT", (), [], 0, guard, term.line))
            mb.fallthrough = mb.succs[0] if guard is not None and mb.succs else None
            if guard is not None and not mb.succs:
                self.emit("EXIT", (), [], ndefs=0)
            return
        if term.opcode == "brx":
            return self.select_brx(term, mb)       # isel/calls.py
        if term.opcode != "bra":
            raise self.unsupported(f"`{term.opcode}`")
        target = mb.succs[0]
        guard = self.guard_of(term)
        if guard is None:      # layout emits the BRA unless the target comes next
            mb.fallthrough = target
            return
        ir_target = b.succs[0]
        exits_only = (not self.keep_order and self.fn.is_entry and not ir_target.phis and len(ir_target.instrs) == 1
                      and ir_target.instrs[0].opcode in ("ret", "exit") and ir_target.instrs[0].guard is None)
        # a branch to a block that only exits is a guarded EXIT, as ptxas writes it
        mi = MInstr("EXIT" if exits_only else "BRA", (), [] if exits_only else [Label(target.name)],
                    0, guard, term.line)
        mi.uniform = term.guard.id not in self.divergent
        self.out.append(mi)
        mb.fallthrough = mb.succs[1] if len(mb.succs) > 1 else None

    def guard_of(self, ins: ir.Instr):
        if ins.guard is None:
            return None
        r = self.vreg(ins.guard)
        return VOp(r, inv=ins.guard_negated)

    def select(self, ins: ir.Instr) -> None:
        self.ins = ins
        self.line = ins.line
        self.guard = None
        if ins.guard is not None:
            g = self.guard_of(ins)
            if not (ins.opcode in ("ld", "ldu") and self.merges_in_place(ins)):
                for d, m in zip(ins.dests, ins.merge):
                    # an else-value held in a register moved from a constant is that
                    # constant (`MOV R, RZ` next to the load, as ptxas writes it, where a
                    # copy of the shared register is hoisted with the copies at the top)
                    known = self.known_constant(m)
                    if known is not None and isinstance(m, ir.Value) and self.vreg(m).cls == "R":
                        m = ir.Const(known, m.type)
                    self.copy_into(VOp(self.vreg(d)), m, d.type)
            self.guard = g
        handler = getattr(self, "sel_" + ins.opcode.replace(".", "_"), None)
        if handler is None:
            raise self.unsupported(f"PTX instruction `{ins.opcode}`")
        if (self.wgmma_groups or self.wgmma_open) and ins.opcode != "wgmma":
            self.wait_for_accumulators(ins)
        handler(ins)
        self.guard = None
        if ins.guard is None and len(ins.dests) == 1 and ins.type in ZERO_EXTENDED_RESULTS:
            if (ins.opcode in ("ld", "ldu") and ins.space != "param") or \
                    (ins.opcode == "shr" and not _signed(ins.type)):
                self.zero_above[ins.dests[0].id] = _bits(ins.type)



def select_function(fn: ir.Function, arch_info, filename: str | None = None,
                    layout=None, callees: dict | None = None, pointers: dict | None = None,
                    keep_order: bool = False) -> MFunction:
    return Selector(fn, arch_info, filename, layout, callees, pointers, keep_order).run()
