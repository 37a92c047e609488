"""-g's maps from PTX registers to SASS registers, as ptxas 13.5 writes them.

`.nv_debug_info_reg_sass` holds, per function in cubin order, its name, a 32-bit count and
that many records: the 32-bit part of the PTX register (0: low word), its name, the SASS
register in DWARF numbering (R n: 0x5000000 | n, P n: 0x2000000 | n) and the addresses where
it holds the value: from the instruction writing it to the last instruction reading it
before it is overwritten (a value never read gets no record). `.nv_debug_info_reg_type`
holds, per function, its name, the count and one byte per record: the register's PTX type
in the ISA manual's order (.b8 0 ... .f64 15, .pred 16). (Layout read off ptxas's output;
the debugger combines it with the PTX's `.debug_loc`/`.debug_info`, which name PTX
registers.)
"""
from __future__ import annotations

import struct

DWARF_CLASS = {"R": 0x5000000, "P": 0x2000000}
PTX_TYPES = ["b8", "b16", "b32", "b64", "u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
             "f16", "f16x2", "f32", "f64", "pred"]
TYPE_CODE = {t: i for i, t in enumerate(PTX_TYPES)}
TYPE_CODE.update({"bf16": TYPE_CODE["b16"], "bf16x2": TYPE_CODE["b32"], "e4m3x2": TYPE_CODE["b16"],
                  "e5m2x2": TYPE_CODE["b16"], "tf32": TYPE_CODE["b32"]})


def register_records(slots) -> list[tuple]:
    """(part, name, DWARF register, start, end, type code) for the final instruction order
    (`sched.control.Slot`s, each 16 bytes), by start address. A register may hold several
    names at once (a coalesced copy); a write ends them all."""
    open_: dict[tuple, list[list]] = {}   # (file, index) -> [[part, name, type, start, last read]]
    out = []

    def close(reg: tuple) -> None:
        for part, name, ptx_type, start, end in open_.pop(reg, ()):
            if end is not None:
                out.append((part, name, DWARF_CLASS[reg[0]] | reg[1], start, end,
                            TYPE_CODE.get(ptx_type, TYPE_CODE["b32"])))

    for k, slot in enumerate(slots):
        guard = slot.ins.guard
        for reg in slot.reads + ([(guard.file, guard.index)] if guard is not None else []):
            for held in open_.get(reg, ()):
                held[4] = 16 * k
        for name, ptx_type, part, file, index, alias in slot.values:
            if alias and file in DWARF_CLASS:
                open_.setdefault((file, index), []).append([part, name, ptx_type, 16 * k, None])
        for reg in slot.writes:
            close(reg)
            if reg[0] in DWARF_CLASS:
                held = [[part, name, ptx_type, 16 * k, None] for name, ptx_type, part, file, index, alias
                        in slot.values if not alias and (file, index) == reg]
                if held:
                    open_[reg] = held
    for reg in list(open_):
        close(reg)
    out.sort(key=lambda r: (r[3], -r[0]))
    return out


def register_sections(kernels) -> tuple[bytes, bytes]:
    """The two sections' bytes for `kernels` (each with `.name` and `.registers`)."""
    sass, types = bytearray(), bytearray()
    for k in kernels:
        name = k.name.encode() + b"\0"
        sass += name + struct.pack("<I", len(k.registers))
        types += name + struct.pack("<I", len(k.registers))
        for part, reg_name, dwarf_reg, start, end, code in k.registers:
            sass += struct.pack("<I", part) + reg_name.encode() + b"\0" + struct.pack("<III", dwarf_reg, start, end)
            types.append(code)
    return bytes(sass), bytes(types)
