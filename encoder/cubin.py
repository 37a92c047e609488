"""Cubin (CUDA ELF) reader and writer.

`read_cubin(bytes) -> Cubin` and `write_cubin(Cubin) -> bytes`. A `Cubin` holds what a
loader and the tools read: the kernels (their instruction words, register and barrier
counts, shared memory, constant bank 0, `.nv.info.<k>` records, relocations), the module's
`.nv.info`, call graph, notes, symbols and every other section. Reading then writing gives
the same bytes: the reader also records the section order and the string tables, which are
ptxas's creation order and not derivable from the contents (see docs/cubin.md).

To make a cubin from scratch (what the code generator does), build `Kernel`s with their
facts (text, regcount, params, exit offsets, ...) and call `Cubin.for_kernels(arch, kernels)`
(encoder/cubin_builder.py): it creates the sections, symbols and `.nv.info` records in the
order and form ptxas 13.5 uses. ptxas's ordering rules live in encoder/cubin_layout.py.
"""
from __future__ import annotations

import io
import struct
from dataclasses import field

from ptx2sass.records import dataclass

from .arch import ELF_ABI_VERSION, ELF_OSABI, EM_CUDA, SASS_ONLY_E_FLAG, UnknownArch, arch_from_e_flags, arch_info
from .cubin_layout import default_section_order, default_shstrtab, default_strtab, reloc_kinds
from .elf_layout import (ET_EWP, ET_EXEC, ET_REL, NOBITS_TYPES, SHF_ALLOC, SHF_EXECINSTR, SHF_INFO_LINK,
                         SHT_NOBITS, SHT_NOTE, SHT_NULL, SHT_PROGBITS, SHT_REL, SHT_RELA,
                         SHT_STRTAB, SHT_SYMTAB, STB_LOCAL, STT_FUNC, STT_NOTYPE, STT_OBJECT,
                         ElfHeader, ProgramHeader,
                         LayoutError, RawSection, Segment, StringTable, align_up,
                         default_segments, segments_of, write_elf)
from .nvinfo import (ATTRIBUTE_CODES, MULTICAST_BULK_5F, UNNAMED_5F, Fmt, KParam, NvInfoError, NvInfoRecord,
                     encode_records, parse_records)

SHT_CUDA_INFO = 0x70000000
SHT_CUDA_CALLGRAPH = 0x70000001
SHT_CUDA_CONSTANT0_REL = 0x70000064   # `.nv.constant0.<k>` in relocatable (-c) output
SHT_CUDA_CONSTANT2_REL = 0x70000066   # `.nv.constant2.<f>` (its jump tables) in relocatable output
SHT_CUDA_CONSTANT3_REL = 0x70000067   # `.nv.constant3` (module `.const` variables) in relocatable output
SHT_CUDA_SHARED_REL = 0x7000000A      # `.nv.shared.<k>` in relocatable (-c) output
SHN_LORESERVE = 0xFF00
SHN_COMMON = 0xFFF2      # a COMMON symbol (the linker allocates it; value: its alignment)
STO_CUDA_ENTRY = 0x10
NOTE_OWNER = "NVIDIA Corp"
NT_CUDA_TKINFO = 2000
NT_CUDA_CUINFO = 1000
TEXT_ALIGN = 128

# `.nv.info.<k>` attributes that Kernel fields describe (the builder writes these).
# SW_WAR and 0x35 are per-arch constants (arch.py), written by the builder on its own.
_MODELED_ATTRIBUTES = {
    "LANGUAGE", "SW_WAR", "UNKNOWN_0x35", "CUDA_API_VERSION", "PARAM_CBANK",
    "CBANK_PARAM_SIZE", "KPARAM_INFO", "MAXREG_COUNT", "NUM_BARRIERS", "UNKNOWN_0x5f",
    "EXIT_INSTR_OFFSETS", "S2RCTAID_INSTR_OFFSETS", "CTAIDZ_USED", "REQNTID", "MAX_THREADS",
    "CRS_STACK_SIZE", "SPARSE_MMA_MASK", "NVSAL_SW_WAR", "PREEXIT_USED", "GRID_ATTRIBUTES"}
_SYMBOL_VALUED = {ATTRIBUTE_CODES[n] for n in
                  ("REGCOUNT", "FRAME_SIZE", "MIN_STACK_SIZE", "MAX_STACK_SIZE")}


class CubinError(ValueError):
    """A malformed or unsupported cubin, or a `Cubin` that cannot be written."""


@dataclass
class Symbol:
    """A `.symtab` entry. `section` names the section it lives in (None: undefined, or the
    reserved index in `shndx`)."""
    name: str
    value: int = 0
    size: int = 0
    type: int = STT_NOTYPE
    bind: int = STB_LOCAL
    other: int = 0
    section: str | None = None
    shndx: int = 0  # used only when `section` is None (SHN_UNDEF, SHN_ABS, ...)


@dataclass
class Relocation:
    """One relocation: patch `offset` of the target with `type` against `symbol` (an index
    into `Cubin.symbols`; the builder also takes a symbol name). `addend` None means a REL
    entry, an int a RELA entry."""
    offset: int
    symbol: int | str
    type: int
    addend: int | None = None


@dataclass
class Section:
    """A section the cubin model does not interpret (debug frames, global data, constant
    banks other than 0, `.nv.rel.action`, Mercury sections, ...), kept exactly.
    `link` and, for SHF_INFO_LINK sections, `info_section` name other sections."""
    name: str
    type: int
    flags: int = 0
    align: int = 1
    entsize: int = 0
    data: bytes = b""
    nobits_size: int = 0
    link: str | None = None
    info: int = 0
    info_section: str | None = None
    alias_of: str | None = None   # shares this section's file bytes (sm_100+ Mercury copies)


@dataclass
class RelocSection:
    """A `.rel.<target>` / `.rela.<target>` section for a target other than a kernel's text."""
    name: str
    target: str
    relocations: list[Relocation]
    flags: int = SHF_INFO_LINK
    align: int = 8

    @property
    def rela(self) -> bool:
        return self.name.startswith(".rela")


@dataclass
class ToolkitInfo:
    """`.note.nv.tkinfo`: which tool wrote the file (ptxas, its release, build, options)."""
    tool_name: str = "ptxas"
    tool_version: str = "Cuda compilation tools, release 13.5, V13.5.37"
    tool_branch: str = "Build cuda_13.5.r13.5/compiler.39125733_0"
    tool_args: str = "-arch sm_89 "
    note_version: int = 2
    reserved: int = 0
    object_name: str = ""       # under -g: the output file's name, at the strings' start

    def desc(self) -> bytes:
        strings = [self.tool_name, self.tool_version, self.tool_branch, self.tool_args]
        blob, offsets = bytearray(self.object_name.encode() + b"\0"), []
        for s in strings:
            offsets.append(len(blob))
            blob += s.encode() + b"\0"
        blob += bytes(-len(blob) % 4)
        return struct.pack("<6I", self.note_version, self.reserved, *offsets) + bytes(blob)

    @staticmethod
    def from_desc(desc: bytes) -> "ToolkitInfo":
        version, reserved, *offsets = struct.unpack_from("<6I", desc)
        blob = desc[24:]

        def string_at(off: int) -> str:
            end = blob.index(b"\0", off)
            return blob[off:end].decode()
        info = ToolkitInfo(*(string_at(o) for o in offsets), note_version=version,
                           reserved=reserved, object_name=string_at(0))
        if info.desc() != desc:
            raise ValueError("tkinfo note is not in ptxas's layout")
        return info


@dataclass
class CudaInfo:
    """`.note.nv.cuinfo`: the PTX target the code came from and the toolkit version."""
    virtual_sm: int
    toolkit_version: int = 135   # 13.5
    note_version: int = 2

    def desc(self) -> bytes:
        return struct.pack("<HHI", self.note_version, self.virtual_sm, self.toolkit_version)

    @staticmethod
    def from_desc(desc: bytes) -> "CudaInfo":
        if len(desc) != 8:
            raise ValueError("cuinfo note is not 8 bytes")
        version, vsm, tk = struct.unpack("<HHI", desc)
        return CudaInfo(vsm, tk, version)


@dataclass
class GlobalVar:
    """A module-scope variable: `.global` (with `init` bytes, or zero-filled) or `.const`."""
    name: str
    size: int
    align: int = 4
    init: bytes | None = None
    space: str = "global"   # "global" or "const"
    offset: int | None = None  # within its section; None: the builder places it next

    @property
    def section(self) -> str:
        if self.space == "const":
            return ".nv.constant3"
        return ".nv.global.init" if self.init is not None else ".nv.global"


@dataclass
class Kernel:
    """One function with its own `.text.<name>` section: an `.entry` (`is_entry`) or, in
    relocatable output, a `.func`.

    The scalar facts (regcount ... crs_stack_size) are what the code generator knows; the
    builder turns them into `attributes`, the exact `.nv.info.<name>` records. On reading,
    both are filled; `write_cubin` writes the records and refuses a cubin whose facts and
    records disagree (a stale edit), rather than writing a file that contradicts itself.
    """
    name: str
    text: bytes
    is_entry: bool = True
    regcount: int = 0
    # The module's REGCOUNT record when it differs from `regcount` (ptxas -G writes the
    # register count after debug spilling there, the text section's before); None: equal.
    regcount_attribute: int | None = None
    barcount: int = 0
    shared_bytes: int | None = None   # static `.nv.shared.<name>` size; None: no section
    shared_align: int = 4
    const0: bytes | None = None       # `.nv.constant0.<name>`: param_base + parameter bytes
    const2: bytes | None = None       # `.nv.constant2.<name>`: literals the code reads (c[0x2])
    const2_align: int = 4             # (ptxas -g aligns it to 8 in some modules: two kernels reaching a function's tables)
    # -c: the objects of `.nv.constant2.<name>` its code is relocated against, (name, offset,
    # size): its jump tables (ptx2sass.abi.jump_table_object)
    const2_objects: tuple = ()
    # -g: the bank holds only the jump tables of functions the kernel calls; ptxas makes it
    # after the rest (section after the last kernel's banks, symbol after `.nv.callgraph`'s)
    const2_late: bool = False
    param_base: int = 0x160
    params: list[tuple[int, int, int]] = field(default_factory=list)  # (ordinal, offset, size)
    exit_offsets: list[int] = field(default_factory=list)
    s2rctaid_offsets: list[int] | None = None
    max_threads: tuple[int, int, int] | None = None
    reqntid: tuple[int, int, int] | None = None
    maxreg_count: int | None = 0xFF
    ctaidz_used: bool = False
    # sm_90's EIATTR_SPARSE_MMA_MASK: 0x10 when the code has HMMA.SP, 0x20 IMMA.SP (ptxas 13.5)
    sparse_mma_mask: int = 0
    # sm_90+'s EIATTR_PREEXIT_USED: 1 when the code has PREEXIT, else 0
    preexit_used: bool = False
    # EIATTR_REG_RECONFIG: the code has USETMAXREG (setmaxnreg)
    reg_reconfig: bool = False
    tools_patch: bool = False        # --compile-as-tools-patch: EIATTR_TOOLS_PATCH_FUNC
    # sm_90+'s EIATTR_GRID_ATTRIBUTES (ptx2sass/grid_attributes.py): 0x4 multimem used, 0x8 a
    # multimem write; 0: no record
    grid_attributes: int = 0
    # sm_90+: ptxas adds 0x2 to the `.nv.info.<k>` record 0x5f (0x101) when the code issues a
    # multimem bulk copy (UBLKCP/UBLKRED of multimem.cp[.reduce].async.bulk)
    multicast_bulk: bool = False
    # tcgen05 (isel/tcgen05.py): `tmem_used` any tensor-memory instruction (VRC_CTA_INIT_COUNT
    # = Target.tmem_vrc_cta_init_count); `tmem_cta_groups` the `.cta_group::N` its alloc/dealloc/
    # relinquish/commit/cp/shift name (TCGEN05_1CTA_USED, TCGEN05_2CTA_USED: ld/st/wait/fence
    # alone write neither); `tmem_partition` an allocation
    # (AT_ENTRY_FRAGMENTS TMEM_CTA1_V2, RESERVED_SMEM_USED, and the module's reserved shared
    # section grows by the 32-byte `__nv_reservedSMEM_tcgen05_partition`)
    tmem_used: bool = False
    tmem_cta_groups: tuple[int, ...] = ()
    tmem_partition: bool = False
    crs_stack_size: int | None = None
    frame_size: int = 0
    # Private copies of out-of-line functions inside this text (ptxas's `$kernel$func`):
    # (symbol name, offset in the text, frame size); only the builder reads it.
    subfunctions: list[tuple[str, int, int]] = field(default_factory=list)
    min_stack_size: int = 0
    max_stack_size: int | None = None
    cuda_api_version: int = 0x87
    # Functions it calls that the file does not define (ptxas's system calls, `vprintf`...):
    # the builder gives them undefined FUNC symbols, the EXTERNS record and call-graph pairs.
    # Only the builder reads it (a cubin read back keeps EXTERNS in `extra_attributes`).
    externs: list[str] = field(default_factory=list)
    # Records the builder has no field for (COOP_GROUP_*, EXTERNS, ...), placed by its order.
    extra_attributes: list[NvInfoRecord] = field(default_factory=list)
    # Where the entry basic block ends (the second block's first byte): ptxas's debug frame
    # names this point. None: 16 bytes past the first EXIT, right for straight-line code.
    entry_block_end: int | None = None
    # The kernel's whole CFA program in `.debug_frame`, for what the default cannot describe
    # (stack frames, call sequences); None: the builder's default.
    cfa_program: bytes | None = None
    attributes: list[NvInfoRecord] | None = None  # `.nv.info.<name>`; None: no such section
    relocations: list[Relocation] = field(default_factory=list)  # against the text
    # Which of `.rel.text.<k>` / `.rela.text.<k>` exist ("rel", "rela"); ptxas sometimes
    # writes an empty one. None: those that `relocations` needs.
    reloc_kinds: tuple[str, ...] | None = None
    text_flags: int = SHF_ALLOC | SHF_EXECINSTR
    text_align: int = TEXT_ALIGN
    # sm_90: the code computes shared-memory addresses. ptxas resolves their relocation
    # against the reserved shared offset itself and leaves an empty `.rela.text.<k>` and an
    # internal symbol behind; only the builder reads it.
    shared_window: bool = False
    # Module `.texref`/`.samplerref`/`.surfref` handles: the 4-byte constant-bank-0 slots
    # the driver fills (absolute offset, the handle variables it holds: one, or a texture
    # and its sampler in independent mode), and the variables in the order the kernel
    # first names them; only the builder reads them.
    handle_slots: list[tuple[int, tuple[str, ...]]] = field(default_factory=list)
    handle_refs: list[str] = field(default_factory=list)
    # -g: the shared variables' symbols (builder input only, as handle_refs): (name,
    # offset, size, declared by "module", "own" or a function's name, where "kernel" (the
    # kernel's window), "region" or "extern" (both `.nv_debug.shared`))
    shared_symbols: list[tuple[str, int, int, str, str]] = field(default_factory=list)
    # -g: the functions its calls through pointers may reach (builder input only)
    indirect_callees: list[str] = field(default_factory=list)
    # relocatable output: the prototype string of its first call through a pointer
    pointer_prototype: str | None = None
    # `externs` in the order first called, as `.nv.callgraph` lists a caller's edges (builder
    # input only; None: `externs`' order)
    call_order: list[str] | None = None
    # Relocatable output: the kernels of the module whose function descriptor the code names
    # (`mov.u64 %rd, kernel`, a device-side launch); ptxas lists them in EXTERNS after the
    # called functions and in the call graph as address-taken (builder input only)
    named_kernels: list[str] = field(default_factory=list)
    # Relocatable output: the address-taken functions whose address the code names (the call
    # graph pairs the kernel with each after the last marker; builder input only)
    named_functions: list[str] = field(default_factory=list)

    @property
    def param_bytes(self) -> int:
        return max((off + size for _, off, size in self.params), default=0)

    def attribute(self, name: str) -> list[NvInfoRecord]:
        code = ATTRIBUTE_CODES[name]
        return [r for r in self.attributes or [] if r.attr == code]


@dataclass
class Cubin:
    """A whole cubin. `kernels`, the `.nv.info` records, call graph and notes are decoded;
    `symbols` is the symbol table (relocations and records name symbols by index into it);
    `sections` and `reloc_sections` hold everything else exactly. The layout fields record
    ptxas's order so that writing gives back its bytes; None means "as ptxas would"."""
    arch: str
    kernels: list[Kernel] = field(default_factory=list)     # in section (file) order
    symbols: list[Symbol] = field(default_factory=lambda: [Symbol("")])
    module_attributes: list[NvInfoRecord] | None = None      # `.nv.info`
    callgraph: list[tuple[int, int]] | None = None           # `.nv.callgraph` pairs
    tkinfo: ToolkitInfo | None = None
    cuinfo: CudaInfo | None = None
    sections: list[Section] = field(default_factory=list)   # everything else, kept as is
    reloc_sections: list[RelocSection] = field(default_factory=list)
    e_type: int = ET_EXEC
    osabi: int = ELF_OSABI
    abi_version: int = ELF_ABI_VERSION
    e_flags: int | None = None
    ident_pad: bytes = bytes(7)
    # Layout as ptxas created it; None lets the writer choose ptxas's default order.
    section_order: list[str] | None = None
    shstrtab: list[str] | None = None
    strtab: list[str] | None = None
    segments: list[Segment] | None = None   # program headers (executables only)
    shoff_align: int | None = None          # None: the arch's default
    # Relocatable output: extern functions' prototype strings (`#iil`), which ptxas puts
    # first in `.strtab` (`.nv.prototype` names them by offset); used by the default layout.
    prototype_strings: list[str] = field(default_factory=list)
    # Note section headers: name -> (sh_flags, sh_link section, sh_info section).
    note_headers: dict[str, tuple[int, str | None, str | None]] = field(default_factory=lambda: {
        ".note.nv.tkinfo": (0x2000000, None, None),
        ".note.nv.cuinfo": (0x1000000, ".note.nv.tkinfo", None)})

    # Lookups --------------------------------------------------------------------------
    def kernel(self, name: str) -> Kernel:
        for k in self.kernels:
            if k.name == name:
                return k
        raise KeyError(f"no kernel {name!r} in this cubin; it has "
                       f"{', '.join(k.name for k in self.kernels) or 'none'}")

    def section(self, name: str) -> Section:
        for s in self.sections:
            if s.name == name:
                return s
        raise KeyError(f"no section {name!r}")

    def symbol_index(self, name: str, section: str | None = None) -> int:
        for i, sym in enumerate(self.symbols):
            if sym.name == name and (section is None or sym.section == section):
                return i
        raise KeyError(f"no symbol {name!r}")

    def kernel_symbol_index(self, kernel: Kernel) -> int:
        text = f".text.{kernel.name}"
        for i, sym in enumerate(self.symbols):
            if sym.name == kernel.name and sym.type == STT_FUNC and sym.section == text:
                return i
        raise CubinError(f"kernel {kernel.name!r} has no function symbol in {text}")

    def local_functions(self, kernel: Kernel) -> list[Symbol]:
        """Functions ptxas placed inside a kernel's text (`$kernel$callee`)."""
        text = f".text.{kernel.name}"
        return [s for s in self.symbols
                if s.type == STT_FUNC and s.section == text and s.name != kernel.name]

    # Module data, for loaders and the emulator --------------------------------------------
    def variables(self) -> list[GlobalVar]:
        """Module variables (`.global`, initialised or not, and `.const`) with their bytes."""
        spaces = {".nv.global": "global", ".nv.global.init": "global", ".nv.constant3": "const"}
        out = []
        for sym in self.symbols:
            if sym.type != STT_OBJECT or sym.section not in spaces:
                continue
            sec = self.section(sym.section)
            init = None if sec.type in NOBITS_TYPES else sec.data[sym.value:sym.value + sym.size]
            out.append(GlobalVar(sym.name, sym.size, sec.align, init, spaces[sym.section], sym.value))
        return out

    def constant_bank(self, bank: int, kernel: Kernel | None = None) -> bytes:
        """Initial contents of `c[bank]` for `kernel` (banks 0 and 2 are per kernel, the
        others module-wide); addresses in bank 4 are filled by `bank_relocations`."""
        if bank in (0, 2):
            if kernel is None:
                raise KeyError(f"constant bank {bank} belongs to a kernel: name one")
            data = kernel.const0 if bank == 0 else kernel.const2
            return data or b""
        try:
            return self.section(f".nv.constant{bank}").data
        except KeyError:
            return b""

    def bank_relocations(self, bank: int) -> list[tuple[int, str, int, int]]:
        """(offset, symbol name, relocation type, addend) patched into module bank `bank`."""
        target = f".nv.constant{bank}"
        return [(r.offset, self.symbols[r.symbol].name, r.type, r.addend or 0)
                for rs in self.reloc_sections if rs.target == target for r in rs.relocations]

    @staticmethod
    def for_kernels(arch: str, kernels: list[Kernel], **options) -> "Cubin":
        """A new cubin holding `kernels` (given in PTX order), laid out as ptxas does."""
        from .cubin_builder import build_cubin
        return build_cubin(arch, kernels, **options)


# Reading --------------------------------------------------------------------------------

def read_cubin(data: bytes) -> Cubin:
    """Parse a cubin. Raises CubinError (never a pyelftools exception) on bad input."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise CubinError(f"a cubin is bytes, not {type(data).__name__}")
    data = bytes(data)
    if len(data) < 64 or data[:4] != b"\x7fELF":
        raise CubinError("not an ELF file (bad magic or shorter than an ELF header)")
    if data[4] != 2 or data[5] != 1:
        raise CubinError("not a 64-bit little-endian ELF file: cubins are ELF64 LE")
    try:
        return _Reader(data).read()
    except CubinError:
        raise
    except (NvInfoError, UnknownArch) as e:
        raise CubinError(str(e)) from None
    except Exception as e:  # pyelftools raises assorted types on truncated/corrupt input
        raise CubinError(f"malformed cubin: {type(e).__name__}: {e}") from None


class _Reader:
    def __init__(self, data: bytes):
        from elftools.elf.elffile import ELFFile
        self.data = data
        self.elf = ELFFile(io.BytesIO(data))

    def _check_bounds(self) -> None:
        size = len(self.data)
        eh = self.elf.header
        if eh["e_shoff"] + eh["e_shnum"] * eh["e_shentsize"] > size:
            raise CubinError("truncated cubin: section header table runs past the end")
        for sec in self.elf.iter_sections():
            has_bytes = sec["sh_type"] not in ("SHT_NOBITS", *NOBITS_TYPES)
            if has_bytes and sec["sh_offset"] + sec["sh_size"] > size:
                raise CubinError(f"truncated cubin: section {sec.name!r} runs past the end")
            align = sec["sh_addralign"]
            if align & (align - 1) or (has_bytes and sec["sh_size"] and align > 1
                                       and sec["sh_offset"] % align):
                raise CubinError(f"section {sec.name!r}: alignment {align} does not fit "
                                 f"its offset {sec['sh_offset']:#x}")
        if eh["e_phoff"] + eh["e_phnum"] * eh["e_phentsize"] > size:
            raise CubinError("truncated cubin: program header table runs past the end")

    def read(self) -> Cubin:
        elf, eh = self.elf, self.elf.header
        if eh["e_machine"] not in ("EM_CUDA", EM_CUDA):
            raise CubinError(f"not a CUDA cubin: e_machine is {eh['e_machine']}, expected EM_CUDA (190)")
        self._check_bounds()
        arch = arch_from_e_flags(eh["e_flags"]).name
        e_type = {"ET_EXEC": ET_EXEC, "ET_REL": ET_REL, ET_EWP: ET_EWP, "ET_LOPROC": ET_EWP}.get(eh["e_type"])
        if e_type is None:
            raise CubinError(f"unsupported ELF type {eh['e_type']}")
        ident = self.data[:16]
        cubin = Cubin(arch=arch, e_type=e_type, osabi=ident[7], abi_version=ident[8],
                      e_flags=eh["e_flags"], ident_pad=ident[9:16], symbols=[])
        raw = [self._raw(i) for i in range(elf.num_sections())]
        self._find_aliases(raw)
        names = [r.name for r in raw]
        # Section names need not be unique (nvlink keeps two objects' local kernels or
        # functions of one name: two `.text.k`, two `.nv.info.k`): a section is its index,
        # and what belongs to a kernel's text is found through sh_info where a name repeats.
        cubin.section_order = names[1:]
        shstr = raw[eh["e_shstrndx"]]
        cubin.shstrtab = StringTable.parse(shstr.data).strings
        symtab = next((r for r in raw if r.type == SHT_SYMTAB), None)
        if symtab is not None:
            strtab = raw[symtab.link]
            cubin.strtab = StringTable.parse(strtab.data).strings
            cubin.symbols = self._symbols(symtab, strtab, names)
        else:
            cubin.symbols = [Symbol("")]
        texts = [i for i, (n, r) in enumerate(zip(names, raw))
                 if n.startswith(".text.") and r.flags & SHF_EXECINSTR]
        self.by_text = {i: Kernel(name=names[i][len(".text."):], text=b"") for i in texts}
        kernels: dict[str, Kernel] = {}
        for k in self.by_text.values():
            kernels.setdefault(k.name, k)       # (a repeated name: the first, unless sh_info says)
        self.repeated = {k.name for k in self.by_text.values()} if len(kernels) < len(texts) else set()
        self.repeated = {n for n in self.repeated if sum(k.name == n for k in self.by_text.values()) > 1}

        for idx, r in enumerate(raw):
            if idx == 0 or r.type in (SHT_SYMTAB,) or idx == eh["e_shstrndx"] or \
                    (symtab is not None and idx == symtab.link):
                continue
            self._classify(cubin, kernels, r, names, idx)
        cubin.kernels = [self.by_text[i] for i in texts]
        self._layout(cubin, raw)
        for i in texts:
            self._decode_kernel_facts(cubin, self.by_text[i], raw, names, i)
        return cubin

    def _layout(self, cubin: Cubin, raw: list[RawSection]) -> None:
        eh = self.elf.header
        end = max([64] + [r.offset + len(r.data) for r in raw[1:] if r.alias_of is None])
        if eh["e_shoff"] != align_up(end, arch_info(cubin.arch).shoff_align):
            cubin.shoff_align = next((a for a in (1, 2, 4, 8, 16, 32, 64, 128)
                                      if align_up(end, a) == eh["e_shoff"]), None)
            if cubin.shoff_align is None:
                raise CubinError("section header table is not where ptxas puts it "
                                 f"(offset {eh['e_shoff']:#x}, sections end at {end:#x})")
        if cubin.e_type == ET_EXEC:
            phdrs = [ProgramHeader(s["p_type"] if isinstance(s["p_type"], int) else
                                   {"PT_LOAD": 1, "PT_PHDR": 6}[s["p_type"]],
                                   s["p_flags"], s["p_offset"], s["p_filesz"], s["p_memsz"],
                                   s["p_align"], s["p_vaddr"], s["p_paddr"])
                     for s in self.elf.iter_segments()]
            cubin.segments = segments_of(phdrs, raw, eh["e_phoff"])

    @staticmethod
    def _find_aliases(raw: list[RawSection]) -> None:
        """Mark sections whose bytes are an earlier section's (same offset, same data)."""
        first_at: dict[int, RawSection] = {}
        for r in raw[1:]:
            if r.type in NOBITS_TYPES or not r.data:
                continue
            earlier = first_at.get(r.offset)
            if earlier is not None and earlier.data == r.data:
                r.alias_of = earlier.name
            else:
                first_at.setdefault(r.offset, r)

    def _raw(self, i: int) -> RawSection:
        sec = self.elf.get_section(i)
        h = sec.header
        type_ = h["sh_type"]
        if isinstance(type_, str):  # pyelftools names the standard types
            from elftools.elf.enums import ENUM_SH_TYPE_BASE
            if type_ not in ENUM_SH_TYPE_BASE:
                raise CubinError(f"section {sec.name!r} has unknown type {type_}")
            type_ = ENUM_SH_TYPE_BASE[type_]
        nobits = type_ in NOBITS_TYPES
        data = b"" if nobits else self.data[h["sh_offset"]:h["sh_offset"] + h["sh_size"]]
        return RawSection(sec.name, type_, h["sh_flags"], h["sh_link"], h["sh_info"],
                          h["sh_addralign"], h["sh_entsize"], data,
                          h["sh_size"] if nobits else 0, h["sh_name"], h["sh_offset"])

    def _symbols(self, symtab: RawSection, strtab: RawSection, names: list[str]) -> list[Symbol]:
        if symtab.entsize != 24 or len(symtab.data) % 24:
            raise CubinError(".symtab entries are not 24 bytes")
        out = []
        for pos in range(0, len(symtab.data), 24):
            st_name, st_info, st_other, st_shndx, value, size = struct.unpack_from(
                "<IBBHQQ", symtab.data, pos)
            end = strtab.data.find(b"\0", st_name)
            if st_name >= len(strtab.data) or end < 0:
                raise CubinError(f"symbol {pos // 24} has a name outside .strtab")
            name = strtab.data[st_name:end].decode("utf-8", "replace")
            in_section = 0 < st_shndx < SHN_LORESERVE
            if in_section and st_shndx >= len(names):
                raise CubinError(f"symbol {name!r} points at section {st_shndx}, which does not exist")
            out.append(Symbol(name, value, size, st_info & 0xF, st_info >> 4, st_other,
                              names[st_shndx] if in_section else None,
                              0 if in_section else st_shndx))
        return out

    def _classify(self, cubin: Cubin, kernels: dict[str, Kernel], r: RawSection,
                  names: list[str], idx: int) -> None:
        name = r.name
        kname = _kernel_suffix(name, kernels)
        if name.startswith(".text.") and idx in self.by_text:
            k = self.by_text[idx]
            k.text, k.text_flags, k.text_align = r.data, r.flags, r.align
            return
        if kname in self.repeated:      # the kernel's text is the one sh_info names, if any
            owner = self.by_text.get(r.info if r.flags & SHF_INFO_LINK else -1)
            kernels = dict(kernels, **{kname: owner}) if owner is not None and owner.name == kname else kernels
        if name.startswith(".nv.info.") and kname and r.type == SHT_CUDA_INFO:
            kernels[kname].attributes = parse_records(r.data, name)
            return
        if name.startswith(".nv.constant0.") and kname:
            kernels[kname].const0 = r.data
            return
        if name.startswith(".nv.constant2.") and kname and r.flags == SHF_ALLOC | SHF_INFO_LINK \
                and r.align in (4, 8) and r.type == SHT_PROGBITS:
            kernels[kname].const2, kernels[kname].const2_align = r.data, r.align
            return
        if name.startswith(".nv.shared.") and kname and r.type in (SHT_NOBITS, SHT_CUDA_SHARED_REL):
            kernels[kname].shared_bytes = r.nobits_size
            kernels[kname].shared_align = r.align
            return
        if r.type in (SHT_REL, SHT_RELA):
            relocs = _parse_relocs(r, len(cubin.symbols))
            target = names[r.info] if 0 < r.info < len(names) else ""
            if r.info in self.by_text and name in (f".rel{target}", f".rela{target}"):
                k = self.by_text[r.info]
                k.relocations.extend(relocs)
                k.reloc_kinds = (k.reloc_kinds or ()) + ("rela" if r.type == SHT_RELA else "rel",)
                return
            cubin.reloc_sections.append(RelocSection(name, target, relocs, r.flags, r.align))
            return
        if name == ".nv.info" and r.type == SHT_CUDA_INFO:
            cubin.module_attributes = parse_records(r.data, name)
            return
        if name == ".nv.callgraph" and r.type == SHT_CUDA_CALLGRAPH:
            if len(r.data) % 8:
                raise CubinError(".nv.callgraph is not a list of 8-byte pairs")
            cubin.callgraph = [struct.unpack_from("<ii", r.data, p) for p in range(0, len(r.data), 8)]
            return
        if r.type == SHT_NOTE and name in (".note.nv.tkinfo", ".note.nv.cuinfo"):
            note = _parse_note(r.data)
            if note is not None:
                ntype, desc = note
                try:
                    if name == ".note.nv.tkinfo" and ntype == NT_CUDA_TKINFO:
                        cubin.tkinfo = ToolkitInfo.from_desc(desc)
                    elif name == ".note.nv.cuinfo" and ntype == NT_CUDA_CUINFO:
                        cubin.cuinfo = CudaInfo.from_desc(desc)
                    else:
                        raise ValueError(name)
                    if r.align != 4 or r.link >= len(names) or r.info >= len(names):
                        raise ValueError(name)
                    cubin.note_headers[name] = (r.flags, names[r.link] if r.link else None,
                                                names[r.info] if r.info else None)
                    return
                except (ValueError, struct.error):
                    if name == ".note.nv.tkinfo":
                        cubin.tkinfo = None
                    else:
                        cubin.cuinfo = None
        cubin.sections.append(Section(
            name, r.type, r.flags, r.align, r.entsize, r.data, r.nobits_size,
            names[r.link] if 0 < r.link < len(names) else None,
            0 if (r.flags & SHF_INFO_LINK and 0 < r.info < len(names)) else r.info,
            names[r.info] if (r.flags & SHF_INFO_LINK and 0 < r.info < len(names)) else None,
            r.alias_of))

    def _decode_kernel_facts(self, cubin: Cubin, k: Kernel, raw: list[RawSection],
                             names: list[str], text_index: int) -> None:
        info = arch_info(cubin.arch)
        text_sec = raw[text_index]
        sym_index = text_sec.info & 0xFFFFFF if info.regcount_in_text_info else text_sec.info
        if 0 < sym_index < len(cubin.symbols):
            sym = cubin.symbols[sym_index]
            k.is_entry = bool(sym.other & STO_CUDA_ENTRY)
        if info.regcount_in_text_info:
            k.regcount = text_sec.info >> 24
        decode_kernel_records(k)
        own = sym_index if k.name in self.repeated and 0 < sym_index < len(cubin.symbols) else None
        _decode_module_records(cubin, k, own)


def _kernel_suffix(name: str, kernels: dict[str, Kernel]) -> str | None:
    for prefix in (".text.", ".nv.info.", ".nv.constant0.", ".nv.constant2.", ".nv.shared."):
        if name.startswith(prefix) and name[len(prefix):] in kernels:
            return name[len(prefix):]
    return None


def _parse_relocs(r: RawSection, nsyms: int) -> list[Relocation]:
    rela = r.type == SHT_RELA
    size = 24 if rela else 16
    if len(r.data) % size:
        raise CubinError(f"{r.name}: size {len(r.data)} is not a multiple of {size}")
    out = []
    for pos in range(0, len(r.data), size):
        offset, info = struct.unpack_from("<QQ", r.data, pos)
        addend = struct.unpack_from("<q", r.data, pos + 16)[0] if rela else None
        if info >> 32 >= nsyms:
            raise CubinError(f"{r.name}: relocation names symbol {info >> 32}, which does not exist")
        out.append(Relocation(offset, info >> 32, info & 0xFFFFFFFF, addend))
    return out


def _parse_note(data: bytes) -> tuple[int, bytes] | None:
    """The (type, desc) of a single NVIDIA note, or None when the section is anything else."""
    if len(data) < 12:
        return None
    namesz, descsz, ntype = struct.unpack_from("<III", data)
    name_end = 12 + namesz + (-namesz % 4)
    if data[12:12 + namesz] != NOTE_OWNER.encode() + b"\0" or name_end + descsz != len(data):
        return None
    return ntype, data[name_end:name_end + descsz]


def decode_kernel_records(k: Kernel) -> None:
    """Fill `k`'s typed fields (param base, exit offsets, ...) from its raw `.nv.info.<k>`
    attribute records; the reader and the assembler both need it."""
    recs = k.attributes or []
    for r in recs:
        name = r.name
        if name == "PARAM_CBANK":
            _, word = struct.unpack("<II", r.payload)
            k.param_base = word & 0xFFFF
        elif name == "EXIT_INSTR_OFFSETS":
            k.exit_offsets = list(r.u32s())
        elif name == "S2RCTAID_INSTR_OFFSETS":
            k.s2rctaid_offsets = list(r.u32s())
        elif name == "MAX_THREADS":
            k.max_threads = tuple(r.u32s())
        elif name == "REQNTID":
            k.reqntid = tuple(r.u32s())
        elif name == "CTAIDZ_USED":
            k.ctaidz_used = True
        elif name == "SPARSE_MMA_MASK":
            k.sparse_mma_mask = r.value
        elif name == "PREEXIT_USED":
            k.preexit_used = bool(r.value)
        elif name == "REG_RECONFIG":
            k.reg_reconfig = True
        elif name == "GRID_ATTRIBUTES":
            k.grid_attributes = r.value
        elif r.attr == UNNAMED_5F:
            k.multicast_bulk = bool(r.value & MULTICAST_BULK_5F)
        elif name == "NUM_BARRIERS":
            k.barcount = r.value
        elif name == "CRS_STACK_SIZE":
            k.crs_stack_size = r.u32s()[0]
        elif name == "CUDA_API_VERSION":
            k.cuda_api_version = r.u32s()[0]
    k.maxreg_count = next((r.value for r in recs if r.name == "MAXREG_COUNT"), None)
    k.extra_attributes = [r for r in recs if r.name not in _MODELED_ATTRIBUTES]
    params = [p for p in map(KParam.from_record, (r for r in recs if r.name == "KPARAM_INFO"))
              if p is not None]
    k.params = sorted(((p.ordinal, p.offset, p.size) for p in params))


_decode_kernel_records = decode_kernel_records   # the old private name, for callers not yet updated


def _decode_module_records(cubin: Cubin, k: Kernel, sym: int | None = None) -> None:
    """`k`'s records in `.nv.info` (by its symbol: `sym`, else the one its name finds)."""
    try:
        sym = cubin.kernel_symbol_index(k) if sym is None else sym
    except CubinError:
        return
    for r in cubin.module_attributes or []:
        if r.attr in _SYMBOL_VALUED and r.fmt is Fmt.SVAL and len(r.payload) == 8:
            s, value = r.u32s()
            if s != sym:
                continue
            if r.name == "REGCOUNT":
                if not arch_info(cubin.arch).regcount_in_text_info:
                    k.regcount = value
                elif value != k.regcount:
                    k.regcount_attribute = value
            elif r.name == "FRAME_SIZE":
                k.frame_size = value
            elif r.name == "MIN_STACK_SIZE":
                k.min_stack_size = value
            elif r.name == "MAX_STACK_SIZE":
                k.max_stack_size = value


# Writing --------------------------------------------------------------------------------

def write_cubin(cubin: Cubin) -> bytes:
    """The cubin's bytes. Raises CubinError when the model is inconsistent."""
    try:
        return _Writer(cubin).write()
    except (NvInfoError, LayoutError) as e:
        raise CubinError(str(e)) from None
    except struct.error as e:
        raise CubinError(f"a value does not fit its ELF field: {e}") from None


def _e_flags(arch, index: dict[str, int], e_type: int = ET_EXEC) -> int:
    """ptxas's ELF flags: the arch's, with the section index of `.note.nv.cuinfo` in the top
    byte (6 in a cubin without debug sections: each debug section before the notes moves it).
    A relocatable cubin without Mercury sections says it is SASS only (`Target.mercury_e_flag`:
    nvlink 13.5 cannot link an sm_100+ object that claims a Mercury form it lacks)."""
    flags = arch.e_flags
    if arch.mercury_e_flag and e_type == ET_REL and not any(
            n.startswith((".nv.merc.", ".nv.capmerc.")) for n in index):
        flags = flags & ~arch.mercury_e_flag | SASS_ONLY_E_FLAG
    if ".note.nv.cuinfo" not in index:
        return flags
    return (flags & 0xFFFFFF) | index[".note.nv.cuinfo"] << 24


class _Writer:
    def __init__(self, cubin: Cubin):
        self.c = cubin
        try:
            self.arch = arch_info(cubin.arch)
        except UnknownArch as e:
            raise CubinError(str(e)) from None

    def write(self) -> bytes:
        c = self.c
        for k in c.kernels:
            _check_kernel_consistency(c, k)
        sections = self._sections()
        order = c.section_order if c.section_order is not None else default_section_order(c)
        by_name = {s.name: s for s in sections}
        missing = [n for n in order if n not in by_name]
        if missing:
            raise CubinError(f"section order names sections the cubin does not have: {missing}")
        extra = [s.name for s in sections if s.name not in set(order)]
        if extra:
            raise CubinError(f"sections missing from the section order: {extra}")
        ordered = [RawSection("", SHT_NULL)] + [by_name[n] for n in order]
        index = {s.name: i for i, s in enumerate(ordered) if i}
        self._link(ordered, index)
        shstr = StringTable(list(c.shstrtab) if c.shstrtab is not None
                            else default_shstrtab(c, [s.name for s in ordered[1:]]))
        for s in ordered[1:]:
            s.name_offset = shstr.offset(s.name)
        ordered[index[".shstrtab"]].data = shstr.data()
        header = ElfHeader(c.e_type, c.osabi, c.abi_version,
                           c.e_flags if c.e_flags is not None else _e_flags(self.arch, index, c.e_type),
                           ident_pad=c.ident_pad)
        segments = None
        if c.e_type == ET_EXEC:
            segments = (c.segments if c.segments is not None
                        else default_segments(ordered, self.arch.phdr_style))
        return write_elf(header, ordered, index[".shstrtab"], segments,
                         c.shoff_align or self.arch.shoff_align)

    def _sections(self) -> list[RawSection]:
        # (-ewp's whole programs type their banks and shared memory as -c's objects do)
        c, rel_mode = self.c, self.c.e_type in (ET_REL, ET_EWP)
        out = [RawSection(".shstrtab", SHT_STRTAB), RawSection(".strtab", SHT_STRTAB),
               RawSection(".symtab", SHT_SYMTAB, align=8, entsize=24)]
        for note_name, note, ntype in ((".note.nv.tkinfo", c.tkinfo, NT_CUDA_TKINFO),
                                       (".note.nv.cuinfo", c.cuinfo, NT_CUDA_CUINFO)):
            if note is not None:
                flags = c.note_headers.get(note_name, (0, None, None))[0]
                out.append(RawSection(note_name, SHT_NOTE, flags, align=4,
                                      data=_note(ntype, note.desc())))
        if c.module_attributes is not None:
            out.append(RawSection(".nv.info", SHT_CUDA_INFO, align=4,
                                  data=encode_records(c.module_attributes)))
        if c.callgraph is not None:
            out.append(RawSection(".nv.callgraph", SHT_CUDA_CALLGRAPH, align=4, entsize=8,
                                  data=b"".join(struct.pack("<ii", a, b) for a, b in c.callgraph)))
        for k in c.kernels:
            if k.attributes is not None:
                out.append(RawSection(f".nv.info.{k.name}", SHT_CUDA_INFO, SHF_INFO_LINK, align=4,
                                      data=encode_records(k.attributes)))
            if k.const2 is not None:     # (-c: the jump tables' objects, placed by the linker)
                out.append(RawSection(f".nv.constant2.{k.name}",
                                      SHT_CUDA_CONSTANT2_REL if c.e_type == ET_REL else SHT_PROGBITS,
                                      SHF_ALLOC | SHF_INFO_LINK, align=k.const2_align, data=k.const2))
            if k.const0 is not None:
                out.append(RawSection(f".nv.constant0.{k.name}",
                                      SHT_CUDA_CONSTANT0_REL if rel_mode else SHT_PROGBITS,
                                      SHF_ALLOC | SHF_INFO_LINK, align=4, data=k.const0))
            out.append(RawSection(f".text.{k.name}", SHT_PROGBITS, k.text_flags,
                                  align=k.text_align, data=k.text))
            if k.shared_bytes is not None:
                out.append(RawSection(f".nv.shared.{k.name}",
                                      SHT_CUDA_SHARED_REL if rel_mode else SHT_NOBITS,
                                      0x43, align=k.shared_align, nobits_size=k.shared_bytes))
            for rela in (False, True):
                relocs = [r for r in k.relocations if (r.addend is not None) == rela]
                if ("rela" if rela else "rel") in reloc_kinds(k):
                    out.append(_reloc_section(f".rel{'a' if rela else ''}.text.{k.name}",
                                              relocs, SHF_INFO_LINK, 8))
        for rs in c.reloc_sections:
            out.append(_reloc_section(rs.name, rs.relocations, rs.flags, rs.align))
        for s in c.sections:
            out.append(RawSection(s.name, s.type, s.flags, 0, s.info, s.align, s.entsize,
                                  s.data, s.nobits_size, alias_of=s.alias_of))
        return out

    def _link(self, ordered: list[RawSection], index: dict[str, int]) -> None:
        """Fill sh_link / sh_info (section indices) and the symbol and string tables."""
        c = self.c
        symtab_i, strtab_i = index[".symtab"], index[".strtab"]
        generic = {s.name: s for s in c.sections}
        reloc_targets = {rs.name: rs.target for rs in c.reloc_sections}
        def section_index(name: str | None, user: str) -> int:
            if name is None:
                return 0
            if name not in index:
                raise CubinError(f"section {user!r} refers to section {name!r}, which the "
                                 f"cubin does not have")
            return index[name]

        kernel_of = {}
        for k in c.kernels:
            for n in (f".nv.info.{k.name}", f".nv.constant0.{k.name}", f".nv.constant2.{k.name}",
                      f".nv.shared.{k.name}",
                      f".rel.text.{k.name}", f".rela.text.{k.name}"):
                kernel_of[n] = k
        for sec in ordered[1:]:
            n = sec.name
            if n == ".symtab":
                sec.link = strtab_i
            elif n in c.note_headers and n.startswith(".note.nv."):
                _, link, info = c.note_headers[n]
                sec.link = section_index(link, n)
                sec.info = section_index(info, n)
            elif n in (".nv.info", ".nv.callgraph"):
                sec.link = symtab_i
            elif n.startswith(".text.") and n not in generic:
                k = c.kernel(n[len(".text."):])
                sym = c.kernel_symbol_index(k)
                sec.link = symtab_i
                sec.info = (k.regcount << 24 | sym) if self.arch.regcount_in_text_info else sym
            elif n in kernel_of:
                k = kernel_of[n]
                sec.info = index[f".text.{k.name}"]
                if n.startswith((".nv.info.", ".rel")):
                    sec.link = symtab_i
            elif n in reloc_targets:
                sec.link = symtab_i
                sec.info = index.get(reloc_targets[n], 0)
            elif n in generic:
                g = generic[n]
                sec.link = section_index(g.link, n)
                if g.info_section:
                    sec.info = section_index(g.info_section, n)
        # Symbols and their names.
        strtab = StringTable(list(c.strtab) if c.strtab is not None
                             else default_strtab(c, [s.name for s in ordered[1:]]))
        entries = bytearray()
        # ptxas puts one past the last local symbol in sh_info (the ELF rule, "first
        # non-local", differs when a local follows the globals, as on sm_90).
        first_global = max((i for i, s in enumerate(c.symbols) if s.bind == STB_LOCAL),
                           default=-1) + 1
        for sym in c.symbols:
            if sym.section is not None:
                if sym.section not in index:
                    raise CubinError(f"symbol {sym.name!r} is in section {sym.section!r}, "
                                     f"which the cubin does not have")
                shndx = index[sym.section]
            else:
                shndx = sym.shndx
            name_off = strtab.offset(sym.name) if sym.name else 0
            entries += struct.pack("<IBBHQQ", name_off, (sym.bind << 4) | (sym.type & 0xF),
                                   sym.other, shndx, sym.value, sym.size)
        sym_sec = ordered[index[".symtab"]]
        sym_sec.data, sym_sec.info = bytes(entries), first_global
        ordered[strtab_i].data = strtab.data()


SHT_CUDA_RESOLVED_RELA = 0x70000003   # `.nv.resolvedrela.<target>` (-preserve-relocs)


def _reloc_section(name: str, relocs: list[Relocation], flags: int, align: int) -> RawSection:
    resolved = name.startswith(".nv.resolvedrela.")
    rela = name.startswith(".rela") or resolved
    data = bytearray()
    for r in relocs:
        data += struct.pack("<QQ", r.offset, (r.symbol << 32) | r.type)
        if rela:
            data += struct.pack("<q", r.addend or 0)
    return RawSection(name, SHT_CUDA_RESOLVED_RELA if resolved else SHT_RELA if rela else SHT_REL,
                      flags, align=align, entsize=24 if rela else 16, data=bytes(data))


def _note(ntype: int, desc: bytes) -> bytes:
    owner = NOTE_OWNER.encode() + b"\0"
    return (struct.pack("<III", len(owner), len(desc), ntype) + owner + bytes(-len(owner) % 4)
            + desc + bytes(-len(desc) % 4))


def _check_kernel_consistency(cubin: Cubin, k: Kernel) -> None:
    """Refuse to write a kernel whose scalar facts contradict its `.nv.info` records."""
    if not 0 <= k.regcount <= 255:
        raise CubinError(f"kernel {k.name!r}: register count {k.regcount} out of range 0..255")
    if len(k.text) % 16:
        raise CubinError(f"kernel {k.name!r}: text is {len(k.text)} bytes, not whole 16-byte words")
    if k.attributes is not None:
        # Only well-formed records are compared; odd ones are written as they are.
        exits = [r for r in k.attribute("EXIT_INSTR_OFFSETS") if r.fmt is Fmt.SVAL]
        if exits and list(exits[0].u32s()) != list(k.exit_offsets):
            raise CubinError(f"kernel {k.name!r}: exit_offsets {k.exit_offsets} disagree with "
                             f"its EXIT_INSTR_OFFSETS record {list(exits[0].u32s())}")
        bars = [r for r in k.attribute("NUM_BARRIERS") if r.fmt is Fmt.BVAL]
        if (bars[0].value if bars else 0) != k.barcount:
            raise CubinError(f"kernel {k.name!r}: barcount {k.barcount} disagrees with its "
                             f"NUM_BARRIERS record")
        params = sorted((p.ordinal, p.offset, p.size)
                        for p in map(KParam.from_record, k.attribute("KPARAM_INFO"))
                        if p is not None)
        if params != sorted(k.params):
            raise CubinError(f"kernel {k.name!r}: params {k.params} disagree with its "
                             f"KPARAM_INFO records {params}")
    try:
        sym = cubin.kernel_symbol_index(k)
    except CubinError:
        return
    for r in cubin.module_attributes or []:
        if r.name == "REGCOUNT" and r.fmt is Fmt.SVAL and len(r.payload) == 8:
            s, value = r.u32s()
            expected = k.regcount if k.regcount_attribute is None else k.regcount_attribute
            if s == sym and value != expected:
                raise CubinError(f"kernel {k.name!r}: regcount {expected} disagrees with "
                                 f"its REGCOUNT record ({value})")
