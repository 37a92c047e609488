"""Our `-lineinfo` line tables against ptxas's, as nvdisasm reads them.

    python -m tools.line_tables [--arch sm_89] [--limit N] [--replay] [cuda triton tinygrad llvm zluda]

For every kernel both compilers build from a corpus file (compiled with `-lineinfo`), the
per-instruction line of nvdisasm's listings: `-gp` (the PTX line, `.nv_debug_line_sass`) and
`-g` (the `.loc` source line, `.debug_line`). Where our instruction sequence maps 1:1 to
ptxas's (the same opcodes in the same order; modifiers, and MOV against IMAD.MOV, aside),
the two tables must be equal; elsewhere instructions are paired by opcode runs and the
share of pairs with the same line is printed, and the share of our instructions whose
(opcode, PTX line) ptxas's code also has (order aside: "shared");
everywhere, ours must be complete (every instruction has a PTX line of its function) and
well formed (each sequence's rows at increasing addresses inside the text, read back with
pyelftools). Figures are printed separately for the held-back quarter of each corpus
(`held_back`: by the sha256 of the file name), on which the line attribution was not tuned.

`--replay` checks the section writer alone instead: ptxas's own instruction-to-PTX-line map
fed to it must give ptxas's debug sections byte for byte (`replay`), per corpus.
"""
from __future__ import annotations

import argparse
import hashlib
import io
import re
import sys
from dataclasses import dataclass, field

from ptx2sass.oracle import nvdisasm

_SECTION = re.compile(r"^//-+ \.text\.(\S+)\s+-+$")
_ANNOTATION = re.compile(r'^\s*//## File "([^"]*)", line (\d+)(?: inlined at "([^"]*)", line (\d+))?')
_INSTRUCTION = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P[T0-9]\s+)?([A-Z][A-Z0-9_.]*)")


@dataclass
class Listed:
    """One instruction of a listing: address, opcode with modifiers, the line annotations in
    effect (nvdisasm prints them where they change)."""
    address: int
    opcode: str
    lines: tuple = ()


def listing(cubin: bytes, flag: str) -> dict[str, list[Listed]]:
    """nvdisasm's listing with `flag` (-g, -gp or -gi), per kernel."""
    out: dict[str, list[Listed]] = {}
    current: list[Listed] | None = None
    pending: list[tuple] = []
    in_effect: tuple = ()
    for text in nvdisasm(cubin, ("-c", flag)).splitlines():
        m = _SECTION.match(text.strip())
        if m:
            current = out.setdefault(m.group(1), [])
            pending, in_effect = [], ()
            continue
        m = _ANNOTATION.match(text)
        if m:
            pending.append((m.group(1), int(m.group(2)), m.group(3), int(m.group(4) or 0)))
            continue
        m = _INSTRUCTION.match(text)
        if m and current is not None:
            if pending:
                in_effect, pending = tuple(pending), []
            current.append(Listed(int(m.group(1), 16), m.group(2), in_effect))
    return out


def body(instrs: list[Listed]) -> list[Listed]:
    """The kernel's instructions before its closing self-branch and padding."""
    for k in range(len(instrs) - 1, -1, -1):
        if instrs[k].opcode == "BRA" and all(i.opcode == "NOP" for i in instrs[k + 1:]):
            return instrs[:k]
    return instrs


@dataclass
class KernelResult:
    name: str
    one_to_one: bool
    ptx_equal: bool | None = None        # -gp tables equal (1:1 kernels)
    source_equal: bool | None = None     # -g tables equal (1:1 kernels)
    complete: bool = True
    problems: list[str] = field(default_factory=list)
    matched: int = 0                     # instructions paired with ptxas's by opcode
    ptx_agree: int = 0                   # ... of which both map to the same PTX line
    instructions: int = 0                # ours
    shared: int = 0                      # (opcode, PTX line) pairs ptxas's code has too
    source_matched: int = 0              # paired instructions where ptxas has a source line
    source_agree: int = 0                # ... of which ours is the same (-g)


def _family(opcode: str) -> str:
    """An opcode with the choices two compilers make differently folded away: the
    modifiers, and IMAD.MOV / IADD3 / LOP3 moves as MOV."""
    if opcode.startswith(("IMAD.MOV", "MOV")):
        return "MOV"
    return opcode.split(".")[0]


def _pairs(mine: list[Listed], other: list[Listed]) -> list[tuple[int, int]]:
    """Instructions paired by the longest matching runs of opcode families."""
    import difflib
    sm = difflib.SequenceMatcher(None, [_family(i.opcode) for i in mine],
                                 [_family(i.opcode) for i in other], autojunk=False)
    return [(a + k, b + k) for a, b, n in sm.get_matching_blocks() for k in range(n)]


def compare(ptx: str, arch: str = "sm_89", name: str = "input.ptx") -> list[KernelResult]:
    """Both compilers' `-lineinfo` cubins for one PTX file, kernel by kernel."""
    from ptx2sass import codegen, oracle
    theirs = oracle.ptxas(ptx, arch, ("-lineinfo",), name=name)
    if not theirs.ok:
        return []
    ours = codegen.compile_ptx(ptx, arch, name, lineinfo=True)
    results = []
    valid = valid_lines(ptx)
    problems = well_formed(ours)
    tables = {flag: (listing(ours, flag), listing(theirs.output, flag)) for flag in ("-gp", "-g")}
    ours_gp, theirs_gp = tables["-gp"]
    for kernel, mine in ours_gp.items():
        mine, other = body(mine), body(theirs_gp.get(kernel, []))
        same = [_family(i.opcode) for i in mine] == [_family(i.opcode) for i in other]
        r = KernelResult(kernel, same, problems=list(problems.get(kernel, [])))
        for i in mine:
            if not i.lines or i.lines[-1][1] not in valid:
                r.complete = False
                r.problems.append(f"{i.address:#06x} {i.opcode}: PTX line {i.lines}")
                break
        src_mine = body(tables["-g"][0].get(kernel, []))
        src_theirs = body(tables["-g"][1].get(kernel, []))
        if same:
            r.ptx_equal = [i.lines for i in mine] == [i.lines for i in other]
            r.source_equal = [i.lines for i in src_mine] == [i.lines for i in src_theirs]
        import collections
        have = collections.Counter((_family(i.opcode), i.lines) for i in mine)
        want = collections.Counter((_family(i.opcode), i.lines) for i in other)
        r.instructions = len(mine)
        r.shared = sum((have & want).values())
        for a, b in _pairs(mine, other):
            r.matched += 1
            r.ptx_agree += mine[a].lines == other[b].lines
            if a < len(src_mine) and b < len(src_theirs) and src_theirs[b].lines:
                r.source_matched += 1
                r.source_agree += src_mine[a].lines == src_theirs[b].lines
        results.append(r)
    return results


def valid_lines(ptx: str) -> set[int]:
    """Lines a SASS instruction may map to: any non-empty line that is not a comment or
    directive-only line (a cheap superset: instruction, label and brace lines)."""
    out = set()
    for n, text in enumerate(ptx.split("\n"), 1):
        t = text.strip()
        if t and not t.startswith(("//", ".loc", ".file", ".reg", ".param", ".shared", ".local")):
            out.add(n)
    return out


def well_formed(cubin: bytes) -> dict[str, list[str]]:
    """Problems in our line programs, per kernel: rows not at strictly increasing
    instruction addresses, or a sequence not ending at its text's end."""
    from elftools.dwarf.lineprogram import LineProgram
    from elftools.dwarf.structs import DWARFStructs
    from elftools.common.utils import struct_parse
    from ptx2sass.encoder.cubin import read_cubin
    c = read_cubin(cubin)
    symbols = {k.name: len(k.text) for k in c.kernels}
    out: dict[str, list[str]] = {}
    for section in (".nv_debug_line_sass", ".debug_line"):
        try:
            data = c.section(section).data
        except KeyError:
            continue
        relocated = {}
        for rs in c.reloc_sections:
            if rs.target == section:
                relocated.update({r.offset: c.symbols[r.symbol].name for r in rs.relocations})
        structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=8)
        header = struct_parse(structs.Dwarf_lineprog_header, io.BytesIO(data), 0)
        program = LineProgram(header, io.BytesIO(data), structs, header["header_length"] + 10,
                              header["unit_length"] + 4)
        names = iter([relocated[k] for k in sorted(relocated)])
        rows, kernel = [], None
        for entry in program.get_entries():
            if entry.state is None:
                continue
            if kernel is None:
                kernel = next(names, "?")
            rows.append(entry.state.address)
            if entry.state.end_sequence:
                bad = [a for a, b in zip(rows, rows[1:-1]) if b < a] or [a for a in rows if a % 16]
                if bad:
                    out.setdefault(kernel, []).append(f"{section}: rows out of order near {bad[0]:#x}")
                if rows[-1] != symbols.get(kernel):
                    out.setdefault(kernel, []).append(f"{section}: ends at {rows[-1]:#x}")
                rows, kernel = [], None
    return out


def _replay_corpora(args) -> int:
    """Per corpus: files whose every debug section ptxas writes with -lineinfo we write the
    same from its instruction-to-line map (-G builds, whose `.func`s ptxas keeps out of line
    and whose prologues differ, are counted apart)."""
    from tools.corpora import ptx_files
    print("corpus   files  identical  differ  (-G builds: identical/files)  ptxas rejects")
    for corpus in args.corpora:
        same = differ = rejected = g_same = g_files = 0
        for path in ptx_files(corpus)[: args.limit or None]:
            text = path.read_text(encoding="latin-1")
            if not oracle_ok(text, args.arch, path.name):
                rejected += 1
                continue
            d = replay(text, args.arch, path.name)
            if ".G." in path.name:
                g_files += 1
                g_same += not d
            elif d:
                differ += 1
                if args.verbose:
                    print(f"    {path.name}: {sorted(d)}")
            else:
                same += 1
        print(f"{corpus:8} {same + differ:5} {same:10} {differ:7}  {g_same}/{g_files} {rejected:>28}")
    return 0


def oracle_ok(text: str, arch: str, name: str) -> bool:
    from ptx2sass import oracle
    return oracle.ptxas(text, arch, ("-lineinfo",), name=name).ok


def _share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def held_back(name: str) -> bool:
    """The quarter of each corpus kept out of tuning."""
    return hashlib.sha256(name.encode()).digest()[0] % 4 == 0


def main(argv: list[str] | None = None) -> int:
    from ptx2sass.errors import CompileError
    from tools.corpora import ptx_files
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("corpora", nargs="*", default=["cuda", "triton", "llvm", "tinygrad", "zluda"])
    ap.add_argument("--arch", default="sm_89")
    ap.add_argument("--limit", type=int, default=0, help="files per corpus (0: all)")
    ap.add_argument("-v", "--verbose", action="store_true", help="name the kernels that differ")
    ap.add_argument("--replay", action="store_true", help="check the section writer on ptxas's own line map")
    args = ap.parse_args(argv)
    if args.replay:
        return _replay_corpora(args)
    print("corpus   part       files kernels  1:1  -gp equal  -g equal  complete  failed"
          "  paired  -gp agree  -g agree  instrs  shared")
    for corpus in args.corpora:
        files = ptx_files(corpus)[: args.limit or None]
        for part, chosen in (("tuned", [f for f in files if not held_back(f.name)]),
                             ("held-back", [f for f in files if held_back(f.name)])):
            kernels = one = gp = g = complete = failed = paired = gp_agree = g_paired = g_agree = 0
            instrs = shared = 0
            for path in chosen:
                try:
                    results = compare(path.read_text(encoding="latin-1"), args.arch, path.name)
                except CompileError:
                    failed += 1
                    continue
                for r in results:
                    kernels += 1
                    one += r.one_to_one
                    gp += bool(r.ptx_equal)
                    g += bool(r.source_equal)
                    complete += r.complete and not r.problems
                    paired += r.matched
                    gp_agree += r.ptx_agree
                    g_paired += r.source_matched
                    instrs += r.instructions
                    shared += r.shared
                    g_agree += r.source_agree
                    if args.verbose and (r.problems or r.one_to_one and not (r.ptx_equal and r.source_equal)):
                        print(f"    {path.name} {r.name}: gp={r.ptx_equal} g={r.source_equal} {r.problems[:2]}")
            print(f"{corpus:8} {part:9} {len(chosen):6} {kernels:7} {one:4} {gp:10} {g:9} {complete:9} {failed:7}"
                  f"  {paired:6} {_share(gp_agree, paired):>10} {_share(g_agree, g_paired):>9}"
                  f"  {instrs:6} {_share(shared, instrs):>7}")
    return 0



def ptx_lines_of(cubin) -> dict[str, list[int]]:
    """Each kernel's PTX line per instruction word, read off `.nv_debug_line_sass`."""
    from elftools.dwarf.lineprogram import LineProgram
    from elftools.dwarf.structs import DWARFStructs
    from elftools.common.utils import struct_parse
    data = cubin.section(".nv_debug_line_sass").data
    relocated = {}
    for rs in cubin.reloc_sections:
        if rs.target == ".nv_debug_line_sass":
            relocated.update({r.offset: cubin.symbols[r.symbol].name for r in rs.relocations})
    names = iter([relocated[k] for k in sorted(relocated)])
    structs = DWARFStructs(little_endian=True, dwarf_format=32, address_size=8)
    header = struct_parse(structs.Dwarf_lineprog_header, io.BytesIO(data), 0)
    program = LineProgram(header, io.BytesIO(data), structs, header["header_length"] + 10,
                          header["unit_length"] + 4)
    out, rows = {}, []
    for entry in program.get_entries():
        if entry.state is None:
            continue
        rows.append((entry.state.address, entry.state.line))
        if entry.state.end_sequence:
            end, lines = rows[-1][0], []
            for (a, line), (b, _) in zip(rows, rows[1:]):
                lines += [line] * ((b - a) // 16)
            out[next(names)] = lines[: end // 16]
            rows = []
    return out


def replay(ptx: str, arch: str = "sm_89", name: str = "input.ptx",
           options: tuple[str, ...] = ("-lineinfo",)) -> dict[str, tuple[bytes, bytes]]:
    """ptxas's debug sections against ours built from ptxas's own instruction-to-PTX-line
    map (so only the line programs, the `.loc` logic and the PTX text are under test):
    the sections that differ, name -> (ours, theirs)."""
    from ptx2sass import oracle
    from ptx2sass.debuginfo.sections import KernelLines, lineinfo_sections
    from ptx2sass.debuginfo.source_map import SourceMap
    from ptx2sass.encoder.cubin import read_cubin
    from ptx2sass.frontend import parse
    run = oracle.ptxas(ptx, arch, options, name=name)
    if not run.ok:
        return {}
    c = read_cubin(run.output)
    lines = ptx_lines_of(c)
    source = SourceMap(parse(ptx, name))
    kernels = []
    for k in c.kernels:      # local function symbols `$kernel$function` in a kernel's text
        prefix = f"${k.name}$"
        functions = [(s.value, source.body_line.get(s.name[len(prefix):])) for s in c.symbols
                     if s.section == f".text.{k.name}" and s.name.startswith(prefix) and s.size]
        kernels.append(KernelLines(k.name, len(k.text), lines[k.name],
                                   [(at, line) for at, line in functions if line is not None],
                                   entry_line=source.body_line.get(k.name), is_entry=k.is_entry))
    ours = {d.name: d for d in lineinfo_sections(kernels, source, ptx, "-c" in options)}
    out = {}
    for s in c.sections:
        if s.name.startswith((".debug_", ".nv_debug_")) and s.name != ".debug_frame":
            mine = ours.pop(s.name, None)
            if mine is None or mine.data != s.data:
                out[s.name] = (mine.data if mine else b"", s.data)
    for n, d in ours.items():
        out[n] = (d.data, b"")
    return out


def _is_debug(name: str) -> bool:
    return name.lstrip(".").split(".", 1)[-1].startswith(("debug_", "nv_debug_")) or \
        name.startswith((".debug_", ".nv_debug_"))


def debug_structure(cubin: bytes) -> dict:
    """What `cuobjdump -elf` shows of a cubin's debug sections, without sizes and offsets:
    the ELF flags; each debug section's name, type, flags, alignment, entry size, link and
    info (as names) in file order; the debug section symbols in symbol-table order; each
    debug relocation section's entries as sorted (symbol name, type) pairs and whether they
    are listed at decreasing offsets, as ptxas lists them (`.debug_frame`'s, which follow the
    code's functions, left out); the section list's position of `.note.nv.cuinfo`."""
    from elftools.elf.elffile import ELFFile
    from elftools.elf.relocation import RelocationSection
    elf = ELFFile(io.BytesIO(cubin))
    names = [s.name for s in elf.iter_sections()]
    symtab = elf.get_section_by_name(".symtab")
    symbols = list(symtab.iter_symbols())
    sections, relocations = [], {}
    for s in elf.iter_sections():
        if not _is_debug(s.name):
            continue
        info = names[s["sh_info"]] if isinstance(s, RelocationSection) else s["sh_info"]
        sections.append((s.name, s["sh_type"], s["sh_flags"], s["sh_addralign"], s["sh_entsize"],
                         names[s["sh_link"]] if s["sh_link"] else None, info))
        if isinstance(s, RelocationSection) and not s.name.endswith("debug_frame"):
            entries = list(s.iter_relocations())
            offsets = [r["r_offset"] for r in entries]
            relocations[s.name] = (sorted((symbols[r["r_info_sym"]].name, r["r_info_type"]) for r in entries),
                                   offsets == sorted(offsets, reverse=True))
    return {"e_flags": elf.header["e_flags"], "cuinfo_index": names.index(".note.nv.cuinfo"),
            "sections": sections, "relocations": relocations,
            "section_symbols": [s.name for s in symbols
                                if s["st_info"]["type"] == "STT_SECTION" and _is_debug(s.name)]}


if __name__ == "__main__":
    sys.exit(main())
