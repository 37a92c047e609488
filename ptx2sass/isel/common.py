"""Registers, tables and type helpers shared by the instruction-selection modules."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Reg

RZ = Reg("R", 255)
PT = Reg("P", 7)
NOT_PT = Reg("P", 7, inv=True)
UR4 = Reg("UR", 4)
URZ = Reg("UR", 255)     # the model's URZ on every family (encoder/model.py)

# PTX comparison → (SASS comparison, unsigned?) for integer setp.
INT_COMPARE = {"eq": ("EQ", None), "ne": ("NE", None), "lt": ("LT", None), "le": ("LE", None),
               "gt": ("GT", None), "ge": ("GE", None),
               "lo": ("LT", True), "ls": ("LE", True), "hi": ("GT", True), "hs": ("GE", True)}
FLOAT_COMPARE = {c: c.upper() for c in ("eq", "ne", "lt", "le", "gt", "ge", "equ", "neu", "ltu",
                                        "leu", "gtu", "geu", "num", "nan")}
BOOL_OPS = {"and": "AND", "or": "OR", "xor": "XOR"}
# Truth tables of LOP3 over (a, b, c) = (0xF0, 0xCC, 0xAA).
LUT = {"and": 0xC0, "or": 0xFC, "xor": 0x3C}
ROUNDING = {"rn": None, "rz": "RZ", "rm": "RM", "rp": "RP"}
FRND_MODE = {"rni": None, "rzi": "TRUNC", "rmi": "FLOOR", "rpi": "CEIL"}
F2I_MODE = {"rni": None, "rzi": "TRUNC", "rmi": "FLOOR", "rpi": "CEIL", None: "TRUNC"}

# Special registers read with S2R, and those ptxas reads from constant bank 0.
S2R_NAMES = {"%tid.x": "SR_TID.X", "%tid.y": "SR_TID.Y", "%tid.z": "SR_TID.Z",
             "%ctaid.x": "SR_CTAID.X", "%ctaid.y": "SR_CTAID.Y", "%ctaid.z": "SR_CTAID.Z",
             "%laneid": "SR_LANEID",
             "%lanemask_eq": "SR_EQMASK", "%lanemask_lt": "SR_LTMASK", "%lanemask_le": "SR_LEMASK",
             "%lanemask_gt": "SR_GTMASK", "%lanemask_ge": "SR_GEMASK"}
# (offsets from Target.block_dims_cbank's %ntid.x / %nctaid.x word)
CBANK_SPECIALS = {"%ntid.x": (0, 0x0), "%ntid.y": (0, 0x4), "%ntid.z": (0, 0x8),
                  "%nctaid.x": (1, 0x0), "%nctaid.y": (1, 0x4), "%nctaid.z": (1, 0x8)}

# Memory access width/sign → the size modifier of LD*/ST*.
def _size_modifier(ty: str, load: bool) -> tuple[str, ...]:
    kind, bits = ir.TYPES[ty]
    if bits == 8:
        return ("S8",) if load and kind == "s" else ("U8",)
    if bits == 16:
        return ("S16",) if load and kind == "s" else ("U16",)
    return {32: (), 64: ("64",), 128: ("128",)}[bits]


def _bits(ty: str) -> int:
    return ir.TYPES[ty][1]


def _signed(ty: str) -> bool:
    return ir.TYPES[ty][0] == "s"


def _is_float(ty: str) -> bool:
    return ir.TYPES[ty][0] == "f"


def sources_unchanged(instrs: list, i: int, j: int, inner) -> bool:
    """No instruction strictly between positions i and j writes a register `inner` (at i)
    reads: the machine-IR folds' test that moving inner's reads to j keeps their values."""
    from ptx2sass.mir import register_operands
    srcs = {op.reg.id for _, op, is_def in register_operands(inner) if not is_def}
    for ins in instrs[i + 1:j]:
        for _, op, is_def in register_operands(ins):
            if is_def and op.reg.id in srcs:
                return False
    return True


def register_counts(mf) -> tuple[dict[int, int], dict[int, int]]:
    """(reads, writes): how many operands read and write each virtual register of `mf`; the
    machine-IR folds use them to tell a single-use, single-definition value."""
    from ptx2sass.mir import register_operands
    reads: dict[int, int] = {}
    writes: dict[int, int] = {}
    for b in mf.blocks:
        for ins in b.instrs:
            for _, op, is_def in register_operands(ins):
                table = writes if is_def else reads
                table[op.reg.id] = table.get(op.reg.id, 0) + 1
    return reads, writes
