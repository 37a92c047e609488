"""Special registers beyond the thread/block ids: clocks and timers (CS2R, 32- or 64-bit,
as ptxas reads them), performance counters, SM/warp placement, shared-memory sizes and the
launch facts the driver keeps in constant bank 0 (offsets per arch: encoder/arch.py's
`driver_cbank`)."""
from __future__ import annotations

from ptx2sass.encoder.model import ConstRef, Imm, SpecialReg
from ptx2sass.isel.common import NOT_PT, PT, RZ
from ptx2sass.mir import IMPLICIT_DEF, VOp

# read with CS2R.32 (one word) or CS2R (a register pair, both halves at one instant)
CS2R_32 = {"%clock": "SR_CLOCKLO", "%clock_hi": "SR_CLOCKHI",
           "%globaltimer_lo": "SR_GLOBALTIMERLO", "%globaltimer_hi": "SR_GLOBALTIMERHI",
           **{f"%pm{i}": f"SR_PM{i}" for i in range(8)}}
CS2R_64 = {"%clock64": "SR_CLOCKLO", "%globaltimer": "SR_GLOBALTIMERLO",
           **{f"%pm{i}_64": f"SR_PM{i}" for i in range(8)}}
# constant bank 0 words the driver fills (`driver_cbank` key; 64-bit ones take two words)
DRIVER_WORDS = {"%dynamic_smem_size": "dynamic_smem", "%nsmid": "nsmid", "%gridid": "gridid",
                "%reserved_smem_offset_end": "reserved_smem_end",
                "%reserved_smem_offset_1": "reserved_smem_1", "%current_graph_exec": "graph_exec"}
# the CTA's shared memory without the reserved part: SR_SMEMSZ - c[0x0][reserved_smem]
SMEM_SIZES = ("%total_smem_size", "%reserved_smem_offset_begin", "%reserved_smem_offset_0")
# immediates where the target reserves a window at the start of shared memory (sm_90+)
RESERVED_WINDOW_OFFSETS = ("%reserved_smem_offset_begin", "%reserved_smem_offset_0")


class SpecialRegisters:
    def other_special(self, sr, part: int = 0):
        """The operand for part `part` (32-bit word) of special register `sr`, or None."""
        name = sr.name
        info = self.arch
        if name in CS2R_32:
            t = VOp(self.mf.new_vreg())
            self.emit("CS2R", ("32",), [t, SpecialReg(CS2R_32[name])])
            return t
        if name in CS2R_64:
            # both words from one read: cached for the instruction being selected
            key = (id(self.ins), name)
            cache = self.__dict__.setdefault("_special_pairs", {})
            if key not in cache:
                pair = VOp(self.mf.new_vreg("R", 2))
                self.emit("CS2R", (), [pair, SpecialReg(CS2R_64[name])])
                cache[key] = pair
            return VOp(cache[key].reg, part)
        cbank = dict(info.driver_cbank or ())
        if name.startswith("%envreg"):
            n = int(name[len("%envreg"):])
            if n >= 16 and "envreg_16" in cbank:
                return ConstRef(0, cbank["envreg_16"] + 4 * (n - 16))
            return self.driver_word("envreg", 4 * n)
        if name in DRIVER_WORDS:
            return self.driver_word(DRIVER_WORDS[name], 4 * part)
        if name in RESERVED_WINDOW_OFFSETS and info.reserved_shared_bytes:
            # sm_90+: the driver's reserved window starts the CTA's shared memory; its first
            # byte ptxas does not use itself follows `.nv.shared.reserved.0`
            return Imm(0 if name == "%reserved_smem_offset_begin" else info.reserved_shared_section_bytes)
        if name in SMEM_SIZES and "reserved_smem" in cbank:
            t, d = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg("SR_SMEMSZ")])
            self.emit("IADD3", (), [d, t, ConstRef(0, cbank["reserved_smem"], neg=True), RZ])
            return d
        if "cluster_nctaid" in cbank or "cluster_nctaid" in dict(info.cluster_size_cbank):
            cluster = self.cluster_special(name)
            if cluster is not None:
                return cluster
        if name == "%total_smem_size" and info.driver_cbank is not None:
            # no reserved part in the driver's words (sm_75): the CTA's shared memory is SR_SMEMSZ
            t = VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg("SR_SMEMSZ")])
            return t
        if name == "%reserved_smem_offset_cap" and info.reserved_shared_bytes:
            return Imm(info.reserved_shared_bytes)      # the end of the driver's reserved window
        limit = self.driver_word("aggr_smem_limit") if name == "%aggr_smem_size" else None
        if limit is not None:
            t, d = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg("SR_SMEMSZ")])
            self.emit("IMNMX", ("U32",), [d, t, limit, PT])
            return d
        if name == "%reserved_smem_offset_cap":
            t = VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg("SR_SMEMSZ")])
            return t
        if name == "%smid":
            t = VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg("SR_VIRTUALSMID")])
            return t
        if name == "%warpid":       # bits 8..14 of SR_VIRTID
            t, u, d = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg("SR_VIRTID")])
            self.emit("SHF", ("R", "U32", "HI"), [u, RZ, Imm(0x8), t])
            self.emit("SGXT", ("U32",), [d, u, Imm(0x7)])
            return d
        if name == "%nwarpid" and info.nwarpid_virtcfg:     # bits 8..15 of SR_VIRTCFG
            t, u, d = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg("SR_VIRTCFG")])
            self.emit("SHF", ("R", "U32", "HI"), [u, RZ, Imm(0x8), t])
            self.emit("SGXT", ("U32",), [d, u, Imm(0x8)])
            return d
        if name == "%nwarpid" and info.max_warps_per_sm:
            return Imm(info.max_warps_per_sm)
        return None

    def explicit_cluster(self, d: VOp) -> None:
        """`%is_explicit_cluster`: the driver's word that is 1 in a launch with an explicit
        cluster shape (`cluster_launch`), compared with 1 (ptxas: LDC + ISETP)."""
        at = self.driver_word("cluster_launch")
        if at is None:
            raise self.unsupported(f"special register %is_explicit_cluster on {self.arch.name}")
        t = VOp(self.mf.new_vreg())
        self.emit("LDC", (), [t, at])
        self.emit("ISETP", ("EQ", "AND"), [d, PT, t, Imm(1), PT], ndefs=2)

    def driver_word(self, key: str, offset: int = 0):
        """Driver word `key` (+ `offset` bytes) of constant bank 0: a constant operand, or on
        targets that keep it per cluster size the entry SR_CgaSize selects, loaded with LDC
        (as ptxas); None where the target has no such word."""
        per_size = dict(self.arch.cluster_size_cbank)
        if key in per_size:
            size, at, d = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
            self.emit("CS2R", ("32",), [size, SpecialReg("SR_CgaSize")])
            self.emit("IMAD", (), [at, size, Imm(self.arch.cluster_size_stride), RZ])
            self.emit("LDC", (), [d, ConstRef(0, per_size[key] + offset, ureg=at)])
            return d
        cbank = dict(self.arch.driver_cbank or ())
        return ConstRef(0, cbank[key] + offset) if key in cbank else None

    def cluster_special(self, name: str):
        """Cluster registers as ptxas reads them on sm_90: the shapes from constant bank 0,
        the rank from SR_CgaCtaId, and a CTA's cluster and place in it by dividing %ctaid by
        the cluster's shape: .x by a full unsigned division (%ctaid.x reaches 2^31), .y/.z
        by a product with the shape's float reciprocal the driver keeps (below 2^16)."""
        axis = name.rsplit(".", 1)[1] if "." in name else None
        k = "xyz".index(axis) if axis in ("x", "y", "z") else None
        base = name.rsplit(".", 1)[0] if k is not None else name
        if base == "%cluster_nctaid" and k is not None:
            return self.driver_word("cluster_nctaid", 4 * k)
        if base == "%nclusterid" and k is not None:
            return self.driver_word("nclusterid", 4 * k)
        if name == "%cluster_nctarank":
            return self.driver_word("cluster_nctarank")
        if name == "%cluster_ctarank":
            t = VOp(self.mf.new_vreg())
            self.emit("S2R", (), [t, SpecialReg("SR_CgaCtaId")])
            return t
        if base not in ("%clusterid", "%cluster_ctaid") or k is None:
            return None
        ctaid = VOp(self.mf.new_vreg())
        self.emit("S2R", (), [ctaid, SpecialReg(f"SR_CTAID.{axis.upper()}")])
        shape = self.driver_word("cluster_nctaid", 4 * k)
        q = VOp(self.mf.new_vreg())
        if k == 0:
            d = VOp(self.mf.new_vreg())
            self.emit("MOV", (), [d, shape])
            raw, _ = self.unsigned_divide(ctaid, d, self.reciprocal_estimate(d), False)
            nonzero = VOp(self.mf.new_vreg("P"))
            self.emit("ISETP", ("NE", "U32", "AND"), [nonzero, PT, d, RZ, PT], ndefs=2)
            self.emit("SEL", (), [q, raw, Imm(0xFFFFFFFF), nonzero])
        else:
            f = VOp(self.mf.new_vreg())
            self.emit("I2FP", ("F32", "U32"), [f, ctaid])
            g = VOp(self.mf.new_vreg())
            self.emit("FMUL", (), [g, f, self.driver_word("cluster_rcp", 4 * k)])
            self.emit("F2I", ("U32", "TRUNC", "NTZ"), [q, g])
        if base == "%clusterid":
            return q
        negq, r = VOp(self.mf.new_vreg()), VOp(self.mf.new_vreg())
        self.emit("IADD3", (), [negq, RZ, VOp(q.reg, neg=True), RZ])
        self.emit("IMAD", (), [r, negq, shape, ctaid])
        return r
