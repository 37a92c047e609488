"""`mma` forms a target's tensor cores lack, rewritten before selection as the ones it has
(as its ptxas does): sub-byte operands on sm_90 and later, k = 16 and m = 16 shapes on sm_75.

s4/u4: a 32-bit A or B register holds 8 nibbles of consecutive k; the low four widen to the
bytes of one s8/u8 register and the high four to another (sign- or zero-extended), and the
product is two s8/u8 mmas of half the k. Which byte of the 8-bit fragment a nibble lands in
permutes k, but A and B are permuted alike, so each dot product is unchanged. Per shape (PTX
ISA fragment layouts, lane = 4g + t; ptxas 13.5 splits the same way on sm_90):
  m8n8k32  -> 2 x m8n8k16:  A [lo a0] / [hi a0],                 B [lo b0] / [hi b0]
  m16n8k32 -> 2 x m16n8k16: A [lo a0, lo a1] / [hi a0, hi a1],   B [lo b0] / [hi b0]
  m16n8k64 -> 2 x m16n8k32: A [lo a0, lo a1, hi a0, hi a1] / the same of a2, a3,
                            B [lo b0, hi b0] / [lo b1, hi b1]
The second mma accumulates onto the first; with `.satfinite` both start from 0 (their sum is
exact: at most 64 products of 8 x 15) and C joins with one saturating add per element, so
the result is C + A·B clamped once, as the instruction defines it.

b1 `.xor.popc` where only `.and.popc` exists: popc(a ^ b) = popc(a & ~b) + popc(~a & b), two
and-popc mmas, the second accumulating onto the first.

b1 `.and.popc` where the target has no binary mma at all (sm_100/120: `binary_mma_ops` empty;
`.xor` first becomes two of them as above): bit planes on the u8 m16n8k32 mma. Plane p of a
word is the bytes (w >> p) & 0x01010101, each 0 or 1, so a u8 product of planes is the AND of
bits and the mma's sum over k their popc. The fragments pair A's and B's words of the same k
(PTX ISA: A a0/a1 rows g/g+8 and B b0 hold k 32t..32t+31, a2/a3 and b1 k 128 + that), so one
m16n8k32 takes planes p (A registers 0-1, B 0) and p + 4 (A 2-3, B 1) of those words and the
four with p = 0..3 cover their 32 bits: m16n8k128 is 4 of them accumulating, m16n8k256 8,
m8n8k128 4 with A's rows g + 8 a copy of row g and D's upper half left unread (ptxas 13.5
computes the same sum with MOVM.U4TO8 nibble planes).

m8n8k16 s8/u8 where the target has no 8x8 integer tile (sm_100/120): the m16n8k16 mma
whose upper eight rows are the same A row block and whose C's upper half is 0; D's first two
registers are the 8x8 result (ptxas 13.5 does the same).

Sparse e4m3/e5m2 m16n8k64 where the target has no fp8 tensor core (sm_90/100, `fp8_mma`
False), as its ptxas computes it: two f16 sparse m16n8k32 mmas (the fp8 values widened,
exactly) from zero, then C added per element. Lane = 4g + t; the first mma takes the low
halves of A's four registers (compressed columns 4t, 4t+1 and 16+4t, 16+4t+1 of rows g,
g+8: the even chunks of k, k = 8j..8j+3), the second the high halves (k = 8j+4..8j+7), so A
stays in place. B's f16 fragment in mma h wants rows 8r + 2t + e, i.e. fp8 rows
16r + 8(t // 2) + 4h + 2(t % 2) + e: half t % 2 of register r of lane 4g + 2(t // 2) + h, its
own or its neighbour's (one shfl.bfly per register). The metadata: the fp8 form's thread j of
the quad holds register j's indices (16 two-bit fields, field 4t + byte); the f16 form's
selector-h threads 2h, 2h + 1 hold those of registers 0-1 and 2-3 (field 2t + element, the
first register in bits 0-15), so lane thread T takes nibbles h, h + 2, h + 4, h + 6 (h = T // 2)
of the words of threads 2(T % 2) and 2(T % 2) + 1. The sums are ptxas's: the same products in
each HMMA, C last (FADD).

sm_75 (no k = 16 HMMA, no m16n8 IMMA; these come from wmma's lowering): f16 m16n8k16 as two
m16n8k8 (A registers 0-1 and B register 0 first, then A 2-3 and B 1 onto that: the fragments
of k 0-7 and 8-15), s8/u8 m16n8k16 as two m8n8k16 (A register 0 with C/D registers 0-1, A
register 1 with 2-3: rows g and g + 8).
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.isel.mma import shape_of as _shape

NIBBLE_TYPES = {"s4": "s8", "u4": "u8"}
# s4/u4 shape -> (the 8-bit shape of each half, registers in A, in B, in C/D)
HALVES = {"m8n8k32": ("m8n8k16", 1, 1, 2), "m16n8k32": ("m16n8k16", 2, 1, 4),
          "m16n8k64": ("m16n8k32", 4, 2, 4)}
# sparse s4/u4 shape -> (the s8/u8 sparse shape of each half, registers in A and in B). A
# pair of nibbles (k = 2p, 2p + 1) is the unit the metadata names (PTX ISA: pair-wise 4:8
# sparsity); the first nibbles of the pairs are the 8-bit mma's k = p, and so are the second:
# two s8/u8 mma.sp of the same metadata and selector, the even nibbles of A's and B's words
# then the odd ones, each fragment's register keeping its place (lane = 4g + t: A's compressed
# columns 8t..8t+7 become 4t..4t+3, B's rows 8t..8t+7 rows 4t..4t+3, per register).
SPARSE_HALVES = {"m16n8k64": ("m16n8k32", 2), "m16n8k128": ("m16n8k64", 4)}
# b1 shape -> registers in A, in B, in C/D
B1_WORDS = {"m8n8k128": (1, 1, 2), "m16n8k128": (2, 1, 4), "m16n8k256": (4, 2, 4)}


def nibble_types(ins: ir.Instr) -> list[str]:
    """The A and B types of an s4/u4 mma (modifiers in the frontend's parse), else []."""
    return [m for m in ins.modifiers if m in NIBBLE_TYPES]


def lowers_sparse(ins: ir.Instr, arch) -> bool:
    """Whether `lower_mma_forms` rewrites this sparse s4/u4 `mma.sp` for `arch` (see
    SPARSE_HALVES)."""
    return ins.opcode == "mma" and ins.guard is None and arch.sparse_mma \
        and not arch.sparse_4bit_mma and any(m.startswith("sp") for m in ins.modifiers) \
        and not any(m.startswith("kind::") for m in ins.modifiers) \
        and "row" in ins.modifiers and "col" in ins.modifiers and len(nibble_types(ins)) == 2 \
        and _shape(ins) in SPARSE_HALVES and ins.type == "s32" and tuple(ins.types) == ("s32",) \
        and isinstance(ins.srcs[-1], ir.Const) \
        and _counts_fit(ins, SPARSE_HALVES[_shape(ins)][1], SPARSE_HALVES[_shape(ins)][1], 4 + 2)


FP8_TYPES = ("e4m3", "e5m2")
# fn.attributes key: EIATTR_SPARSE_MMA_MASK bits of the sparse mmas rewritten here beyond
# those of the SASS they become: ptxas 13.5.37 writes 0x18 (HMMA.SP's 0x10 and QMMA.SP's
# 0x08) for the widened sparse fp8 on sm_90/100, whose code has HMMA.SP only
SPARSE_MMA_SOURCE_BITS = "sparse_mma_source_bits"
SPARSE_FP8_BIT = 0x08


def lowers_sparse_fp8(ins: ir.Instr, arch) -> bool:
    """Whether `lower_mma_forms` rewrites this sparse e4m3/e5m2 `mma.sp` as two f16 ones."""
    return ins.opcode == "mma" and ins.guard is None and arch.sparse_mma and not arch.fp8_mma \
        and any(m.startswith("sp") for m in ins.modifiers) \
        and not any(m.startswith("kind::") for m in ins.modifiers) \
        and "row" in ins.modifiers and "col" in ins.modifiers and _shape(ins) == "m16n8k64" \
        and ins.type == "f32" and len(ins.types) == 3 and ins.types[0] in FP8_TYPES \
        and ins.types[1] in FP8_TYPES and ins.types[2] == "f32" \
        and isinstance(ins.srcs[-1], ir.Const) and ins.srcs[-1].value == 0 \
        and _counts_fit(ins, 4, 4, 4 + 2)


def lowers(ins: ir.Instr, arch) -> bool:
    """Whether `lower_mma_forms` rewrites this dense `mma` for `arch`."""
    if lowers_sparse(ins, arch) or lowers_sparse_fp8(ins, arch):
        return True
    if ins.opcode != "mma" or ins.guard is not None or any(m.startswith("sp") for m in ins.modifiers) \
            or "row" not in ins.modifiers or "col" not in ins.modifiers:
        return False
    shape = _shape(ins)
    if len(nibble_types(ins)) == 2:
        return arch.mma_k16 and not arch.mma_8x8_tiles and shape in HALVES and ins.type == "s32" \
            and _counts_fit(ins, *HALVES[shape][1:])
    if "b1" in ins.modifiers:
        op = next((m for m in ins.modifiers if m in ("xor", "and")), None)
        return op is not None and "popc" in ins.modifiers and arch.mma_k16 \
            and op not in arch.binary_mma_ops and shape in B1_WORDS \
            and (op == "xor" or not arch.binary_mma_ops) and _counts_fit(ins, *B1_WORDS[shape])
    bytes_ = tuple(ins.types[:2]) in {(a, b) for a in ("s8", "u8") for b in ("s8", "u8")}
    if shape == "m8n8k16" and ins.type == "s32" and not arch.integer_mma_8x8:
        return bytes_ and _counts_fit(ins, 1, 1, 2)
    if shape == "m16n8k16" and not arch.mma_k16:
        if ins.type == "s32":
            return bytes_ and arch.integer_mma_8x8 and _counts_fit(ins, 2, 1, 4)
        return ins.types[:2] == ("f16", "f16") and _counts_fit(ins, 4, 2, 4 if ins.type == "f32" else 2)
    return False


def available(arch, modifiers) -> bool:
    """Whether an s4/u4 or b1 mma with `modifiers` is generated for `arch` by this lowering."""
    if not arch.mma_k16 or arch.mma_8x8_tiles:
        return False
    if "b1" in modifiers:
        return ("xor" in modifiers and "and" in arch.binary_mma_ops) or not arch.binary_mma_ops
    return len([m for m in modifiers if m in NIBBLE_TYPES]) == 2


def _counts_fit(ins, n_a, n_b, n_c) -> bool:
    """`n_c` counts C's registers and, for a sparse mma, the metadata and selector after
    them (D has four registers then)."""
    return len(ins.dests) == min(n_c, 4) and len(ins.srcs) == n_a + n_b + n_c


def lower_mma_forms(fn: ir.Function, arch) -> None:
    """Rewrite, in place, every mma of `fn` that `arch`'s tensor cores cannot take as written."""
    for block in fn.blocks:
        if not any(i.opcode == "mma" for i in block.instrs):
            continue
        out: list[ir.Instr] = []
        for ins in block.instrs:
            _Lowering(fn, ins, out, arch).run()
        block.instrs = out


class _Lowering:
    def __init__(self, fn: ir.Function, ins: ir.Instr, out: list, arch):
        self.fn, self.ins, self.out, self.arch = fn, ins, out, arch

    def run(self) -> None:
        ins = self.ins
        if not lowers(ins, self.arch):
            self.out.append(ins)
        elif lowers_sparse(ins, self.arch):
            self.sparse_nibbles()
        elif lowers_sparse_fp8(ins, self.arch):
            self.sparse_fp8()
        elif len(nibble_types(ins)) == 2:
            self.nibbles()
        elif "b1" in ins.modifiers and "xor" in ins.modifiers:
            self.xor_as_ands()
        elif "b1" in ins.modifiers:
            self.bit_planes()
        elif _shape(ins) == "m8n8k16":
            self.tile_as_16_rows()
        elif ins.type == "s32":
            self.rows_as_tiles()
        else:
            self.k16_as_k8()

    # ---- helpers ------------------------------------------------------------------------
    def op(self, opcode, srcs, type_="b32", modifiers=(), dest_type="b32") -> ir.Value:
        d = self.fn.new_value(dest_type)
        self.out.append(ir.Instr(opcode, [d], list(srcs), tuple(modifiers), type_, line=self.ins.line))
        return d

    def const(self, value: int, ty: str = "b32") -> ir.Const:
        return ir.Const(value, ty)

    def zero(self) -> ir.Value:
        return self.op("mov", [self.const(0)])

    def mma(self, dests, srcs, shape, types, modifiers=()) -> None:
        """An mma of `shape` (lowered again where the target needs it: m8n8k16 on sm_100/120)."""
        mods = ("sync", "aligned", shape, "row", "col") + tuple(modifiers)
        _Lowering(self.fn, ir.Instr("mma", list(dests), list(srcs), mods, "s32", tuple(types),
                                    line=self.ins.line), self.out, self.arch).run()

    def widen(self, word, high: bool, signed: bool) -> ir.Value:
        """Nibbles 0-3 (or 4-7) of `word` as the four bytes of a register, extended."""
        u = self.op("shr", [word, self.const(16, "u32")], "u32") if high \
            else self.op("and", [word, self.const(0xFFFF)])
        u = self.op("and", [self.op("or", [u, self.op("shl", [u, self.const(8, "u32")])]),
                            self.const(0x00FF00FF)])
        u = self.op("and", [self.op("or", [u, self.op("shl", [u, self.const(4, "u32")])]),
                            self.const(0x0F0F0F0F)])
        if not signed:
            return u
        # a nibble's sign bit (bit 3 of its byte) times 30 sets bits 4-7 of that byte only
        signs = self.op("and", [u, self.const(0x08080808)])
        return self.op("or", [u, self.op("mul", [signs, self.const(30, "u32")], "u32", ("lo",))])

    # ---- s4/u4 --------------------------------------------------------------------------
    def nibbles(self) -> None:
        ins = self.ins
        shape = _shape(ins)
        half_shape, n_a, n_b, n_c = HALVES[shape]
        ta, tb = nibble_types(ins)
        srcs = list(ins.srcs)
        a, b, c = srcs[:n_a], srcs[n_a:n_a + n_b], srcs[n_a + n_b:]
        lo_a = [self.widen(w, False, ta == "s4") for w in a]
        hi_a = [self.widen(w, True, ta == "s4") for w in a]
        lo_b = [self.widen(w, False, tb == "s4") for w in b]
        hi_b = [self.widen(w, True, tb == "s4") for w in b]
        if shape == "m16n8k64":
            parts = [([lo_a[0], lo_a[1], hi_a[0], hi_a[1]], [lo_b[0], hi_b[0]]),
                     ([lo_a[2], lo_a[3], hi_a[2], hi_a[3]], [lo_b[1], hi_b[1]])]
        else:
            parts = [(lo_a, lo_b), (hi_a, hi_b)]
        types = (NIBBLE_TYPES[ta], NIBBLE_TYPES[tb], "s32")
        saturate = "satfinite" in ins.modifiers
        acc = [self.zero() for _ in range(n_c)] if saturate else c
        first = [self.fn.new_value("s32") for _ in range(n_c)]
        self.mma(first, parts[0][0] + parts[0][1] + acc, half_shape, types)
        if not saturate:
            self.mma(ins.dests, parts[1][0] + parts[1][1] + first, half_shape, types)
            return
        product = [self.fn.new_value("s32") for _ in range(n_c)]
        self.mma(product, parts[1][0] + parts[1][1] + first, half_shape, types)
        for d, ck, pk in zip(ins.dests, c, product):
            self.out.append(ir.Instr("add", [d], [ck, pk], ("sat",), "s32", line=ins.line))

    # ---- sparse s4/u4 -------------------------------------------------------------------
    def pair_half(self, word, second: bool, signed: bool) -> ir.Value:
        """The even (or odd) nibbles of `word`, the first (second) of each k pair, as the four
        bytes of a register, extended."""
        u = self.op("shr", [word, self.const(4, "u32")], "u32") if second else word
        u = self.op("and", [u, self.const(0x0F0F0F0F)])
        if not signed:
            return u
        signs = self.op("and", [u, self.const(0x08080808)])
        return self.op("or", [u, self.op("mul", [signs, self.const(30, "u32")], "u32", ("lo",))])

    def sparse_nibbles(self) -> None:
        ins = self.ins
        half_shape, n = SPARSE_HALVES[_shape(ins)]
        ta, tb = nibble_types(ins)
        srcs = list(ins.srcs)
        a, b, c, meta, selector = srcs[:n], srcs[n:2 * n], srcs[2 * n:2 * n + 4], srcs[-2], srcs[-1]
        types = (NIBBLE_TYPES[ta], NIBBLE_TYPES[tb], "s32")
        mods = (next(m for m in ins.modifiers if m.startswith("sp")), "sync", "aligned", half_shape,
                "row", "col")
        saturate = "satfinite" in ins.modifiers
        acc = [self.zero() for _ in range(4)] if saturate else c
        first = [self.fn.new_value("s32") for _ in range(4)]
        last = [self.fn.new_value("s32") for _ in range(4)] if saturate else list(ins.dests)
        for second, dests, accumulate in ((False, first, acc), (True, last, first)):
            halves = [self.pair_half(w, second, ta == "s4") for w in a] + \
                [self.pair_half(w, second, tb == "s4") for w in b]
            self.out.append(ir.Instr("mma", list(dests), halves + list(accumulate) + [meta, selector],
                                     mods, "s32", types, line=ins.line))
        if saturate:
            for d, ck, pk in zip(ins.dests, c, last):
                self.out.append(ir.Instr("add", [d], [ck, pk], ("sat",), "s32", line=ins.line))

    # ---- sparse e4m3/e5m2 as f16 ------------------------------------------------------
    def lane_id(self) -> ir.Value:
        return self.op("mov", [ir.SpecialReg("%laneid", "u32")], "u32", dest_type="u32")

    def to_f16x2(self, word: ir.Value, fmt: str) -> ir.Value:
        """The two fp8 values in the low 16 bits of `word` as an f16x2 register (exact)."""
        h = self.fn.new_value("b16")
        self.out.append(ir.Instr("cvt", [h], [word], (), "u16", ("u32",), line=self.ins.line))
        d = self.fn.new_value("b32")
        self.out.append(ir.Instr("cvt", [d], [h], ("rn",), "f16x2", (fmt + "x2",), line=self.ins.line))
        return d

    def sparse_fp8(self) -> None:
        ins = self.ins
        attrs = self.fn.attributes
        attrs[SPARSE_MMA_SOURCE_BITS] = attrs.get(SPARSE_MMA_SOURCE_BITS, 0) | SPARSE_FP8_BIT
        srcs = list(ins.srcs)
        a, b, c, meta = srcs[:4], srcs[4:8], srcs[8:12], srcs[12]
        ta, tb = ins.types[0], ins.types[1]
        lane = self.lane_id()
        odd = self.op("setp", [self.op("and", [lane, self.const(1)]), self.const(0, "u32")], "u32",
                      ("ne",), "pred")
        high = lambda w: self.op("shr", [w, self.const(16, "u32")], "u32")
        # A: the low (mma 0) or high (mma 1) half of each register, in place
        a16 = [[self.to_f16x2(w if h == 0 else high(w), ta) for w in a] for h in range(2)]
        # B: mma 0 takes the even lane's low half, mma 1 the odd lane's high half (each lane
        # pair's own register or its neighbour's)
        b16 = [[], []]
        for w in b:
            other = self.op("shfl", [w, self.const(1), self.const(0x1F), self.const(0xFFFFFFFF)],
                            modifiers=("sync", "bfly"))
            first = self.op("selp", [high(other), w, odd])
            second = self.op("selp", [high(w), other, odd])
            b16[0].append(self.to_f16x2(first, tb))
            b16[1].append(self.to_f16x2(second, tb))
        # metadata: nibbles h, h + 2, h + 4, h + 6 of the quad's threads 2(t % 2), 2(t % 2) + 1
        t = self.op("and", [lane, self.const(3)])
        base = self.op("add", [self.op("and", [lane, self.const(0x1C)]),
                               self.op("shl", [self.op("and", [t, self.const(1)]), self.const(1, "u32")], "u32")],
                       "u32")
        shift = self.op("shl", [self.op("and", [t, self.const(2)]), self.const(1, "u32")], "u32")
        words = []
        for k in range(2):
            src = base if k == 0 else self.op("add", [base, self.const(1, "u32")], "u32")
            w = self.op("shfl", [meta, src, self.const(0x1F), self.const(0xFFFFFFFF)],
                        modifiers=("sync", "idx"))
            x = self.op("and", [self.op("shr", [w, shift], "u32"), self.const(0x0F0F0F0F)])
            x = self.op("and", [self.op("or", [x, self.op("shr", [x, self.const(4, "u32")], "u32")]),
                                self.const(0x00FF00FF)])
            x = self.op("and", [self.op("or", [x, self.op("shr", [x, self.const(8, "u32")], "u32")]),
                                self.const(0xFFFF)])
            words.append(x)
        meta16 = self.op("or", [words[0], self.op("shl", [words[1], self.const(16, "u32")], "u32")])
        mods = (next(m for m in ins.modifiers if m.startswith("sp")), "sync", "aligned", "m16n8k32",
                "row", "col")
        zero = ir.Const(0, "f32")
        acc = [zero] * 4
        for h in range(2):
            dests = [self.fn.new_value("f32") for _ in range(4)]
            self.out.append(ir.Instr("mma", dests, a16[h] + b16[h] + acc + [meta16, self.const(h)],
                                     mods, "f32", ("f16", "f16", "f32"), line=ins.line))
            acc = dests
        for d, ck, pk in zip(ins.dests, c, acc):
            self.out.append(ir.Instr("add", [d], [ck, pk], ("rn",), "f32", line=ins.line))

    # ---- b1 xor -------------------------------------------------------------------------
    def b1_operands(self) -> tuple[str, list, list, list]:
        """The shape and the A, B and C words of a b1 mma (B1_WORDS gives their counts)."""
        shape = _shape(self.ins)
        n_a, n_b, _ = B1_WORDS[shape]
        srcs = list(self.ins.srcs)
        return shape, srcs[:n_a], srcs[n_a:n_a + n_b], srcs[n_a + n_b:]

    def xor_as_ands(self) -> None:
        ins = self.ins
        shape, a, b, c = self.b1_operands()
        first = [self.fn.new_value("s32") for _ in c]
        self.mma_as(first, a + [self.op("not", [w]) for w in b] + c, shape, {"xor": "and"})
        self.mma_as(ins.dests, [self.op("not", [w]) for w in a] + b + first, shape, {"xor": "and"})

    # ---- b1 and: bit planes on the u8 mma ------------------------------------------------
    def plane(self, word, p: int) -> ir.Value:
        """Bits p, p + 8, p + 16, p + 24 of `word` as the four bytes (0 or 1) of a register."""
        shifted = self.op("shr", [word, self.const(p, "u32")], "u32") if p else word
        return self.op("and", [shifted, self.const(0x01010101)])

    def bit_planes(self) -> None:
        ins = self.ins
        _, a, b, acc = self.b1_operands()
        n_b, n_c = len(b), len(acc)
        if len(a) == 1:                # m8n8k128: rows g + 8 repeat row g, C's are 0
            a, acc = [a[0], a[0]], acc + [self.zero(), self.zero()]
        steps = [(a[2 * h:2 * h + 2], b[h], p) for h in range(n_b) for p in range(4)]
        for n, (rows, col, p) in enumerate(steps):
            last = n == len(steps) - 1
            dests = list(ins.dests) + [self.fn.new_value("s32") for _ in range(4 - n_c)] if last \
                else [self.fn.new_value("s32") for _ in range(4)]
            planes = [self.plane(w, p) for w in rows] + [self.plane(w, p + 4) for w in rows] \
                + [self.plane(col, p), self.plane(col, p + 4)]
            self.mma(dests, planes + acc, "m16n8k32", ("u8", "u8", "s32"))
            acc = dests

    # ---- m8n8k16 as m16n8k16 ------------------------------------------------------------
    def tile_as_16_rows(self) -> None:
        ins = self.ins
        a, b, c0, c1 = ins.srcs
        upper = [self.fn.new_value("s32") for _ in range(2)]
        mods = ("satfinite",) if "satfinite" in ins.modifiers else ()
        zero = self.zero()
        self.mma(list(ins.dests) + upper, [a, a, b, c0, c1, zero, zero], "m16n8k16", ins.types,
                 mods)

    # ---- sm_75: m16n8k16 from two smaller mmas --------------------------------------------
    def k16_as_k8(self) -> None:
        ins = self.ins
        a, b, c = ins.srcs[:4], ins.srcs[4:6], ins.srcs[6:]
        first = [self.fn.new_value(d.type) for d in ins.dests]
        self.mma_as(first, a[:2] + b[:1] + c, "m16n8k8")
        self.mma_as(ins.dests, a[2:] + b[1:] + first, "m16n8k8")

    def rows_as_tiles(self) -> None:
        ins = self.ins
        a, b, c = ins.srcs[:2], ins.srcs[2], ins.srcs[3:]
        for row in range(2):
            self.mma_as(ins.dests[2 * row:2 * row + 2], [a[row], b] + c[2 * row:2 * row + 2], "m8n8k16")

    def mma_as(self, dests, srcs, shape, renamed: dict | None = None) -> None:
        """This mma's own form (types, `.satfinite`) at `shape`, with the modifiers
        `renamed` maps (b1's `.xor` -> `.and`) replaced."""
        ins = self.ins
        renamed = {**(renamed or {}), _shape(ins): shape}
        mods = tuple(renamed.get(m, m) for m in ins.modifiers)
        _Lowering(self.fn, ir.Instr("mma", list(dests), list(srcs), mods, ins.type, ins.types,
                                    line=ins.line), self.out, self.arch).run()
