"""What the emulator runs: a kernel's instructions by offset plus the metadata a launch needs.

A `KernelProgram` is independent of where its instructions came from (our decoder, or
nvdisasm's text in tests); `compile_program` turns each instruction into an executable step
once, so the interpreter loop never looks at operand syntax twice.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ptx2sass.encoder.model import Imm, Instruction

from .convergence import prepare_step, presence_probes
from .errors import EmuFault


@dataclass
class KernelProgram:
    name: str
    arch: str
    instructions: list[tuple[int, Instruction]]       # (byte offset in .text, instruction)
    symbols: dict[str, int] = field(default_factory=dict)   # functions and labels → offset
    regcount: int = 255
    shared_bytes: int = 0            # static shared memory
    local_bytes: int = 0             # per-thread local window below the launch's stack limit
    # the stack ptxas says the kernel needs (its frame and deepest callee chain: the larger of
    # FRAME_SIZE and a known MIN/MAX_STACK_SIZE, which already holds the frame)
    stack_need: int = 0
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
    # Module `.texref`/`.samplerref`/`.surfref` slots: (bank, offset, symbol name, kind),
    # filled at launch with the handle bound to the name (emu.textures)
    handle_relocations: list[tuple[int, int, str, str]] = field(default_factory=list)
    # Code addresses of the warp-synchronous instructions the cubin lists
    # (COOP_GROUP_INSTR_OFFSETS of every placed function); None: the cubin lists none.
    warp_sync_offsets: set[int] | None = None
    # REDUXes that test whether their lanes are together (emu.convergence.presence_probes)
    presence_probes: set[int] | None = None
    # The cluster shape ptxas records for `.reqnctapercluster` (EIATTR_CTA_PER_CLUSTER) and
    # whether the kernel must be launched as a cluster (`.explicitcluster`,
    # EIATTR_EXPLICIT_CLUSTER): a launch that names no cluster uses them (emu.launch)
    cluster_dims: tuple[int, int, int] | None = None
    explicit_cluster: bool = False
    # EIATTR_AT_ENTRY_FRAGMENTS: the driver's code run before the kernel's (6 TMEM_CTA1_V2,
    # 7 the tcgen05 CTA pair's: emu.ops_tmem.at_entry applies its effect on shared memory)
    at_entry_fragments: tuple[int, ...] = ()


@dataclass(frozen=True)
class DataAddress:
    """An instruction immediate that holds half of a module global's address
    (`MOV R8, 32@lo(op_table)`): known only once a launch has placed the globals."""
    half: str            # "lo" or "hi"
    section: str         # the global's section (`.nv.global.init`)
    addend: int          # symbol value + relocation addend


# Semantics modules whose handlers may change lane PCs or states (branches, calls, exits,
# convergence and CTA barriers); the machine keeps a group running on only across others.
CONTROL_MODULES = {"ptx2sass.emu.ops_control", "ptx2sass.emu.ops_cluster"}
# Read-modify-write memory operations: warps that use them may contend.
ATOMICS = {"ATOM", "ATOMG", "ATOMS", "RED", "REDG"}
# Instructions after which CTA barriers may complete (arrivals, exits).
RELEASING = {"BAR", "EXIT", "KILL", "UCGABAR_ARV", "UCGABAR_WAIT"}


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
    handler: Callable | None = None       # its semantics handler


_SPECIALISERS: tuple = ()


def _specialisers():
    global _SPECIALISERS
    if not _SPECIALISERS:
        from .single_lane import specialise_one
        from .specialise import specialise
        _SPECIALISERS = (specialise, specialise_one)
    return _SPECIALISERS


def _specialised_opcodes() -> frozenset:
    from .single_lane import FORMS as ONE
    from .specialise import FORMS
    return frozenset(FORMS) | frozenset(ONE)


class Unsupported(EmuFault):
    pass


class Decoded:
    """A kernel decoded for every launch, an instruction at a time when it is first reached
    (code a launch never runs costs nothing): `steps` holds what is decoded so far, `step`
    decodes one offset, `all` every instruction."""

    def __init__(self, program: KernelProgram, handlers, prepare, data_immediate, vector):
        self.program = program
        self.instructions = program.instructions
        self.count = len(program.instructions)
        self.handlers, self.prepare, self.vector = handlers, prepare, vector
        self.at = {off: ins for off, ins in program.instructions}
        self.data_refs = [o for _, ins in program.instructions for o in ins.operands
                          if o.__class__ is DataAddress]
        # the offsets whose instruction holds a DataAddress (the rest skip the look)
        self.with_data = {off for off, ins in program.instructions
                          if any(o.__class__ is DataAddress for o in ins.operands)} if self.data_refs else set()
        self.data = tuple(data_immediate(o) for o in self.data_refs) if data_immediate else ()
        # (a launch's bound method: kept only where a step may need it, so that a decoding
        # does not keep its last launch, buffers and all, alive)
        self.data_immediate = data_immediate if self.data_refs else None
        self.steps: dict[int, Step] = {}
        self.facts: dict[str, tuple] = {}        # compile_step's facts by opcode
        self.imm32: dict[int, object] = {}
        self.atomics = any(ins.opcode in ATOMICS for _, ins in program.instructions)

    def step(self, offset: int) -> Step | None:
        """The step at `offset` (None: no instruction there)."""
        s = self.steps.get(offset)
        if s is None:
            ins = self.at.get(offset)
            if ins is None:
                return None
            s = self.steps[offset] = compile_step(
                self.program, offset, ins, self.handlers, self.prepare,
                self.data_immediate if offset in self.with_data else None, self.vector, self.facts)
        return s

    def all(self) -> dict[int, Step]:
        for off in self.at:
            self.step(off)
        return self.steps


def decode(program: KernelProgram, handlers: dict[str, Callable], prepare: dict[str, Callable],
           data_immediate: Callable[[DataAddress], int] | None = None,
           vector: set | frozenset = frozenset()) -> Decoded:
    """The program's decoding, made on its first launch and kept on the program (made again
    when its instruction list was replaced or a data address resolves differently)."""
    cached = getattr(program, "_decoded", None)
    if cached is not None and cached.instructions is program.instructions \
            and len(cached.instructions) == cached.count and cached.handlers is handlers:
        data = tuple(data_immediate(o) for o in cached.data_refs) if data_immediate and cached.data_refs else ()
        if data == cached.data:
            cached.data_immediate = data_immediate if cached.data_refs else None
            return cached
    decoded = Decoded(program, handlers, prepare, data_immediate, vector)
    program._decoded = decoded
    return decoded


def compile_program(program: KernelProgram, handlers: dict[str, Callable],
                    prepare: dict[str, Callable],
                    data_immediate: Callable[[DataAddress], int] | None = None,
                    vector: set | frozenset = frozenset()) -> dict[int, Step]:
    """Offset → Step for every instruction."""
    return {off: compile_step(program, off, ins, handlers, prepare, data_immediate, vector)
            for off, ins in program.instructions}


def compile_step(program: KernelProgram, offset: int, ins: Instruction, handlers, prepare,
                 data_immediate, vector, facts: dict | None = None) -> Step:
    """One instruction as a Step. An opcode without semantics becomes a step that faults when
    (and only when) it is executed, naming the opcode and the offset. `data_immediate` turns
    the `DataAddress` operands into immediates for this launch. Hot forms get a specialised
    closure (emu/specialise.py, emu/single_lane.py). `facts` keeps what depends on the
    opcode alone (for these handlers, preparers and vector set) from one step to the next."""
    if data_immediate is not None and any(isinstance(o, DataAddress) for o in ins.operands):
        ins = replace(ins, operands=tuple(Imm(data_immediate(o)) if isinstance(o, DataAddress) else o
                                          for o in ins.operands))
    opcode = ins.opcode
    known = facts.get(opcode) if facts is not None else None
    if known is None:
        known = _opcode_facts(opcode, handlers, prepare, vector)
        if facts is not None:
            facts[opcode] = known
    handler, plain, is_vector, releases, reads_clock, prep, tiered = known
    if unknown_meaning(opcode, ins.modifiers):
        handler, is_vector, prep, tiered = _unsupported, True, None, False
    guard = ins.guard
    if guard is not None and guard.file == "P" and guard.index == 7 and not guard.inv:
        guard = None            # PT: every lane
    step = Step(offset, ins, handler, plain=plain, vector=is_vector, guard=guard, releases=releases,
                reads_clock=reads_clock, handler=handler)
    if prep is not None:
        try:
            prep(step)
        except EmuFault as e:
            raise e.located(program.name, offset) from None
    if program.presence_probes is None:
        program.presence_probes = presence_probes(program.instructions)
    prepare_step(step, program.warp_sync_offsets, program.presence_probes)
    if step.aux:
        step.collective = step.aux.get("collective")
        step.meets = bool(step.aux.get("meets"))
    step.fast = is_vector and plain and step.collective is None
    if tiered:
        # tiered: the handler runs an instruction's first two executions, the third makes
        # its specialised form (most of the cost of decoding, wasted on code run once or
        # twice: of the steps of the tinygrad backend's test programs run more than once,
        # 470 of 500 run exactly twice)
        step.run = step.run1 = _first
    else:
        step.run1 = step.run
    return step


# Modifiers the decoder reads (nvdisasm prints them) whose meaning the handlers do not know:
# sm_100/103's bit 76/77 `.XOR` of IMAD, SHF and IADD3 (IMUL.XOR, SHF.XOR, IADD.XOR; ptxas
# writes none of them): their opcode's handler would run another instruction (IMUL without
# the XOR and without c), so such a step faults when executed, as an unknown opcode does.
# sm_120's `.UAI` / `.UAOFFI` of the texture and surface instructions (bits 58/57: an array
# index / texel offsets taken from a uniform register, as the names say; ptxas 13.5 writes
# neither; sm_100/103/110's nvdisasm prints nothing / INVALID2 there): the handlers read the
# array index and offsets from Ra/Rb only.
_UNIFORM_INDEX = frozenset({"UAI", "UAOFFI"})
UNKNOWN_MODIFIERS: dict[str, frozenset[str]] = {
    "IMUL": frozenset({"XOR"}), "SHF": frozenset({"XOR"}), "IADD": frozenset({"XOR"}),
    **{op: _UNIFORM_INDEX for op in ("TEX", "TLD", "TLD4", "TXD", "SULD", "SUST", "SURED", "SUATOM")},
    # sm_100/103/110's UBLKCP bits 81-85 (nvdisasm: `.COUNTED`, `.SEQUENCED` besides the L2
    # hints `.LTC64B`...; sm_120's: nothing for bit 85): the handler counts nothing
    # (`.DST_G_BYTE_MASK`, cp_mask's, it knows: emu/ops_bulk.py)
    "UBLKCP": frozenset({"COUNTED", "SEQUENCED"})}

# Opcodes whose handler needs one of these modifiers to know what it computes: sm_100/103/110's
# nvdisasm reads UF2FP words with no type at all (`UF2FP.PACK_AB UR4, UR4, UR4`, where sm_120's
# reads the same bits as an FP8 pack); ptxas writes no UF2FP for sm_100, so what such a word
# converts to is not known, and the F2FP handler would pick F16 by default.
REQUIRED_MODIFIERS: dict[str, frozenset[str]] = {
    "UF2FP": frozenset({"F16", "BF16", "TF32", "E4M3", "E5M2", "E2M3", "E3M2", "E2M1"})}


def unknown_meaning(opcode: str, modifiers) -> bool:
    """Whether a decoded instruction's modifiers leave its meaning unknown to the handlers:
    an `UNKNOWN_MODIFIERS` one, none of its `REQUIRED_MODIFIERS`, or a value nvdisasm itself
    does not know (`???13`: the decoder refuses those it has seen, this catches any other)."""
    if opcode in UNKNOWN_MODIFIERS and UNKNOWN_MODIFIERS[opcode].intersection(modifiers):
        return True
    if opcode in REQUIRED_MODIFIERS and not REQUIRED_MODIFIERS[opcode].intersection(modifiers):
        return True
    return any(m.startswith("???") for m in modifiers)


def _opcode_facts(opcode: str, handlers, prepare, vector) -> tuple:
    """(handler, plain, vector, releases, reads_clock, preparer, tiered) of an opcode."""
    handler = handlers.get(opcode)
    if handler is None:
        handler = _unsupported
    is_vector = handler in vector or handler is _unsupported
    prep = prepare.get(opcode) if handler is not _unsupported else None
    return (handler, handler.__module__ not in CONTROL_MODULES, is_vector, opcode in RELEASING,
            opcode in ("S2R", "S2UR", "CS2R", "CS2UR"), prep,
            is_vector and handler is not _unsupported and opcode in SPECIALISED)


def _first(w, s, active, mask):
    """A specialisable step's first execution: its handler's."""
    s.run = s.run1 = _second
    return s.handler(w, s, active, mask)


def _second(w, s, active, mask):
    """Its second: the handler's again."""
    s.run = s.run1 = _again
    return s.handler(w, s, active, mask)


def _again(w, s, active, mask):
    """Its third: made specialised, then run."""
    specialise_step(s)
    return (s.run1 if w.width == 1 else s.run)(w, s, active, mask)


class _Specialised:
    """The opcodes with specialised forms (looked up once the modules are loaded)."""
    def __contains__(self, opcode) -> bool:
        global SPECIALISED
        SPECIALISED = _specialised_opcodes()
        return opcode in SPECIALISED


SPECIALISED = _Specialised()


def specialise_step(step: Step) -> Step:
    """Give `step` its specialised closures (emu/specialise.py, emu/single_lane.py) where its
    form has them, else its handler."""
    specialise, specialise_one = _specialisers()
    handler = step.generic or step.handler
    step.run = step.run1 = handler
    fast = specialise(step)
    if fast is not None:
        step.generic = handler
        step.run = fast
        step.run1 = specialise_one(step, fast) or fast
    else:
        one = specialise_one(step, handler)        # a single-lane form alone (FSETP)
        if one is not None:
            step.generic = handler
            step.run1 = one
    return step


def _unsupported(warp, step, active, mask):
    raise EmuFault(f"unsupported instruction {step.ins.mnemonic}")
