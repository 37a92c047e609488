"""The machine-instruction model every back-end stage and the emulator share.

One `Instruction` is one 128-bit SASS word: opcode, modifiers, operands, guard predicate and
its control fields. Operands are small immutable values so that instructions can be hashed,
compared and printed back to nvdisasm's syntax (see `sass_text`).
"""
from __future__ import annotations

from dataclasses import field

from ptx2sass.records import dataclass

# Register files: general R, uniform UR, predicate P, uniform predicate UP, convergence
# barrier B. The zero/true register of each file is its highest index.
# URZ is UR255 in the model on every family (sm_100+/sm_120 words hold it as 255 and have a
# real UR63; the 6-bit fields of earlier families hold it as 63, encoder/fields.py)
ZERO_INDEX = {"R": 255, "UR": 255, "P": 7, "UP": 7, "B": None}
ZERO_NAME = {"R": "RZ", "UR": "URZ", "P": "PT", "UP": "UPT"}


@dataclass(frozen=True, slots=True)
class Reg:
    """A register operand, e.g. `R4`, `-|R2|.reuse`, `!P0`, `UR6`, `R3.H1`, `B0`.

    `suffix` holds operand-level selectors nvdisasm prints after the name (`.H1`, `.B2`,
    `.64` inside addresses, `.X4` …), in order.
    """
    file: str
    index: int
    neg: bool = False       # `-R`
    abs: bool = False       # `|R|`
    inv: bool = False       # `~R` (bitwise not) or `!P` (logical not)
    reuse: bool = False     # `.reuse`: mirrors the control field, kept for printing
    suffix: tuple[str, ...] = ()
    # `gdesc[UR8]`: the uniform register pair (pairs) holding wgmma's shared-memory matrix
    # descriptors (HGMMA/IGMMA/QGMMA); `suffix` then holds `.negA`, `.tnspB` …
    gdesc: bool = False

    @property
    def is_zero(self) -> bool:
        return ZERO_INDEX.get(self.file) == self.index


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate. `value` is the integer bit pattern as nvdisasm shows it for integer
    immediates; `text` keeps nvdisasm's spelling for floating-point ones (`1.5`, `+INF`),
    whose encoding the ISA layer derives from the instruction's type. A NaN's text hides its
    payload: `decode` puts the field's raw bits in `value` when they are not the quiet NaN the
    text encodes to (0 otherwise), and `encode` writes them back."""
    value: int
    text: str | None = None
    neg: bool = False
    abs: bool = False


@dataclass(frozen=True)
class ConstRef:
    """`c[bank][offset]`, `c[bank][UR4+0x10]`, optionally negated / absolute / inverted.
    `ureg` is the register added to the offset (uniform, or general for LDC's `c[0x0][R2]`);
    `ubank`, when set, makes the bank a uniform register: the bindless form `cx[UR4][0x10]`
    (then `bank` is unused and 0)."""
    bank: int
    offset: int
    ureg: Reg | None = None
    neg: bool = False
    abs: bool = False
    inv: bool = False
    suffix: tuple[str, ...] = ()
    ubank: Reg | None = None
    # nvdisasm prints a sub-word constant source (I2F.S16, MUFU.F16, HFMA2 …) as `c[b] [o]`,
    # with a gap even with no selector after it: kept for printing only (the bits do not
    # depend on it: equal either way)
    gap: bool = field(default=False, compare=False)
    # relocatable output (-c): (symbol, addend) of a module `.const` variable's read, whose
    # bank-3 offset the linker writes (R_CUDA_CONST_FIELD*; `Target.const_relocation`)
    reloc: tuple[str, int] | None = None


@dataclass(frozen=True)
class Mem:
    """An address `[R2.64+UR4+0x10]`, optionally with a descriptor `desc[UR4]`."""
    base: Reg | None = None      # general register (with `.64` in its suffix for 64-bit)
    ubase: Reg | None = None     # uniform register term
    offset: int = 0
    desc: Reg | None = None      # the `desc[URx]` memory descriptor (sm_8x+)
    # a descriptor operand of its own, no address (`UBLKCP … UR8, desc[UR6]`: a cache policy)
    desc_only: bool = False
    # sm_8x: `desc` is the word's hidden descriptor field (no bit 101; nvdisasm does not print
    # it), not a shown operand: `decode` sets it for a non-default register so encode gives
    # the word back; our printer spells it `desc.hidden[URx]`, since nvdisasm's `desc[URx]`
    # is always the shown operand. Equality ignores the flag
    desc_hidden: bool = field(default=False, compare=False)
    # an address in another memory nvdisasm names before the bracket: `tmem[UR4+0x2]` (tensor
    # memory, sm_100's LDTM/STTM/UTCSHIFT/UTCCP); a shared-memory matrix descriptor
    # `gdesc[UR8]` is a register (`Reg.gdesc`), since it takes suffixes (`.tnspB`);
    # `idesc[UR5]`: the uniform register holding tcgen05.mma's instruction descriptor (UTC*MMA)
    space: str = ""
    # selectors after a named-space address: UTC*MMA's `tmem[UR9].A_KEEP` (collector usage)
    suffix: tuple[str, ...] = ()


@dataclass(frozen=True)
class SpecialReg:
    """`SR_TID.X`, `SR_CTAID.Y`, `SR_LANEID`, `SRZ` …"""
    name: str


@dataclass(frozen=True)
class Label:
    """A branch or call target: `` `(.L_x_3) `` resolved to a byte offset in its section, or a
    symbol for calls to other functions (`` `($func) ``)."""
    name: str
    offset: int | None = None


@dataclass(frozen=True)
class Reloc:
    """An immediate the loader fills from a relocation, as nvdisasm prints it:
    `32@lo(op_table)` (low 32 bits of a symbol's address) or
    `32@hi((kernel + .L_x_4@srel))` (high bits of the address of a label in `symbol`'s
    section, e.g. a return address for an indirect call), or `(sym) (the whole value of
    a symbol the loader defines: txq/suq's descriptor sizes). `function_descriptor`: the
    halves of a kernel's function descriptor, `32@lo(fun@fdesc(kernel))` (relocatable output:
    a kernel's address, what a device-side launch names)."""
    half: str                    # "lo", "hi", "abs" (the whole 32-bit value: `(sym)) or
    #                              "const" (a module `.const` variable's offset in its bank)
    symbol: str
    label: str | None = None     # the `@srel` label added to the symbol
    width: int = 32
    function_descriptor: bool = False
    function: bool = False       # the halves of a `.func`'s address (`Target.function_address_relocation`)


@dataclass(frozen=True)
class IndexList:
    """A braced list of small numbers in printed order: `DEPBAR.LE SB0, 0x0, {5,4,0}` (the
    scoreboards DEPBAR also waits for; nvdisasm lists them highest first)."""
    items: tuple[int, ...]


Operand = Reg | Imm | ConstRef | Mem | SpecialReg | Label | Reloc | IndexList


NO_SCOREBOARD = 7      # a control code's scoreboard field naming none


@dataclass(frozen=True, slots=True)
class Control:
    """The scheduling fields of bits 105..125."""
    stall: int = 0
    # The raw bit 109. Despite the name, probing nvdisasm suggests 1 means "do not yield"
    # (ptxas sets it on most instructions; nvdisasm rejects it with stall >= 12 and hides
    # reuse flags when it is 0: docs/isa-facts.md). Kept raw until the scheduler needs the
    # meaning; renaming it is an open item on the ISA issue.
    yield_: bool = False
    wr_sb: int = NO_SCOREBOARD
    rd_sb: int = NO_SCOREBOARD
    wait: int = 0           # bit i: wait on scoreboard i (0..5)
    reuse: int = 0          # bit i: reuse flag of source slot i

    def pack(self) -> int:
        """The 21-bit field stored at bit 105, in the layout ISA-NOTES documents."""
        return (self.stall | (int(self.yield_) << 4) | (self.wr_sb << 5) | (self.rd_sb << 8)
                | (self.wait << 11) | (self.reuse << 17))

    @classmethod
    def unpack(cls, bits: int) -> "Control":
        return cls(stall=bits & 15, yield_=bool(bits >> 4 & 1), wr_sb=bits >> 5 & 7,
                   rd_sb=bits >> 8 & 7, wait=bits >> 11 & 63, reuse=bits >> 17 & 15)


@dataclass(frozen=True, slots=True)
class Instruction:
    opcode: str                              # `FADD`, `IMAD`, `LDG`, …
    modifiers: tuple[str, ...] = ()          # `("WIDE", "U32")` for `IMAD.WIDE.U32`
    operands: tuple[Operand, ...] = ()
    guard: Reg | None = None                 # `@P0` / `@!P0`; None = always (PT)
    control: Control = field(default_factory=Control)

    @property
    def mnemonic(self) -> str:
        return ".".join((self.opcode, *self.modifiers))
