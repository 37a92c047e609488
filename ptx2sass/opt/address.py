"""Address offsets folded into memory operands: `add.s64 p, q, 2048; ld [p]` becomes
`ld [q+2048]` (`LDG [R2.64+0x800]`), as ptxas writes it. Triton and tinygrad compute every
address of an unrolled or vectorised access as base + constant; the add then dies unless
something else reads it. Only offsets the instruction's signed 24-bit immediate holds are
folded; the sum is the same modulo the address width because the immediate is added to the
base register at that width. A register holding a function-local `.shared`/`.local`
variable's address, read by an access to that space, gives way to the variable itself.
`cp.async` (LDGSTS) takes both of its addresses so, each within its own narrower immediate
(`CP_ASYNC_OFFSET_LIMITS`): an unrolled tile copy is one LDGSTS per 16 bytes, each
`[R+0x10*k], [R.64+0x10*k]` in ptxas's SASS, not three adds and an LDGSTS."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.fold import signed_value

MEMORY_OPCODES = ("ld", "ldu", "st", "atom", "red")
OFFSET_LIMIT = 1 << 23
ADD_TYPES = {"s64": 64, "u64": 64, "b64": 64, "s32": 32, "u32": 32, "b32": 32}
# LDGSTS's immediates (the same field on every target's table that has it, sm_80..sm_120):
# signed 20 bits for the shared destination, signed 12 bits for the global source
CP_ASYNC_OFFSET_LIMITS = (1 << 19, 1 << 11)
CP_ASYNC_SPACES = ("shared", "global")


def async_copy_operands(ins: ir.Instr) -> tuple[int, ...]:
    """The address operands of a `cp.async` global -> shared copy (LDGSTS) whose offsets may
    grow: both, less the source where a constant source size below the copy size takes the
    source's immediate for the count of zeroed bytes."""
    mods = ins.modifiers
    if not (ins.opcode == "cp" and mods[:1] == ("async",) and "bulk" not in mods
            and not any("mbarrier" in m or "group" in m or m == "wait_all" for m in mods)
            and len(ins.srcs) >= 3):
        return ()
    rest = ins.srcs[3:4] if "L2::cache_hint" not in mods or len(ins.srcs) > 4 else ()
    zfill = bool(rest) and isinstance(rest[0], ir.Const) and isinstance(ins.srcs[2], ir.Const) \
        and rest[0].value != ins.srcs[2].value
    return (0,) if zfill else (0, 1)


def fold_address_offsets(fn: ir.Function) -> bool:
    offsets: dict[int, tuple[ir.Value, int]] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            if (ins.opcode in ("add", "sub") and not ins.modifiers and ins.guard is None
                    and ins.type in ADD_TYPES and len(ins.dests) == 1 and len(ins.srcs) == 2):
                a, b = ins.srcs
                if ins.opcode == "add" and isinstance(a, ir.Const):
                    a, b = b, a
                if isinstance(a, ir.Value) and isinstance(b, ir.Const):
                    c = signed_value(b.value, ADD_TYPES[ins.type])
                    offsets[ins.dests[0].id] = (a, -c if ins.opcode == "sub" else c)
    # a register holding the address of one of the function's own variables, read by an
    # access to that variable's space: the access names the variable (`LDS [0x10]`)
    spaces = {v.name: v.space for v in fn.locals}
    symbols: dict[int, ir.Symbol] = {}
    for block in fn.blocks:
        for ins in block.instrs:
            if (ins.opcode == "mov" and ins.guard is None and len(ins.dests) == 1
                    and len(ins.srcs) == 1 and isinstance(ins.srcs[0], ir.Symbol)
                    and ins.srcs[0].name in spaces):
                symbols[ins.dests[0].id] = ins.srcs[0]
    if not offsets and not symbols:
        return False
    changed = False
    for block in fn.blocks:
        for ins in block.instrs:
            if ins.opcode in MEMORY_OPCODES and ins.space not in ("param", "const"):
                operands = [(k, ins.space, OFFSET_LIMIT) for k in range(len(ins.srcs))]
            else:
                operands = [(k, CP_ASYNC_SPACES[k], CP_ASYNC_OFFSET_LIMITS[k])
                            for k in async_copy_operands(ins)]
            for k, space, limit in operands:
                src = ins.srcs[k]
                if not (isinstance(src, ir.Address) and isinstance(src.base, ir.Value)):
                    continue
                base, offset = src.base, src.offset
                while base.id in offsets:
                    inner, c = offsets[base.id]
                    if not -limit <= offset + c < limit:
                        break
                    base, offset = inner, offset + c
                sym = symbols.get(base.id)
                if sym is not None and spaces[sym.name] == space and space in ("shared", "local") \
                        and -limit <= sym.offset + offset < limit:
                    ins.srcs[k] = ir.Address(sym, offset)
                    changed = True
                elif base is not src.base:
                    ins.srcs[k] = ir.Address(base, offset)
                    changed = True
    return changed
