"""Cache control and address-space queries: prefetch/prefetchu (CCTL.E.PF1/PF2, CCTLL for
local addresses), applypriority and discard of L2 lines (CCTL.E.DML2 / .RML2), isspacep
(QSPC; `.param` a range test of the driver's parameter window), prefetch.tensormap
(UTMACCTL.PF, sm_90+), as ptxas writes them."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import ConstRef, Imm, Mem
from ptx2sass.isel.bulk_copy import SRC_UR
from ptx2sass.isel.common import NOT_PT, PT, RZ, URZ
from ptx2sass.mir import VMem, VOp

# prefetch level / eviction priority -> CCTL operation
PREFETCH = {"L1": "PF1", "L2": "PF2", "L2::evict_last": "PML2", "L2::evict_normal": "PF2"}
QSPC_SPACES = {"shared": "S", "global": "G", "local": "L"}


class CacheOps:
    def cctl_address(self, addr, space: str) -> VMem:
        """CCTL's operand: a 64-bit address printed without `.64` (`[R2]`); the offset is
        added first (ptxas does the same)."""
        mem = self.offset_added(self.memory_operand(addr, space))
        return VMem(mem.base, 0, wide=True, suffix64=False)

    def sel_prefetch(self, ins):
        level = next((m for m in ins.modifiers if m in PREFETCH), None)
        if level is None:           # prefetch[.const|.param].tensormap (sm_90)
            return self.prefetch_tensormap(ins)
        if ins.space == "local":      # CCTLL on the 32-bit local address
            mem = self.offset_added(self.memory_operand(ins.srcs[0], "local"))
            self.emit("CCTLL", (PREFETCH[level],), [VMem(mem.base, 0, wide=False)], ndefs=0)
            return
        self.emit("CCTL", ("E", PREFETCH[level]), [self.cctl_address(ins.srcs[0], "global")],
                  ndefs=0)

    def prefetch_tensormap(self, ins):
        """prefetch[.const|.param].tensormap [a]: UTMACCTL.PF of the descriptor's generic
        address in a uniform pair, once per distinct address (isel/bulk_copy.py's loop). A
        .const/.param address is the driver's window base (driver_cbank) plus the offset:
        a variable's as ptxas, ULDC.64 of the base and UIADD3.64 of its placement; a
        register's added per lane (ptxas adds it uniformly where it is a parameter's)."""
        addr, space = ins.srcs[0], ins.space
        what = f"`{'.'.join(('prefetch', *ins.modifiers))}`"
        if not self.arch.tensormap_prefetch:
            raise self.unsupported(f"{what} on {self.arch.name}")
        lane: list[tuple] = []
        if space in ("const", "param"):
            window = dict(self.arch.driver_cbank or ()).get(f"{space}_window")
            if window is None or not isinstance(addr, ir.Address) or (
                    space == "param" and not self.arch.param_window_at_params):
                raise self.unsupported(f"{what} on {self.arch.name}")
            base = addr.base
            if isinstance(base, ir.Symbol):
                p = self.placement(base)
                if p.space != space:
                    raise self.unsupported(f"{what} of `{base.name}`")
                self.emit("ULDC", ("64",), [SRC_UR, ConstRef(0, window)], guarded=False)
                offset = p.value + base.offset + addr.offset
                if offset:
                    self.emit("UIADD3", ("64",), [SRC_UR, SRC_UR, self.imm32(offset), URZ],
                              guarded=False)
            else:
                r = self.vreg(base) if isinstance(base, ir.Value) else None
                if r is None or r.width != 2:
                    raise self.unsupported(f"{what} of a 32-bit address")
                pair, carry = self.new_pair(), VOp(self.mf.new_vreg("P"))
                self.emit("IADD3", (), [VOp(pair.reg, 0), carry, VOp(r, 0), ConstRef(0, window),
                                        RZ], ndefs=2)
                self.emit("IADD3", ("X",), [VOp(pair.reg, 1), VOp(r, 1), ConstRef(0, window + 4),
                                            RZ, carry, NOT_PT])
                lo, hi = VOp(pair.reg, 0), VOp(pair.reg, 1)
                if addr.offset:
                    moved = self.new_pair()
                    self.add_wide_constant(moved, lo, hi, addr.offset)
                    lo, hi = VOp(moved.reg, 0), VOp(moved.reg, 1)
                lane = [(lo, SRC_UR), (hi, type(SRC_UR)("UR", SRC_UR.index + 1))]
        else:
            got = self.bulk_global(addr, SRC_UR)
            if got is not None:
                lane = [(got[0], SRC_UR), (got[1], type(SRC_UR)("UR", SRC_UR.index + 1))]

        def issue():
            mi = self.emit("UTMACCTL", ("PF",), [Mem(ubase=SRC_UR)], ndefs=0, guarded=False)
            mi.widths = {0: 2}
        self.distinct_values_loop(lane, issue)

    def sel_prefetchu(self, ins):
        self.emit("CCTL", ("E", "PF1"), [self.cctl_address(ins.srcs[0], "global")], ndefs=0)

    def sel_applypriority(self, ins):
        """applypriority.L2::evict_normal: the line's priority back to normal (DML2)."""
        self.emit("CCTL", ("E", "DML2"), [self.cctl_address(ins.srcs[0], "global")], ndefs=0)

    def sel_discard(self, ins):
        """discard.L2: the line dropped without write-back (RML2)."""
        self.emit("CCTL", ("E", "RML2"), [self.cctl_address(ins.srcs[0], "global")], ndefs=0)

    def sel_isspacep(self, ins):
        """QSPC.E.<S|G|L> of the generic address; ptxas's constant window is empty on sm_8x
        (its range test is always false), so isspacep.const is false."""
        space = ins.space or next(m.split("::")[0] for m in ins.modifiers)
        p = self.dst(ins.dests[0])
        if space == "const":
            self.emit("PLOP3", ("LUT",), [p, PT, PT, PT, PT, Imm(0), Imm(0)])
            return
        if space == "param":
            return self.param_window_test(ins, p)
        if space not in QSPC_SPACES:
            raise self.unsupported(f"`isspacep.{space}`")
        a = ins.srcs[0]
        if isinstance(a, ir.Value) and self.vreg(a).width == 2:
            base = VOp(self.vreg(a))
        else:
            base = self.pair_of(a)
        self.emit("QSPC", ("E", QSPC_SPACES[space]),
                  [p, RZ, VMem(base, 0, wide=True, suffix64=False)], ndefs=2)

    def param_window_test(self, ins, p) -> None:
        """isspacep.param[::entry]: first <= a <= last (unsigned 64-bit), the window's
        bounds from the driver's words in constant bank 0 (encoder/arch.py's driver_cbank):
        sm_90 keeps both addresses (`param_window`, `param_window_end`); sm_8x the bank's
        base, so the first is base + the parameters' offset and the last base + the
        `param_window_end` word (ptxas's code for both)."""
        cbank = dict(self.arch.driver_cbank or ())
        if "param_window" not in cbank or "param_window_end" not in cbank:
            raise self.unsupported(f"`isspacep.param` on {self.arch.name}")
        at, end = cbank["param_window"], cbank["param_window_end"]
        a_lo, a_hi = self.reg_part(ins.srcs[0], 0), self.reg_part(ins.srcs[0], 1)
        if self.arch.param_window_at_params:
            first = (ConstRef(0, at), ConstRef(0, at + 4))
            last = (ConstRef(0, end), ConstRef(0, end + 4))
        else:
            base = VOp(self.mf.new_vreg())
            self.move(base, ConstRef(0, at))
            first = self.bound_pair(base, Imm(self.arch.param_base), ConstRef(0, at + 4))
            last = self.bound_pair(base, ConstRef(0, end), ConstRef(0, at + 4))
        low_ge, ge, low_le = (VOp(self.mf.new_vreg("P")) for _ in range(3))
        self.emit("ISETP", ("GE", "U32", "AND"), [low_ge, PT, a_lo, first[0], PT], ndefs=2)
        self.emit("ISETP", ("GE", "U32", "AND", "EX"), [ge, PT, a_hi, first[1], PT, low_ge], ndefs=2)
        self.emit("ISETP", ("LE", "U32", "AND"), [low_le, PT, a_lo, last[0], PT], ndefs=2)
        self.emit("ISETP", ("LE", "U32", "AND", "EX"), [p, PT, a_hi, last[1], ge, low_le], ndefs=2)

    def bound_pair(self, base: VOp, offset, base_hi: ConstRef) -> tuple[VOp, VOp]:
        """(lo, hi) registers of base + offset, the high word from the driver's word."""
        lo, hi, carry = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg("P"))
        self.emit("IADD3", (), [lo, carry, base, offset, RZ], ndefs=2)
        self.emit("IADD3", ("X",), [hi, RZ, base_hi, RZ, carry, NOT_PT])
        return lo, hi
