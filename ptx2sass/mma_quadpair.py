"""`mma.sync.aligned.m8n8k4` with f16 inputs on targets without an 8x8x4 tensor-core tile
(sm_80+; `Target.quadpair_mma_shuffled`), rewritten before selection as f32 arithmetic on
fragments gathered with `shfl.sync.idx`, the instruction's semantics as the PTX ISA defines them.

The warp computes four independent 8x8x4 products, one per quad-pair (lanes 4q..4q+3, the
low group, and 16+4q..16+4q+3, the high group); the manual's fragment layouts, lane l,
hi = l >= 16, element i:
  A row: A[l%4 + 4hi][i]          A col: A[i + 4hi][l%4]
  B row: B[l%4][i + 4hi]          B col: B[i][l%4 + 4hi]
  C/D f16: C[l%4 + 4hi][i]        C/D f32: C[x + 4hi][(i&4) + (l&2) + (i&1)], x = (l&1) + (i&2)
Each lane computes its own D elements; the A row and B column each needs are fetched from
the lane of the quad-pair holding them (`Fetch`: lane = (laneid & mask) + offset, the
register and half static or chosen by a bit of the lane id).

The arithmetic is ptxas 13.5's (sm_80/89/90), bit for bit, products and sums in f32:
  f16 D: d = f16((c + fma(a1, b1, a0*b0)) + fma(a3, b3, a2*b2))
  f32 D: s = fma(a0, b0, +0); s = fma(ak, bk, s) for k = 1..3; d = c + s
(the manual leaves the order of the sums open; tests/test_codegen_mma_quadpair.py checks
both against a NumPy model of the manual with exact inputs, and ours = ptxas's bit for bit
on random ones)."""
from __future__ import annotations

from dataclasses import dataclass

from ptx2sass import ir


@dataclass(frozen=True)
class Fetch:
    """Where a lane finds one f16 element: in lane (laneid & mask) + offset (mask None: its
    own registers), register `reg` (+1 where lane-id bit `reg_bit` is set), half `half` (or
    the high half where lane-id bit `half_bit` is set)."""
    mask: int | None
    offset: int
    reg: int
    half: int = 0
    reg_bit: int = 0
    half_bit: int = 0


def _a_fetch(layout: str, f32_d: bool, i: int, k: int) -> Fetch:
    """A[m][k] for D element i of this lane (m: its row, from the D layout)."""
    if layout == "row":         # a lane holds a row: the row's lane, element k
        if not f32_d:
            return Fetch(None, 0, k // 2, k % 2)
        return Fetch(0x1d, i & 2, k // 2, k % 2)
    # col: the lane of column k in the row's group holds rows 0..3 (+4): element m % 4
    if not f32_d:
        return Fetch(0x1c, k, 0, 0, reg_bit=2, half_bit=1)
    return Fetch(0x1c, k, (i & 2) >> 1, 0, half_bit=1)


def _b_fetch(layout: str, f32_d: bool, i: int, k: int) -> Fetch:
    """B[k][n] for D element i of this lane (n: its column)."""
    high = 16 * (i >> 2 & 1) if f32_d else 16 * (i >= 4)
    if layout == "col":         # a lane holds a column: the column's lane, element k
        if not f32_d:
            return Fetch(0x0c, i % 4 + high, k // 2, k % 2)
        return Fetch(0x0e, (i & 1) + high, k // 2, k % 2)
    # row: the lane of row k in the column's group holds columns 0..3 (+4): element n % 4
    if not f32_d:
        return Fetch(0x0c, k + high, (i % 4) // 2, i % 2)
    return Fetch(0x0c, k + high, 0, i & 1, reg_bit=2)


def _c_fetch(f32_c: bool, f32_d: bool, i: int) -> Fetch | None:
    """C[m][n] for D element i (None: the lane's own f32 register i)."""
    if f32_c == f32_d:
        return None if f32_c else Fetch(None, 0, i // 2, i % 2)
    # f16 C under an f32 D: C's row m lives in lane (laneid & 0x1d) + (i & 2), element n
    return Fetch(0x1d, i & 2, (i & 4) >> 1, i & 1, reg_bit=2)


def lowers(ins: ir.Instr, arch) -> bool:
    return ins.opcode == "mma" and arch.quadpair_mma_shuffled \
        and "m8n8k4" in ins.modifiers and tuple(ins.types[:2]) == ("f16", "f16") \
        and ins.type in ("f16", "f32") and len(ins.types) == 3 and ins.types[2] in ("f16", "f32") \
        and len(ins.dests) == (4 if ins.type == "f16" else 8) \
        and len(ins.srcs) == 4 + (4 if ins.types[2] == "f16" else 8) \
        and not (ins.types[2] == "f32" and ins.type == "f16")


def lower_quadpair_mma(fn: ir.Function, arch) -> None:
    """Rewrite, in place, every f16 m8n8k4 mma of `fn` for a target without the tile."""
    for block in fn.blocks:
        if not any(lowers(i, arch) for i in block.instrs):
            continue
        out: list[ir.Instr] = []
        for ins in block.instrs:
            if lowers(ins, arch):
                _Quadpair(fn, ins, out).run()
            else:
                out.append(ins)
        block.instrs = out


class _Quadpair:
    def __init__(self, fn: ir.Function, ins: ir.Instr, out: list):
        self.fn, self.ins, self.out = fn, ins, out
        self.cache: dict = {}

    def op(self, opcode, srcs, type_="b32", modifiers=(), dest_type="b32", types=()) -> ir.Value:
        d = self.fn.new_value(dest_type)
        self.out.append(ir.Instr(opcode, [d], list(srcs), tuple(modifiers), type_, tuple(types),
                                 line=self.ins.line))
        return d

    def once(self, key, make):
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]

    def laneid(self) -> ir.Value:
        return self.once("laneid", lambda: self.op("mov", [ir.SpecialReg("%laneid", "u32")], "u32",
                                                   dest_type="u32"))

    def lane_bit(self, bit: int) -> ir.Value:
        """A predicate: lane-id bit `bit` (a mask) is set."""
        def make():
            masked = self.op("and", [self.laneid(), ir.Const(bit, "b32")])
            return self.op("setp", [masked, ir.Const(0, "u32")], "u32", ("ne",), "pred")
        return self.once(("bit", bit), make)

    def lane(self, mask: int, offset: int) -> ir.Value:
        def make():
            base = self.once(("mask", mask), lambda: self.op("and", [self.laneid(), ir.Const(mask, "b32")]))
            return base if not offset else self.op("add", [base, ir.Const(offset, "u32")], "u32")
        return self.once(("lane", mask, offset), make)

    def word(self, regs, f: Fetch, reg: int) -> ir.Value:
        """Register `reg` of `regs` as lane f's, shuffled where it is another lane's."""
        if f.mask is None:
            return regs[reg]
        return self.once(("shfl", regs[reg].id, f.mask, f.offset), lambda: self.op(
            "shfl", [regs[reg], self.lane(f.mask, f.offset), ir.Const(31, "b32"),
                     ir.Const(0xFFFFFFFF, "b32")], modifiers=("sync", "idx")))

    def element(self, regs, f: Fetch) -> ir.Value:
        """The f16 element `f` names, as f32 (exact)."""
        def make():
            w = self.word(regs, f, f.reg)
            if f.reg_bit:
                w = self.op("selp", [self.word(regs, f, f.reg + 1), w, self.lane_bit(f.reg_bit)])
            if f.half_bit:
                high = self.op("shr", [w, ir.Const(16, "u32")], "u32")
                w = self.op("selp", [high, w, self.lane_bit(f.half_bit)])
            elif f.half:
                w = self.op("shr", [w, ir.Const(16, "u32")], "u32")
            h = self.op("cvt", [w], "u16", types=("u32",), dest_type="b16")
            return self.op("cvt", [h], "f32", types=("f16",), dest_type="f32")
        key = ("elem", tuple(r.id for r in regs), f)
        return self.once(key, make)

    def f32(self, opcode, srcs) -> ir.Value:
        return self.op(opcode, srcs, "f32", ("rn",), "f32")

    def run(self) -> None:
        ins = self.ins
        al, bl = [m for m in ins.modifiers if m in ("row", "col")]
        f32_d, f32_c = ins.type == "f32", ins.types[2] == "f32"
        a, b, c = ins.srcs[:2], ins.srcs[2:4], ins.srcs[4:]
        zero = ir.Const(0, "f32")
        d = []
        for i in range(8):
            ak = [self.element(a, _a_fetch(al, f32_d, i, k)) for k in range(4)]
            bk = [self.element(b, _b_fetch(bl, f32_d, i, k)) for k in range(4)]
            cf = _c_fetch(f32_c, f32_d, i)
            ci = c[i] if cf is None else self.element(c, cf)
            if f32_d:
                s = self.f32("fma", [ak[0], bk[0], zero])
                for k in (1, 2, 3):
                    s = self.f32("fma", [ak[k], bk[k], s])
                d.append(self.f32("add", [ci, s]))
            else:
                low = self.f32("fma", [ak[1], bk[1], self.f32("mul", [ak[0], bk[0]])])
                high = self.f32("fma", [ak[3], bk[3], self.f32("mul", [ak[2], bk[2]])])
                d.append(self.f32("add", [self.f32("add", [ci, low]), high]))
        # a guard applies to D's writes alone: every lane still takes part in the shuffles
        # (`.aligned`: the warp executes the mma together), lanes where it is false keep D
        for j, dest in enumerate(ins.dests):
            write = ir.Instr("mov", [dest], [d[j]], (), "b32", line=ins.line) if f32_d else \
                ir.Instr("cvt", [dest], [d[2 * j + 1], d[2 * j]], ("rn",), "f16x2", ("f32",), line=ins.line)
            if ins.guard is not None:
                write.guard, write.guard_negated = ins.guard, ins.guard_negated
                write.merge = [ins.merge[j]] if ins.merge else []
            self.out.append(write)
