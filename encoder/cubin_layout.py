"""ptxas 13.5's ordering rules for a cubin: section order, string tables.

These are what the writer uses when a `Cubin` carries no recorded layout (one built from
scratch, or one whose layout the caller dropped). They were read off ptxas's files and are
checked by tests/test_cubin.py::test_default_layout_matches_ptxas and the builder tests.
The string tables are ptxas's creation log: they also name sections it created and then
dropped, which the rules below reproduce.
"""
from __future__ import annotations

TYPE_CHECKING = False      # typing.TYPE_CHECKING, without importing typing at start-up

from .elf_layout import ET_REL, STB_LOCAL, STT_SECTION

if TYPE_CHECKING:
    from .cubin import Cubin, Kernel


def reloc_kinds(k: Kernel) -> tuple[str, ...]:
    """Which of `.rel.text.<k>` / `.rela.text.<k>` a kernel has."""
    if k.reloc_kinds is not None:
        return k.reloc_kinds
    return tuple(kind for kind, want in (("rel", False), ("rela", True))
                 if any((r.addend is not None) == want for r in k.relocations))


def is_debug_section(name: str) -> bool:
    """DWARF and NVIDIA debug sections (`-lineinfo`, `-g`): placed after `.debug_frame`."""
    return name.startswith((".debug_", ".nv_debug_"))


def _debug_names(c: Cubin) -> list[str]:
    """The debug sections in the order given, each followed by its relocation sections,
    as ptxas names them (from `.debug_frame` on)."""
    relocs = {}
    for rs in c.reloc_sections:
        relocs.setdefault(rs.target, []).append(rs.name)
    names = [".debug_frame"]
    for s in c.sections:
        if is_debug_section(s.name) and s.name != ".debug_frame":
            names += [s.name] + relocs.get(s.name, [])
    return names


def default_section_order(c: Cubin) -> list[str]:
    """Section order ptxas uses: string and symbol tables, debug frame, notes, `.nv.info`
    tables, call graph, relocation sections, constant banks, texts, then writable data."""
    ks = [k.name for k in c.kernels]
    generic = [s.name for s in c.sections]
    order = [".shstrtab", ".strtab", ".symtab"]
    order += [n for n in generic if n == ".debug_frame"]
    order += [n for n in generic if is_debug_section(n) and n != ".debug_frame"]
    order += [n for n in (".note.nv.tkinfo", ".note.nv.cuinfo")
              if (c.tkinfo if n.endswith("tkinfo") else c.cuinfo) is not None]
    if c.module_attributes is not None:
        order.append(".nv.info")
    order += [n for n in generic if n == ".nv.compat"]
    order += [f".nv.info.{k.name}" for k in c.kernels if k.attributes is not None]
    if c.callgraph is not None:
        order.append(".nv.callgraph")
    order += [n for n in generic if n in (".nv.prototype", ".nv.rel.action")]
    # (-c: a function's `.rela.nv.constant2.<f>`, its jump tables' relocations, right after
    # its text's, as ptxas 13.5.37 on sm_90+ writes them)
    own_banks = {rs.name for rs in c.reloc_sections if c.e_type == ET_REL and rs.target.startswith(".nv.constant2.")}
    for k in c.kernels:
        order += [f".{kind}.text.{k.name}" for kind in reloc_kinds(k)]   # in the order given
        order += [n for n in (f".rela.nv.constant2.{k.name}",) if n in own_banks]
    # Module constant banks (3: `.const` data, 4: addresses) in the order ptxas created them.
    position = {s.name: i for i, s in enumerate(c.symbols) if s.type == STT_SECTION}
    banks = sorted([n for n in generic if n.startswith(".nv.constant") and n.count(".") == 2],
                   key=lambda n: position.get(n, len(position)))
    # Relocation sections by their target (the debug sections in their order, then banks as
    # placed, then data: ptxas 13.5.37 -lineinfo/-g lists `.rel.nv_debug_line_sass` before
    # `.rel.nv.constant4` and `.rel.nv.global.init`), REL before RELA (RELA first for a
    # debug section's); the debug frame's last. sm_90+'s empty `.rela.nv.constant2.<k>`
    # come first (ptxas 13.5.37 sm_90 plain, -g and -lineinfo: before the debug sections'
    # and `.rela.nv.constant4`).
    target_rank = {b: i for i, b in enumerate(banks)}
    debug_rank = {n: i for i, n in enumerate(n for n in generic if is_debug_section(n))}
    rels = [(rs.name, rs.target) for rs in c.reloc_sections if rs.name not in own_banks]
    # (-g: a kernel's bank of only its functions' tables, `const2_late`: after the debug frame's)
    late = {f".nv.constant2.{k.name}" for k in c.kernels if k.const2_late}
    order += [n for n, t in sorted(rels, key=lambda r: (
        r[1] in late, r[0].endswith("debug_frame"), not r[1].startswith(".nv.constant2."), debug_rank.get(r[1], len(debug_rank)), target_rank.get(r[1], len(banks)),
        r[0].startswith(".rela") != (is_debug_section(r[1]) and r[1] != ".debug_frame")))]
    order += banks
    kernel_banks = [n for n in generic if n.startswith(".nv.constant") and n.count(".") > 2
                    and not n.startswith(".nv.constant2.")]
    hopper = _cubin_style(c) == "hopper"
    for k in c.kernels:   # each kernel's literal bank right before its parameter bank
        if hopper and k.const2 is not None:       # sm_90: with the module's banks
            order.append(f".nv.constant2.{k.name}")
        kernel_banks += [f".nv.constant{b}.{k.name}" for b, data in ((2, k.const2), (0, k.const0))
                         if data is not None and not (hopper and b == 2) and not (b == 2 and k.const2_late)]
    kernel_banks += [f".nv.constant2.{k.name}" for k in c.kernels
                     if k.const2 is not None and k.const2_late and not hopper]
    # sm_90: the parameter banks after the texts and writable data, but those that module
    # handles' relocations point into (ptxas places them as sm_8x does)
    relocated = {rs.target for rs in c.reloc_sections}
    early = [n for n in kernel_banks if not hopper or n in relocated]
    order += early
    kernel_banks = [n for n in kernel_banks if n not in early]
    order += [f".text.{k}" for k in ks]
    placed = set(order)
    if ".nv.global.init" in generic and ".nv.global.init" not in placed:
        order.append(".nv.global.init")
    # Zero-filled data follows in creation order: the first kernel's shared memory, the
    # module's `.nv.global` (made while ptxas emits the first kernel), the other kernels'.
    shared = [f".nv.shared.{k.name}" for k in c.kernels if k.shared_bytes is not None]
    first = shared[:1] if c.kernels and c.kernels[0].shared_bytes is not None else []
    zero_filled = [n for n in generic if n in (RESERVED_SHARED, DEBUG_SHARED)]
    zero_filled += [n for n in generic if n == ".nv.global" and n not in placed]
    if c.e_type == ET_REL:      # -c (sm_110's reserved words): as their section symbols
        zero_filled.sort(key=lambda n: position.get(n, len(position)))
    order += first + zero_filled
    order += [n for n in shared if n not in first]
    if hopper:
        order += kernel_banks
    placed = set(order)
    order += [n for n in generic if n not in placed]
    return order


RESERVED_SHARED = ".nv.shared.reserved.0"
DEBUG_SHARED = ".nv_debug.shared"
RESERVED_CAP, STV_INTERNAL = ".nv.reservedSmem.cap", 1
HOPPER_SHSTRTAB_PADDING = 14     # empty names ptxas 13.5 ends sm_90's section-name table with


def _cubin_style(c: Cubin) -> str:
    from .arch import UnknownArch, target
    try:
        return target(c.arch).cubin_style
    except UnknownArch:
        return "ampere"


def _module_data_sections(c: Cubin) -> list[str]:
    """Module variable sections and bank 4, in the order of their section symbols (ptxas's
    creation order)."""
    names = [s.name for s in c.sections if s.name.startswith((".nv.global", ".nv.constant"))]
    position = {s.name: i for i, s in enumerate(c.symbols) if s.type == STT_SECTION}
    return sorted(names, key=lambda n: position.get(n, len(position)))


def default_shstrtab(c: Cubin, section_names: list[str]) -> list[str]:
    """ptxas's section-name table: its fixed prefix, then per-kernel names (including ones
    for sections it later dropped), then the module's trailing names. sm_90: the names in
    section order, then 14 empty strings."""
    if _cubin_style(c) == "hopper":
        return ["", *section_names] + [""] * HOPPER_SHSTRTAB_PADDING
    if c.e_type == ET_REL:
        return _relocatable_names(c, section_names, symbols=False)
    names = ["", ".shstrtab", ".strtab", ".symtab", ".symtab_shndx", ".note.nv.tkinfo",
             ".note.nv.cuinfo", ".nv.info"]
    module_data = _module_data_sections(c)
    for i, k in enumerate(c.kernels):
        names += [f".text.{k.name}", f".nv.info.{k.name}", f".nv.shared.{k.name}"]
        if i == 0:
            names += module_data
        if k.const2 is not None:
            names.append(f".nv.constant2.{k.name}")
        if k.externs:        # ptxas names a text relocation section for a system call
            names.append(f".rel.text.{k.name}")
        names += [f".nv.constant0.{k.name}", f".rel.nv.constant0.{k.name}"]
    names += _debug_names(c) + [rs.name for rs in c.reloc_sections
                                if not rs.name.endswith("debug_frame")]
    names += [".rel.debug_frame", ".rela.debug_frame", ".nv.callgraph", ".nv.prototype",
              ".nv.rel.action"]
    seen: set[str] = set()
    out = [n for n in names if not (n in seen or seen.add(n))]
    return out + [n for n in section_names if n not in seen]


def default_strtab(c: Cubin, section_names: list[str]) -> list[str]:
    """ptxas's symbol-name table: like the section-name table, with object and function
    names after their sections and `.rel.nv.constant0.<k>` before `.nv.constant0.<k>`.
    sm_90: the symbols' names in symbol order."""
    if _cubin_style(c) == "hopper":
        # the nameless internal symbol a shared-memory kernel leaves was `.nv.reservedSmem.cap`
        # (-c: the prototype strings after them)
        return ["", *dict.fromkeys([s.name or (RESERVED_CAP if s.other == STV_INTERNAL else "")
                                    for s in c.symbols[1:] if s.name or s.other == STV_INTERNAL]
                                   + list(c.prototype_strings))]
    if c.e_type == ET_REL:
        return _relocatable_names(c, section_names, symbols=True)
    names = [""] + list(c.prototype_strings) + [
        ".shstrtab", ".strtab", ".symtab", ".symtab_shndx", ".note.nv.tkinfo",
        ".note.nv.cuinfo", ".nv.info"]
    kernel_names = {k.name for k in c.kernels}
    data_secs = _module_data_sections(c)
    for i, k in enumerate(c.kernels):
        names += [f".text.{k.name}", f".nv.info.{k.name}", f".nv.shared.{k.name}"]
        if i == 0:   # module data: section and variable names in symbol-table order
            names += [s.name for s in c.symbols if s.name in data_secs or
                      (s.section in data_secs and s.type != STT_SECTION)]
        if k.const2 is not None:
            names.append(f".nv.constant2.{k.name}")
        names += [s.name for s in c.symbols if s.section == f".text.{k.name}"
                  and s.type != STT_SECTION and s.name not in kernel_names]
        if k.externs:
            names.append(f".rel.text.{k.name}")
        names += [f".rel.nv.constant0.{k.name}", f".nv.constant0.{k.name}"]
    names += _debug_names(c) + [rs.name for rs in c.reloc_sections
                                if not rs.name.endswith("debug_frame")]
    names += [".rel.debug_frame", ".rela.debug_frame", ".nv.callgraph", ".nv.prototype",
              ".nv.rel.action"]
    names += [s.name for s in c.symbols if s.bind != STB_LOCAL]
    seen: set[str] = set()
    return [n for n in names if not (n in seen or seen.add(n))]


def _relocatable_names(c: Cubin, section_names: list[str], symbols: bool) -> list[str]:
    """ptxas -c's string tables (sm_75..sm_89), read off ptxas 13.5.37's cubins: only the
    sections it writes are named (no `.nv.shared` for a function, no parameter bank or
    `.rel.nv.constant0` for it, no `.nv.rel.action`), per function in file order: text,
    `.nv.info`, a kernel's shared memory, the module data after the first, the text's
    relocation sections in section order, a kernel's parameter bank. `.strtab` (`symbols`)
    adds the prototype strings first, each LOCAL symbol's name where ptxas creates it (a
    local function's before its text, variables after their sections, `_param` after the
    first parameter bank) and the GLOBAL/WEAK names last, in symbol order."""
    kernel_names = {k.name for k in c.kernels}
    has_entry = any(k.is_entry for k in c.kernels)
    data_secs = _module_data_sections(c)
    local = [s for s in c.symbols if s.bind == STB_LOCAL and s.type != STT_SECTION and s.name]
    names = [""] + (list(c.prototype_strings) if symbols else []) + [
        ".shstrtab", ".strtab", ".symtab", ".symtab_shndx", ".note.nv.tkinfo",
        ".note.nv.cuinfo", ".nv.info"]
    for i, k in enumerate(c.kernels):
        text = f".text.{k.name}"
        data = [] if i else [s.name for s in c.symbols if s.name in data_secs and s.type == STT_SECTION
                             or symbols and s in local and s.section in data_secs]
        if not k.is_entry and not has_entry:    # (functions only: the module data first)
            names += data
        if symbols:     # a LOCAL function's own symbol, before its section's
            names += [s.name for s in local if s.section == text and s.name == k.name]
        names.append(text)
        if not k.is_entry and has_entry:        # (a leading function: after its text)
            names += data
        names.append(f".nv.info.{k.name}")
        if k.is_entry:
            names += [f".nv.shared.{k.name}"] + data
        if k.const2 is not None:
            names.append(f".nv.constant2.{k.name}")
        if symbols:     # local functions inside the text
            names += [s.name for s in local if s.section == text and s.name not in kernel_names]
        names += [f".{kind}.text.{k.name}" for kind in reloc_kinds(k)]
        if k.const0 is not None:
            names.append(f".nv.constant0.{k.name}")
            if symbols:
                names.append("_param")
    names += _debug_names(c) + [rs.name for rs in c.reloc_sections
                                if not rs.name.endswith("debug_frame")]
    names += [".rel.debug_frame", ".rela.debug_frame", ".nv.callgraph", ".nv.prototype"]
    if symbols:
        names += [s.name for s in c.symbols if s.bind != STB_LOCAL]
    seen: set[str] = set()
    out = [n for n in names if not (n in seen or seen.add(n))]
    return out if symbols else out + [n for n in section_names if n not in seen]
