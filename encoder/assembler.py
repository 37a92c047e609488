"""`ptx2sass-as`: SASS text in nvdisasm's syntax plus a little kernel metadata → a cubin.

It exists for hand-written emulator tests and for debugging: write the SASS you want to run,
assemble it, load the cubin. Instructions are encoded by `codec.encode`; the file around
them is made by `cubin_builder` exactly as ptxas lays out the same kernel.

Input (one file, `-` or no name for standard input)::

    .arch sm_89                 // or nvdisasm's `.target sm_89`; `--arch` on the command line
    .kernel vadd                // starts a kernel; kernels in PTX declaration order
    .params 8, 8, 8, 4          // parameter sizes in order, each at its natural alignment;
                                //   `size@offset` places one explicitly; `.param 8` adds one
    .regcount 12                // default: highest R register used + 1 + 2, as ptxas counts
    .shared 1024                // static shared-memory bytes (default none; `.shared 0`
                                //   writes the empty section ptxas gives extern-only shared)
    .barriers 1                 // NUM_BARRIERS (default: highest `BAR ... 0xN` id + 1)
    .reqntid 128, 1, 1          // also .maxntid; .maxreg N (default 255, as ptxas writes)
    .L_x_0:                     // a label (any name ending in ':')
        S2R R0, SR_TID.X ; {stall=1, yield, wr=0}
        @P0 BRA `(.L_x_0) ; {ctl=0x7e0}
        /*0040*/ EXIT ;         // nvdisasm's `/*offset*/` is optional; when given it is checked

The control block after `;` sets the scheduling fields: `stall=N` (0..15), `yield` (word
bit 109; ptxas sets it on most instructions, and nvdisasm prints `.reuse` only with it),
`wr=N` / `rd=N` (scoreboard 0..5; default none), `wait=MASK` (scoreboards waited on,
e.g. `0b101`), `reuse=MASK`, or `ctl=0x...`, the raw 21 bits of word bits 105..125.
`.reuse` on operands sets the matching reuse flags. Without a control block every field
is zero (no stall, no scoreboards): fine for `nvdisasm`, not for the hazard checker.

A whole `nvdisasm -hex` listing of a cubin is also accepted (`nvdisasm -hex k.cubin |
ptx2sass-as -o k2.cubin`): kernels come from its `.text.<k>` sections, control bits from
each instruction's hex word, the register count from `SHI_REGISTERS`, parameters and
attributes from the `.nv.info.<k>` records, shared size from `.nv.shared.<k>`.

The `.text` is padded with NOPs to a multiple of 128 bytes, as ptxas pads it (a listing's
own padding is kept and no more is added). EXIT offsets, CTAIDZ_USED and the entry block's
end (for the debug frame) are derived from the instructions.

Errors are one line each, `file:line: error: message`, naming the instruction.
"""
from __future__ import annotations

import argparse
import re
import struct
import sys
from dataclasses import dataclass, field, replace

from . import codec
from .arch import UnknownArch, arch_info
from .cubin import Cubin, CubinError, GlobalVar, Kernel, decode_kernel_records, write_cubin
from .cubin_builder import (FDE_LOCATION_OFFSET, default_cfa_program, preexit_used, reg_reconfig,
                            sparse_mma_mask)
from .model import Control, Imm, Instruction, Label, Reg, SpecialReg
from .nvinfo import NvInfoError, parse_records
from .sass_text import SassSyntaxError, parse_instruction

# ptxas's padding word: `NOP` with control bits 0x7e0 (stall 0, bit 109 clear, no scoreboards).
PAD_NOP = "NOP"
PAD_CONTROL = Control(stall=0, yield_=False, wr_sb=7, rd_sb=7)
TEXT_PAD = 128
REGISTERS_RESERVED = 2     # ptxas counts the highest register + 1 + 2
DEFAULT_MAXREG = 0xFF
MODULE_RECORD_FIELDS = {"FRAME_SIZE": "frame_size", "MIN_STACK_SIZE": "min_stack_size",
                        "MAX_STACK_SIZE": "max_stack_size"}
CUINFO_DESC = 0x18         # where nvdisasm's offsets put the cuinfo note's description


class AsmError(ValueError):
    """Bad assembler input; prints as `file:line: error: message`."""

    def __init__(self, message: str, file: str = "<input>", line: int | None = None):
        super().__init__(message)
        self.message, self.file, self.line = message, file, line

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: error: {self.message}"


# --------------------------------------------------------------------------- source model

@dataclass
class Statement:
    line: int
    text: str                       # the instruction as written (for messages)
    instruction: Instruction
    offset: int | None = None       # a written `/*offset*/`
    control: Control | None = None  # from a control block or hex word
    reuse_given: bool = False       # the control block named its reuse flags


@dataclass
class KernelSource:
    name: str
    line: int
    statements: list[Statement] = field(default_factory=list)
    labels: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (index, line)
    params: list[tuple[int, int | None]] = field(default_factory=list)  # (size, offset)
    regcount: int | None = None
    shared: int | None = None
    barriers: int | None = None
    reqntid: tuple[int, int, int] | None = None
    maxntid: tuple[int, int, int] | None = None
    maxreg: int | None = DEFAULT_MAXREG
    shared_align: int = 4
    # Facts read from an nvdisasm listing: its `.nv.info.<k>` records (a decoded Kernel),
    # its module `.nv.info` records (frame and stack sizes) and its debug-frame program.
    info: Kernel | None = None
    module_facts: dict[str, int] = field(default_factory=dict)
    cfa_program: bytes | None = None


@dataclass
class Source:
    arch: str | None = None
    arch_line: int | None = None
    kernels: list[KernelSource] = field(default_factory=list)
    from_listing: bool = False      # an nvdisasm listing: kernels are in file (reverse) order
    cuinfo: tuple[int, int] | None = None   # a listing's `.note.nv.cuinfo`: (PTX SM, toolkit)
    variables: list[GlobalVar] = field(default_factory=list)  # a listing's module variables
    bank4: list[str] = field(default_factory=list)   # symbols whose addresses fill c[0x4]


# --------------------------------------------------------------------------- parsing

_COMMENT = re.compile(r"//.*$")
_OFFSET = re.compile(r"\s*/\*([0-9a-fA-F]{4,})\*/")
_HEX_WORD = re.compile(r"/\*\s*0x([0-9a-fA-F]{16})\s*\*/")
_LONE_HEX = re.compile(r"^\s*/\*\s*0x([0-9a-fA-F]{16})\s*\*/\s*$")
_LABEL = re.compile(r"^\s*([.$A-Za-z_][\w.$]*):\s*$")
_DIRECTIVE = re.compile(r"^\s*(\.[A-Za-z_]\w*)\b\s*(.*?)\s*$")
_CONTROL_BLOCK = re.compile(r"\{([^{}]*)\}\s*$")
_SECTION_NAME = re.compile(r"\s*([^,\s]+)")
_SHI_REGISTERS = re.compile(r'@"SHI_REGISTERS=(\d+)"')

_CONTROL_KEYS = {"stall": (0, 15), "wr": (0, 7), "rd": (0, 7), "wait": (0, 63),
                 "reuse": (0, 15), "ctl": (0, (1 << 21) - 1)}


def _int(text: str, what: str) -> int:
    try:
        return int(text.strip(), 0)
    except ValueError:
        raise ValueError(f"{what}: {text.strip()!r} is not a number") from None


def parse_control(text: str) -> tuple[Control, bool]:
    """`stall=4, yield, wr=0, wait=0b1` → (Control, whether reuse was named)."""
    values = {"stall": 0, "yield": False, "wr": 7, "rd": 7, "wait": 0, "reuse": 0}
    raw = None
    named = set()
    for item in filter(None, (p.strip() for p in text.split(","))):
        key, eq, value = (s.strip() for s in item.partition("="))
        if key == "yield" and not eq:
            values["yield"] = True
        elif key in _CONTROL_KEYS and eq:
            lo, hi = _CONTROL_KEYS[key]
            n = 7 if key in ("wr", "rd") and value in ("-", "none") else _int(value, key)
            if not lo <= n <= hi:
                raise ValueError(f"control field {key}={value} outside {lo}..{hi}")
            if key in ("wr", "rd") and n == 6:
                raise ValueError(f"control field {key}={value}: scoreboards are 0..5 (7: none)")
            if key == "ctl":
                raw = n
            else:
                values[key] = n
            named.add(key)
        else:
            raise ValueError(f"unknown control field {item!r} (stall=, yield, wr=, rd=, "
                             "wait=, reuse=, ctl=)")
    if raw is not None:
        if named - {"ctl"}:
            raise ValueError("ctl= gives all control bits: name no other field with it")
        return Control.unpack(raw), True
    return Control(values["stall"], values["yield"], values["wr"], values["rd"],
                   values["wait"], values["reuse"]), "reuse" in named


def _numbers(text: str, what: str, count: int | None = None) -> list[int]:
    items = [p for p in re.split(r"[,\s]+", text.strip()) if p]
    if not items or (count is not None and len(items) > count):
        raise ValueError(f"{what} expects {count or 'some'} number(s), got {text!r}")
    return [_int(p, what) for p in items]


class _Parser:
    def __init__(self, text: str, filename: str):
        self.lines = text.splitlines()
        self.file = filename
        self.src = Source()
        self.kernel: KernelSource | None = None
        self.section: str | None = None          # current nvdisasm section, if any
        self.data: dict[str, dict] = {}          # section -> {"bytes", "labels", "fixups"}
        self.pending: Statement | None = None    # waiting for its high hex word

    def error(self, lineno: int, message: str) -> AsmError:
        return AsmError(message, self.file, lineno)

    def parse(self) -> Source:
        for lineno, raw in enumerate(self.lines, 1):
            try:
                self._line(lineno, raw)
            except AsmError:
                raise
            except (ValueError, KeyError) as e:
                raise self.error(lineno, str(e)) from None
        self._apply_listing_sections()
        return self.src

    # One line ---------------------------------------------------------------------------
    def _line(self, lineno: int, raw: str) -> None:
        m = _LONE_HEX.match(raw)
        if m:
            if self.pending is None:
                if self._in_text():
                    raise self.error(lineno, "hex word without an instruction before it")
                return
            st, self.pending = self.pending, None
            st.control = Control.unpack(int(m.group(1), 16) >> (codec.CONTROL_SHIFT - 64))
            st.reuse_given = True
            return
        self.pending = None
        line = _COMMENT.sub("", raw).rstrip()
        if not line.strip():
            return
        m = _DIRECTIVE.match(line)
        if m and m.group(1) == ".section":
            self._section(lineno, m.group(2))
            return
        if self.section is not None and not self._in_text():
            self._data_line(lineno, line)
            return
        m = _LABEL.match(line)
        if m:
            self._label(lineno, m.group(1))
            return
        m = _OFFSET.match(line)
        offset = None
        if m:
            offset = int(m.group(1), 16)
            line = line[m.end():]
        m = _DIRECTIVE.match(line)
        if m and offset is None:
            self._directive(lineno, m.group(1), m.group(2))
            return
        if m and m.group(1) in (".byte", ".short", ".word", ".dword", ".zero"):
            raise self.error(lineno, f"data directive {m.group(1)} inside a text section")
        self._instruction(lineno, line, offset)

    def _in_text(self) -> bool:
        return self.section is None or self.section.startswith(".text.")

    def _label(self, lineno: int, name: str) -> None:
        if self.kernel is None:
            raise self.error(lineno, f"label {name} before any `.kernel NAME`")
        if self.src.from_listing and name in (self.kernel.name, f".text.{self.kernel.name}"):
            return
        if name in self.kernel.labels:
            raise self.error(lineno, f"label {name} defined twice (first on line "
                                     f"{self.kernel.labels[name][1]})")
        self.kernel.labels[name] = (len(self.kernel.statements), lineno)

    # Directives -------------------------------------------------------------------------
    def _directive(self, lineno: int, name: str, arg: str) -> None:
        k = self.kernel
        if name in (".arch", ".target"):
            arch = arg.split()[0] if arg else ""
            try:
                arch_info(arch)
            except UnknownArch as e:
                raise self.error(lineno, str(e)) from None
            if self.src.arch is not None and self.src.arch != arch:
                raise self.error(lineno, f"arch {arch} contradicts {self.src.arch} on line "
                                         f"{self.src.arch_line}")
            self.src.arch, self.src.arch_line = arch, lineno
        elif name == ".kernel":
            if not re.fullmatch(r"[A-Za-z_$][\w$]*", arg):
                raise self.error(lineno, f".kernel needs a name, got {arg!r}")
            self._start_kernel(lineno, arg)
        elif name == ".section":
            self._section(lineno, arg)
        elif name in (".sectioninfo",) and k is not None:
            m = _SHI_REGISTERS.search(arg)
            if m:
                k.regcount = int(m.group(1))
        elif name in (".elftype", ".headerflags", ".align", ".global", ".type", ".size",
                      ".other", ".sectionflags", ".sectioninfo", ".weak"):
            pass    # nvdisasm's ELF bookkeeping: the builder derives all of it
        elif k is None:
            raise self.error(lineno, f"{name} before any `.kernel NAME`")
        elif name == ".params":
            k.params.extend(self._param(p) for p in arg.split(",") if p.strip())
        elif name == ".param":
            k.params.append(self._param(arg))
        elif name == ".regcount":
            k.regcount = _numbers(arg, name, 1)[0]
        elif name == ".shared":
            k.shared = _numbers(arg, name, 1)[0]
        elif name == ".barriers":
            k.barriers = _numbers(arg, name, 1)[0]
        elif name == ".maxreg":
            k.maxreg = _numbers(arg, name, 1)[0]
        elif name in (".reqntid", ".maxntid"):
            dims = _numbers(arg, name, 3)
            dims = tuple(dims + [1] * (3 - len(dims)))
            setattr(k, name[1:], dims)
        else:
            raise self.error(lineno, f"unknown directive {name}")

    @staticmethod
    def _param(text: str) -> tuple[int, int | None]:
        size, _, offset = text.partition("@")
        n = _int(size, ".param size")
        if n <= 0:
            raise ValueError(f"parameter size {n} must be positive")
        return n, (_int(offset, ".param offset") if offset else None)

    def _start_kernel(self, lineno: int, name: str) -> None:
        if any(k.name == name for k in self.src.kernels):
            raise self.error(lineno, f"kernel {name} defined twice")
        self.kernel = KernelSource(name, lineno)
        self.src.kernels.append(self.kernel)

    def _section(self, lineno: int, arg: str) -> None:
        """An nvdisasm listing's section: `.text.<k>` holds code, `.nv.info.<k>`,
        `.nv.info` and `.nv.shared.<k>` hold facts; the rest is derived by the builder."""
        self.src.from_listing = True
        name = _SECTION_NAME.match(arg).group(1)
        self.section = name
        if name.startswith(".text."):
            self._start_kernel(lineno, name[len(".text."):])
        else:
            self.kernel = None
            self.data[name] = {"bytes": bytearray(), "labels": {}, "fixups": [], "line": lineno,
                               "pending_labels": [], "zero": 0, "align": None, "symbols": {},
                               "cursor": 0, "objects": [], "sizes": {}}

    # nvdisasm's data sections ------------------------------------------------------------
    def _data_line(self, lineno: int, line: str) -> None:
        sec = self.data[self.section]
        m = _LABEL.match(line)
        if m:
            sec["pending_labels"].append(m.group(1))
            return
        m = _OFFSET.match(line)
        if not m:
            d = _DIRECTIVE.match(line)
            kind, arg = (d.group(1), d.group(2)) if d else ("", "")
            if kind == ".zero":
                self._place_labels(sec, sec["cursor"])
                sec["zero"] += _int(arg, ".zero")
                sec["cursor"] += _int(arg, ".zero")
            elif kind == ".align" and sec["align"] is None:
                sec["align"] = _int(arg, ".align")   # the section's own alignment
            elif kind == ".type" and arg.endswith("@object"):
                sec["objects"].append(arg.split(",")[0].strip())
            elif kind == ".size":
                name, _, expr = arg.partition(",")
                sec["sizes"][name.strip()] = expr.strip()
            return
        offset = int(m.group(1), 16)
        self._place_labels(sec, offset)
        d = _DIRECTIVE.match(line[m.end():])
        if not d:
            return
        kind, arg = d.group(1), d.group(2)
        width = {".byte": 1, ".short": 2, ".word": 4, ".dword": 8}.get(kind)
        if width is None:
            return
        blob = sec["bytes"]
        for i, item in enumerate(p.strip() for p in arg.split(",")):
            at = offset + i * width
            if len(blob) < at + width:
                blob.extend(bytes(at + width - len(blob)))
            if re.fullmatch(r"-?0x[0-9a-fA-F]+|-?\d+", item):
                blob[at:at + width] = (int(item, 0) & (1 << 8 * width) - 1).to_bytes(width, "little")
            else:
                sec["fixups"].append((at, width, item))
            sec["cursor"] = max(sec["cursor"], at + width)

    @staticmethod
    def _place_labels(sec: dict, offset: int) -> None:
        for name in sec["pending_labels"]:
            sec["labels"][name] = offset
        sec["pending_labels"].clear()

    def _apply_listing_sections(self) -> None:
        kernels = {k.name: k for k in self.src.kernels}
        for sec_name, sec in self.data.items():
            self._place_labels(sec, sec["cursor"])
            owner = kernels.get(sec_name[len(".nv.info."):]) \
                if sec_name.startswith(".nv.info.") else None
            for at, width, expr in sec["fixups"]:
                m = re.fullmatch(r"\((\S+) - (\S+)\)", expr)
                s = re.fullmatch(r"(\S+)@srel", expr)
                if m and m.group(1) in sec["labels"] and m.group(2) in sec["labels"]:
                    value = sec["labels"][m.group(1)] - sec["labels"][m.group(2)]
                elif s and owner is not None and s.group(1) in owner.labels:
                    value = 16 * owner.labels[s.group(1)][0]   # an offset in the kernel's text
                else:
                    # `index@(sym)`, `.dword sym`: symbol indexes and addresses, which the
                    # builder assigns; remember which symbol each names.
                    sym = re.fullmatch(r"(?:index@\()?([^()\s]+)\)?", expr)
                    if sym:
                        sec["symbols"][at] = sym.group(1)
                    continue
                sec["bytes"][at:at + width] = value.to_bytes(width, "little", signed=True)
        note = self.data.get(".note.nv.cuinfo")
        if note is not None and len(note["bytes"]) >= CUINFO_DESC + 6:
            _, vsm, toolkit = struct.unpack_from("<HHH", note["bytes"], CUINFO_DESC)
            self.src.cuinfo = (vsm, toolkit)
        for k in self.src.kernels:
            info = self.data.get(f".nv.info.{k.name}")
            if info is not None:
                try:
                    records = parse_records(bytes(info["bytes"]), f".nv.info.{k.name}")
                except NvInfoError as e:
                    raise self.error(info["line"], str(e)) from None
                facts = Kernel(k.name, b"", attributes=records)
                decode_kernel_records(facts)
                k.info = facts
            shared = self.data.get(f".nv.shared.{k.name}")
            if shared is not None:     # present even when empty (extern shared only)
                k.shared = shared["zero"] or len(shared["bytes"])
                k.shared_align = shared["align"] or 4
        self._module_records(kernels)
        self._frame_programs(kernels)
        self._variables()

    def _variables(self) -> None:
        """Module variables of a listing (`.nv.global[.init]`, `.nv.constant3`: their
        `.type x,@object` / `.size` / `x:` lines) and the bank-4 address table
        (`.nv.constant4`'s `.dword x`)."""
        spaces = {".nv.global": "global", ".nv.global.init": "global", ".nv.constant3": "const"}
        for name, space in spaces.items():
            sec = self.data.get(name)
            if sec is None:
                continue
            for obj in sec["objects"]:
                m = re.fullmatch(r"\((\S+) - (\S+)\)", sec["sizes"].get(obj, ""))
                if obj not in sec["labels"] or not m or not {m.group(1), m.group(2)} <= set(sec["labels"]):
                    raise self.error(sec["line"], f"variable {obj}: no offset or size in {name}")
                at = sec["labels"][obj]
                size = sec["labels"][m.group(1)] - sec["labels"][m.group(2)]
                init = None if name == ".nv.global" else \
                    bytes(sec["bytes"][at:at + size]).ljust(size, b"\0")
                self.src.variables.append(GlobalVar(obj, size, sec["align"] or 4, init, space, at))
        bank4 = self.data.get(".nv.constant4")
        if bank4 is not None:
            self.src.bank4 = [bank4["symbols"][at] for at in sorted(bank4["symbols"])]

    def _module_records(self, kernels: dict[str, KernelSource]) -> None:
        """Frame and stack sizes from a listing's module `.nv.info` (records naming a
        kernel by `index@(name)`)."""
        sec = self.data.get(".nv.info")
        if sec is None:
            return
        try:
            records = parse_records(bytes(sec["bytes"]))
        except NvInfoError as e:
            raise self.error(sec["line"], str(e)) from None
        pos = 0
        for r in records:
            name = sec["symbols"].get(pos + 4)
            if isinstance(r.value, bytes) and len(r.value) == 8 and name in kernels:
                value = struct.unpack_from("<I", r.value, 4)[0]
                field_ = MODULE_RECORD_FIELDS.get(r.name)
                if field_:
                    kernels[name].module_facts[field_] = value
            pos += 4 + (len(r.value) if isinstance(r.value, bytes) else 0)

    def _frame_programs(self, kernels: dict[str, KernelSource]) -> None:
        """Each kernel's CFA program from a listing's `.debug_frame` (64-bit CIE/FDE pairs;
        an FDE names its function by the `.dword name` of its start address)."""
        sec = self.data.get(".debug_frame")
        if sec is None:
            return
        frame, pos = bytes(sec["bytes"]), 0
        while pos + 12 <= len(frame) and frame[pos:pos + 4] == b"\xff" * 4:
            length = struct.unpack_from("<Q", frame, pos + 4)[0]
            name = sec["symbols"].get(pos + FDE_LOCATION_OFFSET)
            if name in kernels:
                kernels[name].cfa_program = frame[pos + 12 + 24:pos + 12 + length]
            pos += 12 + length

    # Instructions -----------------------------------------------------------------------
    def _instruction(self, lineno: int, line: str, offset: int | None) -> None:
        if self.kernel is None:
            raise self.error(lineno, f"instruction before any `.kernel NAME`: {line.strip()!r}")
        text, semi, rest = line.partition(";")
        text = text.strip()
        control, reuse_given, word_low = None, False, None
        rest = rest.strip()
        hm = _HEX_WORD.search(rest)
        if hm:
            word_low = int(hm.group(1), 16)
            rest = (rest[:hm.start()] + rest[hm.end():]).strip()
        cm = _CONTROL_BLOCK.search(rest)
        if cm:
            try:
                control, reuse_given = parse_control(cm.group(1))
            except ValueError as e:
                raise self.error(lineno, f"`{text}`: {e}") from None
            rest = rest[:cm.start()].strip()
        if rest:
            raise self.error(lineno, f"unexpected text after `{text};`: {rest!r}")
        try:
            ins = parse_instruction(text)
        except SassSyntaxError as e:
            raise self.error(lineno, f"cannot parse `{text}`: {e}") from None
        st = Statement(lineno, text, ins, offset, control, reuse_given)
        self.kernel.statements.append(st)
        if word_low is not None and control is None:
            self.pending = st    # nvdisasm -hex: the high word, with the control bits, follows


def parse_source(text: str, filename: str = "<input>") -> Source:
    """The kernels, metadata and instructions of an assembler input (nothing encoded yet)."""
    return _Parser(text, filename).parse()


# --------------------------------------------------------------------------- facts

_BLOCK_END = frozenset({"BRA", "EXIT", "RET", "CALL", "BRX", "JMP", "JMX", "BREAK"})


def _register_span(ins: Instruction, position: int, reg: Reg) -> int:
    """How many consecutive R registers an operand covers: 2 for a `.64` address, the
    access width for a memory instruction's data (`.64` 2, `.128` 4), 2 for FP64 operands
    and IMAD.WIDE's destination and addend. `position` -1 is a register inside an address
    or constant reference. (A heuristic for the default register count: `.regcount` wins.)"""
    if position < 0:
        return 2 if "64" in reg.suffix else 1
    if ins.opcode in _FP64_OPS:
        return 2
    if ins.opcode in _MEMORY_OPS:
        return max((_WIDTH_REGS[t] for t in ins.modifiers if t in _WIDTH_REGS), default=1)
    if "WIDE" in ins.modifiers and position in (0, len(ins.operands) - 1):
        return 2    # the 64-bit result and addend (a carry-out predicate may sit between)
    return 1


_FP64_OPS = frozenset({"DADD", "DMUL", "DFMA", "DSETP", "DMNMX"})
_MEMORY_OPS = frozenset({"LDG", "STG", "LDS", "STS", "LD", "ST", "LDL", "STL", "LDC", "ATOMG",
                         "ATOM", "RED", "ATOMS"})
_WIDTH_REGS = {"64": 2, "128": 4, "256": 4}


def highest_register(instructions: list[Instruction]) -> int:
    """The highest R register any instruction names (-1 for none)."""
    top = -1
    for ins in instructions:
        regs = [(i, op) for i, op in enumerate(ins.operands) if isinstance(op, Reg)]
        for op in ins.operands:
            for inner in (getattr(op, "base", None), getattr(op, "ureg", None)):
                if isinstance(inner, Reg):
                    regs.append((-1, inner))
        for i, reg in regs:
            if reg.file == "R" and not reg.is_zero:
                top = max(top, reg.index + _register_span(ins, i, reg) - 1)
    return top


def _barrier_count(instructions: list[Instruction]) -> int:
    ids = [op.value for ins in instructions if ins.opcode == "BAR"
           for op in ins.operands[:1] if isinstance(op, Imm)]
    return max(ids) + 1 if ids else 0


def _entry_block_end(instructions: list[Instruction]) -> int:
    """Where the entry basic block ends: after the first branch, EXIT or call, or before
    the first branch target (the point ptxas's debug frame names)."""
    targets = {op.offset for ins in instructions for op in ins.operands
               if isinstance(op, Label) and op.offset is not None}
    for i, ins in enumerate(instructions):
        if i and 16 * i in targets:
            return 16 * i
        if ins.opcode in _BLOCK_END:
            return 16 * i + 16
    return 16 * len(instructions)


def _param_layout(sizes: list[tuple[int, int | None]]) -> list[tuple[int, int, int]]:
    out, end = [], 0
    for ordinal, (size, offset) in enumerate(sizes):
        if offset is None:
            align = min(size & -size, 8)
            offset = (end + align - 1) // align * align
        out.append((ordinal, offset, size))
        end = max(end, offset + size)
    return out


# --------------------------------------------------------------------------- assembling

def _reuse_from_operands(ins: Instruction, word: int, arch: str, pc: int) -> int:
    """The reuse flags that the `.reuse` marks on `ins`'s operands stand for."""
    marked = {i for i, op in enumerate(ins.operands) if isinstance(op, Reg) and op.reuse}
    if not marked:
        return 0
    bits = 0
    for b in range(4):
        # the tables show reuse flags only with bit 109 set, as nvdisasm does
        probe = word | 1 << (codec.CONTROL_SHIFT + 4) | 1 << (codec.CONTROL_SHIFT + 17 + b)
        positions = set(codec.decode_view(probe, arch, pc).reuse)
        if positions & marked:
            bits |= 1 << b
            marked -= positions
    if marked:
        raise ValueError(f"operand {sorted(marked)[0] + 1} cannot carry .reuse")
    return bits


def _encode_kernel(ks: KernelSource, arch: str, filename: str) -> tuple[bytes, list[Instruction]]:
    labels = {name: 16 * index for name, (index, _) in ks.labels.items()}
    labels.setdefault(ks.name, 0)       # the function's own name: `RET.REL.NODEC R20 \`(k)`
    words, resolved = [], []
    for i, st in enumerate(ks.statements):
        pc = 16 * i
        where = (filename, st.line)
        if st.offset is not None and st.offset != pc:
            raise AsmError(f"`{st.text}` is written at offset {st.offset:#06x} but falls at "
                           f"{pc:#06x}", *where)
        ops = []
        for op in st.instruction.operands:
            if isinstance(op, Label):
                if op.name not in labels:
                    raise AsmError(f"`{st.text}`: undefined label {op.name}", *where)
                op = Label(op.name, labels[op.name])
            ops.append(op)
        control = st.control or Control()
        ins = replace(st.instruction, operands=tuple(ops), control=replace(control, reuse=0))
        try:
            word = codec.encode(ins, arch, pc)
            reuse = _reuse_from_operands(ins, word, arch, pc)
        except (codec.EncodeError, codec.DecodeError, ValueError, ArithmeticError) as e:
            raise AsmError(f"`{st.text}`: {_strip_text(str(e), st.text)}", *where) from None
        if st.reuse_given and reuse & ~control.reuse:
            raise AsmError(f"`{st.text}`: operands marked .reuse (flags {reuse:#06b}) that "
                           f"the control bits do not set ({control.reuse:#06b})", *where)
        if not st.reuse_given:
            control = replace(control, reuse=reuse)
        word = word & ~codec.CONTROL_MASK | control.pack() << codec.CONTROL_SHIFT
        words.append(word)
        resolved.append(replace(ins, control=control))
    if not ks.statements:
        raise AsmError(f"kernel {ks.name} has no instructions", filename, ks.line)
    try:
        pad = codec.encode(Instruction(PAD_NOP, control=PAD_CONTROL), arch, 0)
    except codec.EncodeError as e:
        raise AsmError(f"cannot pad the text with NOPs: {e}", filename, ks.line) from None
    while len(words) % (TEXT_PAD // 16):
        words.append(pad)
    return b"".join(w.to_bytes(16, "little") for w in words), resolved


def _strip_text(message: str, text: str) -> str:
    """Codec messages often start with the instruction's text, which we already quote."""
    return message[len(text) + 2:] if message.startswith(text + ": ") else message


def _kernel(ks: KernelSource, arch: str, filename: str) -> Kernel:
    text, code = _encode_kernel(ks, arch, filename)
    info = arch_info(arch)
    exits = [16 * i for i, ins in enumerate(code) if ins.opcode == "EXIT"]
    if ks.regcount is not None:
        regcount = ks.regcount
    else:
        regcount = highest_register(code) + 1 + REGISTERS_RESERVED
    k = Kernel(ks.name, text, regcount=regcount, param_base=info.param_base,
               exit_offsets=exits, entry_block_end=_entry_block_end(code),
               ctaidz_used=any(isinstance(op, SpecialReg) and op.name == "SR_CTAID.Z"
                               for ins in code for op in ins.operands),
               sparse_mma_mask=sparse_mma_mask(code), preexit_used=preexit_used(code),
               reg_reconfig=reg_reconfig(code))
    if ks.info is not None:     # facts read off an nvdisasm listing's `.nv.info.<k>`
        f = ks.info
        k.params, k.barcount, k.maxreg_count = f.params, f.barcount, f.maxreg_count
        k.max_threads, k.reqntid, k.crs_stack_size = f.max_threads, f.reqntid, f.crs_stack_size
        k.ctaidz_used, k.cuda_api_version = f.ctaidz_used, f.cuda_api_version
        k.grid_attributes = f.grid_attributes
        k.s2rctaid_offsets, k.extra_attributes = f.s2rctaid_offsets, f.extra_attributes
        if f.exit_offsets and f.exit_offsets != exits:
            raise AsmError(f"kernel {ks.name}: EXIT_INSTR_OFFSETS {f.exit_offsets} disagree with "
                           f"the EXITs in its text {exits}", filename, ks.line)
    else:
        k.params = _param_layout(ks.params)
        k.barcount = ks.barriers if ks.barriers is not None else _barrier_count(code)
        k.maxreg_count, k.reqntid, k.max_threads = ks.maxreg, ks.reqntid, ks.maxntid
    if ks.shared is not None:
        k.shared_bytes, k.shared_align = ks.shared, ks.shared_align
    for name, value in ks.module_facts.items():
        setattr(k, name, value)
    if ks.cfa_program is not None and not ks.cfa_program.startswith(default_cfa_program(k)):
        k.cfa_program = ks.cfa_program    # a frame the derived entry block cannot describe
    return k


def assemble(text: str, arch: str | None = None, filename: str = "<input>") -> bytes:
    """The cubin for assembler input `text` (see the module docstring). `arch` is the
    default when the text names none; a text naming another arch is an error."""
    src = parse_source(text, filename)
    target = src.arch or arch
    if arch is not None and src.arch is not None and arch != src.arch:
        raise AsmError(f"the input is for {src.arch}, not {arch}", filename, src.arch_line)
    if target is None:
        raise AsmError("no architecture: write `.arch sm_89` or pass --arch", filename)
    try:
        codec.family_of(target)
    except codec.EncodeError as e:
        raise AsmError(str(e), filename, src.arch_line) from None
    if not src.kernels:
        raise AsmError("no kernel: start one with `.kernel NAME`", filename)
    kernels = [_kernel(ks, target, filename) for ks in src.kernels]
    if src.from_listing:
        kernels.reverse()       # nvdisasm lists them in file order, the reverse of PTX's
    options = {}
    if src.cuinfo is not None:  # the PTX `.target` and toolkit a listing's cubin records
        options = {"ptx_target": f"sm_{src.cuinfo[0]}", "toolkit_version": src.cuinfo[1]}
    options.update(globals_=src.variables, bank4=src.bank4)
    try:
        return write_cubin(Cubin.for_kernels(target, kernels, **options))
    except CubinError as e:
        raise AsmError(str(e), filename) from None


# --------------------------------------------------------------------------- command

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        prog="ptx2sass-as", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Assemble SASS in nvdisasm's syntax (plus .kernel/.params/... metadata, "
                    "or a whole `nvdisasm -hex` listing) into a cubin.",
        epilog=__doc__[__doc__.index("Input ("):__doc__.index("Errors are one line")].rstrip())
    ap.add_argument("input", nargs="?", default="-", help="SASS file (default: standard input)")
    ap.add_argument("-o", "--output", default="a.cubin", help="cubin to write (default a.cubin)")
    ap.add_argument("--arch", help="target when the input has no .arch line (e.g. sm_89)")
    args = ap.parse_args(argv)
    name = "<stdin>" if args.input == "-" else args.input
    try:
        text = sys.stdin.read() if args.input == "-" else open(args.input, encoding="utf-8").read()
    except (OSError, UnicodeDecodeError) as e:
        print(f"ptx2sass-as: error: cannot read {name}: {e}", file=sys.stderr)
        return 1
    try:
        data = assemble(text, args.arch, name)
    except AsmError as e:
        print(str(e), file=sys.stderr)
        return 1
    except Exception as e:    # a bug of ours: still one line, and a distinct exit status
        print(f"ptx2sass-as: internal error on {name}: {type(e).__name__}: {e}", file=sys.stderr)
        return 3
    try:
        with open(args.output, "wb") as f:
            f.write(data)
    except OSError as e:
        print(f"ptx2sass-as: error: cannot write {args.output}: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
