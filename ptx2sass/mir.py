"""Machine IR: SASS instructions over virtual registers, between instruction selection and
register allocation.

An `MInstr` is one SASS instruction whose register operands may still be virtual (`VOp`
naming a `VReg`, or one 32-bit part of a wide one). Its first `ndefs` operands are the
registers it writes; everything else is read. The code is not in SSA form: a value built in
parts (a 64-bit add writes its low and high halves separately) or written under a guard
(`@P0 R2 = ...`) is defined more than once, so liveness treats a partial or guarded write as
a use-and-def and `IMPLICIT_DEF` starts such a value's live range.

Physical operands (`RZ`, `PT`, `UR4`, constants, immediates) are the encoder's own model
objects, so after allocation an `MInstr` turns into an `encoder.model.Instruction` by
replacing each `VOp` with its register.
"""
from __future__ import annotations

from dataclasses import field

from ptx2sass.records import dataclass
from ptx2sass.encoder.model import ConstRef, Imm, IndexList, Label, Reg, Reloc, SpecialReg

# Pseudo-instructions that exist only before allocation / encoding.
IMPLICIT_DEF = "IMPLICIT_DEF"   # starts a live range (a value built in parts, or PTX undef)
COPY = "COPY"                   # register copy, lowered to MOV (or dropped when coalesced)
PSEUDOS = frozenset({IMPLICIT_DEF, COPY})


@dataclass(eq=False)
class VReg:
    """A virtual register: `cls` is the register file ("R" or "P"), `width` the number of
    consecutive 32-bit registers (1, 2 for an even-aligned pair, 4 for an aligned quad)."""
    id: int
    cls: str
    width: int = 1

    def __repr__(self) -> str:
        return f"%{self.cls.lower()}{self.id}" + (f"x{self.width}" if self.width > 1 else "")


@dataclass(frozen=True, slots=True)
class VOp:
    """A register operand on a virtual register: the whole register (`part` None) or one
    32-bit part of a wide one; `neg`/`abs`/`inv`/`suffix` as on `encoder.model.Reg`."""
    reg: VReg
    part: int | None = None
    neg: bool = False
    abs: bool = False
    inv: bool = False
    suffix: tuple[str, ...] = ()

    @property
    def width(self) -> int:
        return self.reg.width if self.part is None else 1


@dataclass(frozen=True, slots=True)
class VMem:
    """A memory address on a virtual base register: `[%r.64+offset]` (`wide`) or `[%r+offset]`;
    the base may also be a physical register (the stack pointer R1, RZ) or None (`[imm]`)."""
    base: VOp | None
    offset: int = 0
    wide: bool = True
    suffix64: bool = True      # print a wide base as `R2.64` (compare-and-swap forms: `R2`)
    # a `+URZ` term: forms whose address always adds a uniform register (the mbarrier
    # arrivals: `ATOMS.ARRIVE.64 R2, [R4+URZ+0x8]`, `[URZ]` for an absolute address)
    uniform_zero: bool = False
    # reads the global-memory descriptor (sm_90 prints `desc[URx]`); a 64-bit pair that is no
    # global address (STAS's shared::cluster/mbarrier pair) does not
    described: bool = True
    # a virtual uniform register added to the address (`[R2+UR8+0x660]`: a shared window base
    # the warp shares, isel/shared_addresses.py's `fold_uniform_shared_terms`); None: no term
    ubase: VOp | None = None


@dataclass(eq=False)
class MInstr:
    opcode: str
    modifiers: tuple[str, ...] = ()
    operands: list = field(default_factory=list)
    ndefs: int = 0
    guard: VOp | Reg | None = None
    line: int | None = None
    # Extra register footprint the operands cannot show (e.g. the high register of a
    # 64-bit store's data `R4` covers R4..R5): operand index -> width in 32-bit registers.
    widths: dict[int, int] = field(default_factory=dict)
    # Physical registers the instruction destroys beyond its operands (a call: the
    # predicates, see ptx2sass.abi): no value live across it may be kept in them.
    clobbers: tuple[tuple[str, int], ...] = ()
    # Indices of the operands the SASS instruction prints (None: all). The others are
    # register uses and defs the instruction implies without naming them (a call's
    # arguments and results in the ABI registers), there for liveness and scheduling.
    shown: tuple[int, ...] | None = None
    # A conditional branch whose guard is the same in every lane (ptx2sass.divergence): it
    # keeps the warp together and needs no reconvergence barrier (ptx2sass.reconverge).
    uniform: bool = False
    # An atomic whose address is the same in every lane, to be done once for the warp
    # (isel/warp_aggregated_atomics.py): ("count", value) adds value × the active lanes,
    # ("reduce", register) combines the lanes' registers with REDUX; the data operand is a
    # register that pass writes.
    warp_combine: tuple | None = None

    @property
    def defs(self) -> list:
        return self.operands[:self.ndefs]

    @property
    def uses(self) -> list:
        return self.operands[self.ndefs:]

    def __repr__(self) -> str:
        g = f"@{self.guard!r} " if self.guard is not None else ""
        return f"{g}{'.'.join((self.opcode, *self.modifiers))} {self.operands}"


@dataclass(eq=False)
class MBlock:
    name: str
    instrs: list[MInstr] = field(default_factory=list)
    succs: list["MBlock"] = field(default_factory=list)
    preds: list["MBlock"] = field(default_factory=list)
    # The successor reached without a branch (None: the block ends in EXIT or an
    # unconditional BRA); layout must place it next or add a BRA.
    fallthrough: "MBlock | None" = None

    def __repr__(self) -> str:
        return f"MBlock({self.name})"


@dataclass(eq=False)
class MFunction:
    name: str
    blocks: list[MBlock] = field(default_factory=list)
    vregs: list[VReg] = field(default_factory=list)
    uses_global_descriptor: bool = False    # some memory access reads desc[UR4]
    num_barriers: int = 0                   # NUM_BARRIERS: highest barrier id named + 1
    multicast_bulk: bool = False            # a multimem bulk copy (UBLKCP/UBLKRED) is issued
    tmem_used: bool = False                 # any tcgen05 instruction (isel/tcgen05.py)
    tmem_cta_groups: set = field(default_factory=set)   # tcgen05 `.cta_group::N` used (1, 2)
    tmem_alloc: bool = False                # tcgen05.alloc/dealloc: the reserved partition's bitmaps
    # a setmaxnreg after a divergent branch (kept or dropped): ptxas writes CRS_STACK_SIZE 0
    setmaxnreg_diverged: bool = False
    warp_sync: list = field(default_factory=list)   # `.sync` warp operations (COOP_GROUP_*)
    # BARs of non-aligned barriers (ptx2sass/barrier_routine.py): a routine where diverged
    nonaligned_barriers: list = field(default_factory=list)
    jump_tables: list = field(default_factory=list)  # `brx.idx`: target label names, per BRX in order
    # vreg id -> the physical register it must get (calling-convention registers)
    precolored: dict = field(default_factory=dict)
    calls: list = field(default_factory=list)        # names of the functions it calls, in order
    externs: list = field(default_factory=list)      # bodiless functions (system calls) it calls
    pointer_calls: bool = False      # -g: calls through a pointer (`CALL.ABS.NOINC R`)
    pointer_prototype: str | None = None    # the first such call's prototype string (abi.call_prototype)
    # vreg id -> ((PTX register name, PTX type), ...) of the values it holds (-g's register
    # maps; coalescing merges them)
    value_names: dict = field(default_factory=dict)
    target: object = None                            # the encoder.arch.Target compiled for
    shared_addresses: bool = False                   # computes cluster shared addresses (sm_90)
    # the physical UR/UP registers virtual "UR"/"UP" ones may take (isel/uniform_datapath.py)
    uniform_registers: dict = field(default_factory=dict)

    def new_vreg(self, cls: str = "R", width: int = 1) -> VReg:
        v = VReg(len(self.vregs), cls, width)
        self.vregs.append(v)
        return v

    def fixed_vreg(self, cls: str, index: int, width: int = 1) -> VReg:
        """A new virtual register that the allocator must put at physical `index`."""
        v = self.new_vreg(cls, width)
        self.precolored[v.id] = index
        return v


def copy_function(mf: MFunction) -> tuple[MFunction, dict[int, MInstr]]:
    """A copy of `mf` that register allocation may rewrite while `mf` stays as it is (an
    allocation tried both ways, codegen._allocate_full_occupancy): new blocks, instructions
    (their operand lists and widths) and the containers allocation changes; the virtual
    registers (never changed in place) and operands (immutable values) shared. A tenth of
    `copy.deepcopy`'s time on real-world kernels. Also id(instruction) -> its copy."""
    import copy
    copies: dict[int, MInstr] = {}

    def instr(ins: MInstr) -> MInstr:
        new = copy.copy(ins)
        new.operands, new.widths = list(ins.operands), dict(ins.widths)
        copies[id(ins)] = new
        return new
    blocks = {id(b): MBlock(b.name, [instr(ins) for ins in b.instrs]) for b in mf.blocks}
    for b in mf.blocks:
        new = blocks[id(b)]
        new.succs = [blocks[id(s)] for s in b.succs]
        new.preds = [blocks[id(p)] for p in b.preds]
        new.fallthrough = blocks[id(b.fallthrough)] if b.fallthrough is not None else None
    other = copy.copy(mf)
    other.blocks = [blocks[id(b)] for b in mf.blocks]
    other.vregs = list(mf.vregs)
    other.tmem_cta_groups = set(mf.tmem_cta_groups)
    other.warp_sync = [copies.get(id(ins), ins) for ins in mf.warp_sync]
    other.jump_tables = list(mf.jump_tables)
    other.precolored = dict(mf.precolored)
    other.calls, other.externs = list(mf.calls), list(mf.externs)
    other.value_names = dict(mf.value_names)
    other.uniform_registers = {k: copy.copy(v) for k, v in mf.uniform_registers.items()}
    return other, copies


_NO_REGISTER = frozenset({Reg, Imm, SpecialReg, Label, Reloc, IndexList, str, int})   # exact types


def forget_register_operands(mf: MFunction) -> None:
    """Drop the answers `register_operands` keeps on `mf`'s instructions (for when the
    passes that ask are done: they are ~0.5 KB an instruction, and the instructions live
    until the cubin is written)."""
    for b in mf.blocks:
        for ins in b.instrs:
            ins.__dict__.pop("_register_operands", None)


def register_operands(ins: MInstr) -> list[tuple[int, VOp, bool]]:
    """(operand index, VOp, is_def) for every virtual register the instruction names,
    including address bases and the guard (index -1). A list, not a generator: the
    allocator and schedulers ask tens of times per instruction.

    The answer is kept on the instruction with a copy of the operands, `ndefs` and the
    guard it was worked out from, and given again (a new list) while they are the same:
    every pass asks again (~53,000 times for ~2,000 instructions at nestloops:100), most
    of them of code no pass changed. Operands are immutable values, compared by equality:
    an operand replaced by an equal one names the same register the same way."""
    own = ins.__dict__
    known = own.get("_register_operands")
    ndefs = ins.ndefs
    if known is not None and known[1] == ndefs and known[2] is ins.guard and known[0] == ins.operands:
        return list(known[3])
    ops = ins.operands[:]       # (of the same type: compared with the operands as they are)
    out = []
    for i, op in enumerate(ops):
        t = type(op)
        if t is VOp:
            out.append((i, op, i < ndefs))
        elif t is VMem:
            if type(op.base) is VOp:
                out.append((i, op.base, False))
            if op.ubase is not None:
                out.append((i, op.ubase, False))
        elif t is ConstRef:
            if type(op.ureg) is VOp:
                out.append((i, op.ureg, False))
        elif t in _NO_REGISTER:
            continue
        elif isinstance(op, VOp):
            out.append((i, op, i < ndefs))
        elif isinstance(op, VMem):
            if isinstance(op.base, VOp):
                out.append((i, op.base, False))
            if op.ubase is not None:
                out.append((i, op.ubase, False))
        elif isinstance(op, ConstRef) and isinstance(op.ureg, VOp):
            out.append((i, op.ureg, False))
    if isinstance(ins.guard, VOp):
        out.append((-1, ins.guard, False))
    own["_register_operands"] = (ops, ndefs, ins.guard, tuple(out))
    return out


def writers(mf: MFunction) -> dict[int, list[MInstr]]:
    """Virtual register id -> the instructions that write it (any part), in block order."""
    out: dict[int, list[MInstr]] = {}
    for b in mf.blocks:
        for ins in b.instrs:
            for _, op, is_def in register_operands(ins):
                if is_def:
                    out.setdefault(op.reg.id, []).append(ins)
    return out
