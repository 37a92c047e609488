"""PTX's SIMD video instructions (vadd2 vsub2 vavrg2 vabsdiff2 vmin2 vmax2 vset2 and the
4-way vadd4 … vset4) for sm_8x, which has no video unit except VABSDIFF4.

What ptxas's cubins compute agrees with the PTX manual's pseudo-code on every form we ran
(tests/simd_video_reference.py): each lane of a and b is picked from the pair {b, a} by the
operand's selector (`.hxy`, `.bxyzw`, top lane first; a defaults to .h10/.b3210, b to
.h32/.b7654) and extended by its type; the operation is exact (a lane's operands fit
17 bits, so 32-bit arithmetic is exact); `.sat` clamps the lane to the destination type's
16- or 8-bit range; then the lanes the mask names (default: all) either replace c's lanes
(merge) or are added to c (`.add`). So, like ptxas, lane by lane:

* a word of the selected lanes: PRMT of (a, b) unless the selector is the default;
* each lane extended to 32 bits (PRMT with a sign-replicating or zero selector), the
  operation (IADD3, IABS, IMNMX, ISETP+SEL; vavrg rounds (s + 1) >> 1 for s >= 0 else
  s >> 1, i.e. (s + 1 + (s >> 31)) >> 1), `.sat` by I2I.{S,U}{8,16}.S32.SAT;
* `.add`: IADD3s summing c and the masked lanes; merge: a PRMT per masked lane inserting
  its low byte/half into c (or into the first lane when every lane is written).

vabsdiff4 of two unsigned operands uses VABSDIFF4.U8 where the target has a video unit
(`absdiff_instruction`; sm_120 has none and takes the lane-by-lane path): with `.add` and every lane its .ACC
form is the whole instruction, as ptxas writes it; without `.add` it gives every lane's
|a - b| (unsigned bytes: `.sat` to u8 changes nothing), merged into c by one PRMT when the
mask leaves some lanes out.

A mixin of `Selector` (isel/select.py)."""
from __future__ import annotations

from ptx2sass.encoder.model import Imm
from ptx2sass.mir import COPY, VOp
from ptx2sass.isel.common import NOT_PT, PT, RZ

# How each lane (a 32-bit value, lanes' operands sign- or zero-extended) is computed.
_SASS_CMP = {"eq": "EQ", "ne": "NE", "lt": "LT", "le": "LE", "gt": "GT", "ge": "GE"}
_SAT = {(2, True): "S16", (2, False): "U16", (4, True): "S8", (4, False): "U8"}
_DEFAULT_SEL = {2: (0x3210, 0x7654), 4: (0x3210, 0x7654)}
SIMD_VIDEO = ("vadd", "vsub", "vavrg", "vabsdiff", "vmin", "vmax", "vset")


def prmt_selector(sel: str | None, n: int, operand: int) -> int:
    """The PRMT selector (source bytes of {b, a}, lane 0 lowest) of `.hxy` / `.bxyzw`."""
    if sel is None:
        return _DEFAULT_SEL[n][operand]
    digits = [int(d) for d in reversed(sel[1:])]        # lane 0 first
    if n == 4:
        return sum(d << (4 * i) for i, d in enumerate(digits))
    nibbles = [b for h in digits for b in (2 * h, 2 * h + 1)]
    return sum(v << (4 * i) for i, v in enumerate(nibbles))


def lane_extract(n: int, lane: int, signed: bool) -> int:
    """PRMT selector (third operand RZ) giving lane `lane` of a word extended to 32 bits."""
    if n == 4:
        return (((8 | lane) * 0x111) << 4 | lane) if signed else 0x7770 | lane
    lo, hi = 2 * lane, 2 * lane + 1
    return ((8 | hi) * 0x11) << 8 | hi << 4 | lo if signed else 0x7700 | hi << 4 | lo


def insert_selector(n: int, lane: int) -> int:
    """PRMT selector putting the low lane of its first operand into lane `lane` of its
    second (whose other bytes stay)."""
    nibbles = [4 + j for j in range(4)]
    width = 4 // n
    for k in range(width):
        nibbles[width * lane + k] = k
    return sum(v << (4 * j) for j, v in enumerate(nibbles))


class SimdVideoSelection:
    def sel_vadd2(self, ins):
        self.simd_video(ins)

    sel_vsub2 = sel_vavrg2 = sel_vabsdiff2 = sel_vmin2 = sel_vmax2 = sel_vset2 = sel_vadd2
    sel_vadd4 = sel_vsub4 = sel_vavrg4 = sel_vabsdiff4 = sel_vmin4 = sel_vmax4 = sel_vset4 = sel_vadd2

    def simd_video(self, ins):
        op = ins.opcode
        n, base = int(op[-1]), op[:-1]
        mods = ins.modifiers
        if base == "vset":
            dtype, atype, btype = "u32", ins.type, ins.types[0]
        else:
            dtype, atype, btype = ins.type, *ins.types
        sat, add = "sat" in mods, "add" in mods
        sel = ins.attrs.get("sel", (None, None))
        mask = ins.attrs.get("mask")
        chosen = list(range(n)) if mask is None else sorted(int(d) for d in mask[1:])
        a = self._v_reg(self.part_of(ins.srcs[0], 0))
        b = self._v_reg(self.part_of(ins.srcs[1], 0))
        c = self._v_reg(self.part_of(ins.srcs[2], 0))
        words = [self._simd_word(a, b, prmt_selector(sel[k], n, k), k) for k in range(2)]
        d = self.dst(ins.dests[0])
        if base == "vabsdiff" and n == 4 and atype == btype == "u32" and self.arch.absdiff_instruction:
            if add and len(chosen) == 4:
                self.emit("VABSDIFF4", ("U8", "ACC"), [d, words[0], words[1], c])
                return
            if not add and not (sat and dtype == "s32"):
                t = self._v_new()
                self.emit("VABSDIFF4", ("U8",), [t, words[0], words[1], c])
                if len(chosen) == 4:
                    self.emit(COPY, (), [d, t])
                else:
                    keep = sum((j if j in chosen else 4 + j) << (4 * j) for j in range(4))
                    self.emit("PRMT", (), [d, t, Imm(keep), c])
                return
        lanes = []
        for i in chosen:
            x = self._simd_lane(words[0], n, i, atype[0] == "s")
            y = self._simd_lane(words[1], n, i, btype[0] == "s")
            t = self._simd_op(base, x, y, mods)
            if sat:
                s = self._v_new()
                self.emit("I2I", (_SAT[(n, dtype[0] == "s")], "S32", "SAT"), [s, t])
                t = s
            lanes.append(t)
        if add:
            acc = c
            for k in range(0, len(lanes), 2):
                s = self._v_new()
                self.emit("IADD3", (), [s, acc, lanes[k], lanes[k + 1] if k + 1 < len(lanes) else RZ])
                acc = s
            self.emit(COPY, (), [d, acc])
            return
        r = c
        for k, (i, t) in enumerate(zip(chosen, lanes)):
            if k == 0 and len(chosen) == n:
                r = t              # every lane is written: the first needs no insertion
                continue
            s = self._v_new()
            self.emit("PRMT", (), [s, t, Imm(insert_selector(n, i)), r])
            r = s
        self.emit(COPY, (), [d, r])

    def _simd_word(self, a, b, selector: int, operand: int):
        """The operand's lanes in one word: a or b itself for the default selector."""
        if selector == 0x3210:
            return a
        if selector == 0x7654:
            return b
        t = self._v_new()
        self.emit("PRMT", (), [t, a, Imm(selector), b])
        return t

    def _simd_lane(self, word, n: int, lane: int, signed: bool):
        t = self._v_new()
        self.emit("PRMT", (), [t, word, Imm(lane_extract(n, lane, signed)), RZ])
        return t

    def _simd_op(self, base: str, x, y, mods):
        t = self._v_new()
        if base == "vadd":
            self.emit("IADD3", (), [t, x, y, RZ])
        elif base == "vsub":
            self.emit("IADD3", (), [t, x, self.negate(y), RZ])
        elif base == "vavrg":
            s, sign = self._v_new(), self._v_new()
            self.emit("IADD3", (), [s, x, y, RZ])
            self.emit("SHF", ("R", "S32", "HI"), [sign, RZ, Imm(31), s])
            up = self._v_new()
            self.emit("IADD3", (), [up, s, Imm(1), sign])
            self.emit("SHF", ("R", "S32", "HI"), [t, RZ, Imm(1), up])
        elif base == "vabsdiff":
            s = self._v_new()
            self.emit("IADD3", (), [s, x, self.negate(y), RZ])
            self.emit("IABS", (), [t, s])
        elif base in ("vmin", "vmax"):
            self.emit("IMNMX", (), [t, x, y, PT if base == "vmin" else NOT_PT])
        else:
            p = self._v_new("P")
            self.emit("ISETP", (_SASS_CMP[mods[0]], "AND"), [p, PT, x, y, PT], ndefs=2)
            self.emit("SEL", (), [t, RZ, Imm(1), VOp(p.reg, inv=True)])     # 1 as an immediate: no register
        return t
