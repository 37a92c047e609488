"""tcgen05's tensor memory on sm_100a/f and its family (`Target.tensor_memory`), as ptxas
13.5 writes it (tests/test_codegen_tcgen05.py's kernels; emu/ops_tmem.py the semantics).

* `tcgen05.alloc.cta_group::1 [dst], ncols`: one elected lane per warp (WARPSYNC.ALL;
  ELECT; the others branch to the end) asks the allocator `UTCATOMSWS.FIND_AND_SET.ALIGN
  UP0, URg, URn` for ncols/32 granules, retrying after NANOSLEEP 0x64 while UP0 is false;
  it then records the granules in the CTA's allocation bitmaps (ATOMS.OR of the granules
  into the partition word +0x14, of the first granule into +0x18) and stores the address
  (column = granule*32, lane 0) at dst; WARPSYNC.ALL joins the warp again.
* `tcgen05.alloc.cta_group::2`: the CTA pair's handshake (`tmem_alloc_pair`): the even CTA's
  leader takes the columns in both CTAs (`UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN`) and sends the
  granule to the odd CTA's dst (STAS on the odd CTA's partition mbarrier at +0x8), which
  answers with an arrive; dealloc and relinquish_alloc_permit of the pair are ::1's code.
  Code that writes UR4/UR5 is followed by the global-memory descriptor's reload.
* `tcgen05.dealloc.cta_group::1 taddr, ncols`: the bitmaps are checked first (columns not
  allocated, or not starting an allocation, trap: ptxas calls its two guardrail trap
  functions there, we trap in place with `@P BPT.TRAP 0x1`), then `UTCATOMSWS.AND URZ,
  ~granules` frees them and one lane clears them from the bitmaps.
* `tcgen05.relinquish_alloc_permit`: UVIRTCOUNT.DEALLOC.SMPOOL 0x80 and an elected lane's
  STS.U8 of 1 at the partition's +0x1c.
* `tcgen05.ld/st.<shape>.xN[.pack::16b|.unpack::16b]`: LDTM/STTM on one aligned register
  group, the address R2UR'd into a uniform register (`tmem[URa+offset]`); shapes 32x32b
  (no suffix), 16x64b/16x128b/16x256b (`.16dp64bit`...), 16x32bx2 (two: `_t0_t15`, `_t16_t31`
  at the immediate offset further).
* `tcgen05.wait::st`: FENCE.VIEW.ASYNC.T; `tcgen05.wait::ld` and the two fences: nothing of
  their own (ptxas: a NOP; the scoreboards order LDTM's results).
* `tcgen05.cp.cta_group::1.<shape>[.<warpx>][.b8x16.<src fmt>] [taddr], sdesc` and
  `tcgen05.shift.cta_group::1.down [taddr]`: once per lane in the ELECT loop, `UTCCP.T.S
  [.<shape>][.U6x16P32|.U4x16P64] tmem[UR11], gdesc[UR12]` / `UTCSHIFT.DOWN tmem[UR11]`
  (an address offset is added to UR11 first: our table has no offset form of UTCCP, ptxas
  writes `tmem[UR4+0x4]`). The emulator does not model either (shapes compared with ptxas's).
* `tcgen05.commit.cta_group::1.mbarrier::arrive::one[.multicast::cluster]`: once per lane,
  the ELECT loop of isel/bulk_copy.py around `UTCBAR [URb], URZ` (an arrive-on of the
  mbarrier at URb when the tcgen05 work issued before completes), `UTCBAR.MULTICAST [URb],
  URZ, URm` with the CTA mask (a register's is R2UR'd by the leader, as ptxas's
  R2UR.BROADCAST).
* `tcgen05.mma.cta_group::N.kind::{f16,tf32,f8f6f4,i8} [d], a-desc|[a-tmem], b-desc, idesc
  [, {disable-output-lane}], enable-input-d[, scale-input-d]`: once per lane in the ELECT
  loop, `UTC{H,Q,I}MMA[.2CTA] gdesc[UR8]|tmem[UR8], gdesc[UR10], tmem[UR6], tmem[UR4],
  idesc[UR5][, UR16], UP0|UPT|!UPT[, scale]` (tmem_mma). The emulator runs it at the
  warp's next commit (emu/ops_utcmma.py). `.ws`: `UTC*MMA.WS`, the optional zero-column
  mask descriptor a UR pair before the enable (a zero immediate dropped, as ptxas does);
  `.sp`: the metadata's tensor-memory address in the idesc pair's low half (`tmem[UR4]`);
  `.ashift`: `.ASHIFT`; `.collector::a::op` / `.collector::bN::op`: suffixes on A / B
  (`.A_KEEP`, `.B_REUSE.B_KEEP.BUFFER2` ...: COLLECTOR_SUFFIXES).

The partition (32 bytes at the end of the reserved shared words, `Target
.reserved_shared_section_bytes`; the weak `__nv_reservedSMEM_tcgen05_partition`) holds the
bitmaps; a function that allocates sets `MFunction.tmem_alloc` (cubin records, layout),
any tcgen05 use `MFunction.tmem_used` (VRC_CTA_INIT_COUNT), each `.cta_group::N`
`MFunction.tmem_cta_groups` (TCGEN05_<N>CTA_USED).

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Label, Mem, Reg, SpecialReg
from ptx2sass.isel.common import LUT, NOT_PT, PT, RZ, URZ
from ptx2sass.mir import COPY, MInstr, VMem, VOp

# the partition's words (offsets from its start): granules allocated, granules starting an
# allocation, the relinquished byte
ALLOCATED, STARTS, RELINQUISHED = 0x14, 0x18, 0x1C
# the CTA pair's (`.cta_group::2` alloc): its mbarrier, its phase word, the granule message's
# size (STAS of one word), `mapa`'s PRMT selector (the peer's rank into the top byte)
PAIR_MBARRIER, PAIR_PHASE, PAIR_MESSAGE_BYTES, MAPA_SELECTOR = 0x8, 0x10, 4, 0x654
PARTITION_BYTES = 0x20
GRANULE_COLUMNS = 32
ALLOC_SLEEP = 0x64               # NANOSLEEP between allocation tries (ptxas's)
RELINQUISH_COUNT = 0x80          # UVIRTCOUNT.DEALLOC.SMPOOL's operand (ptxas's)
TRAP_CODE = 0x1
RANK_SHIFT = 24                  # a shared address's CTA rank (SR_CgaCtaId) bits
# uniform registers live only inside one selection
UR_RANK, UR_PART, UR_COUNT, UR_GRANULE, UR_MASK, UR_START, UR_DST, UR_TMEM = (
    Reg("UR", n) for n in (4, 5, 6, 7, 8, 9, 10, 11))
DESCRIPTOR_PAIR = (4, 5)         # the global-memory descriptor's pair (codegen's prologue)
UR_CTA_MASK = Reg("UR", 14)      # tcgen05.commit.multicast's CTA mask
UR_DESC = Reg("UR", 12)          # tcgen05.cp's shared-memory descriptor pair UR12:UR13
UP_GOT = Reg("UP", 0)
UP_ANY = Reg("UP", 1)            # a guarded commit/cp/shift: some lane of the warp issues it
# tcgen05.cp's PTX shape [+ warp multicast] -> UTCCP's suffix; source format -> decompression
COPY_SHAPES = {("128x256b",): (), ("4x256b",): ("4dp256bit",), ("128x128b",): ("128dp128bit",),
               ("64x128b", "warpx2::02_13"): ("2x64dp128bit_lw02_lw13",),
               ("64x128b", "warpx2::01_23"): ("2x64dp128bit_lw01_lw23",),
               ("32x128b", "warpx4"): ("4x32dp128bit",)}
COPY_FORMATS = {("b8x16", "b6x16_p32"): ("U6x16P32",), ("b8x16", "b4x16_p64"): ("U4x16P64",)}
HALF_SPLIT = "16x32bx2"
HALF_SUFFIXES = (("16dp32bit_t0_t15",), ("16dp32bit_t16_t31",))
# PTX shape -> (SASS suffix, registers per .num)
# tcgen05.mma's kind -> the UTC*MMA opcode (kind::f16 and kind::tf32 share one: the element
# types are in the instruction descriptor)
MMA_OPCODES = {"kind::f16": "UTCHMMA", "kind::tf32": "UTCHMMA", "kind::f8f6f4": "UTCQMMA",
               "kind::i8": "UTCIMMA", "kind::mxf8f6f4": "UTCQMMA", "kind::mxf4": "UTCOMMA",
               "kind::mxf4nvf4": "UTCOMMA"}
# `.block_scale`'s kinds (the mx kinds need it, frontend/tcgen05.py) and the vector sizes that
# make ptxas 13.5 write `UTCOMMA.4X` (16-element scale blocks: sm_103's nvdisasm prints the same
# bits as `.BLOCK16`); every other vector size is the plain opcode
MMA_BLOCK_SCALED_KINDS = ("kind::mxf8f6f4", "kind::mxf4", "kind::mxf4nvf4")
MMA_BLOCK_SCALE_MODIFIERS = ("block_scale", "scale_vec::1X", "scale_vec::2X", "scale_vec::4X",
                             "block16", "block32")
MMA_4X = ("scale_vec::4X", "block16")
MMA_SCALED_KINDS = ("kind::f16", "kind::tf32")        # the kinds with scale-input-d
# tcgen05.mma's uniform registers (ptxas's choice in its kernels): the idesc pair (its low
# half 0, shown as `tmem[UR4]`), D's address, A's descriptor pair or address, B's pair, the
# disable-output-lane quad, a per-lane enable-input-d's scratch
UR_MMA_IDESC, UR_MMA_D, UR_MMA_A, UR_MMA_B, UR_MMA_LANES, UR_MMA_ENABLE = (
    Reg("UR", n) for n in (4, 6, 8, 10, 16, 12))
UP_ENABLE = Reg("UP", 0)
UPT = Reg("UP", 7)
NOT_UPT_MMA = Reg("UP", 7, inv=True)
SHAPES = {"32x32b": ((), 1), "16x64b": (("16dp64bit",), 1), "16x128b": (("16dp128bit",), 2),
          "16x256b": (("16dp256bit",), 4)}


# tcgen05.mma's collector usage -> the operand suffixes ptxas 13.5 writes (A's on A, B's on B;
# `.collector::bN` with N > 0 adds `.BUFFERN`; `::discard` is the default: nothing)
COLLECTOR_SUFFIXES = {"fill": ("KEEP",), "use": ("REUSE", "KEEP"), "lastuse": ("REUSE",), "discard": ()}


def collector_suffixes(modifiers) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(A's suffixes, B's suffixes) of a tcgen05.mma's `.collector::a::op` / `.collector::bN::op`."""
    for m in modifiers:
        if m.startswith("collector::"):
            _, buffer, op = m.split("::")
            which = buffer[0].upper()
            suffix = tuple(f"{which}_{s}" for s in COLLECTOR_SUFFIXES[op])
            if buffer not in ("a", "b0"):
                suffix += (f"BUFFER{buffer[1:]}",)
            return (suffix, ()) if which == "A" else ((), suffix)
    return (), ()


class TensorMemorySelection:
    def sel_tcgen05(self, ins):
        """One tcgen05 instruction; where its code wrote UR4/UR5 (the partition's and the
        instruction descriptor's fixed registers), the global-memory descriptor that
        `desc[UR4]` accesses read is loaded again after it (as after a system call:
        isel/calls.py; dropped unless the function reads it)."""
        blocks, start = len(self.mf.blocks), len(self.out)
        first = self.current
        self.sel_tcgen05_form(ins)
        emitted = ([mi for b in [first] + self.mf.blocks[blocks:] for mi in b.instrs]
                   if self.current is not first else self.out[start:])
        if any(isinstance(op, Reg) and op.file == "UR" and op.index in DESCRIPTOR_PAIR
               for mi in emitted for op in mi.operands[:mi.ndefs]) \
                and self.arch.global_desc_offset is not None:
            self.out.append(MInstr("ULDC", ("64",), [Reg("UR", DESCRIPTOR_PAIR[0]),
                                                     ConstRef(0, self.arch.global_desc_offset)],
                                   1, None, self.line))

    def sel_tcgen05_form(self, ins):
        if not self.arch.tensor_memory:
            raise self.unsupported(f"`tcgen05` on {self.arch.name}")
        kind = ins.modifiers[0] if ins.modifiers else ""
        pair = "cta_group::2" in ins.modifiers
        # dealloc and relinquish_alloc_permit of the pair: ptxas 13.5 writes ::1's code; the
        # pair's alloc is a handshake between the two CTAs (tmem_alloc_pair)
        if pair and kind not in ("alloc", "commit", "cp", "shift", "mma", "dealloc", "relinquish_alloc_permit"):
            raise self.unsupported(f"`tcgen05.{kind}.cta_group::2`")
        if kind.startswith("mma") and kind != "mma":
            raise self.unsupported(f"`tcgen05.{kind}`")
        if self.guard is not None and kind not in ("ld", "st", "commit", "cp", "shift", "mma"):
            raise self.unsupported(f"guarded `tcgen05.{kind}`")
        self.mf.tmem_used = True
        self.mf.tmem_cta_groups.update(int(m[-1]) for m in ins.modifiers if m.startswith("cta_group::"))
        self.tmem_pair = ("2CTA",) if pair else ()      # the CTA pair's form (commit, cp, shift, mma)
        if kind == "alloc":
            return self.tmem_alloc_pair(ins) if pair else self.tmem_alloc(ins)
        if kind == "dealloc":
            return self.tmem_dealloc(ins)
        if kind == "relinquish_alloc_permit":
            return self.tmem_relinquish()
        if kind in ("ld", "st"):
            return self.tmem_load_store(ins, kind)
        if kind == "wait::st":
            self.emit("FENCE", ("VIEW", "ASYNC", "T"), [], ndefs=0)
            return
        if kind in ("wait::ld", "fence::before_thread_sync", "fence::after_thread_sync"):
            return
        if kind == "commit":
            return self.tmem_commit(ins)
        if kind in ("cp", "shift"):
            return self.tmem_copy_shift(ins, kind)
        if kind == "mma":
            return self.tmem_mma(ins)
        raise self.unsupported(f"`tcgen05.{kind}`")

    # ------------------------------------------------------------------ helpers
    def tmem_partition(self) -> None:
        """UR_PART = the partition's shared address (this CTA's window)."""
        base = self.arch.tmem_partition_offset
        self.emit("S2UR", (), [UR_RANK, SpecialReg("SR_CgaCtaId")], guarded=False)
        self.emit("UMOV", (), [UR_PART, self.imm32(base)], guarded=False)
        self.emit("ULEA", (), [UR_PART, UR_RANK, UR_PART, Imm(RANK_SHIFT)], guarded=False)

    def tmem_granules(self, ins):
        """(granule count, granule mask) of an alloc/dealloc's column count: ints for an
        immediate; for a register (as ptxas) ncols >> 5 and ~(-1 << that), per lane."""
        ncols = ins.srcs[1]
        n = self.known_constant(ncols)
        if n is not None:
            granules = n // GRANULE_COLUMNS
            return granules, (1 << granules) - 1
        count, high, mask = (VOp(self.mf.new_vreg()) for _ in range(3))
        self.emit("SHF", ("R", "S32", "HI"), [count, RZ, Imm(5), self.reg_part(ncols)])
        self.emit("SHF", ("L", "U32"), [high, self.reg_part(ir.Const(0xFFFFFFFF, "b32")), count, RZ])
        self.emit("LOP3", ("LUT",), [mask, RZ, high, RZ, Imm(0x33), NOT_PT])
        return count, mask

    def warp_sync(self) -> None:
        """WARPSYNC.ALL around the allocator's code (ptxas lists each in
        COOP_GROUP_INSTR_OFFSETS, isel/memory.py's warp_sync_op)."""
        self.warp_sync_op("WARPSYNC", (), [Imm(0xFFFFFFFF)], ndefs=0, guarded=False)

    def uniform_branch(self, target, up: Reg) -> None:
        """`BRA.U UPn, target` (a branch the whole warp takes or not)."""
        self.out.append(MInstr("BRA", ("U",), [up, Label(target.name)], 0, None, self.line, uniform=True))
        self._flow_link(self.current, target)

    # ------------------------------------------------------------------ alloc / dealloc
    def _tmem_take(self, granules, take: tuple) -> VOp:
        """UTCATOMSWS `take` of `granules` columns, retried after a NANOSLEEP until it
        succeeds (as ptxas's loop); the first granule taken, in a register."""
        if isinstance(granules, int):
            self.emit("UMOV", (), [UR_COUNT, self.imm32(granules)], guarded=False)
        else:
            self.emit("R2UR", (), [UR_COUNT, granules])
        self.emit("UTCATOMSWS", take, [UP_GOT, UR_GRANULE, UR_COUNT], ndefs=2)
        got = self.flow_block("tmem_alloc_got")
        self.uniform_branch(got, UP_GOT)
        retry = self.flow_block("tmem_alloc_retry")
        self.flow_enter(retry)
        self.emit("NANOSLEEP", (), [Imm(ALLOC_SLEEP)], ndefs=0)
        self.emit("UTCATOMSWS", take, [UP_GOT, UR_GRANULE, UR_COUNT], ndefs=2)
        self.out.append(MInstr("BRA", ("U",), [Reg("UP", 0, inv=True), Label(retry.name)], 0, None,
                               self.line, uniform=True))
        self._flow_link(retry, retry)
        self.flow_enter(got)
        first = VOp(self.mf.new_vreg())
        self.emit("MOV", (), [first, UR_GRANULE])
        return first

    def tmem_alloc(self, ins):
        self.mf.tmem_alloc = True
        granules, granule_mask = self.tmem_granules(ins)
        dst = ins.srcs[0]
        self.warp_sync()
        leader = VOp(self.mf.new_vreg("P"))
        self.emit("ELECT", (), [leader, URZ, PT], ndefs=2)
        done = self.flow_block("tmem_alloc_done")
        self.flow_goto(done, when=VOp(leader.reg, inv=True))
        lane = self.bulk_shared(dst, UR_DST)          # isel/bulk_copy.py (None: in UR_DST)
        self.tmem_partition()
        first = self._tmem_take(granules, ("FIND_AND_SET", "ALIGN"))
        mask, start, column = (VOp(self.mf.new_vreg()) for _ in range(3))
        self.emit("SHF", ("L", "U32"), [mask, (self.reg_part(ir.Const(granule_mask, "b32"))
                                            if isinstance(granule_mask, int) else granule_mask), first, RZ])
        self.emit("SHF", ("L", "U32"), [start, self.reg_part(ir.Const(1, "b32")), first, RZ])
        self.emit("SHF", ("L", "U32"), [column, first, Imm(5), RZ])
        self.emit("ATOMS", ("OR",), [RZ, Mem(ubase=UR_PART, offset=ALLOCATED), mask])
        self.emit("ATOMS", ("OR",), [RZ, Mem(ubase=UR_PART, offset=STARTS), start])
        where = Mem(ubase=UR_DST) if lane is None else VMem(lane, 0, wide=False)
        self.emit("STS", (), [where, column], ndefs=0)
        self.flow_enter(done)
        self.warp_sync()

    def tmem_alloc_pair(self, ins):
        """`tcgen05.alloc.cta_group::2`: one warp of each CTA of the pair (ranks 2k, 2k+1)
        runs it, as ptxas 13.5 writes it. The even CTA's elected lane takes the columns in
        both CTAs' tensor memory (`UTCATOMSWS.2CTA.FIND_AND_SET.ALIGN` retry loop) and sends
        the first granule to the odd CTA's `dst` with `STAS` on the odd CTA's partition
        mbarrier (+0x8), after an arrive.expect_tx of its 4 bytes there; the odd CTA's
        elected lane waits on that mbarrier, reads the granule back from its `dst` and
        arrives on the even CTA's mbarrier once it has stored its column, which the even
        CTA's next allocation waits for. Each side waits on its own mbarrier with the parity
        of the phase word at +0x10 and toggles that word; both store the column at `dst` and
        OR the granules into their bitmaps. (The driver's at-entry fragment TMEM_CTA2
        prepares the mbarriers: emu/ops_tmem.py's model.)"""
        self.mf.tmem_alloc = True
        granules, granule_mask = self.tmem_granules(ins)
        self.warp_sync()
        leader = VOp(self.mf.new_vreg("P"))
        self.emit("ELECT", (), [leader, URZ, PT], ndefs=2)
        done = self.flow_block("tmem_alloc_done")
        self.flow_goto(done, when=VOp(leader.reg, inv=True))
        dst = self.bulk_shared(ins.srcs[0], UR_DST)
        if dst is None:
            dst = VOp(self.mf.new_vreg())
            self.emit("MOV", (), [dst, UR_DST])
        self.tmem_partition()
        part, rank, odd, peer = (VOp(self.mf.new_vreg()) for _ in range(4))
        self.emit("MOV", (), [part, UR_PART])
        self.emit("MOV", (), [rank, UR_RANK])
        self.emit("LOP3", ("LUT",), [odd, rank, Imm(1), RZ, Imm(LUT["and"]), NOT_PT])
        self.emit("LOP3", ("LUT",), [peer, rank, Imm(1), RZ, Imm(LUT["xor"]), NOT_PT])
        bar = VMem(part, PAIR_MBARRIER, wide=False, uniform_zero=True)
        phase, parity = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("LDS", (), [phase, VMem(part, PAIR_PHASE, wide=False)])
        self.emit("SHF", ("L", "U32"), [parity, phase, Imm(31), RZ])
        wait = self.flow_block("tmem_pair_wait")
        self.flow_enter(wait)
        ready = VOp(self.mf.new_vreg("P"))
        self.emit("SYNCS", ("PHASECHK", "TRANS64", "TRYWAIT"), [ready, bar, parity], ndefs=1)
        self.flow_goto(wait, when=VOp(ready.reg, inv=True))
        peer_bar, own_bar = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [own_bar, part, Imm(PAIR_MBARRIER), RZ])
        self.emit("PRMT", (), [peer_bar, peer, Imm(MAPA_SELECTOR), own_bar])
        is_odd = VOp(self.mf.new_vreg("P"))
        self.emit("ISETP", ("NE", "U32", "AND"), [is_odd, PT, odd, RZ, PT])
        odd_side = self.flow_block("tmem_pair_odd")
        self.flow_goto(odd_side, when=is_odd)
        # the even CTA: allocate in both, send the granule
        first = self._tmem_take(granules, ("2CTA", "FIND_AND_SET", "ALIGN"))
        size = VOp(self.mf.new_vreg())
        self.move(size, Imm(PAIR_MESSAGE_BYTES))
        self.emit("SYNCS", ("ARRIVE", "TRANS64", "RED"), [RZ, VMem(peer_bar, 0, wide=False, uniform_zero=True),
                                                          size])
        pair = self.new_pair()
        self.emit("PRMT", (), [VOp(pair.reg, 0), peer, Imm(MAPA_SELECTOR), dst])
        self.move(VOp(pair.reg, 1), peer_bar)
        self.emit("STAS", (), [VMem(pair, 0, wide=True, described=False), first], ndefs=0)
        self.tmem_pair_record(first, granule_mask, part, dst)
        joined = self.flow_block("tmem_pair_joined")
        self.flow_goto(joined)
        # the odd CTA: the granule the even one stored at dst, then let it go on
        self.flow_enter(odd_side)
        sent = VOp(self.mf.new_vreg())
        self.emit("LDS", (), [sent, VMem(dst, 0, wide=False)])
        self.tmem_pair_record(sent, granule_mask, part, dst)
        self.emit("SYNCS", ("ARRIVE", "TRANS64", "RED", "A1T0"),
                  [RZ, VMem(peer_bar, 0, wide=False, uniform_zero=True), RZ])
        self.flow_enter(joined)
        one = VOp(self.mf.new_vreg())
        self.move(one, Imm(1))
        self.emit("ATOMS", ("XOR",), [RZ, VMem(part, PAIR_PHASE, wide=False), one])
        self.flow_enter(done)
        self.warp_sync()

    def tmem_pair_record(self, first, granule_mask, part, dst) -> None:
        """This CTA's record of the pair's allocation at granule `first`: the column at `dst`,
        the granules in the partition's bitmaps (per-lane `part`)."""
        mask, start, column = (VOp(self.mf.new_vreg()) for _ in range(3))
        self.emit("SHF", ("L", "U32"), [mask, (self.reg_part(ir.Const(granule_mask, "b32"))
                                            if isinstance(granule_mask, int) else granule_mask), first, RZ])
        self.emit("SHF", ("L", "U32"), [start, self.reg_part(ir.Const(1, "b32")), first, RZ])
        self.emit("SHF", ("L", "U32"), [column, first, Imm(5), RZ])
        self.emit("STS", (), [VMem(dst, 0, wide=False), column], ndefs=0)
        self.emit("ATOMS", ("OR",), [RZ, VMem(part, ALLOCATED, wide=False), mask])
        self.emit("ATOMS", ("OR",), [RZ, VMem(part, STARTS, wide=False), start])

    def tmem_relinquish(self):
        if not (self.out and self.out[-1].opcode == "WARPSYNC"):      # right after an alloc's
            self.warp_sync()
        leader = VOp(self.mf.new_vreg("P"))
        self.emit("ELECT", (), [leader, URZ, PT], ndefs=2)
        self.tmem_partition()
        self.emit("UVIRTCOUNT", ("DEALLOC", "SMPOOL"), [Imm(RELINQUISH_COUNT)], ndefs=0)
        one = VOp(self.mf.new_vreg())
        self.move(one, Imm(1))
        self.guard = leader
        self.emit("STS", ("U8",), [Mem(ubase=UR_PART, offset=RELINQUISHED), one], ndefs=0)
        self.guard = None

    def tmem_dealloc(self, ins):
        self.mf.tmem_alloc = True
        self.warp_sync()
        _, granule_mask = self.tmem_granules(ins)
        column = VOp(self.mf.new_vreg())
        self.emit("LOP3", ("LUT",), [column, self.reg_part(ins.srcs[0]), Imm(0xFFFF), RZ,
                                     Imm(LUT["and"]), NOT_PT])
        self.emit("R2UR", (), [UR_GRANULE, column])
        self.emit("USHF", ("R", "U32", "HI"), [UR_GRANULE, URZ, Imm(5), UR_GRANULE], guarded=False)
        if isinstance(granule_mask, int):
            self.emit("UMOV", (), [UR_MASK, self.imm32(granule_mask)], guarded=False)
        else:
            self.emit("R2UR", (), [UR_MASK, granule_mask])
        self.emit("UMOV", (), [UR_START, Imm(1)], guarded=False)
        self.emit("USHF", ("L", "U32"), [UR_MASK, UR_MASK, UR_GRANULE, URZ], guarded=False)
        self.emit("USHF", ("L", "U32"), [UR_START, UR_START, UR_GRANULE, URZ], guarded=False)
        self.tmem_partition()
        for offset, want in ((ALLOCATED, UR_MASK), (STARTS, UR_START)):
            word, held = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("LDS", (), [word, Mem(ubase=UR_PART, offset=offset)])
            self.emit("LOP3", ("LUT",), [held, word, want, RZ, Imm(LUT["and"]), NOT_PT])
            bad = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("NE", "AND"), [bad, PT, held, want, PT])
            self.guard = bad
            self.emit("BPT", ("TRAP",), [Imm(TRAP_CODE)], ndefs=0)
            self.guard = None
        for ur in (UR_MASK, UR_START):
            self.emit("ULOP3", ("LUT",), [ur, URZ, ur, URZ, Imm(0x33), Reg("UP", 7, inv=True)],
                      guarded=False)
        self.emit("UTCATOMSWS", ("AND",), [URZ, UR_MASK], ndefs=0)
        leader = VOp(self.mf.new_vreg("P"))
        self.emit("ELECT", (), [leader, URZ, PT], ndefs=2)
        keep_mask, keep_start = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("MOV", (), [keep_mask, UR_MASK])
        self.emit("MOV", (), [keep_start, UR_START])
        self.guard = leader
        self.emit("ATOMS", ("AND",), [RZ, Mem(ubase=UR_PART, offset=ALLOCATED), keep_mask])
        self.emit("ATOMS", ("AND",), [RZ, Mem(ubase=UR_PART, offset=STARTS), keep_start])
        self.guard = None
        self.warp_sync()

    # ------------------------------------------------------------------ ld / st
    def tmem_address(self, addr) -> Mem:
        """`tmem[UR_TMEM+offset]` for a tcgen05.ld/st address operand."""
        if not isinstance(addr, ir.Address):
            raise self.unsupported(f"tcgen05 address operand {addr!r}")
        base = addr.base
        if isinstance(base, ir.Value) and base.id in self.param_values:
            self.emit("ULDC", (), [UR_TMEM, self.param_values[base.id][0]], guarded=False)
        elif isinstance(base, ir.Value):
            self.emit("R2UR", (), [UR_TMEM, self.reg_part(base)], guarded=False)
        else:
            raise self.unsupported(f"tcgen05 address operand {addr!r}")
        return Mem(ubase=UR_TMEM, offset=addr.offset, space="tmem")

    def tmem_load_store(self, ins, kind):
        """LDTM/STTM; `.16x32bx2` is two of them on the same registers, the lower 16 lanes
        (`_t0_t15`) at the address and the upper (`_t16_t31`) at the address plus the
        immediate half-split offset, as ptxas writes it."""
        mods = ins.modifiers
        shape = next((m for m in mods if m in SHAPES or m == HALF_SPLIT), None)
        srcs = list(ins.srcs)
        if shape == HALF_SPLIT:
            split = self.known_constant(srcs.pop(1))
            if split is None:
                raise self.unsupported(f"`tcgen05.{kind}.16x32bx2` with a register offset")
            halves = [(HALF_SUFFIXES[0], 0), (HALF_SUFFIXES[1], split)]
            per = 1
        elif shape in SHAPES:
            suffix, per = SHAPES[shape]
            halves = [(suffix, 0)]
        else:
            raise self.unsupported(f"`tcgen05.{kind}.{shape}`")
        num = next(int(m[1:]) for m in mods if m.startswith("x") and m[1:].isdigit())
        count = per * num
        extra = ((f"x{num}",) if num > 1 else ())
        if kind == "ld" and "pack::16b" in mods:
            extra += ("PACK16BIT",)
        if kind == "st" and "unpack::16b" in mods:
            extra += ("EXPAND16BIT",)
        if kind == "ld":
            group = VOp(self.mf.new_vreg("R", count)) if count > 1 else VOp(self.mf.new_vreg())
            mem = self.tmem_address(srcs[0])
            for k, (suffix, split) in enumerate(halves):
                # the second half keeps the first's lanes: it reads the group too (not shown),
                # so nothing is given the registers between the two
                mi = self.emit("LDTM", suffix + extra, [group, replace(mem, offset=mem.offset + split)]
                               + ([group] if k else []))
                if k:
                    mi.shown = (0, 1)
            for k, value in enumerate(ins.dests):
                self.emit(COPY, (), [self.dst(value), VOp(group.reg, k) if count > 1 else group],
                          guarded=False)
        else:
            values = srcs[1:]
            group = self.gather(values) if count > 1 else self.reg_part(values[0])
            mem = self.tmem_address(srcs[0])
            for suffix, split in halves:
                self.emit("STTM", suffix + extra, [replace(mem, offset=mem.offset + split), group], ndefs=0)

    # ------------------------------------------------------------------ commit
    def tmem_commit(self, ins):
        multicast = "multicast::cluster" in ins.modifiers
        if len(ins.srcs) != 1 + multicast:
            raise self.unsupported("`tcgen05.commit` operands")
        lane = []
        got = self.bulk_shared(ins.srcs[0], UR_DST)
        if got is not None:
            lane.append((got, UR_DST))
        operands = [Mem(ubase=UR_DST), URZ]
        if multicast:        # UTCBAR.MULTICAST [URb], URZ, URmask (the 16-bit CTA mask)
            mask = self.known_constant(ins.srcs[1])
            if mask is not None:
                self.emit("UMOV", (), [UR_CTA_MASK, self.imm32(mask & 0xFFFF)], guarded=False)
            else:
                lane.append((self.extend(ins.srcs[1], "u16"), UR_CTA_MASK))
            operands.append(UR_CTA_MASK)
        warp_guard = self.any_lane_guard()

        def issue():
            mi = self.emit("UTCBAR", self.tmem_pair + (("MULTICAST",) if multicast else ()), operands, ndefs=0,
                           guarded=False)
            mi.guard = warp_guard
        self.elect_loop(lane, issue)

    def any_lane_guard(self):
        """For a guarded instruction issued once per lane in the ELECT loop: UP_ANY = the guard
        holds in some lane (VOTEU.ANY), which guards the unit instruction, so a warp where no
        lane issues it runs the loop's one turn without it. None when unguarded."""
        if self.guard is None:
            return None
        self.emit("VOTEU", ("ANY",), [UP_ANY, self.guard], guarded=False)
        return UP_ANY

    # ------------------------------------------------------------------ cp / shift
    def tmem_copy_shift(self, ins, kind):
        mods = ins.modifiers[2:]                  # after the kind and the CTA group
        if kind == "shift":
            if mods != ("down",):
                raise self.unsupported(f"`tcgen05.shift.{'.'.join(mods)}`")
            tokens = self.tmem_pair + ("DOWN",)
        else:
            shape = tuple(m for m in mods if "x" in m and not m.startswith("b"))
            form = tuple(m for m in mods if m.startswith("b") and "x" in m)
            if shape not in COPY_SHAPES or (form and form not in COPY_FORMATS) \
                    or len(shape) + len(form) != len(mods):
                raise self.unsupported(f"`tcgen05.cp.{'.'.join(mods)}`")
            tokens = ("T", "S") + self.tmem_pair + COPY_SHAPES[shape] + COPY_FORMATS.get(form, ())
        lane = []
        addr = ins.srcs[0]
        if not isinstance(addr, ir.Address) or not isinstance(addr.base, ir.Value):
            raise self.unsupported(f"tcgen05 address operand {addr!r}")
        if addr.base.id in self.param_values:
            self.emit("ULDC", (), [UR_TMEM, self.param_values[addr.base.id][0]], guarded=False)
        else:
            lane.append((self.reg_part(addr.base), UR_TMEM))
        operands = [Mem(ubase=UR_TMEM, space="tmem")]
        if kind == "cp":
            desc = ins.srcs[1]
            if isinstance(desc, ir.Value) and desc.id in self.param_values:
                self.emit("ULDC", ("64",), [UR_DESC, self.param_values[desc.id][0]], guarded=False)
            else:
                lane += [(self.reg_part(desc, 0), UR_DESC),
                         (self.reg_part(desc, 1), Reg("UR", UR_DESC.index + 1))]
            operands.append(Reg("UR", UR_DESC.index, gdesc=True))
        offset = addr.offset
        warp_guard = self.any_lane_guard()

        def issue():
            if offset:
                self.emit("UIADD3", (), [UR_TMEM, UR_TMEM, self.imm32(offset), URZ], guarded=False)
            mi = self.emit("UTCSHIFT" if kind == "shift" else "UTCCP", tokens, operands, ndefs=0,
                           guarded=False)
            mi.guard = warp_guard
            if kind == "cp":
                mi.widths = {1: 2}
        self.elect_loop(lane, issue)

    # ------------------------------------------------------------------ mma
    def tmem_mma(self, ins):
        """`tcgen05.mma.cta_group::N.kind::K [d], a, b, idesc[, {lanes}], enable[, scale]`
        (a: a shared-memory descriptor or `[a-tmem]`) -> once per lane in the ELECT loop,
        `UTC{H,Q,I}MMA A, gdesc[UR10], tmem[UR6], tmem[UR4], idesc[UR5][, UR16], UPe[, scale]`
        as ptxas 13.5 writes it: operands in uniform registers (kernel parameters by ULDC
        before the loop, registers by the elected lane's R2UR), the idesc in the upper half of
        a pair whose lower half is 0; enable-input-d an immediate (UPT/!UPT), a compare of
        kernel parameters (wgmma's UISETP, isel/wgmma.py) or the elected lane's predicate.
        `.cta_group::2` is the `.2CTA` form with an 8-register disable-output-lane group
        (compared with ptxas's text only: the emulator launches no CTA pair)."""
        ws = "ws" in ins.modifiers
        block_scale = "block_scale" in ins.modifiers
        mods = [m for m in ins.modifiers[1:] if m not in ("ws", "ashift", "sp") and not m.startswith("cta_group::")
                and not m.startswith("collector::") and m not in MMA_BLOCK_SCALE_MODIFIERS]
        kinds = [m for m in mods if m.startswith("kind::")]
        if len(kinds) != 1 or kinds[0] not in MMA_OPCODES or len(mods) != 1:
            raise self.unsupported(f"`tcgen05.mma.{'.'.join(ins.modifiers[1:])}`")
        kind = kinds[0]
        if block_scale != (kind in MMA_BLOCK_SCALED_KINDS):
            raise self.unsupported(f"`tcgen05.mma.{'.'.join(ins.modifiers[1:])}`")
        a_usage, b_usage = collector_suffixes(ins.modifiers)
        srcs = list(ins.srcs)
        # .sp: the sparsity metadata's tensor-memory address, the idesc pair's low half
        sparse_meta = srcs.pop(3) if "sp" in ins.modifiers else None
        # .block_scale: [scale-A], [scale-B] after the idesc -> one tensor-memory address pair
        scale_tmem = None
        if block_scale:
            if len(srcs) != 7:
                raise self.unsupported("`tcgen05.mma.block_scale` operands")
            scale_tmem, srcs = srcs[4:6], srcs[:4] + srcs[6:]
        width = 8 if self.tmem_pair else 4          # the disable-output-lane vector's
        zero_mask = None
        if ws:                                      # [d], a, b, idesc, enable[, zero-column mask]
            lanes = None
            if len(srcs) == 6:
                zero_mask = srcs.pop()
                if self.known_constant(zero_mask) == 0:
                    zero_mask = None                # ptxas drops a zero mask descriptor
        elif len(srcs) in (5 + width, 6 + width):
            lanes, srcs = srcs[4:4 + width], srcs[:4] + srcs[4 + width:]
        elif len(srcs) in (5, 6):
            lanes = None
        else:
            raise self.unsupported("`tcgen05.mma` operands")
        d, a, b, idesc, enable = srcs[:5]
        scale = srcs[5] if len(srcs) == 6 else None
        if scale is not None:
            scale = self.known_constant(scale)
            if scale is None:
                raise self.unsupported("`tcgen05.mma` with a register scale-input-d")
        lane = []
        tail = []
        # enable-input-d first: wgmma's uniform compare uses UR6/UR7 as scratch
        en = self.known_constant(enable)
        if en is not None:
            tail.append(UPT if en & 1 else NOT_UPT_MMA)
            per_lane_enable = None
        else:
            uniform = self.uniform_scale_d(enable) if isinstance(enable, ir.Value) else None
            if uniform == "plain":
                tail.append(UP_ENABLE)
                per_lane_enable = None
            else:
                if uniform is not None:         # an inverted compare: not a form we encode
                    raise self.unsupported("`tcgen05.mma` with this enable-input-d")
                per_lane_enable = VOp(self.mf.new_vreg())
                self.emit("SEL", (), [per_lane_enable, RZ, Imm(1),
                                      VOp(self.vreg(enable), inv=True)])
                lane.append((per_lane_enable, UR_MMA_ENABLE))
                tail.append(UP_ENABLE)
        # D and (from tensor memory) A: a tensor-memory address (+ an immediate offset)
        offsets = []

        def tmem_operand(addr, ur):
            if not isinstance(addr, ir.Address) or not isinstance(addr.base, ir.Value):
                raise self.unsupported(f"tcgen05 address operand {addr!r}")
            if addr.base.id in self.param_values:
                self.emit("ULDC", (), [ur, self.param_values[addr.base.id][0]], guarded=False)
            else:
                lane.append((self.reg_part(addr.base), ur))
            if addr.offset:
                offsets.append((ur, addr.offset))
            return Mem(ubase=ur, space="tmem")

        def pair_operand(value, ur):
            """A 64-bit descriptor into ur:ur+1."""
            if isinstance(value, ir.Value) and len(self.param_values.get(value.id, ())) == 2:
                self.emit("ULDC", ("64",), [ur, self.param_values[value.id][0]], guarded=False)
                return
            known = self.known_constant(value)
            for half in range(2):
                target = Reg("UR", ur.index + half)
                if known is not None:
                    self.emit("UMOV", (), [target, self.imm32(known >> 32 * half)], guarded=False)
                else:
                    lane.append((self.reg_part(value, half), target))

        d_op = tmem_operand(d, UR_MMA_D)
        if isinstance(a, ir.Address):
            a_op = replace(tmem_operand(a, UR_MMA_A), suffix=a_usage)
        else:
            pair_operand(a, UR_MMA_A)
            a_op = Reg("UR", UR_MMA_A.index, gdesc=True, suffix=a_usage)
        pair_operand(b, UR_MMA_B)
        b_op = Reg("UR", UR_MMA_B.index, gdesc=True, suffix=b_usage)
        # the instruction descriptor: the upper half of a pair whose lower half is 0
        idesc_ur = Reg("UR", UR_MMA_IDESC.index + 1)
        if sparse_meta is not None:
            tmem_operand(sparse_meta, UR_MMA_IDESC)
        else:
            self.emit("UMOV", (), [UR_MMA_IDESC, URZ], guarded=False)
        known = self.known_constant(idesc)
        if known is not None:
            self.emit("UMOV", (), [idesc_ur, self.imm32(known)], guarded=False)
        elif isinstance(idesc, ir.Value) and len(self.param_values.get(idesc.id, ())) == 1:
            self.emit("ULDC", (), [idesc_ur, self.param_values[idesc.id][0]], guarded=False)
        else:
            lane.append((self.reg_part(idesc), idesc_ur))
        operands = [a_op, b_op, d_op, Mem(ubase=UR_MMA_IDESC, space="tmem"),
                    Mem(ubase=idesc_ur, space="idesc")]
        scale_index = None
        if scale_tmem is not None:                  # ptxas: `idesc[UR5], tmem[UR8], UP0`
            for value, ur in zip(scale_tmem, (UR_MMA_LANES, Reg("UR", UR_MMA_LANES.index + 1))):
                tmem_operand(value, ur)
            scale_index = len(operands)
            operands.append(Mem(ubase=UR_MMA_LANES, space="tmem"))
        if lanes is not None:
            for k, value in enumerate(lanes):
                target = Reg("UR", UR_MMA_LANES.index + k)
                known = self.known_constant(value)
                if known is not None:
                    self.emit("UMOV", (), [target, self.imm32(known)], guarded=False)
                else:
                    lane.append((self.reg_part(value), target))
            operands.append(UR_MMA_LANES)
        if zero_mask is not None:
            pair_operand(zero_mask, UR_MMA_LANES)
            operands.append(UR_MMA_LANES)
        operands += tail
        if scale and kind in MMA_SCALED_KINDS:        # kind::i8: ptxas drops it (frontend/tcgen05.py)
            operands.append(Imm(scale))
        warp_guard = self.any_lane_guard()
        mma_modifiers = (("WS",) if ws else ()) + self.tmem_pair + (("ASHIFT",) if "ashift" in ins.modifiers else ()) \
            + (("4X",) if any(m in MMA_4X for m in ins.modifiers) else ())

        def issue():
            for ur, offset in offsets:
                self.emit("UIADD3", (), [ur, ur, self.imm32(offset), URZ], guarded=False)
            if per_lane_enable is not None:
                self.emit("UISETP", ("NE", "U32", "AND"), [UP_ENABLE, UPT, UR_MMA_ENABLE, URZ, UPT],
                          guarded=False)
            mi = self.emit(MMA_OPCODES[kind], mma_modifiers, operands, ndefs=0, guarded=False)
            mi.guard = warp_guard
            widths = {k: 2 for k, op in enumerate(operands) if isinstance(op, Reg) and op.gdesc}
            if lanes is not None:
                widths[operands.index(UR_MMA_LANES)] = width
            if zero_mask is not None:
                widths[operands.index(UR_MMA_LANES)] = 2
            if scale_index is not None:             # scale-A's address, scale-B's in the next UR
                widths[scale_index] = 2
            mi.widths = widths
        self.elect_loop(lane, issue)
