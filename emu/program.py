"""What the emulator runs: a kernel's instructions by offset plus the metadata a launch needs.

A `KernelProgram` is independent of where its instructions came from (our decoder, or
nvdisasm's text in tests); `compile_program` turns each instruction into an executable step
once, so the interpreter loop never looks at operand syntax twice.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ptx2sass.encoder.model import Imm, Instruction

from .errors import EmuFault


@dataclass
class KernelProgram:
    name: str
    arch: str
    instructions: list[tuple[int, Instruction]]       # (byte offset in .text, instruction)
    symbols: dict[str, int] = field(default_factory=dict)   # functions and labels → offset
    regcount: int = 255
    shared_bytes: int = 0            # static shared memory
    local_bytes: int = 0             # per-thread frame (stack) size the kernel needs
    param_base: int = 0x160
    param_bytes: int = 0
    const_banks: dict[int, bytes] = field(default_factory=dict)   # banks other than 0 (user .const …)
    const0_template: bytes = b""     # bank 0 as the cubin ships it (sized for the params)
    # Global variables: name → (size, initial bytes); their addresses go where
    # `const_relocations` say (bank, offset, symbol, addend).
    globals: dict[str, tuple[int, bytes]] = field(default_factory=dict)
    const_relocations: list[tuple[int, int, str, int]] = field(default_factory=list)
    words: dict[int, int] = field(default_factory=dict)   # offset → 128-bit word, when known
    # A `-G` debug build: ptxas leaves such code unscheduled (every control field is the
    # same: no stall, no scoreboard, no wait), so the hardware must interlock it; the timing
    # model then runs it serialised instead of checking the control codes.
    debug_build: bool = False
    # Where each placed `.text.<function>` section starts in the emulated code space.
    code_bases: dict[str, int] = field(default_factory=dict)
    # Relocations of module globals' initial bytes: (global section, offset, symbol's
    # section, symbol value + addend, relocation type), applied once addresses are known.
    global_relocations: list[tuple[str, int, str, int, int]] = field(default_factory=list)
    # Code addresses of the warp-synchronous instructions the cubin lists
    # (COOP_GROUP_INSTR_OFFSETS of every placed function); None: the cubin lists none.
    warp_sync_offsets: set[int] | None = None


@dataclass(frozen=True)
class DataAddress:
    """An instruction immediate that holds half of a module global's address
    (`MOV R8, 32@lo(op_table)`): known only once a launch has placed the globals."""
    half: str            # "lo" or "hi"
    section: str         # the global's section (`.nv.global.init`)
    addend: int          # symbol value + relocation addend


# Semantics modules whose handlers may change lane PCs or states (branches, calls, exits,
# convergence and CTA barriers); the machine keeps a group running on only across others.
CONTROL_MODULES = {"ptx2sass.emu.ops_control"}
# Instructions after which CTA barriers may complete (arrivals, exits).
RELEASING = {"BAR", "EXIT", "KILL"}


@dataclass(eq=False)
class Step:
    """One instruction ready to execute: its handler, how the machine dispatches it, and
    whatever the handler precomputed (`aux`)."""
    offset: int
    ins: Instruction
    run: Callable
    aux: dict = field(default_factory=dict)
    # Neither control flow nor synchronisation: leaves every lane's PC and state alone.
    plain: bool = True
    # The handler works on any set of lanes (registry `vector=True`), else once per warp.
    vector: bool = False
    # Guard predicate, None when there is none or it is PT.
    guard: object = None
    # Explicit reconvergence: the members that must run it together (emu.convergence).
    collective: object = None
    # It sets the lanes' sync hint itself (WARPSYNC, BRA.CONV/DIV).
    meets: bool = False
    releases: bool = False
    # vector and plain: the machine's fast path
    fast: bool = False
    # reads the emulated clock (the warps' instruction counts)
    reads_clock: bool = False
    # the handler, where `run` is a closure specialised for this instruction's form
    generic: Callable | None = None
    # what runs it for a group of one lane (emu/single_lane.py; else `run`)
    run1: Callable | None = None


class Unsupported(EmuFault):
    pass


@dataclass
class Decoded:
    """A kernel decoded once for every launch: offset → Step, and the immediates' arrays."""
    steps: dict[int, Step]
    imm32: dict[int, object] = field(default_factory=dict)


def decode(program: KernelProgram, handlers: dict[str, Callable], prepare: dict[str, Callable],
           data_immediate: Callable[[DataAddress], int] | None = None,
           vector: set | frozenset = frozenset()) -> Decoded:
    """The program's steps, built on its first launch and kept on the program (again when its
    instruction list was replaced or a data address resolves differently)."""
    cached = getattr(program, "_decoded", None)
    if cached is not None and cached.instructions is program.instructions \
            and len(cached.instructions) == cached.count and cached.handlers is handlers:
        data = tuple(data_immediate(o) for o in cached.data_refs) if data_immediate else ()
        if data == cached.data:
            return cached
    from .specialise import specialise
    steps = compile_program(program, handlers, prepare, data_immediate, vector, specialise)
    from .convergence import prepare as collectives
    collectives(steps, program.warp_sync_offsets)
    for s in steps.values():
        s.collective = s.aux.get("collective")
        s.meets = bool(s.aux.get("meets"))
        s.fast = s.fast and s.collective is None
    decoded = Decoded(steps)
    decoded.instructions = program.instructions
    decoded.count = len(program.instructions)
    decoded.handlers = handlers
    decoded.data_refs = [o for _, ins in program.instructions for o in ins.operands
                         if isinstance(o, DataAddress)]
    decoded.data = tuple(data_immediate(o) for o in decoded.data_refs) if data_immediate else ()
    program._decoded = decoded
    return decoded


def compile_program(program: KernelProgram, handlers: dict[str, Callable],
                    prepare: dict[str, Callable],
                    data_immediate: Callable[[DataAddress], int] | None = None,
                    vector: set | frozenset = frozenset(),
                    specialise: Callable | None = None) -> dict[int, Step]:
    """Offset → Step. An opcode without semantics becomes a step that faults when (and only
    when) it is executed, naming the opcode and the offset. `data_immediate` turns the
    `DataAddress` operands into immediates for this launch."""
    steps: dict[int, Step] = {}
    for offset, ins in program.instructions:
        if data_immediate is not None and any(isinstance(o, DataAddress) for o in ins.operands):
            ins = replace(ins, operands=tuple(Imm(data_immediate(o)) if isinstance(o, DataAddress) else o
                                              for o in ins.operands))
        handler = handlers.get(ins.opcode)
        if handler is None:
            handler = _unsupported
        guard = ins.guard
        if guard is not None and guard.file == "P" and guard.index == 7 and not guard.inv:
            guard = None            # PT: every lane
        step = Step(offset, ins, handler, plain=handler.__module__ not in CONTROL_MODULES,
                    vector=handler in vector or handler is _unsupported, guard=guard,
                    releases=ins.opcode in RELEASING)
        step.fast = step.vector and step.plain
        step.reads_clock = ins.opcode in ("S2R", "S2UR", "CS2R")
        prep = prepare.get(ins.opcode)
        if prep is not None and handler is not _unsupported:
            try:
                prep(step)
            except EmuFault as e:
                raise e.located(program.name, offset) from None
        if step.vector and specialise is not None and handler is not _unsupported:
            fast = specialise(step)
            if fast is not None:
                step.generic = handler
                step.run = fast
                from .single_lane import specialise_one
                step.run1 = specialise_one(step, fast) or fast
        if step.run1 is None:
            step.run1 = step.run
        steps[offset] = step
    return steps


def _unsupported(warp, step, active, mask):
    raise EmuFault(f"unsupported instruction {step.ins.mnemonic}")
