"""Shared-memory addresses folded into the access, as ptxas writes them: the variable's
window offset becomes the immediate and a left shift by 2, 3 or 4 the base's scale
(`shl.b32 t, i, 2; add.s32 a, local, t; ld.shared [a+4]` is `LDS R0, [Ri.X4+0x4]`, not a
MOV of the window offset, a shift and an add). Run on the machine IR after selection,
before allocation.

A 32-bit window address `[b+o]` of LDS/STS/ATOMS whose base b is written once, by a plain
IADD3 of one register and constants (immediates, RZ, registers written once with an
immediate), becomes `[r+o+c]`; a base r written once by `SHF.L.U32 r, s, k, RZ` (or
`IMAD.SHL r, s, 2^k, RZ`) with k in 2..4 becomes `[s.X{2^k}+...]` where the target
scales shared indices (`Target.scaled_shared_index`). The hardware forms
the address in 32 bits (`[R.X4+imm]` is (R*4 + imm) mod 2^32, as the shift and add were;
ptxas folds a shift of any register so, not only of known-small indices). Registers written
once hold one value wherever they are read (their single definition dominates their uses),
so reading s or r at the access instead of b reads the same values. Only forms the
target's table encodes are written (probed once per form); the adds and shifts nothing
reads any more are removed.

After the uniform pass, `fold_uniform_shared_terms` puts a uniform window base that a
plain IADD3 adds to a lane's offset into the access's UR term (`[R+UR+o]`, sm_90+)."""
from __future__ import annotations

import functools

from ptx2sass.encoder.model import Imm, Instruction, Mem, Reg
from ptx2sass.isel.common import register_counts
from ptx2sass.mir import MFunction, MInstr, VMem, VOp, register_operands

ACCESSES = frozenset({"LDS", "STS", "ATOMS"})
# accesses whose address may add a uniform register (ptxas: `LDSM.16.M88.4 R12, [R0+UR5+0x400]`)
UNIFORM_TERM_ACCESSES = ACCESSES | {"LDSM", "STSM"}
SCALES = {2: "X4", 3: "X8", 4: "X16"}
OFFSET_LIMIT = 1 << 23          # the access's signed 24-bit immediate
PURE = frozenset({"IADD3", "SHF", "IMAD", "MOV"})
RZ = Reg("R", 255)


def _whole(op) -> bool:
    return (isinstance(op, VOp) and op.part is None and op.reg.width == 1 and op.reg.cls == "R"
            and not (op.neg or op.abs or op.inv or op.suffix))


def _is_zero(op) -> bool:
    return isinstance(op, Reg) and op.is_zero


class _Defs:
    """The single, unguarded definition of each register written exactly once."""

    def __init__(self, mf: MFunction):
        self.reads, writes = register_counts(mf)
        self.single: dict[int, MInstr] = {}
        self.single_uniform: set[int] = set()      # URs written once, unguarded
        for b in mf.blocks:
            for ins in b.instrs:
                if ins.ndefs == 1 and ins.guard is None and _whole(ins.operands[0]) \
                        and writes.get(ins.operands[0].reg.id) == 1 \
                        and ins.operands[0].reg.id not in mf.precolored:
                    self.single[ins.operands[0].reg.id] = ins
                d = ins.operands[0] if ins.ndefs == 1 and ins.operands else None
                if isinstance(d, VOp) and d.reg.cls == "UR" and d.reg.width == 1 and d.part is None \
                        and ins.guard is None and writes.get(d.reg.id) == 1 \
                        and d.reg.id not in mf.precolored:
                    self.single_uniform.add(d.reg.id)

    def of(self, op) -> MInstr | None:
        return self.single.get(op.reg.id) if _whole(op) else None

    def constant(self, op) -> int | None:
        """The 32-bit value of an operand that is a constant: an immediate, RZ, or a register
        written once with an immediate (`MOV r, 0x400`, `IMAD.MOV.U32 r, RZ, RZ, 0x400`)."""
        if _is_zero(op):
            return 0
        if isinstance(op, Imm) and op.text is None and not op.neg and not op.abs:
            return op.value & 0xFFFFFFFF
        d = self.of(op) if isinstance(op, VOp) else None
        if d is None:
            return None
        if (d.opcode, d.modifiers) == ("IMAD", ("MOV", "U32")) and _is_zero(d.operands[1]) \
                and _is_zero(d.operands[2]) and not isinstance(d.operands[3], VOp):
            return self.constant(d.operands[3])
        if d.modifiers:
            return None
        if d.opcode == "MOV" and len(d.operands) == 2 and not isinstance(d.operands[1], VOp):
            return self.constant(d.operands[1])
        return None


def _signed(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def _split_add(defs: _Defs, base: VOp) -> tuple[VOp, int] | None:
    """(register, constant) when `base` is written once by a plain IADD3 of one register and
    constants."""
    d = defs.of(base)
    if d is None or d.opcode != "IADD3" or d.modifiers or len(d.operands) != 4:
        return None
    regs, total = [], 0
    for op in d.operands[1:]:
        c = defs.constant(op)
        if c is not None:
            total += c
        elif _whole(op):
            regs.append(op)
        else:
            return None
    if len(regs) != 1:
        return None
    return regs[0], _signed(total)


def _scaled(defs: _Defs, base: VOp) -> tuple[VOp, str] | None:
    """(s, "X4") when `base` is written once as s << 2 (and so for 3 and 4)."""
    d = defs.of(base)
    if d is None or len(d.operands) != 4 or not _is_zero(d.operands[3]) or not _whole(d.operands[1]):
        return None
    k = d.operands[2]
    if not (isinstance(k, Imm) and k.text is None and not k.neg):
        return None
    if d.opcode == "SHF" and d.modifiers == ("L", "U32"):
        shift = k.value
    elif d.opcode == "IMAD" and d.modifiers in (("SHL",), ("SHL", "U32")) and k.value & (k.value - 1) == 0:
        shift = k.value.bit_length() - 1
    else:
        return None
    if shift not in SCALES:
        return None
    return d.operands[1], SCALES[shift]


@functools.cache
def _encodable(arch: str, opcode: str, modifiers: tuple, shape: tuple, scale: str | None) -> bool:
    """Whether the arch encodes the access with a scaled (or plain) register base."""
    from ptx2sass.encoder import codec
    ops = []
    for kind in shape:
        if kind == "mem":
            ops.append(Mem(base=Reg("R", 8, suffix=(scale,) if scale else ()), offset=0x10))
        elif kind == "memu":
            ops.append(Mem(base=Reg("R", 8, suffix=(scale,) if scale else ()), ubase=Reg("UR", 255),
                           offset=0x10))
        elif kind == "RZ":
            ops.append(RZ)
        else:
            ops.append(Reg("R", 4))
    try:
        codec.encode(Instruction(opcode, modifiers, tuple(ops)), arch, 0, [])
        return True
    except Exception:       # no such form in the arch's table
        return False


def encodes_uniform_term(arch: str, ins: MInstr, index: int, with_base: bool = True) -> bool:
    """Whether the arch's table encodes shared access `ins` with operand `index` an address
    that adds a uniform register (`[R8+UR8+0x10]`, or `[UR8+0x10]` without `with_base`)."""
    ops = []
    for k, op in enumerate(ins.operands):
        if k == index:
            ops.append(Mem(base=Reg("R", 8) if with_base else None, ubase=Reg("UR", 8), offset=0x10))
        elif isinstance(op, VOp):
            ops.append(Reg(op.reg.cls if op.reg.cls in ("P", "UP", "UR") else "R", 4 if op.reg.cls in ("R", "UR") else 0))
        elif isinstance(op, VMem):
            return False
        else:
            ops.append(op)
    return _encodes(arch, ins.opcode, tuple(ins.modifiers), tuple(ops))


@functools.cache
def _encodes(arch: str, opcode: str, modifiers: tuple, ops: tuple) -> bool:
    from ptx2sass.encoder import codec
    try:
        codec.encode(Instruction(opcode, modifiers, ops), arch, 0, [])
        return True
    except Exception:       # no such form in the arch's table
        return False


def _uniform_term(defs: "_Defs", base: VOp, depth: int = 3) -> tuple[VOp, VOp, int] | None:
    """(register, uniform register, constant) when `base` is written once by a plain IADD3
    of one general register, one uniform register and constants, or by one of a general
    register and constants whose register is so written (ptxas's `LDSM [R0+UR5+0x400]` for
    a second buffer `b + 0x400`, b the first's `lane + window`)."""
    split = _split_add(defs, base)
    if split is not None and depth > 0:
        inner = _uniform_term(defs, split[0], depth - 1)
        return None if inner is None else (inner[0], inner[1], _signed(inner[2] + split[1]))
    d = defs.of(base)
    if d is None or d.opcode != "IADD3" or d.modifiers or len(d.operands) != 4:
        return None
    regs, urs, total = [], [], 0
    for op in d.operands[1:]:
        c = defs.constant(op)
        if c is not None:
            total += c
        elif _whole(op):
            regs.append(op)
        elif isinstance(op, VOp) and op.reg.cls == "UR" and op.reg.width == 1 and op.part is None \
                and not (op.neg or op.abs or op.inv or op.suffix) and op.reg.id in defs.single_uniform:
            # (written once: its one write dominates the add, and so the access, and nothing
            # changes it between; a loop-carried UR, a pipeline stage's base, is not read so)
            urs.append(op)
        else:
            return None
    if len(regs) != 1 or len(urs) != 1 or defs.of(regs[0]) is None:
        return None
    return regs[0], urs[0], _signed(total)


def fold_uniform_shared_terms(mf: MFunction) -> int:
    """`[b+o]` of LDS/STS/ATOMS, b written once by `IADD3 b, x, UR, c`, as `[x+UR+o+c]`
    (ptxas's `LDS.U8 R49, [R32+UR8+0x660]` on sm_90/100/120: the CTA's window base stays in
    a UR, each lane's offset in an R), where `Target.shared_uniform_address_term` and the
    table encodes the form. Run after the uniform pass made the window base a UR; the adds
    nothing reads any more are removed. x and the UR are each written once, unguarded, so
    their writes dominate the add and so the access: reading them there reads the same values."""
    target = mf.target
    if target is None or not getattr(target, "shared_uniform_address_term", False):
        return 0
    arch = target.name
    defs = _Defs(mf)
    folded = 0
    replaced: set[int] = set()
    for ins, i, mem in _window_operands(mf, UNIFORM_TERM_ACCESSES):
        if mem.ubase is not None or mem.uniform_zero:
            continue
        term = _uniform_term(defs, mem.base)
        if term is None or not -OFFSET_LIMIT <= mem.offset + term[2] < OFFSET_LIMIT \
                or not encodes_uniform_term(arch, ins, i):
            continue
        ins.operands[i] = VMem(term[0], mem.offset + term[2], wide=False, suffix64=mem.suffix64,
                               ubase=term[1])
        replaced.add(mem.base.reg.id)
        folded += 1
    if folded:
        _remove_unread(mf, defs, replaced)
    return folded


def _shape(ins: MInstr) -> tuple:
    out = []
    for op in ins.operands:
        if isinstance(op, VMem):
            out.append("memu" if op.uniform_zero else "mem")
        elif _is_zero(op):
            out.append("RZ")
        else:
            out.append("R")
    return tuple(out)


def fold_shared_addresses(mf: MFunction) -> int:
    arch = getattr(mf.target, "name", None)
    if arch is None:
        return 0
    defs = _Defs(mf)
    folded = 0
    replaced: set[int] = set()
    for ins, i, mem in _window_operands(mf, ACCESSES):
        base, offset = mem.base, mem.offset
        split = _split_add(defs, base)
        if split is not None and -OFFSET_LIMIT <= offset + split[1] < OFFSET_LIMIT:
            base, offset = split[0], offset + split[1]
        scaled = _scaled(defs, base)
        shape = _shape(ins)
        if scaled is not None and mf.target.scaled_shared_index and _encodable(arch, ins.opcode, ins.modifiers, shape, scaled[1]):
            base = VOp(scaled[0].reg, suffix=(scaled[1],))
        if base is mem.base or not _encodable(arch, ins.opcode, ins.modifiers, shape, None):
            continue
        ins.operands[i] = VMem(base, offset, wide=False, suffix64=mem.suffix64,
                               uniform_zero=mem.uniform_zero)
        replaced.add(mem.base.reg.id)
        folded += 1
    if folded:
        _remove_unread(mf, defs, replaced)
    return folded


def _window_operands(mf: MFunction, opcodes):
    """(instruction, operand index, memory operand) of every access among `opcodes` whose
    address is a whole 32-bit window register plus an offset: what the folds may rewrite."""
    for b in mf.blocks:
        for ins in b.instrs:
            if ins.opcode in opcodes:
                for i, mem in enumerate(ins.operands):
                    if isinstance(mem, VMem) and not mem.wide and _whole(mem.base):
                        yield ins, i, mem


def _remove_unread(mf: MFunction, defs: _Defs, candidates: set[int]) -> None:
    """Drop the definitions (adds, shifts, moves of constants) of the replaced bases, and
    of what only they read, once nothing reads their result."""
    reads, _ = register_counts(mf)
    dead: set[int] = set()          # id() of the instructions to drop
    work = list(candidates)
    while work:
        r = work.pop()
        d = defs.single.get(r)
        if d is None or reads.get(r) or id(d) in dead or d.opcode not in PURE or d.widths:
            continue
        dead.add(id(d))
        for _, op, is_def in register_operands(d):
            if not is_def:
                reads[op.reg.id] -= 1
                work.append(op.reg.id)
    for b in mf.blocks:
        b.instrs = [ins for ins in b.instrs if id(ins) not in dead]
