"""`wmma` lowered to the IR operations the rest of the compiler already handles: per-lane
address arithmetic from `%laneid`, loads/stores of the fragment words, and `mma.sync`.

PTX leaves the distribution of a wmma fragment over the warp unspecified; we use the one
ptxas uses on sm_8x (read from its SASS; the table FRAGMENTS), so fragments that a program
inspects hold the same values under both compilers. With lane = 4g + t, each f16 shape is two
m16n8k16 HMMAs whose fragments are mma.sync's: m16n16k16 splits N (A shared, B words 0-1
and 2-3), m32n8k16 splits M (A words 0-3 and 4-7, B shared), and m8n32k16 computes the
transpose D^T = B^T A^T (B's words as the A fragments, A's as the B fragment, C/D held
transposed). A fragment's words past those it needs repeat them, as ptxas fills them.
Element (r, c) of a matrix lives at `base + (r * stride + c) * size` in `.row` layout and
`base + (c * stride + r) * size` in `.col`. Where a fragment word's two halves are adjacent
in memory it is one 32-bit access, else two 16-bit ones (ptxas transposes with MOVM there;
the values are the same).

The 8x8 tiles are one mma.sync each, with mma's fragments as ptxas loads them: f64 m8n8k4
(A element (g, t), B (k t, column g), C/D (g, 2t) and (g, 2t+1), one f64 register each),
s4/u4 m8n8k32 and b1 m8n8k128 (A: row g, the lane's t-th 32-bit word of it; B: column g, word
t; C/D s32 as f64's). A sub-byte A/B word sits at word `g * (stride >> 3) + t` (s4/u4) or
`g * (stride >> 5) + t` (b1) of the matrix, as ptxas addresses it (PTX allows only .row A
and .col B there).

Forms not lowered here (other shapes and types) stay `wmma` and instruction selection
refuses them with a "not supported yet" error at their line.
"""
from __future__ import annotations

import re

from ptx2sass import ir

SIZES = {"f16": 2, "bf16": 2, "tf32": 4, "f32": 4, "s8": 1, "u8": 1, "s32": 4, "f64": 8}
# the sub-byte element types (modifiers in the frontend's parse) -> elements per 32-bit word
SUB_BYTE = {"s4": 8, "u4": 8, "b1": 32}
# one mma.sync each (arch.f64_mma for m8n8k4, isel.mma.sub_byte_available for the others)
TILES = ("m8n8k4", "m8n8k32", "m8n8k128")
SHAPES = ("m16n16k16", "m32n8k16", "m8n32k16", "m16n16k8") + TILES
# (shape, A/B type) -> registers in the A and B fragments (f16's repeat their words)
INPUT_WORDS = {("m16n16k16", "f16"): (8, 8), ("m32n8k16", "f16"): (8, 8), ("m8n32k16", "f16"): (8, 8),
               ("m16n16k16", "bf16"): (4, 4), ("m32n8k16", "bf16"): (8, 2), ("m8n32k16", "bf16"): (2, 8),
               ("m16n16k8", "tf32"): (4, 4),
               **{(shape, t): words for t in ("s8", "u8") for shape, words in
                  (("m16n16k16", (2, 2)), ("m32n8k16", (4, 1)), ("m8n32k16", (1, 4)))},
               ("m8n8k4", "f64"): (1, 1), ("m8n8k32", "s4"): (1, 1), ("m8n8k32", "u4"): (1, 1),
               ("m8n8k128", "b1"): (1, 1)}
ACCUMULATORS = {"f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",), "s8": ("s32",), "u8": ("s32",),
                "f64": ("f64",), "s4": ("s32",), "u4": ("s32",), "b1": ("s32",)}
_C32 = lambda pairs: [p for r, c in pairs for p in ((r, c), (r, c + 1))]
_C32T = lambda pairs: [p for r, c in pairs for p in ((r, c), (r + 1, c))]
# (shape, fragment, element bytes) -> (the lane's origin (row, column), from g = lane / 4
# and t = lane % 4; the step to a word's second 16-bit element, None for one 32-bit element;
# each word's first element relative to the origin). A's and B's words past the listed ones
# repeat them. B is K x N (rows are k).
FRAGMENTS = {
    ("m16n16k16", "a", 2): (("g", "2t"), (0, 1), [(0, 0), (8, 0), (0, 8), (8, 8)]),
    ("m32n8k16", "a", 2): (("g", "2t"), (0, 1), [(0, 0), (8, 0), (0, 8), (8, 8),
                                           (16, 0), (24, 0), (16, 8), (24, 8)]),
    ("m8n32k16", "a", 2): (("g", "2t"), (0, 1), [(0, 0), (0, 8)]),
    ("m16n16k16", "b", 2): (("2t", "g"), (1, 0), [(0, 0), (8, 0), (0, 8), (8, 8)]),
    ("m32n8k16", "b", 2): (("2t", "g"), (1, 0), [(0, 0), (8, 0)]),
    ("m8n32k16", "b", 2): (("2t", "g"), (1, 0), [(0, 0), (0, 8), (8, 0), (8, 8),
                                           (0, 16), (0, 24), (8, 16), (8, 24)]),
    ("m16n16k16", "c", 2): (("g", "2t"), (0, 1), [(0, 0), (8, 0), (0, 8), (8, 8)]),
    ("m32n8k16", "c", 2): (("g", "2t"), (0, 1), [(0, 0), (8, 0), (16, 0), (24, 0)]),
    ("m8n32k16", "c", 2): (("2t", "g"), (1, 0), [(0, 0), (0, 8), (0, 16), (0, 24)]),
    ("m16n16k16", "c", 4): (("g", "2t"), None, _C32([(0, 0), (8, 0), (0, 8), (8, 8)])),
    ("m16n16k16", "a", 1): (("g", "4t"), (0, 1), [(0, 0), (8, 0)]),
    ("m32n8k16", "a", 1): (("g", "4t"), (0, 1), [(0, 0), (8, 0), (16, 0), (24, 0)]),
    ("m8n32k16", "a", 1): (("g", "4t"), (0, 1), [(0, 0)]),
    ("m16n16k16", "b", 1): (("4t", "g"), (1, 0), [(0, 0), (0, 8)]),
    ("m32n8k16", "b", 1): (("4t", "g"), (1, 0), [(0, 0)]),
    ("m8n32k16", "b", 1): (("4t", "g"), (1, 0), [(0, 0), (0, 8), (0, 16), (0, 24)]),
    ("m16n16k8", "c", 4): (("g", "2t"), None, _C32([(0, 0), (8, 0), (0, 8), (8, 8)])),
    ("m16n16k8", "a", 4): (("g", "t"), None, [(0, 0), (8, 0), (0, 4), (8, 4)]),
    ("m16n16k8", "b", 4): (("t", "g"), None, [(0, 0), (4, 0), (0, 8), (4, 8)]),
    ("m32n8k16", "c", 4): (("g", "2t"), None, _C32([(0, 0), (8, 0), (16, 0), (24, 0)])),
    ("m8n32k16", "c", 4): (("2t", "g"), None, _C32T([(0, 0), (0, 8), (0, 16), (0, 24)])),
    ("m8n8k4", "a", 8): (("g", "t"), None, [(0, 0)]),
    ("m8n8k4", "b", 8): (("t", "g"), None, [(0, 0)]),
    ("m8n8k4", "c", 8): (("g", "2t"), None, [(0, 0), (0, 1)]),
    ("m8n8k32", "c", 4): (("g", "2t"), None, [(0, 0), (0, 1)]),
    ("m8n8k128", "c", 4): (("g", "2t"), None, [(0, 0), (0, 1)]),
}
# sm_75's s32 m8n32k16 C/D (see `_Lowering.integer_8816`)
_C_8816 = (("g", "2t"), None, _C32([(0, 0), (0, 8), (0, 16), (0, 24)]))


def lower_wmma(fn: ir.Function, arch) -> None:
    """Replace every `wmma` in `fn` that `arch` (an encoder.arch entry) supports by its
    lowered sequence, in place."""
    for block in fn.blocks:
        if not any(i.opcode == "wmma" for i in block.instrs):
            continue
        out: list[ir.Instr] = []
        lane = None
        for ins in block.instrs:
            if ins.opcode != "wmma" or not supported(ins, arch):
                out.append(ins)
                continue
            lowering = _Lowering(fn, ins, out, arch)
            if ins.modifiers[0] == "mma":
                lowering.mma()
            else:
                if lane is None:
                    lane = lowering.lane_coordinates()
                lowering.g, lowering.t = lane
                lowering.memory()
        block.instrs = out


def supported(ins: ir.Instr, arch) -> bool:
    mods = ins.modifiers
    shape = next((m for m in mods if m in SHAPES), None)
    if ins.guard is not None or shape is None or (shape == "m16n16k8" and not arch.tf32_k4_mma):
        return False
    if mods[0] == "mma":
        from ptx2sass.isel.mma import sub_byte_available
        from ptx2sass.mma_forms import available
        if shape in TILES and not (
                arch.f64_mma if shape == "m8n8k4"
                else sub_byte_available(arch, mods) or available(arch, mods)):
            return False
        a_type, c_type = mma_types(ins)
        if (shape, a_type) not in INPUT_WORDS \
                or ("satfinite" in mods and a_type not in ("s8", "u8", "s4", "u4")) \
                or len(set(ins.types[:2])) > 1 or ins.type != c_type or c_type not in ACCUMULATORS[a_type] \
                or (a_type == "b1" and not ({"xor", "and"} & set(mods) and "popc" in mods)) \
                or len({m for m in mods if m in SUB_BYTE}) > 1:
            return False
        n_a, n_b = INPUT_WORDS[(shape, a_type)]
        return len(ins.srcs) == n_a + n_b + n_acc(c_type, shape)
    if mods[0] in ("load", "store") and any(m in mods for m in ("row", "col")):
        if mods[1] in ("a", "b"):
            if element_type(ins) in SUB_BYTE and (mods[1] == "a") != ("row" in mods):
                return False        # sub-byte A is .row and B .col only
            return (shape, element_type(ins)) in INPUT_WORDS
        a_types = [t for (s, t) in INPUT_WORDS if s == shape]
        return any(ins.type in ACCUMULATORS[t] for t in a_types)
    return False


def mma_types(ins: ir.Instr) -> tuple[str, str]:
    """(A/B type, C type) of a `wmma.mma`: `.dtype.ctype` for f16, else `.dtype.atype.btype.ctype`
    (the frontend keeps s4/u4/b1 among the modifiers)."""
    sub = next((m for m in ins.modifiers if m in SUB_BYTE), None)
    if sub is not None:
        return sub, ins.types[-1] if ins.types else ""
    if len(ins.types) >= 3:
        return ins.types[0], ins.types[2]
    return "f16", ins.types[0] if ins.types else ""


def element_type(ins: ir.Instr) -> str | None:
    """A wmma load's or store's element type (s4/u4/b1 are modifiers in the parse)."""
    return next((m for m in ins.modifiers if m in SUB_BYTE), ins.type)


def n_acc(ty: str, shape: str | None = None) -> int:
    """Registers in a C/D fragment of element type `ty`."""
    if shape in TILES:
        return 2
    return 4 if ty == "f16" else 8



def default_stride(shape: str, frag: str, col: bool) -> int:
    """The stride of a wmma load/store that names none (PTX ISA: the matrix is dense): the
    number of columns of a row-major matrix, of rows of a column-major one. A is m x k, B is
    k x n, C and D are m x n."""
    m, n, k = map(int, re.findall(r"\d+", shape))       # "m16n16k16"
    rows, cols = {"a": (m, k), "b": (k, n)}.get(frag, (m, n))
    return rows if col else cols

class _Lowering:
    def __init__(self, fn: ir.Function, ins: ir.Instr, out: list, arch):
        self.fn, self.ins, self.out, self.arch = fn, ins, out, arch
        self.g = self.t = None

    def integer_8816(self, shape: str) -> bool:
        """An s32 m8n32k16 accumulator on a target without k = 16 in one mma (sm_75): ptxas
        computes it with four m8n8k16 IMMAs, one per 8 columns, so C/D are held as m8n8k16's
        C (row g, columns 2t and 2t + 1 of each block), not transposed."""
        return shape == "m8n32k16" and not self.arch.mma_k16 and self.ins.type == "s32"

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
        shape = next(m for m in mods if m in SHAPES)
        if element_type(ins) in SUB_BYTE:
            return self.sub_byte_word(shape, frag, col)
        size = SIZES[ins.type]
        key = "c" if frag in ("c", "d") else frag
        origin, step, words = FRAGMENTS[(shape, key, size)]
        if key == "c" and self.integer_8816(shape):
            origin, step, words = _C_8816
        if mods[0] == "load":
            address, values = ins.srcs[0], list(ins.dests)
            stride = ins.srcs[1] if len(ins.srcs) > 1 else None
        else:
            address = ins.srcs[0]
            has_stride = len(ins.srcs) > 1 + len(words)
            values = list(ins.srcs[1:-1] if has_stride else ins.srcs[1:])
            stride = ins.srcs[-1] if has_stride else None
        if stride is None:      # optional: the matrix stored densely, its leading dimension
            stride = ir.Const(default_stride(shape, frag, col), "u32")
        if key != "c":      # bf16 fragments are f16's without the repeated words
            words = words[:len(values)]
        base, base_offset = self.base_address(address)
        # element index of the lane's origin, (g, 2t) or (2t, g) in (row, column)
        r0, c0 = (self.lane_part(part) for part in origin)
        major, minor = (c0, r0) if col else (r0, c0)
        index = self.new("b32")
        self.emit("mad", [index], [major, self.stride_value(stride), minor], "u32", ("lo",))
        addr = self.add_index(base, index, size)

        def element(dr: int, dc: int) -> ir.Address:
            return self.displaced(addr, base_offset, *((dc, dr) if col else (dr, dc)), stride, size)

        space = ins.space
        is_load = mods[0] == "load"
        contiguous = step is not None and (step == (1, 0)) == col
        word = "b64" if size == 8 else "b32"
        for k, (dr, dc) in enumerate(words):
            v = values[k]
            if step is None or contiguous:
                if is_load:
                    self.emit("ld", [v], [element(dr, dc)], word, space=space)
                else:
                    self.emit("st", [], [element(dr, dc), v], word, space=space)
                continue
            if size == 2:
                lo_a, hi_a = element(dr, dc), element(dr + step[0], dc + step[1])
                lo, hi = self.new("b16"), self.new("b16")
                if is_load:
                    self.emit("ld", [lo], [lo_a], "b16", space=space)
                    self.emit("ld", [hi], [hi_a], "b16", space=space)
                    self.emit("mov", [v], [lo, hi], "b32")
                else:
                    self.emit("mov", [lo, hi], [v], "b32")
                    self.emit("st", [], [lo_a, lo], "b16", space=space)
                    self.emit("st", [], [hi_a, hi], "b16", space=space)
                continue
            # bytes: four loads merged with shifts and ors (a/b fragments are never stored)
            acc = None
            for e in range(4):
                byte = self.new("b32")
                self.emit("ld", [byte], [element(dr + e * step[0], dc + e * step[1])], "u8", space=space)
                if e:
                    shifted, merged = self.new("b32"), (v if e == 3 else self.new("b32"))
                    self.emit("shl", [shifted], [byte, ir.Const(8 * e, "u32")], "b32")
                    self.emit("or", [merged], [acc, shifted], "b32")
                    acc = merged
                else:
                    acc = byte
        if is_load:
            for k in range(len(words), len(values)):      # A and B: the words repeat
                self.emit("mov", [values[k]], [values[k % len(words)]], "b32")

    def sub_byte_word(self, shape: str, frag: str, col: bool) -> None:
        """An s4/u4/b1 A (.row) or B (.col) fragment: the lane's one word, word t of row
        (A) or column (B) g, at word g * (stride / elements per word) + t, as ptxas
        computes it."""
        ins = self.ins
        if (frag, col) not in (("a", False), ("b", True)):
            raise AssertionError("wmma sub-byte fragments are A .row and B .col only")
        per_word = SUB_BYTE[element_type(ins)]
        address, value = ins.srcs[0], ins.dests[0]
        stride = ins.srcs[1] if len(ins.srcs) > 1 else \
            ir.Const(default_stride(shape, frag, col), "u32")
        base, base_offset = self.base_address(address)
        shift = per_word.bit_length() - 1
        if isinstance(stride, ir.Const):
            words_per_row = ir.Const(stride.value >> shift, "u32")
        else:
            words_per_row = self.new("b32")
            self.emit("shr", [words_per_row], [stride, ir.Const(shift, "u32")], "u32")
        index = self.new("b32")
        self.emit("mad", [index], [self.g, words_per_row, self.t], "u32", ("lo",))
        addr = self.add_index(base, index, 4)
        self.emit("ld", [value], [ir.Address(addr, base_offset)], "b32", space=ins.space)

    def lane_part(self, part: str) -> ir.Value:
        """g, t, 2t or 4t of this lane."""
        if part in ("g", "t"):
            return self.g if part == "g" else self.t
        scaled = self.new("b32")
        self.emit("shl", [scaled], [self.t, ir.Const({"2t": 1, "4t": 2}[part], "u32")], "b32")
        return scaled

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
        """Two m16n8k16 mmas (m16n8k8 for tf32) splitting N or M; m8n32k16 computes D's
        transpose (B^T A^T), as its C fragment is laid out."""
        ins = self.ins
        a_type, c_type = mma_types(ins)
        shape = next(m for m in ins.modifiers if m in SHAPES)
        if shape in TILES:
            return self.tile_mma(shape, a_type)
        n_a, n_b = INPUT_WORDS[(shape, a_type)]
        srcs = list(ins.srcs)
        a, b, c = srcs[:n_a], srcs[n_a:n_a + n_b], srcs[n_a + n_b:]
        half = len(c) // 2
        d_half = n_acc(ins.type) // 2
        ta, tb = (2, 1) if a_type in ("s8", "u8") else (4, 2)    # words of a 16-row A, 8-column B
        if shape in ("m16n16k16", "m16n16k8"):
            parts = [(a[:ta], b[0:tb]), (a[:ta], b[tb:2 * tb])]
        elif shape == "m32n8k16":
            parts = [(a[:ta], b[0:tb]), (a[ta:2 * ta], b[0:tb])]
        else:
            parts = [(b[:ta], a[0:tb]), (b[ta:2 * ta], a[0:tb])]
        if a_type == "tf32":
            return self.tf32_mma(a, b, c)
        if self.integer_8816(shape):
            for j in range(4):          # D's columns 8j..8j+7: A's word and B's word j
                self.emit("mma", ins.dests[2 * j:2 * j + 2], [a[0], b[j], c[2 * j], c[2 * j + 1]], ins.type,
                          ("sync", "aligned", "m8n8k16", "row", "col")
                          + (("satfinite",) if "satfinite" in ins.modifiers else ()),
                          types=(a_type, a_type, c_type))
            return
        for n, (left, right) in enumerate(parts):
            self.emit("mma", ins.dests[n * d_half:(n + 1) * d_half],
                      left + right + c[n * half:(n + 1) * half], ins.type,
                      ("sync", "aligned", "m16n8k16", "row", "col")
                      + (("satfinite",) if "satfinite" in ins.modifiers else ()),
                      types=(a_type, a_type, c_type))

    def tile_mma(self, shape: str, a_type: str):
        """One mma.sync of the same shape: the fragments are mma's whatever the layouts."""
        ins = self.ins
        mods = ("sync", "aligned", shape, "row", "col")
        if a_type == "f64":
            rounding = tuple(m for m in ins.modifiers if m in ("rn", "rz", "rm", "rp"))
            self.emit("mma", ins.dests, ins.srcs, "f64", mods + rounding, types=("f64",) * 3)
            return
        extra = (("satfinite",) if "satfinite" in ins.modifiers else ()) + (a_type, a_type)
        if a_type == "b1":
            extra += (next(m for m in ins.modifiers if m in ("xor", "and")), "popc")
        self.emit("mma", ins.dests, ins.srcs, "s32", mods + extra, types=("s32",))

    def tf32_mma(self, a, b, c):
        """m16n16k8 tf32 as ptxas writes it: four m16n8k4 mmas, k 0-3 of both column halves
        and then k 4-7 accumulating onto them (the rounding between the two k halves is
        ptxas's too)."""
        ins = self.ins
        mods = ("sync", "aligned", "m16n8k4", "row", "col")
        types = ("tf32", "tf32", "f32")
        partial = [[self.new("f32") for _ in range(4)] for _ in range(2)]
        for n in range(2):
            self.emit("mma", partial[n], [a[0], a[1], b[2 * n], *c[4 * n:4 * n + 4]], "f32",
                      mods, types=types)
        for n in range(2):
            self.emit("mma", ins.dests[4 * n:4 * n + 4], [a[2], a[3], b[2 * n + 1], *partial[n]],
                      "f32", mods, types=types)
