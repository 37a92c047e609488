"""Small `wgmma` kernels, one per form, for probing ptxas and for the code-generation tests.

Each kernel loads its accumulator from global memory (so ptxas cannot fold a zero C into
`RZ, !UPT`), issues fence / mma_async / commit_group / wait_group 0 and stores D back. The
descriptors are kernel parameters; A from registers is loaded from global memory too.

Usage: python -m tools.wgmma_forms OUT_DIR   (writes one .ptx file per form)
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

# A/B type -> (K of the shape, the accumulator types, immediate scales and transposes taken)
AB_TYPES = {"f16": (16, ("f32", "f16"), True), "bf16": (16, ("f32",), True),
            "tf32": (8, ("f32",), False), "e4m3": (32, ("f32", "f16"), False),
            "e5m2": (32, ("f32", "f16"), False), "s8": (32, ("s32",), False),
            "u8": (32, ("s32",), False), "b1": (256, ("s32",), False)}


@dataclass(frozen=True)
class Form:
    """One `wgmma.mma_async` form: N, D type, A/B types, A from registers (`a_regs`), the
    scale-d operand (`1`, `0` or `p`: a predicate), the immediate scales and transposes."""
    n: int
    dtype: str
    atype: str
    btype: str
    a_regs: bool = False
    scale_d: str = "p"
    scale_a: int = 1
    scale_b: int = 1
    trans_a: int = 0
    trans_b: int = 0
    satfinite: bool = False
    sparse: bool = False              # wgmma.mma_async.sp: metadata register e, `selector`
    selector: int = 0

    @property
    def name(self) -> str:
        return (f"n{self.n}_{self.dtype}_{self.atype}_{self.btype}{'_areg' if self.a_regs else ''}"
                f"_sd{self.scale_d}_sa{self.scale_a}_sb{self.scale_b}_ta{self.trans_a}"
                f"_tb{self.trans_b}{'_sat' if self.satfinite else ''}"
                f"{f'_sp{self.selector}' if self.sparse else ''}").replace("-", "m")

    @property
    def k(self) -> int:
        return AB_TYPES[self.atype][0] * (2 if self.sparse else 1)

    @property
    def d_regs(self) -> int:
        return self.n // 2 if self.dtype in ("f32", "s32") else self.n // 4

    @property
    def a_count(self) -> int:
        """32-bit registers of A from registers: 64 x K elements over 128 threads (sparse:
        the compressed 64 x K/2)."""
        bits = {"f16": 16, "bf16": 16, "tf32": 32, "e4m3": 8, "e5m2": 8, "s8": 8, "u8": 8, "b1": 1}
        return 64 * (self.k // (2 if self.sparse else 1)) * bits[self.atype] // 128 // 32

    def instruction(self, d: str, a: str, b: str, scale: str) -> str:
        mods = f"m64n{self.n}k{self.k}.{self.dtype}.{self.atype}.{self.btype}"
        if self.satfinite:
            mods = f"m64n{self.n}k{self.k}.{self.dtype}.satfinite.{self.atype}.{self.btype}"
        if self.atype == "b1":
            mods += ".and.popc"
        args = [d, a, b] + (["e", str(self.selector)] if self.sparse else []) + [scale]
        if AB_TYPES[self.atype][2]:
            args += [str(self.scale_a), str(self.scale_b)]
            if not self.a_regs:
                args.append(str(self.trans_a))
            args.append(str(self.trans_b))
        elif self.atype in ("tf32", "e4m3", "e5m2"):
            args += [str(self.scale_a), str(self.scale_b)]
        sp = ".sp" if self.sparse else ""
        return f"wgmma.mma_async{sp}.sync.aligned.{mods} {', '.join(args)};"


def kernel(form: Form, target: str = "sm_90a", name: str = "k") -> str:
    """The PTX module of `form`'s kernel: out[tid * regs + i] = D[i]."""
    dt = {"f32": "f32", "f16": "b32", "s32": "s32"}[form.dtype]
    n = form.d_regs
    lines = [f".version {'8.0' if form.atype in ('f16', 'bf16') and not form.sparse else '8.4'}", f".target {target}",
             ".address_size 64",
             f".visible .entry {name}(.param .u64 out, .param .u64 in, .param .u64 da, "
             ".param .u64 db, .param .u32 flag)", "{",
             f"  .reg .{dt} d<{n}>;", "  .reg .b32 a<4>, t, f, e;", "  .reg .b64 ad, bd, po, pi, off;",
             "  .reg .pred p;",
             "  ld.param.u64 ad, [da];", "  ld.param.u64 bd, [db];", "  ld.param.u64 po, [out];",
             "  ld.param.u64 pi, [in];", "  ld.param.u32 f, [flag];", "  setp.ne.u32 p, f, 0;",
             "  mov.u32 t, %tid.x;", f"  mul.wide.u32 off, t, {4 * (n + (5 if form.sparse else 4))};",
             "  add.u64 po, po, off;", "  add.u64 pi, pi, off;"]
    for i in range(n):
        lines.append(f"  ld.global.{dt} d{i}, [pi+{4 * i}];")
    if form.a_regs:
        for i in range(form.a_count):
            lines.append(f"  ld.global.b32 a{i}, [pi+{4 * (n + i)}];")
    if form.sparse:
        lines.append(f"  ld.global.b32 e, [pi+{4 * (n + 4)}];")
    lines.append("  wgmma.fence.sync.aligned;")
    d = "{" + ", ".join(f"d{i}" for i in range(n)) + "}"
    a = "{" + ", ".join(f"a{i}" for i in range(form.a_count)) + "}" if form.a_regs else "ad"
    lines.append("  " + form.instruction(d, a, "bd", form.scale_d))
    lines += ["  wgmma.commit_group.sync.aligned;", "  wgmma.wait_group.sync.aligned 0;"]
    for i in range(n):
        lines.append(f"  st.global.{dt} [po+{4 * i}], d{i};")
    lines += ["  ret;", "}", ""]
    return "\n".join(lines)


def f16_forms() -> list[Form]:
    """The f16/bf16 dense forms: every N given, both A sources, scale-d predicate/immediate,
    negated scales and transposes."""
    out = []
    for atype, dtypes in (("f16", ("f32", "f16")), ("bf16", ("f32",))):
        for dtype in dtypes:
            for n in (8, 16, 24, 64, 128, 256):
                for a_regs in (False, True):
                    out.append(Form(n, dtype, atype, atype, a_regs))
            for a_regs in (False, True):
                for sd, sa, sb, ta, tb in (("1", 1, 1, 0, 0), ("0", 1, 1, 0, 0), ("p", -1, 1, 0, 0),
                                           ("p", 1, -1, 0, 0), ("p", -1, -1, 1, 1),
                                           ("p", 1, 1, 1, 0), ("p", 1, 1, 0, 1)):
                    if a_regs and ta:
                        continue
                    out.append(Form(64, dtype, atype, atype, a_regs, sd, sa, sb, ta, tb))
    return out


def other_forms() -> list[Form]:
    """tf32, fp8, 8-bit integer and b1 forms (N = 8 and 64)."""
    out = []
    for n in (8, 64):
        out += [Form(n, "f32", "tf32", "tf32"), Form(n, "f32", "tf32", "tf32", True)]
        for a in ("e4m3", "e5m2"):
            for b in ("e4m3", "e5m2"):
                for dtype in ("f32", "f16"):
                    out.append(Form(n, dtype, a, b))
            out.append(Form(n, "f32", a, a, True))
        for a in ("s8", "u8"):
            for b in ("s8", "u8"):
                out.append(Form(n, "s32", a, b))
                out.append(Form(n, "s32", a, b, satfinite=True))
            out.append(Form(n, "s32", a, a, True))
        out.append(Form(n, "s32", "b1", "b1"))
    return out


def sparse_forms() -> list[Form]:
    """`wgmma.mma_async.sp`: every A/B type family (K doubled), both A sources, scale-d
    predicate/immediate, both selectors, negations and transposes, N = 8 and 64."""
    out = []
    for n in (8, 64):
        for dtype, a in (("f32", "f16"), ("f16", "f16"), ("f32", "bf16"), ("f32", "tf32"),
                         ("f32", "e4m3"), ("f16", "e5m2"), ("s32", "s8"), ("s32", "u8")):
            for a_regs in (False, True):
                out.append(Form(n, dtype, a, a, a_regs, sparse=True))
    out += [Form(64, "f32", "f16", "f16", False, "1", sparse=True, selector=1),
            Form(64, "f32", "f16", "f16", False, "0", -1, -1, 1, 1, sparse=True),
            Form(64, "f32", "bf16", "bf16", True, "p", -1, 1, 0, 1, sparse=True, selector=1),
            Form(64, "f32", "e4m3", "e5m2", False, "p", -1, -1, sparse=True),
            Form(64, "s32", "s8", "u8", False, "p", satfinite=True, sparse=True),
            Form(64, "s32", "u8", "s8", True, "p", satfinite=True, sparse=True, selector=1)]
    return out


if __name__ == "__main__":
    dest = Path(sys.argv[1])
    dest.mkdir(parents=True, exist_ok=True)
    for form in f16_forms() + other_forms():
        (dest / f"{form.name}.ptx").write_text(kernel(form))
