"""The selector's sm_8x choices made into the target's own, after selection.

The selector writes the instructions ptxas writes for sm_8x. Where a target has no encoding
for that choice, this pass rewrites it into what ptxas writes for the target (each fact
is a field of `encoder.arch.Target`):

* opcodes the target names differently (`Target.renamed_opcodes`: sm_90's integer min/max
  is VIMNMX, its global reduction REDG), operands unchanged;
* constant-bank operands of ALU instructions (`c[0x0][0x160]`), which ptxas never writes
  for sm_90 and the hopper table therefore cannot encode (`Target.alu_constants` false):
  the constant is loaded with LDC into a register first (a register pair with LDC.64 where
  the operand is 64 bits wide, e.g. IMAD.WIDE's addend or an FP64 operand), once per block
  and constant; a plain move of a constant becomes the LDC itself, and the two moves of a
  64-bit pair's halves from one 8-aligned constant become one LDC.64 (ptxas's
  `LDC.64 R2, c[0x0][0x210]` for a pointer parameter used as an address); a 32-bit
  constant that every reader in the block takes as a uniform register in that slot is
  loaded with ULDC (sm_100+: LDCU) into a UR instead, which costs no general register
  (ptxas's `LDCU UR6, c[0x0][0x398]; ISETP.GE.AND P0, PT, R0, UR6, PT`; outside
  divergent code, see `_uniform_constant_loads`); an IMAD.WIDE
  whose constant addend became a register takes its multiplier as an immediate again
  (sm_8x's `MOV R3, 0x4; IMAD.WIDE R2, R0, R3, c[0x0][0x170]` is ptxas's
  `IMAD.WIDE R2, R0, 0x4, R2` on sm_90+, where the addend is LDC.64's pair);
* an IMAD by a power of two 2^k that the target's table has no form for (the hopper table
  knows IMAD's immediate only for the multipliers ptxas wrote, nvdisasm printing powers of
  two as IMAD.SHL): `LEA d, a, c, k`, the same sum ((a << k) + c), as ptxas writes it;
* `WARPSYNC imm` where the target has no immediate form (`Target.warpsync_immediate`):
  `WARPSYNC.ALL` for the full mask, else the mask moved into a register.
"""
from __future__ import annotations

import functools
from dataclasses import replace

from ptx2sass.encoder.model import ConstRef, Imm, Instruction, Reg
from ptx2sass.encoder.register_widths import wide_operands
from ptx2sass.mir import MBlock, MFunction, MInstr, VMem, VOp, register_operands

# Instructions that read `c[bank][offset]` on every target (the constant loads themselves;
# LDCU: sm_100+'s spelling of ULDC, renamed before the constant operands are checked).
CONSTANT_READERS = frozenset({"LDC", "ULDC", "LDCU"})
FULL_MASK = 0xFFFFFFFF
# IMAD spellings that are a plain 32-bit multiply-add (no carry, high half or wide result)
PLAIN_IMAD = frozenset({(), ("U32",), ("SHL",), ("SHL", "U32")})
_PROBE = Reg("R", 0)
RZ = Reg("R", 255)
UR_COUNT = 63            # UR0..UR62 (isel/uniform_datapath.py)
UR_SPARE = 8             # URs left for the uniform values other passes name
HOIST_CONSTANTS = True   # a loop's constant loads go before it (`_hoist_constant_loads`; A/B flag)
HOIST_PRESSURE = 64      # ... one kept in general registers only while the loop's pressure stays within


def apply_target_forms(mf: MFunction, target) -> None:
    """Rewrite `mf`'s instructions into forms `target` encodes (see the module docstring)."""
    apply_spelling(mf, target)
    renames = dict(target.renamed_opcodes)
    blocks_loads: list = []      # (block, its `loaded`): the LDCs `_uniform_constant_loads` may move
    for b in mf.blocks:
        loaded: dict[tuple[int, int, int], VOp] = {}
        immediates: dict = {}        # register -> the immediate its latest definition moved in
        out: list[MInstr] = []
        for mi in b.instrs:
            if mi.opcode in renames:
                mi.opcode = renames[mi.opcode]
            if mi.opcode == "IMAD" and _power_of_two_multiplier(mi) is not None \
                    and not _encodable(target.name, mi.modifiers, mi.operands[2].value,
                                       mi.operands[3] == RZ):
                k = _power_of_two_multiplier(mi)
                mi.opcode, mi.modifiers = "LEA", ()
                mi.operands = [mi.operands[0], mi.operands[1], mi.operands[3], Imm(k)]
            if mi.opcode == "WARPSYNC" and not target.warpsync_immediate and isinstance(mi.operands[0], Imm):
                if mi.operands[0].value & FULL_MASK == FULL_MASK:
                    mi.modifiers, mi.operands = ("ALL",), []
                else:
                    mask = VOp(mf.new_vreg())
                    out.append(MInstr("MOV", (), [mask, mi.operands[0]], 1, None, mi.line))
                    mi.operands = [mask]
            if not target.alu_constants and mi.opcode not in CONSTANT_READERS:
                consts = [i for i, op in enumerate(mi.operands) if isinstance(op, ConstRef)]
                if consts and _is_constant_move(mi):
                    mi.opcode, mi.modifiers = "LDC", ()
                    mi.operands = [mi.operands[0], _ldc_address(mi.operands[-1])]
                    mi.shown = None
                    consts = []
                for i in consts:
                    mi.operands[i] = _load(mf, mi, i, loaded, out)
                if consts:
                    _immediate_multiplier(mi, immediates, target.name)
            _note_immediate_moves(mi, immediates)
            out.append(mi)
        if not target.alu_constants:
            out = _paired_constant_loads(out)
        b.instrs[:] = out
        if not target.alu_constants:
            blocks_loads.append((b, loaded))
    if not target.alu_constants:
        if HOIST_CONSTANTS:
            _hoist_constant_loads(mf, target, blocks_loads)
        _uniform_constant_loads(mf, target, blocks_loads)


def _loop_preheaders(mf: MFunction) -> dict[int, tuple[MBlock, set[int]]]:
    """Block id -> (preheader, block ids) of the outermost loop around the block that has a
    preheader (the one block every entry into the loop passes last, falling through into
    its header)."""
    from ptx2sass.loop_nest import natural_loops
    from ptx2sass.reconverge import _dominance, _preheader_of
    if len(mf.blocks) < 2 and not any(b in b.succs for b in mf.blocks):
        return {}
    dominates, rpo = _dominance(mf.blocks[0])
    loops = natural_loops(mf.blocks, rpo, dominates, lambda p: id(p) in rpo)
    best: dict[int, tuple[MBlock, set[int]]] = {}
    for header, body in loops.values():
        pre = _preheader_of(header, body)
        if pre is None:
            continue
        for k in body:
            if len(body) > len(best.get(k, (None, ()))[1]):
                best[k] = (pre, body)
    return best


def _hoist_constant_loads(mf: MFunction, target, blocks_loads: list) -> None:
    """Each constant load `_load` wrote in a loop goes to the preheader of the outermost
    loop around it (one per constant there), as ptxas loads a parameter a loop reads once
    before the loop: loaded where it is read, every iteration paid an LDC/ULDC (and the
    latency of the constant cache) again. A constant bank does not change while the kernel
    runs, so the load may run earlier. A load that will stay in general registers (wide, or
    a reader that takes no UR there: `_uniform_constant_loads`) is hoisted only while the
    loop's register pressure stays within `HOIST_PRESSURE`: in a crowded loop (a tensor-core
    matmul's) each such value held throughout cost registers, and occupancy, for one LDC."""
    preheaders = _loop_preheaders(mf)
    if not preheaders:
        return
    from ptx2sass.isel.operand_slots import _encodable as table_encodes
    from ptx2sass.isel.uniform_datapath import _divergent_region, _left_alone
    uniform_ok = not _left_alone(mf)
    region = _divergent_region(mf) if uniform_ok else set()
    index = {id(b): k for k, b in enumerate(mf.blocks)}
    facts = None
    pressure: dict[int, int] = {}     # preheader id -> the loop's pressure plus what went there
    loaded_of = {id(b): loaded for b, loaded in blocks_loads}
    for b, loaded in blocks_loads:
        pre, body = preheaders.get(id(b), (None, ()))
        if pre is None or pre is b or not loaded or id(pre) not in loaded_of:
            continue
        into = loaded_of[id(pre)]
        renames: dict = {}
        moved: list[MInstr] = []
        keep = list(b.instrs)
        for key, reg in list(loaded.items()):
            ldc = next((mi for mi in keep if mi.opcode == "LDC" and mi.guard is None
                        and isinstance(mi.operands[0], VOp) and mi.operands[0].reg == reg.reg), None)
            if ldc is None:
                continue
            there = into.get(key)
            if there is None:
                readers = [mi for mi in keep if mi is not ldc
                           and any(op.reg == reg.reg for _i, op, _d in register_operands(mi))]
                uniform = (uniform_ok and key[1] == 1 and id(pre) not in region and readers
                           and all(_takes_uniform(mi, reg.reg, target.name, table_encodes) for mi in readers))
                if not uniform:
                    if id(pre) not in pressure:
                        if facts is None:
                            from ptx2sass.isel.remat_invariants import _Facts
                            facts = _Facts(mf)
                        pressure[id(pre)] = max(facts.block_pressure(mf, index[id(x)])
                                                for x in mf.blocks if id(x) in body)
                    if pressure[id(pre)] + key[1] > HOIST_PRESSURE:
                        continue
                    pressure[id(pre)] += key[1]
                into[key] = reg
                moved.append(ldc)
            else:
                renames[reg.reg] = there.reg
            keep.remove(ldc)
            del loaded[key]
        if not renames and not moved:
            continue
        b.instrs[:] = keep
        for mi in keep:
            if renames:
                mi.operands = [replace(op, reg=renames[op.reg]) if isinstance(op, VOp) and op.reg in renames
                               else op for op in mi.operands]
        _append_before_exit(pre, moved)


def _append_before_exit(b: MBlock, instrs: list[MInstr]) -> None:
    """Put `instrs` at the end of `b`, before a branch that ends it."""
    at = len(b.instrs)
    while at and b.instrs[at - 1].opcode in ("BRA", "BRX", "EXIT", "RET", "CALL"):
        at -= 1
    b.instrs[at:at] = instrs


def _uniform_constant_loads(mf: MFunction, target, blocks_loads: list) -> None:
    """Each 32-bit `LDC r, c[b][o]` that `_load` wrote and whose every reader takes a uniform
    register in r's slot (the table, asked with a UR there) becomes `ULDC ur, c[b][o]`
    (LDCU on sm_100+) read in place, as ptxas writes it. Not in blocks where a divergent
    branch has split the warp: there the paths interleave, and two uniform values of
    different paths sharing a UR would clobber each other (isel/uniform_datapath.py's rule);
    not in functions with calls (which clobber every UR); at most as many as the UR file
    has room for, so that the allocator never runs out."""
    from ptx2sass.isel.operand_slots import _encodable as table_encodes
    from ptx2sass.isel.uniform_datapath import _divergent_region, _left_alone, _physical_uniforms
    if not blocks_loads or _left_alone(mf):
        return
    region = _divergent_region(mf)
    urs_taken, _ups = _physical_uniforms(mf)
    room = len([k for k in range(UR_COUNT) if k not in urs_taken]) - UR_SPARE \
        - sum(v.cls == "UR" for v in mf.vregs)
    opcode = dict(target.renamed_opcodes).get("ULDC", "ULDC")
    # (a load hoisted before a loop, `_hoist_constant_loads`, has its readers in the loop's
    # blocks: a UR written outside the divergent code may be read inside it)
    wanted = {reg.reg for b, loaded in blocks_loads if id(b) not in region
              for (_plain, width), reg in loaded.items() if width == 1}
    uses: dict = {}          # register -> [its LDC or None, its readers]
    for b in mf.blocks:
        for mi in b.instrs:
            for r in {op.reg for _i, op, _d in register_operands(mi) if op.reg in wanted}:
                entry = uses.setdefault(r, [None, []])
                if mi.opcode == "LDC" and isinstance(mi.operands[0], VOp) and mi.operands[0].reg == r:
                    entry[0] = mi
                else:
                    entry[1].append(mi)
    for b, loaded in blocks_loads:
        if id(b) in region:
            continue
        for (plain, width), reg in loaded.items():
            if width != 1 or room <= 0 or reg.reg not in uses:
                continue
            load, readers = uses[reg.reg]
            if load is None or load.modifiers or load.guard is not None or not readers \
                    or not all(_takes_uniform(mi, reg.reg, target.name, table_encodes) for mi in readers):
                continue
            address = load.operands[1]
            if address.ureg == RZ:
                address = replace(address, ureg=None)
            if not table_encodes(target.name, opcode, (), (Reg("UR", 6), address)):
                continue
            ur = VOp(mf.new_vreg("UR"))
            load.opcode, load.operands = opcode, [ur, address]
            for mi in readers:
                mi.operands = [replace(op, reg=ur.reg) if isinstance(op, VOp) and op.reg == reg.reg else op
                               for op in mi.operands]
            room -= 1


def _takes_uniform(mi: MInstr, reg, arch: str, table_encodes) -> bool:
    """Whether `mi` reads `reg` only as whole source operands whose slot the table encodes
    with a uniform register (not a guard, an address, a definition or a part)."""
    if isinstance(mi.guard, VOp) and mi.guard.reg == reg or mi.shown is not None or mi.widths:
        return False
    probes = []
    hit = False
    for k, op in enumerate(mi.operands):
        if isinstance(op, VOp) and op.reg == reg:
            if k < mi.ndefs or op.part is not None:
                return False
            probes.append(Reg("UR", 6, neg=op.neg, abs=op.abs, inv=op.inv, suffix=op.suffix))
            hit = True
        elif isinstance(op, VOp):
            # of its own file: a constant an earlier load made uniform is a UR already (two
            # in one FFMA, fuzz seed 40000761, no form takes)
            file = op.reg.cls if op.reg.cls in ("P", "UR", "UP") else "R"
            probes.append(Reg(file, {"P": 0, "UP": 1, "UR": 8}.get(file, 2),
                              neg=op.neg, abs=op.abs, inv=op.inv, suffix=op.suffix))
        elif isinstance(op, (VMem, ConstRef)) and not (isinstance(op, ConstRef) and op.ureg is None):
            return False        # an address (a memory access): left as it is
        else:
            probes.append(op)
    return hit and table_encodes(arch, mi.opcode, tuple(mi.modifiers), tuple(probes))


def _note_immediate_moves(mi: MInstr, immediates: dict) -> None:
    """Keep `immediates` (register -> Imm) at the block's latest definitions."""
    for d in mi.defs:
        if isinstance(d, VOp):
            immediates.pop(d.reg, None)
    if mi.guard is not None or mi.ndefs != 1 or not isinstance(mi.operands[0], VOp):
        return
    d = mi.operands[0]
    if d.part is not None or d.reg.width != 1:
        return
    if mi.opcode == "MOV" and not mi.modifiers and len(mi.operands) == 2:
        src = mi.operands[1]
    elif mi.opcode == "IMAD" and mi.modifiers == ("MOV", "U32") and len(mi.operands) == 4 \
            and mi.operands[1] == RZ and mi.operands[2] == RZ:
        src = mi.operands[3]
    else:
        return
    if isinstance(src, Imm) and src.text is None and not src.neg and not src.abs:
        immediates[d.reg] = src


def _immediate_multiplier(mi: MInstr, immediates: dict, arch: str) -> None:
    """IMAD.WIDE d, a, r, c where r holds an immediate the target's table encodes in b's
    place: the immediate itself (the move is then unread, and goes with the dead parts)."""
    if mi.opcode != "IMAD" or "WIDE" not in mi.modifiers or len(mi.operands) != 4:
        return
    b = mi.operands[2]
    if not isinstance(b, VOp) or b.part is not None or b.neg or b.abs or b.inv or b.suffix:
        return
    imm = immediates.get(b.reg)
    if imm is not None and _encodable(arch, mi.modifiers, imm.value & FULL_MASK, False):
        mi.operands[2] = imm


def _power_of_two_multiplier(mi: MInstr) -> int | None:
    """k when `mi` is a plain IMAD d, a, 2^k, c (k >= 1), else None."""
    if mi.modifiers not in PLAIN_IMAD or len(mi.operands) != 4 or not isinstance(mi.operands[2], Imm):
        return None
    b = mi.operands[2]
    v = b.value & FULL_MASK
    if b.text is not None or b.neg or v < 2 or v & (v - 1):
        return None
    return v.bit_length() - 1


@functools.cache
def _encodable(arch: str, modifiers: tuple[str, ...], multiplier: int, rz_addend: bool) -> bool:
    """Whether the arch's table encodes `IMAD<modifiers> R, R, multiplier, R` (RZ addend)."""
    from ptx2sass.encoder import codec
    probe = Instruction("IMAD", modifiers, (Reg("R", 0), Reg("R", 2), Imm(multiplier),
                                            RZ if rz_addend else Reg("R", 4)))
    try:
        codec.encode(probe, arch, 0, [])
        return True
    except codec.EncodeError:
        return False


def _ldc_address(c: ConstRef) -> ConstRef:
    """LDC's address as nvdisasm reads it back: offset 0 is `c[0x0][RZ]` (the register
    form with RZ; ptxas's `LDC R9, c[0x0][RZ]` for %ntid.x)."""
    return replace(c, ureg=RZ) if c.offset == 0 and c.ureg is None else c


def _is_constant_move(mi: MInstr) -> bool:
    """`MOV d, c[..]` or `IMAD.MOV.U32 d, RZ, RZ, c[..]` (one 32-bit register written)."""
    if mi.ndefs != 1 or not isinstance(mi.operands[0], VOp) or mi.operands[0].width != 1:
        return False
    if mi.opcode == "MOV" and not mi.modifiers and len(mi.operands) == 2:
        return isinstance(mi.operands[1], ConstRef) and mi.operands[1].ureg is None
    return (mi.opcode == "IMAD" and mi.modifiers == ("MOV", "U32") and len(mi.operands) == 4
            and isinstance(mi.operands[3], ConstRef) and mi.operands[3].ureg is None)


def _half_load(mi: MInstr) -> tuple | None:
    """(register, half, bank, offset) of an unguarded `LDC %rNx2.half, c[bank][offset]` at a
    known offset, else None."""
    if mi.opcode != "LDC" or mi.modifiers or mi.guard is not None or mi.ndefs != 1:
        return None
    d, c = mi.operands
    if not isinstance(d, VOp) or d.part not in (0, 1) or d.reg.width != 2 or d.neg or d.abs or d.inv or d.suffix:
        return None
    if not isinstance(c, ConstRef) or c.reloc is not None or c.ubank is not None or c.gap \
            or not (c.ureg is None or c.ureg == RZ) or c.neg or c.abs or c.inv or c.suffix:
        return None
    return d.reg, d.part, c.bank, c.offset


def _paired_constant_loads(instrs: list[MInstr]) -> list[MInstr]:
    """Each `LDC r.lo, c[b][o]` (o 8-aligned) followed, with nothing naming r between, by
    `LDC r.hi, c[b][o + 4]` becomes `LDC.64 r, c[b][o]` where the first stood."""
    out: list[MInstr] = []
    open_low: dict = {}          # register -> index in out of its low-half load
    for mi in instrs:
        half = _half_load(mi)
        if half is not None and half[1] == 1 and half[0] in open_low:
            low = out[open_low.pop(half[0])]
            _reg, _part, bank, offset = _half_load(low)
            if bank == half[2] and half[3] == offset + 4:
                low.modifiers = ("64",)
                low.operands = [VOp(half[0]), _ldc_address(replace(low.operands[1], ureg=None))]
                continue
        for _i, op, _def in register_operands(mi):
            open_low.pop(op.reg, None)
        if half is not None and half[1] == 0 and half[3] % 8 == 0:
            open_low[half[0]] = len(out)
        out.append(mi)
    return out


def _width(mi: MInstr, i: int) -> int:
    """How many 32-bit registers operand `i` would span as a register (the encoder's width
    table, asked with a register in the constant's place)."""
    ops = [_PROBE if k == i else (Reg("R", 2) if isinstance(op, VOp) else op)
           for k, op in enumerate(mi.operands)]
    where = f"operand {i}"
    try:
        probe = Instruction(mi.opcode, mi.modifiers, tuple(ops))
        return max((w for at, _r, w in wide_operands(probe) if at == where), default=1)
    except (TypeError, ValueError):
        return 1


def _load(mf: MFunction, mi: MInstr, i: int, loaded: dict, out: list[MInstr]) -> VOp:
    """The register holding operand `i`'s constant (its sign/abs/inverse/selector marks
    move onto the register)."""
    c: ConstRef = mi.operands[i]
    width = _width(mi, i)
    plain = replace(c, neg=False, abs=False, inv=False, suffix=())
    key = (plain, width)
    reg = loaded.get(key) if c.ureg is None else None
    if reg is None:
        reg = VOp(mf.new_vreg("R", width))
        out.append(MInstr("LDC", ("64",) if width == 2 else (), [reg, _ldc_address(plain)], 1, None, mi.line))
        if c.ureg is None:
            loaded[key] = reg
    return replace(reg, neg=c.neg, abs=c.abs, inv=c.inv, suffix=c.suffix)


# --- sm_75 (Turing) spellings --------------------------------------------------------------
# Global/generic accesses that take a scope token (`LDG.E.SYS`); local, shared and constant
# accesses name none.
SCOPED_MEMORY = frozenset({"LDG", "STG", "LD", "ST"})
SCOPES = frozenset({"CTA", "SM", "GPU", "SYS", "VC"})


def apply_spelling(mf: MFunction, target) -> None:
    """Modifiers and address operands the target prints differently with the same meaning
    (`Target.address_width_suffix`, `default_memory_scope`, `renamed_modifiers`,
    `leading_modifiers`): sm_75's `LDG.E.SYS R0, [R2]` is sm_8x's `LDG.E R0, [R2.64]`."""
    renamed = target.renamed_modifiers
    leading = dict(target.leading_modifiers)
    if target.address_width_suffix and not target.default_memory_scope and not renamed and not leading:
        return
    for b in mf.blocks:
        for mi in b.instrs:
            if not target.address_width_suffix:
                mi.operands = [replace(op, suffix64=False) if isinstance(op, VMem) else op
                               for op in mi.operands]
            mods = list(mi.modifiers)
            for opcode, old, new in renamed:
                if opcode in ("*", mi.opcode) and old in mods:
                    at = mods.index(old)
                    mods[at:at + 1] = [new] if new else []
            if target.default_memory_scope and mi.opcode in SCOPED_MEMORY and not SCOPES & set(mods):
                mods.append(target.default_memory_scope)
            if mi.opcode in leading and leading[mi.opcode] not in mods:
                mods.insert(0, leading[mi.opcode])
            if tuple(mods) != mi.modifiers:
                mi.modifiers = tuple(mods)      # the operands, and which of them show, stay
# --- end sm_75 -----------------------------------------------------------------------------
