"""clusterlaunchcontrol (sm_100+, PTX ISA 8.6), as ptxas 13.5 writes it:

- `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes.b128
  [response], [mbarrier]`: UGETNEXTWORKID.SELFCAST [URresponse], [URmbarrier], once per lane
  where the operands differ (the bulk copies' ELECT loop, isel/bulk_copy.py); the 16-byte
  response and the mbarrier's transaction bytes arrive asynchronously. With
  `.multicast::cluster::all` (sm_100a/sm_120a) UGETNEXTWORKID.BROADCAST: the response and the
  bytes reach every CTA of the cluster at the same offsets.
- `clusterlaunchcontrol.query_cancel.*.b128 d, response` reads the response's words:
  `is_canceled` is bit 0 of word 2, `get_first_ctaid::x` word 0, `::y` the low half of
  word 1, `::z` its high half; `.v4` all three, the fourth element zero.
"""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.encoder.model import Imm, Mem
from ptx2sass.isel.bulk_copy import BAR_UR, DST_UR
from ptx2sass.isel.common import NOT_PT, RZ
from ptx2sass.mir import VOp


class ClusterLaunchControl:
    def sel_clusterlaunchcontrol(self, ins):
        mods = ins.modifiers
        if mods[:1] == ("try_cancel",) and all(m in ("multicast::cluster::all",) or
                                                not m.startswith("multicast") for m in mods):
            return self.try_cancel(ins)
        if mods[:1] == ("query_cancel",):
            return self.query_cancel(ins)
        raise self.unsupported(f"`clusterlaunchcontrol.{'.'.join(mods)}`")

    def try_cancel(self, ins) -> None:
        if not self.arch.cluster_launch_control:
            raise self.unsupported(f"`clusterlaunchcontrol` on {self.arch.name}")
        response, bar = ins.srcs
        lane = []
        for addr, ur in ((response, DST_UR), (bar, BAR_UR)):
            got = self.bulk_shared(addr, ur)
            if got is not None:
                lane.append((got, ur))

        cast = "BROADCAST" if "multicast::cluster::all" in ins.modifiers else "SELFCAST"

        def issue():
            self.emit("UGETNEXTWORKID", (cast,), [Mem(ubase=DST_UR), Mem(ubase=BAR_UR)],
                      ndefs=0, guarded=False)
        self.elect_loop(lane, issue)

    def query_cancel(self, ins) -> None:
        (src,) = ins.srcs
        if not isinstance(src, ir.Value) or self.vreg(src).width != 4:
            raise self.unsupported("`clusterlaunchcontrol.query_cancel` of a non-register response")
        word = lambda k: VOp(self.vreg(src), k)        # noqa: E731
        what = ins.modifiers[1]
        if what == "is_canceled":
            self.emit("LOP3", ("LUT",), [self.dst(ins.dests[0]), RZ, word(2), Imm(1), RZ, Imm(0xC0),
                                         NOT_PT], ndefs=2)
            return
        fields = {"get_first_ctaid::x": [0], "get_first_ctaid::y": [1], "get_first_ctaid::z": [2]}
        parts = [0, 1, 2, None] if what == "get_first_ctaid" and "v4" in ins.modifiers else fields.get(what)
        if parts is None or len(parts) != len(ins.dests):
            raise self.unsupported(f"`clusterlaunchcontrol.{'.'.join(ins.modifiers)}`")
        for d, part in zip(ins.dests, parts):
            if not isinstance(d, ir.Value):
                continue                                    # (a sink)
            out = self.dst(d)
            if part is None:
                self.move(out, RZ)
            elif part == 0:
                self.move(out, word(0))
            elif part == 1:
                self.emit("LOP3", ("LUT",), [out, word(1), Imm(0xFFFF), RZ, Imm(0xC0), NOT_PT])
            else:
                self.emit("SHF", ("R", "U32", "HI"), [out, RZ, Imm(16), word(1)])
