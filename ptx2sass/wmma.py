"""`wmma` lowered to the IR operations the rest of the compiler already handles: per-lane
address arithmetic from `%laneid`, loads/stores of the fragment words, and `mma.sync`.

PTX leaves the distribution of a wmma fragment over the warp unspecified; we use the one
ptxas uses on sm_8x (read from its SASS), so fragments that a program inspects hold the same
values under both compilers. With lane = 4g + t, m16n16k16 with f16 inputs is two
m16n8k16 HMMAs sharing A:
- A (8 f16x2 registers): words 0-3 are mma.m16n8k16's A fragment (row g / g+8, columns
  2t, 2t+1 / +8), words 4-7 repeat words 0-3;
- B (8 registers): words 0-1 are the B fragment of columns 0-7 (column g, rows 2t, 2t+1 /
  +8), words 2-3 that of columns 8-15, words 4-7 repeat 0-3;
- C/D f32 (8 registers): mma's 4-register C/D fragment of columns 0-7, then of columns 8-15;
  C/D f16 (4 f16x2 registers): the 2-register fragment of columns 0-7, then of 8-15.
Element (r, c) of a matrix lives at `base + (r * stride + c) * size` in `.row` layout and
`base + (c * stride + r) * size` in `.col`. Where a fragment word's two halves are adjacent
in memory it is one 32-bit access, else two 16-bit ones (ptxas transposes with MOVM there;
the values are the same).

Forms not lowered here (other shapes and types) stay `wmma` and instruction selection
refuses them with a "not supported yet" error at their line.
"""
from __future__ import annotations

from ptx2sass import ir

SIZES = {"f16": 2, "f32": 4}


def lower_wmma(fn: ir.Function) -> None:
    """Replace every supported `wmma` in `fn` by its lowered sequence, in place."""
    for block in fn.blocks:
        if not any(i.opcode == "wmma" for i in block.instrs):
            continue
        out: list[ir.Instr] = []
        lane = None
        for ins in block.instrs:
            if ins.opcode != "wmma" or not supported(ins):
                out.append(ins)
                continue
            lowering = _Lowering(fn, ins, out)
            if ins.modifiers[0] == "mma":
                lowering.mma()
            else:
                if lane is None:
                    lane = lowering.lane_coordinates()
                lowering.g, lowering.t = lane
                lowering.memory()
        block.instrs = out


def supported(ins: ir.Instr) -> bool:
    mods = ins.modifiers
    if ins.guard is not None or "m16n16k16" not in mods:
        return False
    if mods[0] == "mma":
        return ins.type in SIZES and ins.types[:1] == (ins.type,) \
            and "satfinite" not in mods and len(ins.srcs) == 16 + n_acc(ins.types[0])
    if mods[0] in ("load", "store"):
        if not any(m in mods for m in ("row", "col")):
            return False
        frag = mods[1]
        if frag in ("a", "b"):
            return ins.type == "f16"
        return ins.type in SIZES
    return False


def n_acc(ty: str) -> int:
    return 8 if ty == "f32" else 4


class _Lowering:
    def __init__(self, fn: ir.Function, ins: ir.Instr, out: list):
        self.fn, self.ins, self.out = fn, ins, out
        self.g = self.t = None

    def emit(self, opcode, dests, srcs, type_, modifiers=(), **kw) -> None:
        self.out.append(ir.Instr(opcode, list(dests), list(srcs), tuple(modifiers), type_,
                                 line=self.ins.line, **kw))

    def new(self, ty: str) -> ir.Value:
        return self.fn.new_value(ty)

    def lane_coordinates(self):
        lane, g, t = self.new("b32"), self.new("b32"), self.new("b32")
        self.emit("mov", [lane], [ir.SpecialReg("%laneid", "u32")], "u32")
        self.emit("shr", [g], [lane, ir.Const(2, "u32")], "u32")
        self.emit("and", [t], [lane, ir.Const(3, "b32")], "b32")
        return g, t

    # ---- load / store ------------------------------------------------------------------
    def memory(self):
        ins = self.ins
        mods = ins.modifiers
        frag, col = mods[1], "col" in mods
        size = SIZES[ins.type] if frag in ("c", "d") else 2
        if mods[0] == "load":
            address, stride = ins.srcs[0], ins.srcs[1]
            values = list(ins.dests)
        else:
            address, stride = ins.srcs[0], ins.srcs[-1]
            values = list(ins.srcs[1:-1])
        # (row, column) of each word's first element relative to (g, 2t), and whether the
        # matrix is held transposed (B's fragment runs along k, the matrix's rows).
        if frag == "a":
            words = [(0, 0), (8, 0), (0, 8), (8, 8)]
            transposed = False
        elif frag == "b":
            words = [(0, 0), (0, 8), (8, 0), (8, 8)]    # (column, row) pairs
            transposed = True
        elif size == 2:
            words = [(0, 0), (8, 0), (0, 8), (8, 8)]
            transposed = False
        else:                                          # f32: one element per word
            words = [(0, 0), (0, 1), (8, 0), (8, 1), (0, 8), (0, 9), (8, 8), (8, 9)]
            transposed = False
        # element (i, j) of the fragment's view (i from g, j from 2t) is at matrix
        # (r, c) = (i, j), or (j, i) for B; `along_row` says memory runs along j.
        along_j = (col if transposed else not col)
        base, base_offset = self.base_address(address)
        index = self.new("b32")          # element index of (g, 2t): g*stride + 2t or 2t*stride + g
        t2 = self.new("b32")
        self.emit("shl", [t2], [self.t, ir.Const(1, "u32")], "b32")
        if along_j:
            self.emit("mad", [index], [self.g, self.stride_value(stride), t2], "u32", ("lo",))
        else:
            self.emit("mad", [index], [t2, self.stride_value(stride), self.g], "u32", ("lo",))
        addr = self.add_index(base, index, size)

        def element(di: int, dj: int) -> ir.Address:
            # displacement of fragment element (g+di, 2t+dj)
            if along_j:
                return self.displaced(addr, base_offset, di, dj, stride, size)
            return self.displaced(addr, base_offset, dj, di, stride, size)

        space = ins.space
        is_load = mods[0] == "load"
        n_words = len(words)
        for k, (di, dj) in enumerate(words):
            v = values[k]
            if size == 4:
                a = element(di, dj)
                if is_load:
                    self.emit("ld", [v], [a], "b32", space=space)
                else:
                    self.emit("st", [], [a, v], "b32", space=space)
            elif along_j:
                a = element(di, dj)
                if is_load:
                    self.emit("ld", [v], [a], "b32", space=space)
                else:
                    self.emit("st", [], [a, v], "b32", space=space)
            else:
                lo_a, hi_a = element(di, dj), element(di, dj + 1)
                if is_load:
                    lo, hi = self.new("b16"), self.new("b16")
                    self.emit("ld", [lo], [lo_a], "b16", space=space)
                    self.emit("ld", [hi], [hi_a], "b16", space=space)
                    self.emit("mov", [v], [lo, hi], "b32")
                else:
                    lo, hi = self.new("b16"), self.new("b16")
                    self.emit("mov", [lo, hi], [v], "b32")
                    self.emit("st", [], [lo_a, lo], "b16", space=space)
                    self.emit("st", [], [hi_a, hi], "b16", space=space)
        if is_load:
            for k in range(n_words, len(values)):       # A and B: words 4-7 repeat 0-3
                self.emit("mov", [values[k]], [values[k - n_words]], "b32")

    def stride_value(self, stride):
        if isinstance(stride, ir.Const):
            return ir.Const(stride.value, "u32")
        return stride

    def base_address(self, address: ir.Address):
        base = address.base
        if isinstance(base, ir.Value):
            return base, address.offset
        wide = self.new("b64")
        if base is None:
            self.emit("mov", [wide], [ir.Const(address.offset, "u64")], "u64")
            return wide, 0
        self.emit("mov", [wide], [base], "u64")
        return wide, address.offset

    def add_index(self, base: ir.Value, index: ir.Value, size: int) -> ir.Value:
        if ir.type_bits(base.type) == 32:
            scaled, addr = self.new("b32"), self.new("b32")
            self.emit("mul", [scaled], [index, ir.Const(size, "u32")], "u32", ("lo",))
            self.emit("add", [addr], [base, scaled], "u32")
            return addr
        scaled, addr = self.new("b64"), self.new("b64")
        self.emit("mul", [scaled], [index, ir.Const(size, "u32")], "u32", ("wide",))
        self.emit("add", [addr], [base, scaled], "s64")
        return addr

    def displaced(self, addr, base_offset, dr, dc, stride, size) -> ir.Address:
        """The address of the element `dr` strides and `dc` elements past `addr`."""
        if dr == 0 or isinstance(stride, ir.Const):
            rows = dr * (stride.value if isinstance(stride, ir.Const) else 0)
            return ir.Address(addr, base_offset + (rows + dc) * size)
        key = ("rows", dr)
        cache = self.__dict__.setdefault("_rows", {})
        if key not in cache:
            if ir.type_bits(addr.type) == 32:
                off, moved = self.new("b32"), self.new("b32")
                self.emit("mul", [off], [stride, ir.Const(dr * size, "u32")], "u32", ("lo",))
                self.emit("add", [moved], [addr, off], "u32")
            else:
                off, moved = self.new("b64"), self.new("b64")
                self.emit("mul", [off], [stride, ir.Const(dr * size, "u32")], "u32", ("wide",))
                self.emit("add", [moved], [addr, off], "s64")
            cache[key] = moved
        return ir.Address(cache[key], base_offset + dc * size)

    # ---- mma -----------------------------------------------------------------------------
    def mma(self):
        ins = self.ins
        d_type, c_type = ins.type, ins.types[0]
        srcs = list(ins.srcs)
        a, b, c = srcs[:8], srcs[8:16], srcs[16:]
        half = len(c) // 2
        d_half = n_acc(d_type) // 2
        for n in range(2):
            self.emit("mma", ins.dests[n * d_half:(n + 1) * d_half],
                      a[:4] + b[2 * n:2 * n + 2] + c[n * half:(n + 1) * half], d_type,
                      ("sync", "aligned", "m16n8k16", "row", "col"),
                      types=("f16", "f16", c_type))
