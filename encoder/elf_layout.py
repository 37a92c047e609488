"""Byte layout of an ELF64 cubin, the way ptxas lays it out.

ptxas writes: the 64-byte header; every section in section-table order from offset 0x40,
each at its own alignment (NOBITS sections take no file bytes; on sm_100+ some sections
share another's bytes); the section header table right after the last section's bytes
(aligned to 8 before sm_90, 4 after); then, for executables, the program header table. This module only places bytes: what the sections contain is cubin.py's business.
"""
from __future__ import annotations

import struct
from dataclasses import field

from ptx2sass.records import dataclass

SHT_NULL, SHT_PROGBITS, SHT_SYMTAB, SHT_STRTAB, SHT_RELA = 0, 1, 2, 3, 4
SHT_NOTE, SHT_NOBITS, SHT_REL = 7, 8, 9
# Relocatable (-c) cubins give `.nv.global` and `.nv.shared.<k>` CUDA-specific types that,
# like SHT_NOBITS, occupy no file bytes.
# So does the Mercury copy of `.nv.shared.reserved.0` on sm_100+.
SHT_CUDA_GLOBAL, SHT_CUDA_SHARED, SHT_CUDA_MERC_SHARED = 0x70000007, 0x7000000A, 0x70000015
NOBITS_TYPES = frozenset({SHT_NOBITS, SHT_CUDA_GLOBAL, SHT_CUDA_SHARED, SHT_CUDA_MERC_SHARED})
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR, SHF_INFO_LINK = 0x1, 0x2, 0x4, 0x40
ET_REL, ET_EXEC = 1, 2
ET_EWP = 0xFF00     # ptxas -ewp (--extensible-whole-program): `cuobjdump -elf` says ET_EWP
STT_NOTYPE, STT_OBJECT, STT_FUNC, STT_SECTION = 0, 1, 2, 3
STB_LOCAL, STB_GLOBAL, STB_WEAK = 0, 1, 2
PT_LOAD, PT_PHDR = 1, 6
PF_X, PF_W, PF_R = 1, 2, 4

EHDR_SIZE, SHDR_SIZE, PHDR_SIZE = 64, 64, 56


MAX_FILE_BYTES = 1 << 32   # far beyond any cubin; a bigger layout means corrupt input


class LayoutError(ValueError):
    """Sections that cannot be laid out (bad alignment, absurd sizes)."""


def align_up(value: int, alignment: int) -> int:
    return value if alignment <= 1 else (value + alignment - 1) // alignment * alignment


@dataclass
class RawSection:
    """A section as it goes into the file: header fields plus bytes (or a NOBITS size)."""
    name: str
    type: int
    flags: int = 0
    link: int = 0
    info: int = 0
    align: int = 1
    entsize: int = 0
    data: bytes = b""
    nobits_size: int = 0
    name_offset: int = 0
    offset: int = 0  # filled by `place_sections`
    alias_of: str | None = None  # shares another section's file bytes (sm_100+ Mercury copies)

    @property
    def size(self) -> int:
        return self.nobits_size if self.type in NOBITS_TYPES else len(self.data)


@dataclass
class ElfHeader:
    e_type: int
    osabi: int
    abi_version: int
    e_flags: int
    e_machine: int = 190
    e_version: int = 1
    e_entry: int = 0
    ident_pad: bytes = bytes(7)


@dataclass
class ProgramHeader:
    type: int
    flags: int
    offset: int
    filesz: int
    memsz: int
    align: int = 8
    vaddr: int = 0
    paddr: int = 0


def place_sections(sections: list[RawSection]) -> int:
    """Assign file offsets (sections[0] is the null section); return the end of the bytes."""
    pos = EHDR_SIZE
    placed: dict[str, RawSection] = {}
    for sec in sections[1:]:
        placed[sec.name] = sec
        if sec.alias_of is not None:
            if sec.alias_of not in placed or sec.alias_of == sec.name:
                raise LayoutError(f"section {sec.name!r} shares the bytes of {sec.alias_of!r}, "
                                  f"which does not come before it")
            sec.offset = placed[sec.alias_of].offset
            continue
        if sec.align < 0 or sec.align & (sec.align - 1):
            raise LayoutError(f"section {sec.name!r}: alignment {sec.align} is not a power of two")
        pos = align_up(pos, sec.align)
        if pos > MAX_FILE_BYTES:
            raise LayoutError(f"section {sec.name!r} would start at {pos:#x}: far too large")
        sec.offset = pos
        if sec.type not in NOBITS_TYPES:
            pos += len(sec.data)
    return pos


@dataclass
class Segment:
    """A program header described by what it covers: the program header table itself
    (`covers_phdr`) or the named sections. Offsets and sizes follow from the layout."""
    type: int
    flags: int
    sections: list[str] = field(default_factory=list)
    covers_phdr: bool = False
    align: int = 8


def default_segments(sections: list[RawSection], style: str) -> list[Segment]:
    """The program headers ptxas writes for an executable.

    "ampere" (sm_75..sm_89): PHDR, one R-X LOAD over the read-only allocated sections, one
    RW LOAD over the writable ones (when any), a LOAD repeating the program header table.
    "hopper" (sm_90+): PHDR and its LOAD (read-only), then LOADs over the read-only data
    before the code, the code, the writable data, and the read-only data after the code.
    """
    alloc = [s for s in sections if s.flags & SHF_ALLOC]
    writable = [s.name for s in alloc if s.flags & SHF_WRITE]
    if style == "ampere":
        readonly = [s.name for s in alloc if not s.flags & SHF_WRITE]
        segs = [Segment(PT_PHDR, PF_R | PF_X, covers_phdr=True)]
        if readonly:
            segs.append(Segment(PT_LOAD, PF_R | PF_X, readonly))
        if writable:
            segs.append(Segment(PT_LOAD, PF_R | PF_W, writable))
        return segs + [Segment(PT_LOAD, PF_R | PF_X, covers_phdr=True)]
    code = [s.name for s in alloc if s.flags & SHF_EXECINSTR]
    first_code = next((i for i, s in enumerate(alloc) if s.flags & SHF_EXECINSTR), len(alloc))
    before = [s.name for s in alloc[:first_code] if not s.flags & (SHF_WRITE | SHF_EXECINSTR)]
    after = [s.name for s in alloc[first_code:] if not s.flags & (SHF_WRITE | SHF_EXECINSTR)]
    segs = [Segment(PT_PHDR, PF_R, covers_phdr=True), Segment(PT_LOAD, PF_R, covers_phdr=True)]
    for names, flags in ((before, PF_R), (code, PF_R | PF_X), (writable, PF_R | PF_W),
                         (after, PF_R)):
        if names:
            segs.append(Segment(PT_LOAD, flags, names))
    return segs


def _program_headers(segments: list[Segment], sections: list[RawSection],
                     phoff: int) -> list[ProgramHeader]:
    by_name = {s.name: s for s in sections}
    table = len(segments) * PHDR_SIZE
    out = []
    for seg in segments:
        if seg.covers_phdr:
            out.append(ProgramHeader(seg.type, seg.flags, phoff, table, table, seg.align))
            continue
        members = [by_name[n] for n in seg.sections if n in by_name]
        if not members:
            out.append(ProgramHeader(seg.type, seg.flags, 0, 0, 0, seg.align))
            continue
        # File size runs to the last file byte (or to where zero-filled data starts);
        # memory size lays the zero-filled sections out after it at their alignments.
        start = min(s.offset for s in members)
        filesz = max(s.offset + (0 if s.type in NOBITS_TYPES else s.size) for s in members) - start
        end = start
        for s in members:
            end = (align_up(end, s.align) + s.size if s.type in NOBITS_TYPES
                   else max(end, s.offset + s.size))
        memsz = end - start
        out.append(ProgramHeader(seg.type, seg.flags, start, filesz, memsz, seg.align))
    return out


def segments_of(phdrs: list[ProgramHeader], sections: list[RawSection],
                phoff: int) -> list[Segment]:
    """Describe a file's program headers by the sections they cover (the reader's side).
    A NOBITS section belongs to the writable segment whose file bytes it follows."""
    segs = []
    for ph in phdrs:
        if ph.offset == phoff and ph.filesz == len(phdrs) * PHDR_SIZE:
            segs.append(Segment(ph.type, ph.flags, covers_phdr=True, align=ph.align))
            continue
        names = []
        for s in sections[1:]:
            if not s.flags & SHF_ALLOC:
                continue
            if s.type in NOBITS_TYPES:
                inside = bool(ph.flags & PF_W and s.flags & SHF_WRITE
                              and ph.offset <= s.offset <= ph.offset + ph.filesz)
            else:
                inside = ph.offset <= s.offset < ph.offset + ph.filesz
            if inside:
                names.append(s.name)
        segs.append(Segment(ph.type, ph.flags, names, align=ph.align))
    return segs


def write_elf(header: ElfHeader, sections: list[RawSection], shstrndx: int,
              segments: list[Segment] | None, shoff_align: int = 8) -> bytes:
    """The file's bytes. `sections` must already carry their name offsets and links;
    `segments` None means no program headers (relocatable output)."""
    end = place_sections(sections)
    shoff = align_up(end, shoff_align)
    phoff = shoff + len(sections) * SHDR_SIZE
    phdrs = _program_headers(segments, sections, phoff) if segments else []

    out = bytearray(phoff + len(phdrs) * PHDR_SIZE)
    ident = b"\x7fELF" + bytes([2, 1, 1, header.osabi, header.abi_version]) + header.ident_pad
    struct.pack_into("<16sHHIQQQIHHHHHH", out, 0, ident, header.e_type, header.e_machine,
                     header.e_version, header.e_entry, phoff if phdrs else 0, shoff,
                     header.e_flags, EHDR_SIZE, PHDR_SIZE, len(phdrs), SHDR_SIZE,
                     len(sections), shstrndx)
    for sec in sections[1:]:
        if sec.type not in NOBITS_TYPES and sec.alias_of is None:
            out[sec.offset:sec.offset + len(sec.data)] = sec.data
    for i, sec in enumerate(sections):
        if i == 0:
            continue  # the null header stays zero
        struct.pack_into("<IIQQQQIIQQ", out, shoff + i * SHDR_SIZE, sec.name_offset, sec.type,
                         sec.flags, 0, sec.offset, sec.size, sec.link, sec.info, sec.align,
                         sec.entsize)
    for i, ph in enumerate(phdrs):
        struct.pack_into("<IIQQQQQQ", out, phoff + i * PHDR_SIZE, ph.type, ph.flags, ph.offset,
                         ph.vaddr, ph.paddr, ph.filesz, ph.memsz, ph.align)
    return bytes(out)


@dataclass
class StringTable:
    """An ELF string table that keeps ptxas's order: every string at its own offset (no
    suffix sharing), starting with the empty string."""
    strings: list[str] = field(default_factory=lambda: [""])

    def __post_init__(self) -> None:
        if not self.strings or self.strings[0] != "":
            self.strings.insert(0, "")
        self._offsets: dict[str, int] = {}
        pos = 0
        for s in self.strings:
            self._offsets.setdefault(s, pos)
            pos += len(s.encode()) + 1
        self._end = pos

    def offset(self, s: str) -> int:
        if s not in self._offsets:
            self.strings.append(s)
            self._offsets[s] = self._end
            self._end += len(s.encode()) + 1
        return self._offsets[s]

    def data(self) -> bytes:
        return b"".join(s.encode() + b"\0" for s in self.strings)

    @staticmethod
    def parse(data: bytes) -> "StringTable":
        parts = data.split(b"\0")
        if parts and parts[-1] == b"":
            parts.pop()
        return StringTable([p.decode("utf-8", "replace") for p in parts])
