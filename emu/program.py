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
# convergence and CTA barriers); `Warp.step` keeps its converged fast path only across others.
CONTROL_MODULES = {"ptx2sass.emu.ops_control"}


@dataclass
class Step:
    """One instruction ready to execute: its handler and whatever it precomputed."""
    offset: int
    ins: Instruction
    run: Callable
    aux: dict = field(default_factory=dict)
    # Neither control flow nor synchronisation: leaves every lane's PC and state alone.
    plain: bool = True


class Unsupported(EmuFault):
    pass


def compile_program(program: KernelProgram, handlers: dict[str, Callable],
                    prepare: dict[str, Callable],
                    data_immediate: Callable[[DataAddress], int] | None = None) -> dict[int, Step]:
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
        step = Step(offset, ins, handler, plain=handler.__module__ not in CONTROL_MODULES)
        prep = prepare.get(ins.opcode)
        if prep is not None and handler is not _unsupported:
            try:
                prep(step)
            except EmuFault as e:
                raise e.located(program.name, offset) from None
        steps[offset] = step
    return steps


def _unsupported(warp, step, active, mask):
    raise EmuFault(f"unsupported instruction {step.ins.mnemonic}")
