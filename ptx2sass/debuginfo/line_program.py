"""A DWARF 3 line-number program in the form ptxas 13.5 writes (`.debug_line` and
`.nv_debug_line_sass`).

Header: version 3, minimum instruction length 1, `default_is_stmt` 1, line base -5, line
range 14, opcode base 13, then the include directories and files. One sequence per kernel:
`DW_LNE_set_address` (an 8-byte field the caller relocates against the kernel's symbol),
`DW_LNS_set_file`, the first row, the other rows, and an advance to the end of the kernel's
text before `DW_LNE_end_sequence`; `DW_LNS_set_prologue_end` follows a function's first row
(after the next row's file switch). A row that moves the address and
changes the line by -5..8 is a special opcode; any other is `advance_line`, `advance_pc`,
`copy` (each only when needed). ptxas's inlining extension (extended opcode 0x90) gives a row
the row (1-based within its sequence) of its call site and its function's name (an offset
into `.debug_str`); (0, 0) ends inlining. A program that uses it ends its header with the
32-bit offset of those names' `.debug_str` (0; relocated in relocatable output).
"""
from __future__ import annotations

import struct

from ptx2sass.encoder.leb128 import sleb, uleb
from ptx2sass.records import dataclass

VERSION = 3
LINE_BASE, LINE_RANGE, OPCODE_BASE = -5, 14, 13
STANDARD_OPCODE_LENGTHS = bytes([0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1])
DW_LNS_copy, DW_LNS_advance_pc, DW_LNS_advance_line, DW_LNS_set_file = 1, 2, 3, 4
DW_LNS_set_prologue_end = 10
DW_LNE_end_sequence, DW_LNE_set_address = 1, 2
DW_LNE_NV_inlined = 0x90      # ptxas's extension: (call-site row, function name offset)
NOT_INLINED = (0, 0)
NAMES_OFFSET_SIZE = 4


@dataclass
class Row:
    """One line-table row; `copy` False: only move the address there (and switch file and
    inlining), as ptxas does where an instruction keeps the line but not all of the state.
    `prologue_end`: `DW_LNS_set_prologue_end` follows (ptxas: after a function's first row)."""
    address: int
    line: int
    file: int = 0
    inlined: tuple[int, int] = NOT_INLINED
    copy: bool = True
    prologue_end: bool = False


@dataclass
class Sequence:
    symbol: str          # the kernel whose text the addresses count in
    end: int             # its text's size in bytes
    rows: list[Row]


def _address_advance(delta: int) -> bytes:
    """`advance_pc`'s operand as ptxas writes it: an unsigned LEB128 ended by the signed
    rule (64..127 take two bytes, `c0 00` for 64); readers decode the same value."""
    return sleb(delta)


def _extended(opcode: int, payload: bytes) -> bytes:
    return b"\0" + uleb(1 + len(payload)) + bytes([opcode]) + payload


def line_program(sequences: list[Sequence], directories: list[str] = (),
                 files: list[tuple[str, int, int, int]] = ()) -> tuple[bytes, list[tuple[int, str]], int | None]:
    """The section's bytes, its relocations (offset of a set_address operand, symbol) and
    where the header holds the `.debug_str` offset (None: no inlining, no such field).
    `files` are (name, directory index, modification time, length)."""
    # minimum instruction length 1, default_is_stmt 1
    header = bytearray([1, 1, LINE_BASE & 0xFF, LINE_RANGE, OPCODE_BASE]) + STANDARD_OPCODE_LENGTHS
    for d in directories:
        header += d.encode("latin-1", "replace") + b"\0"
    header += b"\0"
    for name, directory, mtime, length in files:
        header += name.encode("latin-1", "replace") + b"\0" + uleb(directory) + uleb(mtime) + uleb(length)
    header += b"\0"
    names_field = None
    if any(row.inlined != NOT_INLINED for seq in sequences for row in seq.rows):
        names_field = 4 + 2 + 4 + len(header)
        header += bytes(NAMES_OFFSET_SIZE)
    body, relocations = bytearray(), []
    start = 4 + 2 + 4 + len(header)            # where the program begins in the section
    for seq in sequences:
        body += b"\0" + uleb(9) + bytes([DW_LNE_set_address])
        relocations.append((start + len(body), seq.symbol))
        body += struct.pack("<Q", 0)
        body += _sequence(seq)
    unit = struct.pack("<H", VERSION) + struct.pack("<I", len(header)) + bytes(header) + bytes(body)
    return struct.pack("<I", len(unit)) + unit, relocations, names_field


def _sequence(seq: Sequence) -> bytes:
    out = bytearray()
    first = seq.rows[0]
    out += bytes([DW_LNS_set_file]) + uleb(first.file)
    address, line, file, inlined = 0, 1, first.file, NOT_INLINED
    prologue_end = False     # written before the next row's moves (after its file switch)
    for k, row in enumerate(seq.rows):
        if row.file != file:
            out += bytes([DW_LNS_set_file]) + uleb(row.file)
        if row.inlined != inlined:
            out += _extended(DW_LNE_NV_inlined, uleb(row.inlined[0]) + uleb(row.inlined[1]))
        if prologue_end:
            out.append(DW_LNS_set_prologue_end)
            prologue_end = False
        dl, da = row.line - line, row.address - address
        special = OPCODE_BASE + (dl - LINE_BASE) + LINE_RANGE * da
        if row.copy and dl and da > 0 and LINE_BASE <= dl < LINE_BASE + LINE_RANGE and special <= 255:
            out.append(special)
        else:
            if dl and row.copy:
                out += bytes([DW_LNS_advance_line]) + sleb(dl)
            if da:
                out += bytes([DW_LNS_advance_pc]) + _address_advance(da)
            if row.copy:
                out.append(DW_LNS_copy)
        address, file, inlined = row.address, row.file, row.inlined
        if row.copy:
            line = row.line
        prologue_end = k == 0 or row.prologue_end
    if prologue_end:
        out.append(DW_LNS_set_prologue_end)
    out += bytes([DW_LNS_advance_pc]) + _address_advance(seq.end - address)
    out += _extended(DW_LNE_end_sequence, b"")
    return bytes(out)
