"""Which operands of an sm_75/sm_8x instruction are register pairs or quads: data, not code.

Why: a 64-bit value lives in an even register and the next one, a 128-bit one in four
registers starting at a multiple of 4. nvdisasm prints `IMAD.WIDE R3, …` or `LDG.E.64 R5, …`
without complaint (the word has room for any index), so the tables cannot tell; a misaligned
pair or quad is a code-generator bug that `codec.encode` refuses, naming the instruction.
The rules below hold for every word ptxas writes for the corpora (tests/test_encoding.py).

A rule names operands by position in the printed operand list (0 = first, -1 = last) or by
role ("regs": every R/UR operand outside an address); register-file operands only (RZ/URZ
and predicates are never checked).
"""
from __future__ import annotations

from .model import Imm, Instruction, Mem, Reg

# Memory instructions: every data register has the access width, which the size or type
# modifier gives (`.64`, `.128`, 64-bit atomic types; `.256`: two quads).
MEMORY = frozenset({"LD", "LDG", "LDS", "LDL", "LDC", "ULDC", "ST", "STG", "STS", "STL",
                    "ATOM", "ATOMG", "ATOMS", "RED", "LDGMC"})
ACCESS_WIDTH = {"64": 2, "128": 4, "256": 4, "S64": 2, "U64": 2, "F64": 2,
                # vector atomics: F32x4 / F16x8 are four words, F32x2 / F16x4 two
                "F32x2": 2, "F32x4": 4, "F16x4": 2, "F16x8": 4, "BF16x4": 2, "BF16x8": 4}
# Global/generic accesses whose `.E` (64-bit address) base register prints without `.64`:
# every such address on sm_75 (`LDG.E.SYS R0, [R2]`) and compare-and-swap's on sm_8x
# (`ATOMG.E.CAS … [R2]`). LDGSTS is not among them: its bare `[R]` is the shared address.
E_ADDRESS = frozenset({"LD", "LDG", "ST", "STG", "RED", "ATOM", "ATOMG"})

# FP64 arithmetic: every register operand is a pair.
FP64 = frozenset({"DADD", "DMUL", "DFMA", "DSETP", "DMNMX", "DSET"})

# Conversions: which operand a 64-bit type token widens. I2F names the destination's float
# type and the source's integer type; F2I the reverse; F2F destination then source; FRND
# one type for both.
CONVERSION = {
    "I2F": {"F64": (0,), "S64": (-1,), "U64": (-1,)},
    "F2I": {"F64": (-1,), "S64": (0,), "U64": (0,)},
    "FRND": {"F64": (0, -1)},
}

# Matrix multiply-accumulate: (opcode, shape, accumulator or input type) → widths of
# D, A, B, C (operands 0..3), from the fragment sizes per thread.
MMA = {
    ("HMMA", "16816", "F32"): (4, 4, 2, 4),
    ("HMMA", "16816", "F16"): (2, 4, 2, 2),
    ("HMMA", "1688", "F32"): (4, 2, 1, 4),
    ("HMMA", "1688", "F16"): (2, 2, 1, 2),
    ("HMMA", "1688", "TF32"): (4, 4, 2, 4),
    ("HMMA", "1684", "TF32"): (4, 2, 1, 4),
    ("IMMA", "16832", None): (4, 4, 2, 4),
    ("IMMA", "16816", None): (4, 2, 1, 4),
    ("IMMA", "8816", None): (2, 1, 1, 2),
    ("IMMA", "16864", None): (4, 4, 2, 4),
    ("IMMA", "8832", None): (2, 1, 1, 2),
    ("DMMA", "884", None): (4, 2, 2, 4),
    ("DMMA", "8x8x4", None): (4, 2, 2, 4),
    ("BMMA", "88128", None): (2, 1, 1, 2),
    ("BMMA", "168128", None): (4, 2, 1, 4),
    ("BMMA", "168256", None): (4, 4, 2, 4),
    ("IMMA", "16832", "I4"): (4, 2, 1, 4),
    ("IMMA", "16864", "I4"): (4, 4, 2, 4),
    ("QMMA", "16832", "F32"): (4, 4, 2, 4),
    ("QMMA", "16832", "F16"): (2, 4, 2, 2),
    ("QMMA", "16816", "F32"): (4, 2, 1, 4),
    ("QMMA", "16816", "F16"): (2, 2, 1, 2),
    # OMMA.SF.16864 (sm_120a's block-scaled fp4 mma.sync): the scale registers and the
    # selector UR that follow C are single
    ("OMMA", "16864", "F32"): (4, 4, 2, 4),
}

# Sparse forms (`.SP`: A holds half of its k elements; the metadata register and selector
# follow C).
SPARSE_MMA = {
    ("HMMA", "16816", "F32"): (4, 2, 2, 4),
    ("HMMA", "16816", "F16"): (2, 2, 2, 2),
    ("HMMA", "16832", "F32"): (4, 4, 4, 4),
    ("HMMA", "16832", "F16"): (2, 4, 4, 2),
    ("IMMA", "16832", None): (4, 2, 2, 4),
    ("IMMA", "16864", None): (4, 4, 4, 4),
    # tf32 (1:2) and s4/u4 (4:8) A: the registers of the 16-bit / 8-bit form half their k
    ("HMMA", "1688", "TF32"): (4, 2, 2, 4),
    ("HMMA", "16816", "TF32"): (4, 4, 4, 4),
    ("IMMA", "16864", "I4"): (4, 2, 2, 4),
    ("IMMA", "168128", "I4"): (4, 4, 4, 4),
    # sm_120a's sparse kinds: QMMA.SP.16864 (kind::f8f6f4), QMMA.SF.SP / OMMA.SF.SP.168128
    # (block-scaled; the metadata and scale-a are one pair after C, ptxas 13.5.37)
    ("QMMA", "16864", "F32"): (4, 4, 4, 4),
    ("QMMA", "16864", "F16"): (2, 4, 4, 2),
    ("QMMA", "16864", "SF"): (4, 4, 4, 4, 2),
    ("OMMA", "168128", "SF"): (4, 4, 4, 4, 2),
}

# ldmatrix: the count of matrices is the destination's width (twice that for the 16x16
# matrices of 8-bit elements, `.MT1616`: two registers each).
LDSM_COUNT = {"2": 2, "4": 4}


def wide_operands(ins: Instruction) -> list[tuple[str, Reg, int]]:
    """(where, register, width) of each operand that must be a pair or quad; `where` is
    `operand N` or `address of operand N`."""
    ops = ins.operands
    out: list[tuple[str, Reg, int]] = []

    def at(pos: int, width: int) -> None:
        if (-len(ops) <= pos < len(ops) and width > 1 and isinstance(ops[pos], Reg)
                and ops[pos].file in ("R", "UR")):
            out.append((f"operand {pos % len(ops)}", ops[pos], width))

    mods = ins.modifiers
    for i, op in enumerate(ops):
        if isinstance(op, Mem) and op.base is not None and (
                "64" in op.base.suffix or op.base.file == "R" and not op.base.suffix
                and ins.opcode in E_ADDRESS and "E" in mods):
            out.append((f"address of operand {i}", op.base, 2))
    if ins.opcode in MEMORY:
        width = max((ACCESS_WIDTH[m] for m in mods if m in ACCESS_WIDTH), default=1)
        if "256" in mods and ops and isinstance(ops[-1], Imm):
            width = 1       # a word-masked 256-bit load packs each quad's words (ops_memory)
        for i in range(len(ops)):
            at(i, width)
    elif ins.opcode in FP64:
        for i in range(len(ops)):
            at(i, 2)
    elif ins.opcode == "F2F":
        types = [m for m in mods if m[:1] in "FSU" and m[1:].isdigit()]
        for pos, t in zip((0, -1), types):
            at(pos, 2 if t == "F64" else 1)
    elif ins.opcode in CONVERSION:
        for m in mods:
            for pos in CONVERSION[ins.opcode].get(m, ()):
                at(pos, 2)
    elif ins.opcode in ("HMMA", "IMMA", "DMMA", "QMMA", "BMMA", "OMMA"):
        shape = next((m for m in mods if m.isdigit() or m == "8x8x4"), None)
        kind = "TF32" if "TF32" in mods else next((m for m in mods if m in ("F32", "F16")), None)
        table = SPARSE_MMA if "SP" in mods else MMA
        if ins.opcode == "IMMA":
            kind = "I4" if ("S4" in mods or "U4" in mods) and shape != "8832" else None
        if "SP" in mods and "SF" in mods:
            kind = "SF"
        widths = table.get((ins.opcode, shape, kind if ins.opcode in ("HMMA", "QMMA", "IMMA", "OMMA") else None))
        for pos, width in enumerate(widths or ()):
            at(pos, width)
    elif ins.opcode == "LDSM":
        at(0, max((LDSM_COUNT[m] for m in mods if m in LDSM_COUNT), default=1)
           * (2 if "MT1616" in mods else 1))
    if "WIDE" in mods:       # IMAD.WIDE / UIMAD.WIDE: the 64-bit result (the first
        # register) and addend (the last operand before any carry-in predicate)
        regs = [i for i, op in enumerate(ops) if isinstance(op, Reg) and op.file in ("R", "UR")]
        last = len(ops) - 1
        while last > 0 and isinstance(ops[last], Reg) and ops[last].file in ("P", "UP"):
            last -= 1
        if regs:
            at(regs[0], 2)
            at(last, 2)
    return out


def misaligned(ins: Instruction) -> str | None:
    """Why `ins` names a pair or quad at a register it cannot start at, or None."""
    for where, reg, width in wide_operands(ins):
        if not reg.is_zero and reg.index % width:
            kind = "pair" if width == 2 else "quad"
            return (f"{where} {reg.file}{reg.index} is a register {kind} ({32 * width}-bit) "
                    f"and must start at a multiple of {width}")
    return None
