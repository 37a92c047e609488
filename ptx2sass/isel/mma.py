"""`mma.sync` on the tensor cores: HMMA for the f16/bf16/tf32 shapes of sm_8x, IMMA for the
8-bit integer ones, QMMA for sm_89's fp8 (e4m3/e5m2) ones, and the 8x8 tiles: DMMA.884 for
f64 m8n8k4 (each element a register pair), IMMA.8832 for s4/u4 m8n8k32, BMMA.88128 for b1
m8n8k128 (`.xor.popc`/`.and.popc`).

PTX names each fragment register separately; HMMA takes each fragment as one aligned group of
consecutive registers (A of m16n8k16 is a quad, B a pair, C and D quads for f32 results or
pairs for f16x2 ones), so the selector gathers the PTX registers into such groups with copies
and scatters D back out; fragments that are an ldmatrix's or an earlier mma's results, in
order, are read where those were written, and groups carried around a loop are kept in one
register group (isel/loop_groups.py). The fragment layouts are the hardware's and PTX's
alike: register k of a group is PTX's element k.

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`.
"""
from __future__ import annotations

from dataclasses import replace

from ptx2sass import ir
from ptx2sass.encoder.model import Imm
from ptx2sass.errors import CompileError
from ptx2sass.isel.common import RZ, URZ
from ptx2sass.mir import COPY, IMPLICIT_DEF, VOp

# (shape, d type, a type) -> (HMMA modifiers, registers in D/C, in A, in B)
HMMA_FORMS = {
    ("m16n8k16", "f32", "f16"): (("16816", "F32"), 4, 4, 2),
    ("m16n8k16", "f16", "f16"): (("16816", "F16"), 2, 4, 2),
    ("m16n8k16", "f32", "bf16"): (("16816", "F32", "BF16"), 4, 4, 2),
    ("m16n8k8", "f32", "f16"): (("1688", "F32"), 4, 2, 1),
    ("m16n8k8", "f16", "f16"): (("1688", "F16"), 2, 2, 1),
    ("m16n8k8", "f32", "bf16"): (("1688", "F32", "BF16"), 4, 2, 1),
    ("m16n8k8", "f32", "tf32"): (("1688", "F32", "TF32"), 4, 4, 2),
    ("m16n8k4", "f32", "tf32"): (("1684", "F32", "TF32"), 4, 2, 1),
}
# 8-bit integer shapes -> (IMMA shape, registers in D/C, in A, in B); the A and B types
# (s8/u8) follow as modifiers, `.satfinite` as .SAT, and A/B carry .ROW/.COL.
IMMA_SHAPES = {"m16n8k32": ("16832", 4, 4, 2), "m16n8k16": ("16816", 4, 2, 1), "m8n8k16": ("8816", 2, 1, 1)}
# fp8 shapes (sm_89) -> (QMMA shape, registers in A, in B); D/C are 4 f32 or 2 f16x2
# registers. Modifiers: shape, accumulator, then the A and B types; A/B carry .ROW/.COL.
QMMA_SHAPES = {"m16n8k32": ("16832", 4, 2), "m16n8k16": ("16816", 2, 1)}
FP8_TYPES = ("e4m3", "e5m2")
# kind::f8f6f4's element types (sm_120a/121a): each element in a byte (fp6 in the low six
# bits, fp4 in bits 2-5, PTX ISA), so the fragments are fp8's m16n8k32 ones
F8F6F4_TYPES = ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1")
# block-scaled kinds -> (opcode, SASS shape); A four registers, B two, C/D four f32. ptxas
# 13.5 (sm_120a): `QMMA.SF.16832.F32.<A>.<B>.E8` / `OMMA.SF.16864.F32.E2M1.E2M1.<E8|UE4M3>[.4X]
# D, A, B, C, scale-A, scale-B, URsel`: the selectors packed byte-id-a | thread-id-a << 2 |
# byte-id-b << 3 | thread-id-b << 5 into a uniform register (URZ when all are 0)
BLOCK_SCALE_KINDS = {"kind::mxf8f6f4": ("QMMA", "16832"), "kind::mxf4": ("OMMA", "16864"),
                     "kind::mxf4nvf4": ("OMMA", "16864")}
SCALE_TYPES = {"ue8m0": "E8", "ue4m3": "UE4M3"}
# the 8x8 integer tiles: shape -> (opcode, SASS shape, element types); one A and one B
# register, two C/D registers. The A/B types are modifiers in the frontend's parse
# (`.s32.s4.u4.s32`), as is b1's operation (`.xor.popc`).
TILE_8X8 = {"m8n8k32": ("IMMA", "8832", ("s4", "u4")), "m8n8k128": ("BMMA", "88128", ("b1",))}
# sub-byte m16n8 shapes (sm_8x): shape -> (opcode, SASS shape, element types, registers in
# D/C, in A, in B); the fragments are mma's (PTX ISA), 8 (s4/u4) or 32 (b1) elements a register
SUB_BYTE_16 = {"m16n8k32": ("IMMA", "16832", ("s4", "u4"), 4, 2, 1),
               "m16n8k64": ("IMMA", "16864", ("s4", "u4"), 4, 4, 2),
               "m16n8k128": ("BMMA", "168128", ("b1",), 4, 2, 1),
               "m16n8k256": ("BMMA", "168256", ("b1",), 4, 4, 2)}
SUB_BYTE_TYPES = ("s4", "u4", "b1")
# mma.sp (2:4 sparse A): (shape, A type) -> (SASS shape, registers in A, in B, the largest
# sparsity selector ptxas 13.5 accepts: which threads of a quad give the metadata; PTX
# allows 0..1 for f16 m16n8k32, ptxas 0..3). C/D as the dense forms'. The metadata register
# and the selector follow C (HMMA.SP/IMMA.SP/QMMA.SP). tf32 (1:2 sparse) and s4/u4 (4:8,
# in pairs) have the metadata of the 16-bit and 8-bit forms of the same register count
# (PTX ISA, sparse matrix storage); ptxas 13.5 writes HMMA.SP.1688/16816.F32.TF32,
# IMMA.SP.16864/168128.<A>.<B> (sm_8x only: sm_90+ calls a routine) and QMMA.SP.16864.F32.
SPARSE_FORMS = {("m16n8k16", "f16"): ("16816", 2, 2, 3), ("m16n8k32", "f16"): ("16832", 4, 4, 3),
                ("m16n8k16", "bf16"): ("16816", 2, 2, 3), ("m16n8k32", "bf16"): ("16832", 4, 4, 1),
                ("m16n8k8", "tf32"): ("1688", 2, 2, 3), ("m16n8k16", "tf32"): ("16816", 4, 4, 1),
                **{(shape, t): form for t in ("s8", "u8") for shape, form in
                   (("m16n8k32", ("16832", 2, 2, 1)), ("m16n8k64", ("16864", 4, 4, 0)))},
                **{(shape, t): form for t in ("s4", "u4") for shape, form in
                   (("m16n8k64", ("16864", 2, 2, 1)), ("m16n8k128", ("168128", 4, 4, 0)))},
                **{("m16n8k64", t): ("16864", 4, 4, 0) for t in FP8_TYPES}}
SPARSE_4BIT = ("s4", "u4")


# sparse kinds (`mma.sp::ordered_metadata ... .kind::*`, sm_120a/121a): kind -> (opcode, SASS
# shape, PTX shape). ptxas 13.5.37 writes `QMMA.SP.16864.<F32|F16>.<A>.<B> D, A, B, C, E, 0x0`,
# `QMMA.SF.SP.16864.F32.<A>.<B>.E8` and `OMMA.SF.SP.168128.F32.E2M1.E2M1.<E8|UE4M3>[.4X]
# D, A, B, C, {E, scale-a}, scale-b, URsel, 0x0`: A, B and C four registers each (C two for an
# f16 kind::f8f6f4), the metadata E and scale-a one aligned pair, the selectors packed as the
# dense block-scaled forms'. Sparsity selector 0 only ("expected to be 0").
SPARSE_KINDS = {"kind::f8f6f4": ("QMMA", "16864", "m16n8k64"),
                "kind::mxf8f6f4": ("QMMA", "16864", "m16n8k64"),
                "kind::mxf4": ("OMMA", "168128", "m16n8k128"),
                "kind::mxf4nvf4": ("OMMA", "168128", "m16n8k128")}


def sparse_kind(ins) -> str | None:
    """The `.kind::*` of a sparse mma, else None."""
    if not any(m.startswith("sp") for m in ins.modifiers):
        return None
    return next((m for m in ins.modifiers if m in SPARSE_KINDS), None)


def sub_byte_available(arch, modifiers) -> bool:
    """Whether `arch` generates a sub-byte mma (s4/u4 IMMA, b1 BMMA of the named operation)."""
    if "b1" in modifiers:
        return any(op in modifiers for op in arch.binary_mma_ops)
    return arch.mma_8x8_tiles


def shape_of(ins) -> str | None:
    return next((m for m in ins.modifiers if m.startswith("m") and "n" in m), None)


def mma_fragments(ins) -> tuple[int, int, int] | None:
    """(registers in A, in B, in C) of a supported `mma`, as the selection splits its sources."""
    shape = shape_of(ins)
    a_type = ins.types[0] if ins.types else None
    if sparse_kind(ins) is not None:
        return 4, 4, 4 if ins.type == "f32" else 2
    if any(m.startswith("sp") for m in ins.modifiers):
        form = _sparse_form(ins)
        return None if form is None else (form[1], form[2], 4 if ins.type in ("f32", "s32") else 2)
    if shape in TILE_8X8 and ins.type == "s32":
        return 1, 1, 2
    if shape in SUB_BYTE_16 and any(m in SUB_BYTE_TYPES for m in ins.modifiers):
        form = SUB_BYTE_16[shape]
        return form[4], form[5], form[3]
    if ins.type == "s32" and a_type in ("s8", "u8"):
        form = IMMA_SHAPES.get(shape)
        return None if form is None else (form[2], form[3], form[1])
    if "block_scale" in ins.modifiers:
        return 4, 2, 4
    if a_type in F8F6F4_TYPES:
        form = QMMA_SHAPES.get(shape)
        return None if form is None else (form[1], form[2], 4 if ins.type == "f32" else 2)
    form = HMMA_FORMS.get((shape, ins.type, a_type))
    return None if form is None else (form[2], form[3], form[1])


def sparse_types(ins) -> list:
    """A's and B's element types then C's of an `mma.sp`: the frontend keeps s4/u4 among
    the modifiers (`.s4.u4` before `.s32.s32`), every other type in `types`."""
    four = [m for m in ins.modifiers if m in SPARSE_4BIT]
    return four + list(ins.types) if four else list(ins.types)


def _sparse_form(ins):
    """SPARSE_FORMS's entry for an `mma.sp` (f16/bf16/tf32, s8/u8/s4/u4, e4m3/e5m2), else None."""
    types = sparse_types(ins)
    return SPARSE_FORMS.get((shape_of(ins), types[0] if types else None))


class MatrixMultiply:
    def sel_wmma(self, ins):
        """The wmma forms ptx2sass/wmma.py lowers never reach selection; the rest are refused."""
        space = f".{ins.space}" if ins.space else ""
        types = "".join(f".{t}" for t in (ins.type, *ins.types) if t)
        raise self.unsupported(f"`wmma.{'.'.join(ins.modifiers)}{space}{types}`")

    def sel_movmatrix(self, ins):
        """`movmatrix.sync.aligned.m8n8.trans.b16`: one MOVM.16.MT88 (the warp's 8x8 matrix of
        16-bit elements transposed in the register layout ldmatrix gives)."""
        if not {"m8n8", "trans"} <= set(ins.modifiers) or ins.type != "b16":
            raise self.unsupported(f"`movmatrix.{'.'.join(ins.modifiers)}.{ins.type}`")
        self.emit("MOVM", ("16", "MT88"), [self.dst(ins.dests[0]), self.in_register(ins.srcs[0])])

    def sel_mma(self, ins):
        shape = shape_of(ins)
        a_type = ins.types[0] if ins.types else None
        if sparse_kind(ins) is not None:
            return self.sparse_kind_mma(ins, shape)
        if any(m.startswith("sp") for m in ins.modifiers):
            return self.sparse_mma(ins, shape)
        if shape == "m8n8k4" and ins.type == "f64" and self.arch.f64_mma:
            return self.f64_mma(ins)
        if shape == "m8n8k4" and a_type == "f16" and self.arch.quadpair_mma_steps:
            return self.quadpair_mma_steps(ins)
        if shape in TILE_8X8 and ins.type == "s32" and sub_byte_available(self.arch, ins.modifiers):
            return self.tile_mma(ins, shape)
        if shape in SUB_BYTE_16 and any(m in SUB_BYTE_TYPES for m in ins.modifiers) \
                and sub_byte_available(self.arch, ins.modifiers):
            return self.tile_mma(ins, shape)
        if ins.type == "s32" and a_type in ("s8", "u8"):
            return self.integer_mma(ins, shape)
        if "block_scale" in ins.modifiers:
            return self.block_scale_mma(ins, shape)
        if a_type in F8F6F4_TYPES:
            return self.fp8_mma(ins, shape)
        form = HMMA_FORMS.get((shape, ins.type, a_type))
        if form is None or "row" not in ins.modifiers or "col" not in ins.modifiers:
            raise self.unsupported(f"`mma.{'.'.join(ins.modifiers)}.{ins.type}."
                                   f"{'.'.join(ins.types)}`")
        if self.guard is not None:
            raise self.unsupported("guarded `mma`")
        mods, n_d, n_a, n_b = form
        srcs = list(ins.srcs)
        if len(ins.dests) != n_d or len(srcs) != n_a + n_b + n_d:
            raise self.unsupported(f"`mma` with {len(ins.dests)} results and {len(srcs)} sources")
        a = self.gather(srcs[:n_a])
        b = self.gather(srcs[n_a:n_a + n_b])
        c = self.gather_accumulator(srcs[n_a + n_b:])
        d = VOp(self.mf.new_vreg("R", n_d))
        self.emit_mma("HMMA", mods, ins, d, (a, b, c))
        for k, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(d.reg, k)], guarded=False)

    def integer_mma(self, ins, shape):
        types = ins.types[:2]
        if shape == "m8n8k16" and not self.arch.integer_mma_8x8:
            raise self._refuse(ins)
        if shape not in IMMA_SHAPES or "row" not in ins.modifiers or "col" not in ins.modifiers \
                or any(t not in ("s8", "u8") for t in types) or self.guard is not None:
            raise self.unsupported(f"`mma.{'.'.join(ins.modifiers)}.{ins.type}.{'.'.join(ins.types)}`")
        name, n_d, n_a, n_b = IMMA_SHAPES[shape]
        srcs = list(ins.srcs)
        if len(ins.dests) != n_d or len(srcs) != n_a + n_b + n_d:
            raise self.unsupported(f"`mma` with {len(ins.dests)} results and {len(srcs)} sources")
        mods = (name,) + tuple(t.upper() for t in types) + (("SAT",) if "satfinite" in ins.modifiers else ())
        a = replace(self.gather(srcs[:n_a]), suffix=("ROW",))
        b = replace(self.gather(srcs[n_a:n_a + n_b]), suffix=("COL",))
        c = self.gather_accumulator(srcs[n_a + n_b:])
        d = VOp(self.mf.new_vreg("R", n_d))
        self.emit_mma("IMMA", mods, ins, d, (a, b, c))
        for k, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(d.reg, k)], guarded=False)

    def _refuse(self, ins):
        return self.unsupported(f"`mma.{'.'.join(ins.modifiers)}.{ins.type}.{'.'.join(ins.types)}`")

    def f64_mma(self, ins):
        """`mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64` (and wmma's `.rz/.rm/.rp`, as
        DMMA.884.RZ/RM/RP): one DMMA.884 (sm_90: DMMA.8x8x4); A and B one f64 (a register pair) each, C and D two
        (a quad)."""
        srcs = list(ins.srcs)
        if "row" not in ins.modifiers or "col" not in ins.modifiers or any(t != "f64" for t in ins.types) \
                or len(ins.dests) != 2 or len(srcs) != 4 or self.guard is not None:
            raise self._refuse(ins)
        rounding = [m.upper() for m in ins.modifiers if m in ("rz", "rm", "rp")]
        a, b = self.gather_f64(srcs[:1]), self.gather_f64(srcs[1:2])
        c = self.gather_f64(srcs[2:])
        d = VOp(self.mf.new_vreg("R", 4))
        self.emit("DMMA", (self.arch.f64_mma, *rounding), [d, a, b, c])
        for k, value in enumerate(ins.dests):
            self.begin_wide(value)
            for half in range(2):
                self.emit(COPY, (), [self.dst(value, half), VOp(d.reg, 2 * k + half)], guarded=False)

    def quadpair_mma_steps(self, ins):
        """`mma.sync.aligned.m8n8k4.<a>.<b>.<d>.f16.f16.<c>` on sm_75: HMMA.884.<D>.<C>.STEPk,
        as ptxas 13.5 writes it; each step writes one register pair of D (f16 D: 2 steps,
        f32 D: 4) from A and B (a pair each, .ROW/.COL as the layouts) and the C pair holding
        the elements that pair needs: C's pair k, or for an f16 C under an f32 D pair k // 2
        (emu/ops_mma.py `_hmma_884`). Each step gets a pair of its own; copies put the
        results in the PTX registers."""
        types = list(ins.types)
        layouts = [m for m in ins.modifiers if m in ("row", "col")]
        srcs = list(ins.srcs)
        n_d, n_c = (4 if ins.type == "f16" else 8), (4 if types[2:] == ["f16"] else 8)
        if len(layouts) != 2 or types[:2] != ["f16", "f16"] or ins.type not in ("f16", "f32") \
                or types[2:] not in (["f16"], ["f32"]) or (ins.type == "f16" and n_c == 8) \
                or len(ins.dests) != n_d or len(srcs) != 4 + n_c:
            raise self._refuse(ins)
        # guarded (ptxas: each step under the guard): the steps and the copies out run where
        # the guard holds; elsewhere D keeps the else-values select() copied into it
        guarded = self.guard is not None
        a = replace(self.gather(srcs[:2]), suffix=(layouts[0].upper(),))
        b = replace(self.gather(srcs[2:4]), suffix=(layouts[1].upper(),))
        # an f32 C in two quads (register groups are at most four wide)
        quads = [self.gather(srcs[4 + q:8 + q]) for q in range(0, n_c, 4)]
        mods = ("884", ins.type.upper(), types[2].upper())
        for k in range(n_d // 2):
            pair = k // 2 if n_c < n_d else k
            c = quads[pair // 2]
            ck = VOp(c.reg, (c.part or 0) + 2 * (pair % 2))
            operands = [VOp(self.mf.new_vreg("R", 2)), a, b, ck]
            if guarded:
                self.emit(IMPLICIT_DEF, (), [operands[0]], guarded=False)
            widths = {i: 2 for i, op in enumerate(operands) if i and op.part is not None}
            self.emit("HMMA", mods + (f"STEP{k}",), operands, widths=widths)
            for e in range(2):
                self.emit(COPY, (), [self.dst(ins.dests[2 * k + e]), VOp(operands[0].reg, e)],
                          guarded=guarded)

    def gather_f64(self, values) -> VOp:
        """The f64 `values` in one aligned group of register pairs: a lone value's own pair,
        else a fresh group filled by copies of the halves."""
        if len(values) == 1 and isinstance(values[0], ir.Value) and values[0].id not in self.param_values:
            r = self.vreg(values[0])
            if r.width == 2:
                return VOp(r)
        group = VOp(self.mf.new_vreg("R", 2 * len(values)))
        self.emit(IMPLICIT_DEF, (), [group], guarded=False)
        for k, v in enumerate(values):
            for half in range(2):
                self.move(VOp(group.reg, 2 * k + half), self.part_of(v, half))
        return group

    def tile_mma(self, ins, shape):
        """The sub-byte integer shapes: s4/u4 m8n8k32 (IMMA.8832; `.satfinite` as .SAT),
        m16n8k32 and m16n8k64 (IMMA.16832/16864 .S4/.U4), b1 m8n8k128, m16n8k128, m16n8k256
        (BMMA.88128/168128/168256 .XOR.POPC or .AND.POPC); A carries .ROW and B .COL. The
        8x8 tiles take one A and one B register and two C/D registers."""
        if shape in TILE_8X8:
            (opcode, name, kinds), (n_d, n_a, n_b) = TILE_8X8[shape], (2, 1, 1)
        else:
            opcode, name, kinds, n_d, n_a, n_b = SUB_BYTE_16[shape]
        mods = ins.modifiers
        types = [m for m in mods if m in kinds]
        srcs = list(ins.srcs)
        if "row" not in mods or "col" not in mods or len(types) != 2 or self.guard is not None \
                or len(ins.dests) != n_d or len(srcs) != n_a + n_b + n_d \
                or any(t != "s32" for t in ins.types):
            raise self._refuse(ins)
        if opcode == "IMMA":
            sass = (name, *(t.upper() for t in types)) + (("SAT",) if "satfinite" in mods else ())
        else:
            op = next((m for m in mods if m in ("xor", "and")), None)
            if op is None or "popc" not in mods:
                raise self._refuse(ins)
            sass = (name, op.upper(), "POPC")
        a = replace(self.gather(srcs[:n_a]), suffix=("ROW",))
        b = replace(self.gather(srcs[n_a:n_a + n_b]), suffix=("COL",))
        c = self.gather(srcs[n_a + n_b:], reuse=False)
        d = VOp(self.mf.new_vreg("R", n_d))
        self.emit_mma(opcode, sass, ins, d, (a, b, c))
        for k, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(d.reg, k)], guarded=False)

    def sparse_mma(self, ins, shape):
        """`mma.sp` / `mma.sp::ordered_metadata` (sm_8x; sm_90+ where the Target has the
        form: no s4/u4 there, fp8 only with its QMMA): HMMA.SP for f16/bf16/tf32 A and B
        (f16 or f32 C/D, the same type; tf32 f32 only), IMMA.SP for s8/u8/s4/u4 (.ROW/.COL,
        `.satfinite` as .SAT), QMMA.SP for e4m3/e5m2 (.ROW/.COL where the target's QMMA has
        them); the metadata register and the sparsity selector (an immediate) follow C."""
        form = _sparse_form(ins)
        types = sparse_types(ins)
        if form is None or not self.arch.sparse_mma or "row" not in ins.modifiers \
                or "col" not in ins.modifiers or self.guard is not None or len(types) != 3:
            raise self._refuse(ins)
        name, n_a, n_b, top = form
        opcode = "IMMA" if types[0] in ("s8", "u8", *SPARSE_4BIT) else \
            "QMMA" if types[0] in FP8_TYPES else "HMMA"
        if (types[0] in SPARSE_4BIT and not self.arch.sparse_4bit_mma) \
                or (opcode == "QMMA" and not self.arch.fp8_mma):
            raise self._refuse(ins)
        suffixes = opcode == "IMMA" or (opcode == "QMMA" and self.arch.qmma_layout_suffixes)
        if opcode == "IMMA":
            kinds = SPARSE_4BIT if types[0] in SPARSE_4BIT else ("s8", "u8")
            if ins.type != "s32" or types[2] != "s32" or types[1] not in kinds:
                raise self._refuse(ins)
            mods = ("SP", name, types[0].upper(), types[1].upper()) \
                + (("SAT",) if "satfinite" in ins.modifiers else ())
        elif opcode == "QMMA":
            if ins.type != "f32" or types[2] != "f32" or types[1] not in FP8_TYPES:
                raise self._refuse(ins)
            mods = ("SP", name, "F32", types[0].upper(), types[1].upper())
        else:
            if types[1] != types[0] or ins.type not in ("f16", "f32") or types[2] != ins.type \
                    or (types[0] in ("bf16", "tf32") and ins.type != "f32"):
                raise self._refuse(ins)
            mods = ("SP", name, ins.type.upper()) + ((types[0].upper(),) if types[0] != "f16" else ())
        n_d = 4 if ins.type in ("f32", "s32") else 2
        srcs = list(ins.srcs)
        if len(ins.dests) != n_d or len(srcs) != n_a + n_b + n_d + 2:
            raise self.unsupported(f"`mma.sp` with {len(ins.dests)} results and {len(srcs)} sources")
        selector = srcs[-1]
        if not isinstance(selector, ir.Const):
            raise self._refuse(ins)
        if opcode == "QMMA" and selector.value != 0:    # ptxas's words for fp8
            raise CompileError(f"Argument 5 of instruction 'mma': unexpected value '{selector.value}', "
                               "expected to be 0", self.file, self.line)
        if not 0 <= selector.value <= top:
            raise CompileError(f"Argument 6 of instruction 'Sparse mma': value '{selector.value}' "
                               f"out of range, expected to be in range [0..{top}]", self.file, self.line)
        a = self.gather(srcs[:n_a])
        b = self.gather(srcs[n_a:n_a + n_b])
        c = self.gather(srcs[n_a + n_b:n_a + n_b + n_d], reuse=False)
        if suffixes:
            a, b = replace(a, suffix=("ROW",)), replace(b, suffix=("COL",))
        meta = self.in_register(srcs[-2])
        d = VOp(self.mf.new_vreg("R", n_d))
        sizes = (n_a, n_b, n_d)
        widths = {1 + i: n for i, (op, n) in enumerate(zip((a, b, c), sizes))
                  if isinstance(op, VOp) and op.part is not None and n > 1}
        self.note_wide(ins, d.reg, (a, b, c))
        self.emit(opcode, mods, [d, a, b, c, meta, Imm(selector.value)],
                  widths=widths)
        for k, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(d.reg, k)], guarded=False)

    def sparse_kind_mma(self, ins, shape):
        """`mma.sp::ordered_metadata` with `.kind::f8f6f4` (QMMA.SP.16864) or a block-scaled
        kind (QMMA.SF.SP.16864, OMMA.SF.SP.168128) on sm_120a/121a, as ptxas writes them (see
        SPARSE_KINDS); the frontend checked kinds, types and selector ranges."""
        kind = sparse_kind(ins)
        opcode, name, ptx_shape = SPARSE_KINDS[kind]
        types = list(ins.types)
        scaled = "block_scale" in ins.modifiers
        n_c = 4 if ins.type == "f32" else 2
        srcs = list(ins.srcs)
        n_srcs = 4 + 4 + n_c + 2 + (6 if scaled else 0)
        if not self.arch.narrow_float_mma or self.guard is not None or shape != ptx_shape \
                or "row" not in ins.modifiers or "col" not in ins.modifiers \
                or ins.type not in ("f32", "f16") or len(types) != 3 + scaled \
                or types[2] != ins.type or any(t not in F8F6F4_TYPES for t in types[:2]) \
                or scaled != (kind != "kind::f8f6f4") \
                or (scaled and (types[3] not in SCALE_TYPES or ins.type != "f32")) \
                or len(ins.dests) != n_c or len(srcs) != n_srcs:
            raise self._refuse(ins)
        meta, selector = srcs[8 + n_c], srcs[9 + n_c]
        if not isinstance(selector, ir.Const) or (scaled and not all(
                isinstance(v, ir.Const) for v in (srcs[15], srcs[16], srcs[18], srcs[19]))):
            raise self._refuse(ins)
        if selector.value != 0:      # ptxas names the block-scaled ones 'Sparse mma'
            raise CompileError(f"Argument 5 of instruction '{'Sparse mma' if scaled else 'mma'}': unexpected value "
                               f"'{selector.value}', expected to be 0", self.file, self.line)
        a, b = self.gather(srcs[:4]), self.gather(srcs[4:8])
        c = self.gather_accumulator(srcs[8:8 + n_c])
        d = VOp(self.mf.new_vreg("R", n_c))
        mods = ("SP", name, ins.type.upper(), types[0].upper(), types[1].upper())
        if scaled:
            mods = ("SF",) + mods + (SCALE_TYPES[types[3]],) \
                + (("4X",) if "scale_vec::4X" in ins.modifiers else ())
            pair = self.gather([meta, srcs[14]], reuse=False)
            scale_b = self.in_register(srcs[17])
            byte_a, thread_a, byte_b, thread_b = (srcs[i].value for i in (15, 16, 18, 19))
            packed = byte_a | thread_a << 2 | byte_b << 3 | thread_b << 5
            if packed:
                sel = VOp(self.mf.new_vreg("UR"))
                self.emit("UMOV", (), [sel, self.imm32(packed)], guarded=False)
            else:
                sel = URZ
            tail = [pair, scale_b, sel, Imm(0)]
        else:
            tail = [self.in_register(meta), Imm(0)]
        fragments = (a, b, c)
        widths = {1 + i: n for i, (op, n) in enumerate(zip(fragments, (4, 4, n_c)))
                  if isinstance(op, VOp) and op.part is not None}
        self.note_wide(ins, d.reg, fragments)
        self.emit(opcode, mods, [d, a, b, c, *tail], widths=widths)
        for k, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(d.reg, k)], guarded=False)

    def fp8_mma(self, ins, shape):
        """QMMA: the fragments are IMMA's (four fp8 values per register, PTX's element order)."""
        types = ins.types[:3]
        narrow = any(t not in FP8_TYPES for t in types[:2])
        if shape not in QMMA_SHAPES or "row" not in ins.modifiers or "col" not in ins.modifiers \
                or ins.type not in ("f32", "f16") or len(types) != 3 or types[2] != ins.type \
                or any(t not in F8F6F4_TYPES for t in types[:2]) or self.guard is not None \
                or (narrow and not (self.arch.narrow_float_mma and shape == "m16n8k32")):
            raise self.unsupported(f"`mma.{'.'.join(ins.modifiers)}.{ins.type}.{'.'.join(ins.types)}`")
        name, n_a, n_b = QMMA_SHAPES[shape]
        n_d = 4 if ins.type == "f32" else 2
        srcs = list(ins.srcs)
        if len(ins.dests) != n_d or len(srcs) != n_a + n_b + n_d:
            raise self.unsupported(f"`mma` with {len(ins.dests)} results and {len(srcs)} sources")
        if not self.arch.fp8_mma:
            return self.fp8_mma_as_half(ins, types, n_a, n_b, n_d, srcs)
        mods = (name, ins.type.upper()) + tuple(t.upper() for t in types[:2])
        a, b = self.gather(srcs[:n_a]), self.gather(srcs[n_a:n_a + n_b])
        if self.arch.qmma_layout_suffixes:
            a, b = replace(a, suffix=("ROW",)), replace(b, suffix=("COL",))
        c = self.gather_accumulator(srcs[n_a + n_b:])
        d = VOp(self.mf.new_vreg("R", n_d))
        self.emit_mma("QMMA", mods, ins, d, (a, b, c))
        for k, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(d.reg, k)], guarded=False)

    def block_scale_mma(self, ins, shape):
        """QMMA.SF / OMMA.SF (sm_120a): `d, a, b, c, scale-a, {byte-id-a, thread-id-a},
        scale-b, {byte-id-b, thread-id-b}`; the frontend checked the kind, types and selector
        ranges in ptxas's words."""
        kind = next(m for m in ins.modifiers if m in BLOCK_SCALE_KINDS)
        opcode, name = BLOCK_SCALE_KINDS[kind]
        types = ins.types
        srcs = list(ins.srcs)
        if not self.arch.narrow_float_mma or self.guard is not None or ins.type != "f32" \
                or len(types) != 4 or types[3] not in SCALE_TYPES or len(ins.dests) != 4 \
                or len(srcs) != 4 + 2 + 4 + 6 or not all(isinstance(v, ir.Const) for v in
                                                         (srcs[11], srcs[12], srcs[14], srcs[15])):
            raise self.unsupported(f"`mma.{'.'.join(ins.modifiers)}.{ins.type}.{'.'.join(types)}`")
        sizes = ("4X",) if "scale_vec::4X" in ins.modifiers else ()
        mods = ("SF", name, "F32", types[0].upper(), types[1].upper(), SCALE_TYPES[types[3]]) + sizes
        a, b = self.gather(srcs[:4]), self.gather(srcs[4:6])
        c = self.gather_accumulator(srcs[6:10])
        scale_a, scale_b = self.in_register(srcs[10]), self.in_register(srcs[13])
        byte_a, thread_a, byte_b, thread_b = (srcs[i].value for i in (11, 12, 14, 15))
        selector = byte_a | thread_a << 2 | byte_b << 3 | thread_b << 5
        if selector:
            sel = VOp(self.mf.new_vreg("UR"))
            self.emit("UMOV", (), [sel, self.imm32(selector)], guarded=False)
        else:
            sel = URZ
        d = VOp(self.mf.new_vreg("R", 4))
        fragments = (a, b, c)
        widths = {1 + i: n for i, (op, n) in enumerate(zip(fragments, (4, 2, 4)))
                  if isinstance(op, VOp) and op.part is not None}
        self.note_wide(ins, d.reg, fragments)
        self.emit(opcode, mods, [d, a, b, c, scale_a, scale_b, sel], widths=widths)
        for k, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(d.reg, k)], guarded=False)

    def fp8_mma_as_half(self, ins, types, n_a: int, n_b: int, n_d: int, srcs) -> None:
        """fp8 mma where the target has no QMMA (sm_90), as ptxas writes it: each fp8 pair
        widened to f16x2 (F2FP.F16.<fmt>.UNPACK_B of a register's low or high half, exact),
        two HMMAs over them from zero, C added last. The k order changes but each HMMA sums
        the same products: the first takes every register's low half (m16n8k32's A: k 4t,
        4t+1 and 16+4t, 16+4t+1 of lane 4g+t; B the same k), the second the high halves,
        accumulating onto the first; m16n8k32 uses HMMA.16816, m16n8k16 HMMA.1688. C is
        added by FADD C, D per f32 register or HADD2 D, C per f16x2 register (so D rounds
        the products before C, as ptxas's code does)."""
        from ptx2sass.isel.convert import FP8_PAIRS
        a = self.gather(srcs[:n_a])
        b = self.gather(srcs[n_a:n_a + n_b])

        def part(group: VOp, k: int, high: bool) -> VOp:
            one = group if group.reg.width == 1 or group.width == 1 else VOp(group.reg, (group.part or 0) + k)
            return replace(one, suffix=("H1",) if high else ())

        def widen(group: VOp, fmt: str, halves: list[tuple[int, bool]]) -> VOp:
            out = VOp(self.mf.new_vreg("R", len(halves)))
            if len(halves) > 1:
                self.emit(IMPLICIT_DEF, (), [out], guarded=False)
            for k, (src, high) in enumerate(halves):
                self.emit("F2FP", ("F16", FP8_PAIRS[fmt + "x2"], "UNPACK_B"),
                          [VOp(out.reg, k) if len(halves) > 1 else out, part(group, src, high)])
            return out
        if n_a == 4:         # m16n8k32
            mods = ("16816", ins.type.upper())
            steps = [([(k, high) for k in range(4)], [(k, high) for k in range(2)]) for high in (False, True)]
        else:                # m16n8k16
            mods = ("1688", ins.type.upper())
            steps = [([(0, high), (1, high)], [(0, high)]) for high in (False, True)]
        acc = RZ
        for a_halves, b_halves in steps:
            a16 = widen(a, types[0], a_halves)
            b16 = widen(b, types[1], b_halves)
            d = VOp(self.mf.new_vreg("R", n_d))
            self.emit("HMMA", mods, [d, a16, b16, acc])
            acc = d
        c = self.gather(srcs[n_a + n_b:], reuse=False)
        total = VOp(self.mf.new_vreg("R", n_d))
        self.emit(IMPLICIT_DEF, (), [total], guarded=False)
        # a loop's accumulator lives in D's group, as for the other mmas (isel/loop_groups.py)
        self.note_wide(ins, total.reg, (a, b, c))
        for k in range(n_d):
            c_k = VOp(c.reg, (c.part or 0) + k)
            if ins.type == "f32":
                self.emit("FADD", (), [VOp(total.reg, k), c_k, VOp(d.reg, k)])
            else:
                self.emit("HADD2", (), [VOp(total.reg, k), VOp(d.reg, k), c_k])
        for k, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(total.reg, k)], guarded=False)

    def gather(self, values, reuse: bool = True) -> VOp:
        """One aligned register group holding `values` in order: the register group they
        were selected into when they are all of it, or an aligned run of it, in order (an
        ldmatrix's or mma's results); else the group an earlier unguarded gather of the same
        values filled in this machine block (flash attention's P fragment is the A of two
        mmas; nothing but the gather writes such a group, and SSA values do not change), or
        a fresh group filled by copies. `reuse` False: always a group of its own (an
        accumulator the mma may be given to rewrite in place, isel/loop_groups.py)."""
        if len(values) == 1:
            return self.reg_part(values[0])
        homes = [self.part_home.get(v.id) if isinstance(v, ir.Value) else None for v in values]
        if all(h is not None and h[0] is homes[0][0] for h in homes):
            reg, first = homes[0]
            if [h[1] for h in homes] == list(range(first, first + len(values))) \
                    and first % len(values) == 0:
                return VOp(reg, None if first == 0 and len(values) == reg.width else first)
        key = None
        if reuse and self.guard is None and all(isinstance(v, ir.Value) for v in values):
            key = (id(self.current), tuple(v.id for v in values))
            if key in self.gathered:
                return self.gathered[key]
        group = VOp(self.mf.new_vreg("R", len(values)))
        self.emit(IMPLICIT_DEF, (), [group], guarded=False)
        for k, v in enumerate(values):
            src = self.part_of(v, 0)
            if isinstance(src, VOp) and self.guard is None:
                # a copy: coalescing may then compute the value into the part itself
                # (regalloc/coalesce_parts.py)
                self.emit(COPY, (), [VOp(group.reg, k), src], guarded=False)
            else:
                self.move(VOp(group.reg, k), src)
        if key is not None:
            self.gathered[key] = group
        return group

    def gather_accumulator(self, values):
        """C of a dense HMMA/IMMA/QMMA: RZ when every element is a zero constant (the tensor
        core reads RZ's group as zeros; ptxas 13.5 writes `HMMA.16816.F32 R8, R4, R6, RZ` on
        sm_75/80/86/89/90/120 rather than zeroing a group), else `gather`'s group."""
        if all(isinstance(v, ir.Const) and v.value == 0 for v in values):
            return RZ
        return self.gather(values, reuse=False)

    def emit_mma(self, opcode: str, mods, ins, d: VOp, fragments) -> None:
        """The mma, with the footprint of fragments read from within a larger group."""
        sizes = mma_fragments(ins)
        widths = {1 + i: n for i, (op, n) in enumerate(zip(fragments, sizes))
                  if isinstance(op, VOp) and op.part is not None and n > 1}
        self.note_wide(ins, d.reg, fragments)
        self.emit(opcode, mods, [d, *fragments], widths=widths)
