"""The Tensor Memory Accelerator's copies (`cp.async.bulk.tensor`, `cp.reduce.async.bulk.tensor`,
`cp.async.bulk.prefetch.tensor`) on sm_90+, as ptxas 13.5 writes them
(tools/isa_seeds/tma_sm90.ptx has the forms).

Each is one uniform instruction that names two operands: a block of consecutive uniform
registers and the 64-bit address of the tensor map (the CUtensorMap) in a uniform pair:

* load    UTMALDG.nD[.IM2COL][.MULTICAST] [URa], [URm] [, URx] [, desc[URp]]
          URa = the shared::cluster destination, URa+1 the mbarrier, URa+2.. the coordinates;
* store   UTMASTG.nD[.IM2COL] [URa], [URm] [, desc[URp]]  URa = the shared::cta source, then
          the coordinates; a reduction is UTMAREDG.nD[.IM2COL].OP likewise;
* prefetch UTMAPF.L2.nD[.IM2COL] [URa], [URm] [, URx] [, desc[URp]]  URa.. the coordinates.

URx packs the im2col offsets into its low 16 bits (one offset of 16 bits for 3D, two of 8
bits for 4D, three of 5 bits for 5D; im2col::w's two `{wHalo, wOffset}` as wHalo + (wOffset
<< 11), whatever the dimensions) and a multicast's CTA mask into the high 16 bits.

The sm_100a modes (PTX 8.6): `.tile::gather4` is `.2D.GATHER4` (a load or prefetch of four
rows: five coordinates in the block, a column and four rows), `.tile::scatter4` `.2D.SCATTER4`
(a store; ptxas 13.5 writes the reduction `cp.reduce...tile::scatter4` as the same UTMASTG,
its operation in no bit, issued by the reduction's ELECT loop), `.im2col::w` `.W` and
`::w::128` `.W128`, `.cta_group::2` a trailing `.2CTA` (`::1` nothing): e.g.
`UTMALDG.2D.GATHER4.MULTICAST.2CTA`.

A load and a reduction run once per lane (the ELECT loop: the mbarrier must see every
lane's bytes, a reduction every lane's data), a store and a prefetch once per distinct
tuple of operands (R2UR/R2UR.OR), as isel/bulk_copy.py does for UBLKCP.

A mixin of `Selector` (isel/select.py)."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm, IndexList, Mem, Reg
from ptx2sass.mir import VOp
from ptx2sass.isel.common import RZ

BLOCK_UR = 8                    # the first register of the operand block (UR8..UR14)
MAP_UR = Reg("UR", 16)          # the tensor map's address pair
# the sm_100a modes -> their SASS modifier
MODES = {"im2col::w": "W", "im2col::w::128": "W128", "tile::gather4": "GATHER4",
         "tile::scatter4": "SCATTER4"}
FOUR_ROWS = ("tile::gather4", "tile::scatter4")      # a column and four row coordinates
W_MODES = ("im2col::w", "im2col::w::128")
W_SHIFT = 11                    # im2col::w: wHalo + (wOffset << 11) in the low 16 bits
EXTRA_UR = Reg("UR", 18)        # im2col offsets | multicast CTA mask << 16
POLICY_UR = Reg("UR", 20)       # the L2 cache policy pair
TENSOR_REDUCE_OPS = ("add", "min", "max", "inc", "dec", "and", "or", "xor")
SCOREBOARDS = IndexList((5, 4, 3, 2, 1, 0))    # DEPBAR waiting for every scoreboard
# bits per im2col offset by dimension (the offsets share 16 bits)
OFFSET_BITS = {3: 16, 4: 8, 5: 5}


class TensorCopySelection:
    def sel_cp_tensor(self, ins):
        mods = ins.modifiers
        if not self.arch.bulk_copy_unit:
            raise self.unsupported(f"`cp.{'.'.join(mods)}` on {self.arch.name}")
        where = ins.attrs.get("tensor")
        dims = next((int(m[0]) for m in mods if m in ("1d", "2d", "3d", "4d", "5d")), None)
        mode = next((m for m in mods if m in MODES), None)
        ncoords = 5 if mode in FOUR_ROWS else dims
        if where is None or dims is None or where[1] != ncoords:
            raise self.unsupported(f"`cp.{'.'.join(mods)}`")
        at, n = where
        srcs = list(ins.srcs)
        tmap, coords = srcs[at], srcs[at + 1:at + 1 + n]
        before, after = srcs[:at], srcs[at + 1 + n:]
        im2col = mode is None and any(m.startswith("im2col") for m in mods)
        pair = "cta_group::2" in mods
        multicast = "multicast::cluster" in mods
        hint = "L2::cache_hint" in mods
        policy = after.pop() if hint else None
        prefetch = "prefetch" in mods
        reduce = mods[:1] == ("reduce",)
        load = not prefetch and "mbarrier::complete_tx::bytes" in mods
        if any(m.startswith("cta_group") for m in mods) and not load:
            raise self.unsupported(f"`cp.{'.'.join(mods)}`")
        if (pair or mode == "im2col::w::128") and not self.arch.tensor_copy_sm100_modes:
            raise self.unsupported(f"`cp.{'.'.join(mods)}` on {self.arch.name}")
        lane: list[tuple] = []
        block = BLOCK_UR

        def ur(k):
            return Reg("UR", block + k)

        if load:
            if len(before) != 1 or not after:
                raise self.unsupported(f"`cp.{'.'.join(mods)}`")
            bar = after.pop(0)
            got = self.bulk_shared(before[0], ur(0))
            if got is not None:
                lane.append((got, ur(0)))
            got = self.bulk_shared(bar, ur(1))
            if got is not None:
                lane.append((got, ur(1)))
            first = 2
        elif prefetch:
            if before:
                raise self.unsupported(f"`cp.{'.'.join(mods)}`")
            first = 0
        else:                       # store or reduction: the shared::cta source follows
            if before or not after:
                raise self.unsupported(f"`cp.{'.'.join(mods)}`")
            got = self.bulk_shared(after.pop(0), ur(0))
            if got is not None:
                lane.append((got, ur(0)))
            first = 1
        for k, c in enumerate(coords):
            got = self.tensor_word(c, ur(first + k))
            if got is not None:
                lane.append((got, ur(first + k)))
        offsets: list = []
        if (im2col or mode in W_MODES) and (load or prefetch):
            count = 2 if mode in W_MODES else dims - 2
            if dims < 3 or len(after) < count:
                raise self.unsupported(f"`cp.{'.'.join(mods)}`")
            offsets, after = after[:count], after[count:]
        mask = None
        if multicast:
            if not self.arch.tensor_multicast:
                raise self.unsupported(f"`cp.{'.'.join(mods)}` on {self.arch.name}")
            if not load or not after:
                raise self.unsupported(f"`cp.{'.'.join(mods)}`")
            mask = after.pop(0)
        if after:
            raise self.unsupported(f"`cp.{'.'.join(mods)}`")
        extra = bool(offsets) or mask is not None
        if extra:
            got = self.tensor_extra(offsets, dims, mask, mode in W_MODES)
            if got is not None:
                lane.append((got, EXTRA_UR))
        got = self.bulk_global(tmap, MAP_UR)
        if got is not None:
            lane += [(got[0], MAP_UR), (got[1], Reg("UR", MAP_UR.index + 1))]
        if policy is not None:
            got = self.bulk_policy(policy, POLICY_UR)     # isel/bulk_copy.py
            if got is not None:
                lane += [(got[0], POLICY_UR), (got[1], Reg("UR", POLICY_UR.index + 1))]

        out = (f"{dims}D",) + (("IM2COL",) if im2col else ()) + ((MODES[mode],) if mode else ())
        if load:
            opcode = "UTMALDG"
            out += (("MULTICAST",) if multicast else ()) + (("2CTA",) if pair else ())
        elif prefetch:
            opcode, out = "UTMAPF", ("L2",) + out
        elif reduce:
            op = next((m for m in mods if m in TENSOR_REDUCE_OPS), None)
            if op is None:
                raise self.unsupported(f"`cp.{'.'.join(mods)}`")
            opcode, out = ("UTMASTG", out) if mode == "tile::scatter4" else ("UTMAREDG", out + (op.upper(),))
        else:
            opcode = "UTMASTG"
        operands = [Mem(ubase=ur(0)), Mem(ubase=MAP_UR)]
        if extra:
            operands.append(EXTRA_UR)
        if policy is not None:
            operands.append(Mem(desc=POLICY_UR, desc_only=True))
        width = first + ncoords

        def issue():
            mi = self.emit(opcode, out, operands, ndefs=0, guarded=False)
            mi.widths = {0: width, 1: 2}
        if load or reduce:
            self.elect_loop(lane, issue)
        else:
            self.distinct_values_loop(lane, issue)

    # ------------------------------------------------------------------ fences
    def proxy_tensormap_fence(self, ins):
        """fence.proxy.tensormap::generic (sm_90+), ordering the generic proxy's writes of a
        tensor map with the tensor copies' reads of it, as ptxas 13.5 writes it:
        `.release.<scope>`: MEMBAR.ALL.GPU (.SYS for .sys; ptxas widens .cta/.cluster to
        .gpu), ERRBAR, CGAERRBAR; `.acquire.<scope> [a], 128`: DEPBAR of every scoreboard,
        UTMACCTL.IV of the map's generic address (in a uniform pair, once per distinct
        address), UTMACMDFLUSH."""
        rest = ins.modifiers[2:]
        if not self.arch.bulk_copy_unit or len(rest) != 2 or \
                rest[1] not in ("cta", "cluster", "gpu", "sys"):
            raise self.unsupported(f"`fence.{'.'.join(ins.modifiers)}`")
        if rest[0] == "release":
            self.emit("MEMBAR", ("ALL", "SYS" if rest[1] == "sys" else "GPU"), [], ndefs=0)
            self.emit("ERRBAR", (), [], ndefs=0)
            if self.arch.cga_errbar:
                self.emit("CGAERRBAR", (), [], ndefs=0)
            return
        if rest[0] != "acquire" or len(ins.srcs) != 2 or self.known_constant(ins.srcs[1]) != 128:
            raise self.unsupported(f"`fence.{'.'.join(ins.modifiers)}`")
        lane: list[tuple] = []
        got = self.bulk_global(ins.srcs[0], MAP_UR)
        if got is not None:
            lane = [(got[0], MAP_UR), (got[1], Reg("UR", MAP_UR.index + 1))]
        self.emit("DEPBAR", (), [SCOREBOARDS], ndefs=0)

        def issue():
            mi = self.emit("UTMACCTL", ("IV",), [Mem(ubase=MAP_UR)], ndefs=0, guarded=False)
            mi.widths = {0: 2}
        self.distinct_values_loop(lane, issue)
        self.emit("UTMACMDFLUSH", (), [], ndefs=0)

    # ------------------------------------------------------------------ operands
    def tensor_word(self, value, ur: Reg):
        """A 32-bit operand (a coordinate) into `ur` (None where emitted here: a constant
        or a kernel parameter), else the per-lane register to R2UR."""
        known = self.known_constant(value)
        if known is not None:
            self.emit("UMOV", (), [ur, self.imm32(known & 0xFFFFFFFF)], guarded=False)
            return None
        if isinstance(value, ir.Value) and value.id in self.param_values:
            self.emit("ULDC", (), [ur, self.param_values[value.id][0]], guarded=False)
            return None
        return self.reg_part(value)

    def tensor_extra(self, offsets: list, dims: int, mask, w_mode: bool = False):
        """The im2col offsets (low 16 bits) and the multicast CTA mask (high 16) into
        EXTRA_UR where all are constants (returns None), else the per-lane register."""
        values = [self.known_constant(v) for v in offsets]
        bits = W_SHIFT if w_mode else OFFSET_BITS.get(dims, 16)
        known_mask = self.known_constant(mask) if mask is not None else 0
        if None not in values and known_mask is not None:
            low = 0
            if w_mode or len(values) == 3:
                # a sum, as ptxas's IMADs (ULEA for constants): an offset's bits above its
                # field carry into the next one's (im2col::w; 5D's three 5-bit offsets)
                low = sum(v << (k * bits) for k, v in enumerate(values))
            else:               # PRMT's bytes (4D), the one 16-bit offset (3D)
                for k, v in enumerate(values):
                    low |= (v & ((1 << bits) - 1)) << (k * bits)
            word = (low & 0xFFFF) | (known_mask & 0xFFFF) << 16
            self.emit("UMOV", (), [EXTRA_UR, self.imm32(word)], guarded=False)
            return None
        regs = [self.reg_part(v) for v in offsets]
        high = self.reg_part(mask) if mask is not None else RZ
        if not regs:
            low = RZ
        elif len(regs) == 1:
            low = regs[0]
        elif w_mode:                    # wHalo + (wOffset << 11)
            low = VOp(self.mf.new_vreg())
            self.emit("IMAD", (), [low, regs[1], Imm(1 << W_SHIFT), regs[0]])
        elif len(regs) == 2:            # two bytes: PRMT picks each offset's low byte
            low = VOp(self.mf.new_vreg())
            self.emit("PRMT", (), [low, regs[0], Imm(0x40), regs[1]])
        else:                           # off0 + off1 << 5 + off2 << 10
            t = VOp(self.mf.new_vreg())
            self.emit("IMAD", (), [t, regs[1], Imm(1 << bits), regs[0]])
            low = VOp(self.mf.new_vreg())
            self.emit("IMAD", (), [low, regs[2], Imm(1 << 2 * bits), t])
        word = VOp(self.mf.new_vreg())
        self.emit("PRMT", (), [word, low, Imm(0x5410), high])
        return word

