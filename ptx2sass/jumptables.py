"""`brx.idx` jump tables, once the code's layout is final.

What ptxas writes for sm_8x (read off its cubins): the table is `.nv.constant2.<kernel>`,
one u32 per target holding the target's absolute offset in `.text`; `BRX Rx imm` jumps to
(address after the BRX) + Rx + imm, so imm = -(address after the BRX); and `.nv.info.<k>`
gets an INDIRECT_BRANCH_TARGETS record per BRX: its offset, two zero halves, the target
count, the target offsets.
"""
from __future__ import annotations

import struct
from dataclasses import replace

from ptx2sass.encoder.model import Imm, Instruction


def fill_jump_tables(instructions: list[Instruction], labels: dict[str, int],
                     tables: list[list[str]], base: int = 0) -> tuple[list[Instruction], bytes | None, list]:
    """The instructions with each BRX's immediate set, the constant-bank-2 bytes (None
    without tables; zeros below `base`, where the tables start: -g's module-wide places,
    ptx2sass.abi.JUMP_TABLE_BASE) and the INDIRECT_BRANCH_TARGETS records."""
    from ptx2sass.encoder.nvinfo import NvInfoRecord
    if not tables:
        return instructions, None, []
    brx_at = [k for k, ins in enumerate(instructions) if ins.opcode == "BRX"]
    assert len(brx_at) == len(tables), "one BRX per jump table"
    out = list(instructions)
    words: list[int] = []
    payload: list[int] = []
    for k, targets in zip(brx_at, tables):
        after = 16 * k + 16
        reg = out[k].operands[0]
        out[k] = replace(out[k], operands=(reg, Imm(-after)))
        offsets = [labels[t] for t in targets]
        words += offsets
        payload += [16 * k, 0, len(offsets), *offsets]
    record = NvInfoRecord.words("INDIRECT_BRANCH_TARGETS", *payload)
    return out, bytes(base) + struct.pack(f"<{len(words)}I", *words), [record]


def merge_tables(*banks: bytes | None) -> bytes | None:
    """One kernel's constant bank 2 from its own tables and those of the -g functions it
    reaches (each at its own place, zeros elsewhere)."""
    banks = [b for b in banks if b]
    if not banks:
        return None
    out = bytearray(max(len(b) for b in banks))
    for b in banks:
        for i, byte in enumerate(b):
            out[i] |= byte
    return bytes(out)
