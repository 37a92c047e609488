"""Address offsets folded into memory operands: `add.s64 p, q, 2048; ld [p]` becomes
`ld [q+2048]` (`LDG [R2.64+0x800]`), as ptxas writes it. Triton and tinygrad compute every
address of an unrolled or vectorised access as base + constant; the add then dies unless
something else reads it. Only offsets the instruction's signed 24-bit immediate holds are
folded; the sum is the same modulo the address width because the immediate is added to the
base register at that width. A register holding a function-local `.shared`/`.local`
variable's address, read by an access to that space, gives way to the variable itself."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.opt.fold import signed_value

MEMORY_OPCODES = ("ld", "ldu", "st", "atom", "red")
OFFSET_LIMIT = 1 << 23
ADD_TYPES = {"s64": 64, "u64": 64, "b64": 64, "s32": 32, "u32": 32, "b32": 32}


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
            if ins.opcode not in MEMORY_OPCODES or ins.space in ("param", "const"):
                continue
            for k, src in enumerate(ins.srcs):
                if not (isinstance(src, ir.Address) and isinstance(src.base, ir.Value)):
                    continue
                base, offset = src.base, src.offset
                while base.id in offsets:
                    inner, c = offsets[base.id]
                    if not -OFFSET_LIMIT <= offset + c < OFFSET_LIMIT:
                        break
                    base, offset = inner, offset + c
                sym = symbols.get(base.id)
                if sym is not None and spaces[sym.name] == ins.space and ins.space in ("shared", "local") \
                        and -OFFSET_LIMIT <= sym.offset + offset < OFFSET_LIMIT:
                    ins.srcs[k] = ir.Address(sym, offset)
                    changed = True
                elif base is not src.base:
                    ins.srcs[k] = ir.Address(base, offset)
                    changed = True
    return changed
