"""The debug sections of a cubin, as ptxas 13.5 writes them for `-lineinfo`.

`.debug_line` maps SASS addresses to the `.loc` source lines (its files from `.file`);
`.nv_debug_line_sass` maps them to lines of `.nv_debug_ptx_txt`, the PTX itself (file 0, an
empty file table). Both hold one sequence per kernel, in the cubin's kernel order, whose
start address is relocated (R_CUDA_64) against the kernel's symbol; a kernel without any
`.loc` has no `.debug_line` sequence. The PTX's `.debug_str`, which names inlined functions
for the line table, is kept. Relocatable output (-c) names the PTX text
`.nv_debug_ptx_txt.<Adler-32 of the input>`, lists that name as file 1 of
`.nv_debug_line_sass` (for the linker, which joins several), and relocates `.debug_line`'s
pointer to `.debug_str` (R_CUDA_32).
"""
from __future__ import annotations

import zlib

from ptx2sass.records import dataclass

from .line_program import NOT_INLINED, Row, Sequence, line_program
from .ptx_text import ptx_text_section
from .source_map import DATA_WIDTH, SourceMap, section_labels


@dataclass
class KernelLines:
    """One kernel's text size and the PTX line of each instruction from its start (the
    words after the last are its closing branch and padding, covered by the last row);
    `entry_line`: its opening brace's line (its prologue's); `functions`: (offset,
    opening-brace line) of each out-of-line function in its text; `is_entry`: a kernel (not
    a `.func` compiled on its own, which has no prologue)."""
    name: str
    text_size: int
    ptx_lines: list[int | None]
    functions: list[tuple[int, int]] = ()
    registers: list[tuple] = ()        # -g: see `registers.register_records`
    entry_line: int | None = None
    is_entry: bool = True


R_CUDA_32, R_CUDA_64 = 1, 2


@dataclass
class DebugSection:
    """A section to add after `.debug_frame`, with its relocations: (offset, symbol, type,
    addend); the symbol is a kernel or a section (its section symbol), the addend None
    for a REL entry."""
    name: str
    data: bytes
    relocations: list[tuple[int, str, int, int | None]]


def lineinfo_sections(kernels: list[KernelLines], source: SourceMap, ptx_text: str,
                      relocatable: bool = False) -> list[DebugSection]:
    """`kernels` in the cubin's order; `ptx_text` the (last) input file's text."""
    strings = source.section(".debug_str")
    names = section_labels(strings) if strings is not None else {}
    text_name = ".nv_debug_ptx_txt"
    if relocatable:
        text_name += f".{zlib.adler32(ptx_text.encode('latin-1', 'replace'))}"
    file = 1 if relocatable else 0      # relocatable: the text section is file 1
    sass_seqs = [Sequence(k.name, k.text_size, _ptx_rows(k, file)) for k in kernels]
    source_seqs = [Sequence(k.name, k.text_size, rows) for k in kernels
                   if (rows := _source_rows(k, source, names))]
    directories, files = _file_table(source)
    out = []
    data, relocs, names_field = line_program(source_seqs, directories, files)
    relocs = [(at, kernel, R_CUDA_64, None) for at, kernel in relocs]
    if relocatable and names_field is not None and strings is not None:
        relocs.insert(0, (names_field, ".debug_str", R_CUDA_32, 0))
    out.append(DebugSection(".debug_line", data, relocs))
    if strings is not None:
        out.append(DebugSection(".debug_str", section_data(strings), []))
    data, relocs, _ = line_program(sass_seqs, files=[(text_name, 0, 0, 0)] if relocatable else ())
    out.append(DebugSection(".nv_debug_line_sass", data, [(at, k, R_CUDA_64, None) for at, k in relocs]))
    out.append(DebugSection(text_name, ptx_text_section(ptx_text), []))
    return out


def _filled(lines: list[int | None]) -> list[int]:
    out, previous = [], next((x for x in lines if x is not None), 1)
    for x in lines:
        previous = x if x is not None else previous
        out.append(previous)
    return out


def _ptx_rows(k: KernelLines, file: int) -> list[Row]:
    """A row where the PTX line changes; each function in the text (the kernel at 0, then
    any out-of-line one) starts with a row for its opening brace (its prologue's line) and
    `prologue_end`."""
    entries = {at: line for at, line in [(0, k.entry_line), *k.functions] if line is not None}
    rows: list[Row] = []
    for i, line in enumerate(_filled(k.ptx_lines) or [1]):
        if 16 * i in entries:
            rows.append(Row(16 * i, entries[16 * i], file, prologue_end=True))
        if not rows or line != rows[-1].line:
            rows.append(Row(16 * i, line, file))
    return rows


def _source_rows(k: KernelLines, source: SourceMap, names: dict[str, int]) -> list[Row]:
    """Rows for the instructions' `.loc`s. The first instruction (the prologue) takes the
    function's first `.loc`; an instruction without one (more of the prologue, code before
    the first `.loc`, `.loc` line 0) continues the row before it. Inlined code first gets a
    row for each call site of its chain that has none yet (made once per chain prefix), and
    refers to the innermost one."""
    chains = [c if c is not None and c[-1].line else None
              for c in (source.loc(k.name, line) for line in k.ptx_lines)]
    first = (chains[0] if chains else None) or source.first_loc.get(k.name) \
        or next((c for c in chains if c is not None), None)
    if first is None:
        return []
    rows: list[Row] = []
    site_rows: dict[tuple, int] = {}     # a chain prefix -> its call-site row (1-based,
                                         # counting rows proper, not address moves)
    state = None
    moves = 0       # rows that only move the address

    def inlined(prefix: tuple) -> tuple[int, int]:
        """The extension operands of a row for `prefix`'s last `.loc`."""
        if len(prefix) == 1:
            return NOT_INLINED
        return site_rows[prefix[:-1]], names.get(prefix[-1].function_name, 0)

    def emit(address: int, chain: tuple) -> None:
        nonlocal state, moves
        for j in range(1, len(chain)):
            prefix = chain[:j]
            if prefix not in site_rows:
                rows.append(Row(address, prefix[-1].line, prefix[-1].file, inlined(prefix)))
                site_rows[prefix] = len(rows) - moves
                state = (rows[-1].file, rows[-1].line, rows[-1].inlined)
        leaf = (chain[-1].file, chain[-1].line, inlined(chain))
        if leaf != state:       # the same line in another inlining: no row, only the state
            same_line = state is not None and leaf[:2] == state[:2]
            rows.append(Row(address, leaf[1], leaf[0], leaf[2], copy=not same_line))
            moves += same_line
            state = leaf

    emit(0, first)
    # ptxas moves the address to a kernel's first instruction after the prologue that has a
    # `.loc`, even when that instruction continues the first row
    body = None
    if k.is_entry:
        body = next((i for i, c in enumerate(chains) if i and c is not None), None)
    for i, chain in enumerate(chains[1:], 1):
        before = len(rows)
        if chain is not None:
            emit(16 * i, chain)
        if i == body and len(rows) == before:
            rows.append(Row(16 * i, rows[-1].line, rows[-1].file, rows[-1].inlined, copy=False))
            moves += 1
    return rows


def _file_table(source: SourceMap) -> tuple[list[str], list[tuple[str, int, int, int]]]:
    """`.file`s by index: each path split into a directory (numbered in order of first use,
    from 1) and a name; the line rows name files by their `.file` index as written."""
    directories: list[str] = []
    files = []
    for index in sorted(source.files):
        f = source.files[index]
        directory, _, name = f.path.rpartition("/")
        if directory:
            if directory not in directories:
                directories.append(directory)
            d = directories.index(directory) + 1
        else:
            d = 0
        mtime, length = (f.extra + [0, 0])[:2]
        files.append((name, d, mtime, length))
    return directories, files


def register_sections(kernels: list[KernelLines]) -> list[DebugSection]:
    """-g: where each PTX register lives (see `registers`)."""
    from .registers import register_sections as build
    sass, types = build(kernels)
    return [DebugSection(".nv_debug_info_reg_sass", sass, []),
            DebugSection(".nv_debug_info_reg_type", types, [])]


# The PTX's own DWARF sections (-g), in the order ptxas writes them; others follow in PTX order.
DWARF_ORDER = [".debug_abbrev", ".debug_loc", ".debug_info", ".debug_macinfo"]
GENERATED = {".debug_line", ".debug_str"}     # written by `lineinfo_sections`


def dwarf_sections(kernels: list[KernelLines], source: SourceMap,
                   variables: set[str] = frozenset()) -> list[DebugSection]:
    """-g: the PTX's `.section .debug_*` blocks (empty ones dropped), each label resolved: a
    debug section's name is its start (0), a label in a debug section its offset there, a
    code label the SASS address of the first instruction after it (0 before the first, so
    the prologue's; its function's end when none follows), relocated against the kernel, a
    module variable (`variables`) relocated
    against its symbol (R_CUDA_64; RELA with the address as addend in `.debug_info`, REL
    with it in place elsewhere). Labels of functions the code generator inlined have no
    address: 0."""
    offsets = {}
    for sec in source.sections:
        offsets.update(section_labels(sec))
    kernels_by_name = {k.name: k for k in kernels}
    sections = [s for s in source.sections if s.name not in GENERATED]
    sections.sort(key=lambda s: DWARF_ORDER.index(s.name) if s.name in DWARF_ORDER else len(DWARF_ORDER))
    out = []
    for sec in sections:
        relocations = []
        rela = sec.name == ".debug_info"

        def resolve(name: str, at: int) -> int:
            if name in variables:
                relocations.append((at, name, R_CUDA_64, 0 if rela else None))
                return 0
            if name.startswith(".") or name not in source.code_labels:
                return offsets.get(name, 0)
            function, line = source.code_labels[name]
            k = kernels_by_name.get(function)
            if k is None:
                return 0
            body = source.body_line.get(function)
            first = min((x for x in k.ptx_lines if x is not None and x != body), default=None)
            if first is not None and line < first:        # before the code: the prologue's start
                address = 0
            else:
                address = next((16 * i for i, x in enumerate(k.ptx_lines) if x is not None and x > line),
                               k.text_size)
            relocations.append((at, function, R_CUDA_64, address if rela else None))
            return address

        data = section_data(sec, resolve)
        if data:
            out.append(DebugSection(sec.name, data, relocations))
    return out


def section_data(section, resolve=None) -> bytes:
    """A debug section's bytes; a value naming a label or section is `resolve(name, offset
    of the value)` (0 without a resolver)."""
    out = bytearray()
    for entry in section.entries:
        if entry.label is not None:
            continue
        width = DATA_WIDTH.get(entry.type, 1)
        for value in entry.values:
            at = len(out)
            out += (_value(value, resolve, at) & ((1 << 8 * width) - 1)).to_bytes(width, "little")
    return bytes(out)


def _value(node, resolve, at: int) -> int:
    from ptx2sass.frontend import ast
    if isinstance(node, ast.IntLit):
        return node.value
    if isinstance(node, ast.Name):
        return resolve(node.name, at) if resolve else 0
    if isinstance(node, ast.Binary) and node.op in "+-":
        left, right = _value(node.left, resolve, at), _value(node.right, None, at)
        return left + right if node.op == "+" else left - right
    if isinstance(node, ast.Unary) and node.op == "-":
        return -_value(node.operand, None, at)
    return 0
