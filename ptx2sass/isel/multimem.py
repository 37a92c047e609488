"""multimem.ld_reduce (PTX 8.1+, sm_90+): one LDGMC, as ptxas 13.5 writes it on sm_90 and
sm_100: `LDGMC.E.<op>.<type>[.RN].STRONG.SYS d, [R.64+URZ+imm]`, or `[RZ.U32+URx+imm]` where
the address is a kernel parameter's pointer (its ULDC.64 pair), whatever the order and
scope (`.acquire`: a CCTL.IVALL after it). The type is the access's (`32`/`S32`/`64`/`S64`,
`F32`, `F64`, `F32x2/x4`, `F16x2/x4/x8`, `BF16x*`, `E4M3x4..x16`, `E5M2x*` by the lanes of the
whole vector); a half type's `.acc::f32` add is the Target's `multimem_f32_accumulate`, an
fp8 type's `.acc::f16` add its `multimem_f16_accumulate`. multimem.st/red never
get here (frontend/multimem.py makes them st/red)."""
from __future__ import annotations

import dataclasses

from ptx2sass.encoder.model import Reg
from ptx2sass.fences import ACQUIRE_INVALIDATION
from ptx2sass.mir import VOp

_INTEGER = {"u32": "32", "b32": "32", "s32": "S32", "u64": "64", "b64": "64", "s64": "S64"}
_RZ_U32 = Reg("R", 255, suffix=("U32",))
# a float type: (lane name, lane bits, bits of one PTX register of the type)
_FLOAT = {"f16x2": ("F16", 16, 32), "bf16x2": ("BF16", 16, 32), "f32": ("F32", 32, 32),
          "f16": ("F16", 16, 16), "bf16": ("BF16", 16, 16),
          # fp8 (sm_100+ a/f targets): `.e4m3x4` a word of four lanes, `.e4m3x2` half a word
          "e4m3x4": ("E4M3", 8, 32), "e5m2x4": ("E5M2", 8, 32),
          "e4m3x2": ("E4M3", 8, 16), "e5m2x2": ("E5M2", 8, 16)}


class MultimemSelection:
    def sel_multimem(self, ins):
        mods = ins.modifiers
        if not mods or mods[0] != "ld_reduce":
            raise self.unsupported(f"`multimem.{mods[0] if mods else ''}`")
        # the fp8 four-lane types are no PTX register type: they stay among the modifiers
        ty = ins.type or next((m for m in mods if m in _FLOAT), None)
        n = len(ins.dests)
        op = next(m for m in mods if m in ("add", "min", "max", "and", "or", "xor"))
        if ty in _INTEGER:
            kind, rounding, words = _INTEGER[ty], (), 2 if ty[1:] == "64" else 1
        elif ty == "f64":
            kind, rounding, words = "F64", ("RN",), 2
        else:        # `.v2.f16` is one F16x2 word, `.v8.bf16` a BF16x8 quad, as a `.v4.bf16x2`
            lane, lane_bits, reg_bits = _FLOAT[ty]
            lanes = n * reg_bits // lane_bits
            kind, rounding, words = lane + ("" if lanes == 1 else f"x{lanes}"), ("RN",), n * reg_bits // 32
        operation = self.arch.multimem_f32_accumulate if "acc::f32" in mods else \
            self.arch.multimem_f16_accumulate if "acc::f16" in mods else op.upper()
        mem = self.param_pointer_address(ins.srcs[0])
        if mem is not None:      # a parameter's pointer: the uniform pair, `[RZ.U32+URx+imm]`
            mem, widths = dataclasses.replace(mem, base=_RZ_U32), {1: 2}
        else:
            mem = self.address(ins.srcs[0], "global")
            mem, widths = dataclasses.replace(mem, uniform_zero=True, described=False), {}
        t = self.mf.new_vreg("R", words)
        self.emit("LDGMC", ("E", operation, kind) + rounding + ("STRONG", "SYS"), [VOp(t), mem],
                  widths=widths)
        if "acquire" in mods:
            self.emit(*ACQUIRE_INVALIDATION, [], ndefs=0)
        bits = 64 if words == 2 and n == 1 else _FLOAT.get(ty, (0, 0, 32))[2]
        self.copy_out_vector(ins, t, bits, ty)
