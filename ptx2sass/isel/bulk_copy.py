"""The cp.async.bulk family on sm_90's bulk-copy unit, as ptxas 13.5 writes it
(tools/isa_seeds/bulk_copy_sm90.ptx has every form; emu/ops_bulk.py the semantics).

Every thread that runs a bulk copy issues one, but the unit's instructions (UBLKCP,
UBLKRED, UBLKPF) run once per warp from uniform registers. ptxas therefore loops:

* a copy that completes bytes on an mbarrier, and every reduction, once per lane: an ELECT
  loop (`@P0 ELECT P1`, the leader's per-lane operands R2UR'd under `@P1`, the leader
  drops out of P0, `@P0 BRA.U.ANY` back), also where every operand is uniform, since the
  mbarrier must see each lane's bytes and a reduction each lane's data;
* a plain copy to global memory (`.bulk_group`) and the L2 prefetch once per distinct
  operand tuple: one instruction where the operands are uniform, else the R2UR/R2UR.OR
  loop over the lanes' distinct values (isel/mbarrier.py's `uniform_loop_values`).

`.multicast::cluster` (sm_90a/sm_100a: UBLKCP.S.G.MULTICAST) and `.cp_mask` (sm_100+:
UBLKCP.G.S.DST_G_BYTE_MASK) put their 16-bit mask into the size register's high half, as
ptxas 13.5 does (size/16 | mask << 16); sm_120's multicast, which ptxas writes as a call to
a routine of the driver's, is refused. `.ignore_oob` (PTX 9.2, global -> shared::cta) is the
plain copy: ptxas 13.5.37 drops ignoreBytesLeft/Right on every sm_90+ target.

Operands (fixed uniform registers, live only inside one selection): the destination pair
UR8:UR9 (a global address, or the shared::cluster address and the mbarrier's), the
source UR10[:UR11], the size in 16-byte units UR12, the cache policy UR14:UR15. A shared
variable's address is S2UR SR_CgaCtaId / UMOV / ULEA, a kernel parameter's ULDC[.64],
an offset UIADD3[.64]; any other register is per lane (R2UR in the loop). commit_group is
UTMACMDFLUSH (it takes the bulk groups' scoreboard, codegen.py), wait_group n DEPBAR.LE
SB0, n, followed by CCTL.IVALL unless `.read`.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm, Label, Mem, Reg, SpecialReg
from ptx2sass.fences import ACQUIRE_INVALIDATION
from ptx2sass.frontend.multimem import MARK as _MULTIMEM
from ptx2sass.mir import MInstr, VOp
from ptx2sass.isel.common import NOT_PT, PT, RZ, URZ

MARK = _MULTIMEM.lstrip(".")     # a multimem bulk copy's (IR modifiers have no dot)

DST_UR = Reg("UR", 8)           # destination (a global pair, or shared address + mbarrier)
BAR_UR = Reg("UR", 9)
SRC_UR = Reg("UR", 10)          # source (a global pair, or a shared address)
SIZE_UR = Reg("UR", 12)
RANK_UR = Reg("UR", 13)         # scratch: SR_CgaCtaId
POLICY_UR = Reg("UR", 14)       # the L2 cache policy pair (desc[UR14])
RANK_SHIFT = 24                 # a shared address's CTA rank in its cluster
UNIT = 16                       # the unit's size operand counts 16-byte blocks
MEMSET_UNIT = 8                 # UMEMSETS's counts 8-byte words

REDUCE_OPS = {"add", "min", "max", "inc", "dec", "and", "or", "xor"}
# PTX type -> the UBLKRED type suffix ptxas writes (none for 32-bit unsigned/untyped)
REDUCE_TYPES = {"u32": (), "b32": (), "s32": ("S32",), "u64": ("U64",), "b64": ("U64",),
                "s64": ("S64",)}
# ... and the float ones (into global memory only: the frontend's rules), which ptxas writes
# rounded (.RN)
REDUCE_FLOAT_TYPES = {"f16": ("F16", "RN"), "bf16": ("BF16", "RN"), "f32": ("F32", "RN"),
                      "f64": ("F64", "RN")}


class BulkCopySelection:
    def sel_cp_bulk(self, ins):
        """cp.async.bulk.*, cp.reduce.async.bulk.*, commit_group and wait_group."""
        mods = ins.modifiers
        if not self.arch.bulk_copy_unit:
            raise self.unsupported(f"`cp.{'.'.join(mods)}` on {self.arch.name}")
        if "commit_group" in mods:
            self.emit("UTMACMDFLUSH", (), [], ndefs=0)
            return
        if "wait_group" in mods:
            pending = self.known_constant(ins.srcs[0])
            if pending is None:
                raise self.unsupported("`cp.async.bulk.wait_group` with a register count")
            self.emit("DEPBAR", ("LE",), [self.ASYNC_GROUPS, Imm(pending)], ndefs=0)
            if "read" not in mods:
                self.emit(*ACQUIRE_INVALIDATION, [], ndefs=0)
            return
        if "tensor" in mods:
            return self.sel_cp_tensor(ins)                    # isel/tensor_copy.py
        if "prefetch" in mods:
            return self.bulk_prefetch(ins)
        return self.bulk_copy(ins)

    # ------------------------------------------------------------------ operands
    def bulk_shared(self, addr, ur: Reg):
        """A shared address into `ur`: emitted here where uniform (returns None), else the
        per-lane 32-bit register to R2UR into it."""
        if not isinstance(addr, ir.Address):
            raise self.unsupported(f"address operand {addr!r}")
        base, offset = addr.base, addr.offset
        sym = self.syncs_symbol(base)
        if sym is not None and self.placements[sym.name].symbol is not None:
            raise self.unsupported("a bulk copy's `.shared` variable in relocatable output")
        if sym is not None:
            self.emit("S2UR", (), [RANK_UR, SpecialReg("SR_CgaCtaId")], guarded=False)
            self.emit("UMOV", (), [ur, self.imm32(self.placements[sym.name].value)], guarded=False)
            self.emit("ULEA", (), [ur, RANK_UR, ur, Imm(RANK_SHIFT)], guarded=False)
            offset += sym.offset
        elif isinstance(base, ir.Value) and base.id in self.param_values:
            self.emit("ULDC", (), [ur, self.param_values[base.id][0]], guarded=False)
        elif isinstance(base, ir.Value):
            r = self.vreg(base)
            lane = VOp(r, 0 if r.width > 1 else None)
            if offset:
                t = VOp(self.mf.new_vreg())
                self.emit("IADD3", (), [t, lane, self.imm32(offset), RZ])
                lane = t
            return lane
        else:
            raise self.unsupported(f"address operand {addr!r}")
        if offset:
            self.emit("UIADD3", (), [ur, ur, self.imm32(offset), URZ], guarded=False)
        return None

    def bulk_global(self, addr, ur: Reg):
        """A global address into the pair at `ur` (None where emitted here), else the
        per-lane pair's two registers."""
        if not isinstance(addr, ir.Address) or not isinstance(addr.base, ir.Value):
            raise self.unsupported(f"address operand {addr!r}")
        base = addr.base
        if base.id in self.param_values and len(self.param_values[base.id]) == 2:
            self.emit("ULDC", ("64",), [ur, self.param_values[base.id][0]], guarded=False)
            if addr.offset:
                self.emit("UIADD3", ("64",), [ur, ur, self.imm32(addr.offset), URZ], guarded=False)
            return None
        r = self.vreg(base)
        if r.width != 2:
            raise self.unsupported("a 32-bit global address in `cp.async.bulk`")
        lo, hi = VOp(r, 0), VOp(r, 1)
        if addr.offset:
            pair = self.new_pair()
            self.add_wide_constant(pair, lo, hi, addr.offset)
            lo, hi = VOp(pair.reg, 0), VOp(pair.reg, 1)
        return [lo, hi]

    def add_wide_constant(self, pair: VOp, lo: VOp, hi: VOp, value: int) -> None:
        """pair = hi:lo + value (IADD3 with the carry into IADD3.X)."""
        carry = VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [VOp(pair.reg, 0), carry, lo, self.imm32(value & 0xFFFFFFFF), RZ],
                  ndefs=2)
        high = value >> 32 & 0xFFFFFFFF
        self.emit("IADD3", ("X",), [VOp(pair.reg, 1), RZ if not high else self.imm32(high), hi,
                                    RZ, carry, NOT_PT])

    def bulk_size(self, size, mask=None):
        """The byte count in 16-byte units into SIZE_UR (None where emitted here), else the
        per-lane register holding it; a 16-bit `mask` (a multicast's CTA mask, cp_mask's
        byte mask) goes into its high half."""
        value = self.known_constant(size)
        known_mask = self.known_constant(mask) if mask is not None else 0
        if value is not None and value % UNIT:
            raise self.unsupported("`cp.async.bulk` size not a multiple of 16")
        if value is not None and known_mask is not None:
            word = value // UNIT & 0xFFFF | (known_mask & 0xFFFF) << 16 if mask is not None else value // UNIT
            self.emit("UMOV", (), [SIZE_UR, self.imm32(word)], guarded=False)
            return None
        if mask is not None:            # PRMT: the count's low half, the mask's low half
            if value is not None:
                t = self.reg_part(ir.Const(value // UNIT, "u32"))
            else:
                t = VOp(self.mf.new_vreg())
                self.emit("SHF", ("R", "U32", "HI"), [t, RZ, Imm(4), self.reg_part(size)])
            u = VOp(self.mf.new_vreg())
            self.emit("PRMT", (), [u, t, Imm(0x5410), self.reg_part(mask)])
            return u
        if isinstance(size, ir.Value) and size.id in self.param_values:
            self.emit("ULDC", (), [SIZE_UR, self.param_values[size.id][0]], guarded=False)
            self.emit("USHF", ("R", "U32", "HI"), [SIZE_UR, URZ, Imm(4), SIZE_UR], guarded=False)
            self.emit("UPRMT", (), [SIZE_UR, SIZE_UR, Imm(0x5410), URZ], guarded=False)
            return None
        t = VOp(self.mf.new_vreg())
        self.emit("SHF", ("R", "U32", "HI"), [t, RZ, Imm(4), self.reg_part(size)])
        u = VOp(self.mf.new_vreg())
        self.emit("PRMT", (), [u, t, Imm(0x5410), RZ])
        return u

    def bulk_policy(self, policy, ur: Reg = POLICY_UR):
        """The cache policy pair into `ur` (None where emitted here: a kernel parameter), else
        the per-lane 64-bit register's two halves to R2UR there."""
        if isinstance(policy, ir.Value) and policy.id in self.param_values:
            self.emit("ULDC", ("64",), [ur, self.param_values[policy.id][0]], guarded=False)
            return None
        return [self.reg_part(policy, 0), self.reg_part(policy, 1)]

    # ------------------------------------------------------------------ the forms
    def bulk_copy(self, ins):
        mods = ins.modifiers
        reduce = ins.opcode == "cp" and mods[:1] == ("reduce",)
        spaces = [m for m in mods if m in ("global", "shared::cluster", "shared::cta", "shared")]
        if len(spaces) != 2:
            raise self.unsupported(f"`cp.{'.'.join(mods)}`")
        dst_space, src_space = spaces
        mbar = any(m.startswith("mbarrier::complete_tx") for m in mods)
        hint = "L2::cache_hint" in mods
        multicast = "multicast::cluster" in mods
        byte_mask = "cp_mask" in mods
        srcs = list(ins.srcs)
        # the operands' order: ..., ctaMask, policy (multicast); ..., policy, byteMask (cp_mask)
        mask = srcs.pop() if byte_mask else None
        policy = srcs.pop() if hint else None
        if "ignore_oob" in mods:
            # ptxas 13.5.37 writes the plain copy: ignoreBytesLeft/Right are read nowhere
            # (the unit does not fault on a 16-byte chunk partly past its allocation)
            if reduce or multicast or (dst_space, src_space) != ("shared::cta", "global") \
                    or not mbar or len(srcs) != 6:
                raise self.unsupported(f"`cp.{'.'.join(mods)}`")
            del srcs[3:5]
        if multicast:
            mask = srcs.pop() if srcs else None
            if not self.arch.tensor_multicast or reduce or not mbar or dst_space == "global":
                raise self.unsupported(f"`cp.{'.'.join(mods)}` on {self.arch.name}")
        if byte_mask and (reduce or dst_space != "global"):
            raise self.unsupported(f"`cp.{'.'.join(m for m in mods if m != MARK)}`")
        if len(srcs) != (4 if mbar else 3) or any(m.startswith("multicast") and m != "multicast::cluster"
                                                   for m in mods):
            raise self.unsupported(f"`cp.{'.'.join(mods)}`")
        if mbar:
            dst, src, size, bar = srcs
        else:
            dst, src, size = srcs
            bar = None
        lane: list[tuple] = []          # (per-lane register, uniform register) to R2UR
        if dst_space == "global":
            got = self.bulk_global(dst, DST_UR)
            if got is not None:
                lane += [(got[0], DST_UR), (got[1], BAR_UR)]
        else:
            got = self.bulk_shared(dst, DST_UR)
            if got is not None:
                lane.append((got, DST_UR))
        if bar is not None:
            got = self.bulk_shared(bar, BAR_UR)
            if got is not None:
                lane.append((got, BAR_UR))
        if src_space == "global":
            got = self.bulk_global(src, SRC_UR)
            if got is not None:
                lane += [(got[0], SRC_UR), (got[1], Reg("UR", SRC_UR.index + 1))]
        else:
            got = self.bulk_shared(src, SRC_UR)
            if got is not None:
                lane.append((got, SRC_UR))
        got = self.bulk_size(size, mask)
        if got is not None:
            lane.append((got, SIZE_UR))
        operands = [Mem(ubase=DST_UR), Mem(ubase=SRC_UR), SIZE_UR]
        if policy is not None:
            got = self.bulk_policy(policy)
            if got is not None:
                lane += [(got[0], POLICY_UR), (got[1], Reg("UR", POLICY_UR.index + 1))]
            operands.append(Mem(desc=POLICY_UR, desc_only=True))
        where = ("G" if dst_space == "global" else "S", "G" if src_space == "global" else "S")
        if reduce:
            op = next((m for m in mods if m in REDUCE_OPS), None)
            ty = ins.type
            # multimem.cp.reduce.async.bulk (frontend/multimem.py): ptxas adds .STRONG.SYS
            multimem = MARK in mods
            floats = multimem or dst_space == "global"
            types = dict(REDUCE_TYPES, **REDUCE_FLOAT_TYPES) if floats else REDUCE_TYPES
            if op is None or ty not in types or "noftz" in mods and not floats:
                raise self.unsupported(f"`cp.{'.'.join(m for m in mods if m != MARK)}`")
            suffix = types[ty]
            if op in ("and", "or", "xor") and ty == "s64":
                suffix = ("U64",)
            opcode = "UBLKRED"
            out_mods = where + (op.upper(),) + suffix + (("STRONG", "SYS") if multimem else ())
        else:
            opcode, out_mods = "UBLKCP", where + (("MULTICAST",) if multicast else ()) + \
                (("DST_G_BYTE_MASK",) if byte_mask else ())

        self.mf.multicast_bulk |= MARK in mods

        def issue():
            mi = self.emit(opcode, out_mods, operands, ndefs=0, guarded=False)
            # the pairs' high registers are read too
            mi.widths = {0: 2 if dst_space == "global" or bar is not None else 1,
                         1: 2 if src_space == "global" else 1}
            if policy is not None:
                mi.widths[3] = 2
        if mbar or reduce:
            self.elect_loop(lane, issue)
        else:
            self.distinct_values_loop(lane, issue)

    def bulk_prefetch(self, ins):
        """cp.async.bulk.prefetch.L2.global [a], size: UBLKPF.L2 once per distinct (a, size)."""
        if len(ins.srcs) not in (2, 3):
            raise self.unsupported(f"`cp.{'.'.join(ins.modifiers)}`")
        src, size = ins.srcs[:2]         # (a cache policy, the third, is a hint: left out)
        lane: list[tuple] = []
        got = self.bulk_global(src, SRC_UR)
        if got is not None:
            lane += [(got[0], SRC_UR), (got[1], Reg("UR", SRC_UR.index + 1))]
        got = self.bulk_size(size)
        if got is not None:
            lane.append((got, SIZE_UR))

        def issue():
            mi = self.emit("UBLKPF", ("L2",), [Mem(ubase=SRC_UR), SIZE_UR], ndefs=0, guarded=False)
            mi.widths = {0: 2}
        self.distinct_values_loop(lane, issue)

    def store_bulk(self, ins):
        """st.bulk [a], size, 0 (sm_100+): `UMEMSETS.64 [UR8], URZ, UR12` zeroing size / 8
        words of shared::cta memory (a generic address: its low word, as ptxas), once per
        distinct (address, size) of the lanes."""
        if not self.arch.shared_memset:
            raise self.unsupported(f"`st.bulk` on {self.arch.name}")
        addr, size = ins.srcs[:2]
        lane: list[tuple] = []
        got = self.bulk_shared(addr, DST_UR)
        if got is not None:
            lane.append((got, DST_UR))
        got = self.memset_words(size)
        if got is not None:
            lane.append((got, SIZE_UR))

        def issue():
            self.emit("UMEMSETS", ("64",), [Mem(ubase=DST_UR), URZ, SIZE_UR], ndefs=0, guarded=False)
        self.distinct_values_loop(lane, issue)

    def memset_words(self, size):
        """st.bulk's byte count in 8-byte words into SIZE_UR (None where emitted here), else
        the per-lane register holding it."""
        value = self.known_constant(size)
        if value is not None:
            self.emit("UMOV", (), [SIZE_UR, self.imm32(value // MEMSET_UNIT)], guarded=False)
            return None
        wide = isinstance(size, ir.Value) and self.vreg(size).width == 2
        if isinstance(size, ir.Value) and size.id in self.param_values:
            self.emit("ULDC", ("64",) if wide else (), [SIZE_UR, self.param_values[size.id][0]],
                      guarded=False)
            self.emit("USHF", ("R", "U64") if wide else ("R", "U32", "HI"),
                      [SIZE_UR, SIZE_UR, Imm(3), Reg("UR", SIZE_UR.index + 1)] if wide
                      else [SIZE_UR, URZ, Imm(3), SIZE_UR], guarded=False)
            return None
        t = VOp(self.mf.new_vreg())
        if wide:
            self.emit("SHF", ("R", "U64"), [t, self.reg_part(size, 0), Imm(3), self.reg_part(size, 1)])
        else:
            self.emit("SHF", ("R", "U32", "HI"), [t, RZ, Imm(3), self.reg_part(size)])
        return t

    # ------------------------------------------------------------------ loops
    def distinct_values_loop(self, lane: list, issue) -> None:
        """`issue()` once where every operand is uniform and no guard applies, else once per
        distinct tuple of the lanes' values (under the guard)."""
        if not lane and self.guard is None:
            issue()
            return
        if not lane:            # guarded: the loop's one turn runs where the guard holds
            lane = [(RZ, RANK_UR)]
        self.uniform_loop_values(lane, issue)

    def elect_loop(self, lane: list, issue) -> None:
        """Once per lane (where the guard holds): ptxas's ELECT loop. P0 marks the lanes
        still to go; each turn ELECT picks the lowest (P1), its per-lane operands go into
        the uniform registers, it leaves P0, and `@P0 BRA.U.ANY` repeats while any lane is
        left. The branch keeps the warp together (no reconvergence needed)."""
        guard = self.guard
        pending = VOp(self.mf.new_vreg("P"))
        leader = VOp(self.mf.new_vreg("P"))
        self.emit("PLOP3", ("LUT",), [pending, PT, guard if guard is not None else PT, PT, PT,
                                      Imm(0x80), Imm(0)], guarded=False)
        # the leader flag starts false: ELECT writes it only in the lanes still pending
        self.emit("PLOP3", ("LUT",), [leader, PT, PT, PT, PT, Imm(0), Imm(0)], guarded=False)
        loop = self.start_block("elect")
        self.guard = pending
        self.emit("ELECT", (), [leader, URZ, PT], ndefs=2)
        self.guard = leader
        for value, ur in lane:
            self.emit("R2UR", (), [ur, value])
        self.emit("PLOP3", ("LUT",), [pending, PT, leader, PT, PT, Imm(0x8), Imm(0)])
        self.guard = None
        self.emit("PLOP3", ("LUT",), [leader, PT, PT, PT, PT, Imm(0x8), Imm(0)])
        issue()
        self.guard = guard
        self.out.append(MInstr("BRA", ("U", "ANY"), [Label(loop.name)], 0, pending, self.line,
                               uniform=True))
        self.start_block("elect_done")
        loop.succs.insert(0, loop)
        loop.preds.append(loop)

