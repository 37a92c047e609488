"""`wgmma.*` on sm_90a's warpgroup tensor cores, as ptxas 13.5 writes it (the kernels of
tools/wgmma_forms.py, one per form):

* `wgmma.fence` -> WARPGROUP.ARRIVE, moved after the copies that fill the next MMA's
  register groups (ptxas writes no accumulator register after it);
* `wgmma.mma_async` -> HGMMA (f16/bf16/tf32), QGMMA (e4m3/e5m2), IGMMA (s8/u8) or BGMMA
  (b1) `.64xNxK[.<D type>][.<A/B types>]`, D, [A registers,] gdesc[UR8], C, [scale-d][, gsb0].
  The descriptors sit in a uniform quad (A's in UR8:UR9, B's in UR10:UR11; ULDC.64 of a
  kernel parameter, else R2UR of each half); an immediate scale of -1 is `.negA`/`.negB`
  on the descriptor operand (`-R` on A's registers), a transpose `.tnspA`/`.tnspB`.
  scale-d: immediate 1 prints nothing, immediate 0 is `RZ, !UPT` (C is not read), a
  predicate is UP0 (VOTEU.ANY of it). D and C are one aligned group of consecutive
  registers (N/2 for 32-bit accumulators, N/4 for f16), rewritten in place;
* `wgmma.commit_group` -> nothing of its own: the group's last MMA carries gsb0 (it posts
  the group to the warpgroup scoreboard; the MMAs before it in the group print nothing);
* `wgmma.wait_group N` -> WARPGROUP.DEPBAR.LE gsb0, N.

The tensor core reads A's registers after issue, so the groups of A given to mma_asyncs
since the last `wait_group 0` stay live until each wait (operands the DEPBAR does not show).

A mixin of `Selector` (isel/select.py): methods reach the shared state through `self`."""
from __future__ import annotations

from ptx2sass import ir
from ptx2sass.errors import CompileError
from ptx2sass.frontend.checks import sparse_wgmma_types, wgmma_kind
from ptx2sass.encoder.model import Imm, Reg, SpecialReg
from ptx2sass.isel.common import INT_COMPARE, RZ
from ptx2sass.mir import COPY, VOp

DESC_UR = 8                       # A's descriptor UR8:UR9, B's UR10:UR11
SCALE_UP = Reg("UP", 0)
NOT_UPT = Reg("UP", 7, inv=True)
NOT_UP = Reg("UP", 0, inv=True)
UPT = Reg("UP", 7)
URZ = Reg("UR", 255)
SCALE_URS = (Reg("UR", 6), Reg("UR", 7))     # scratch: a uniform scale-d compare's parameters
GROUP_SB = SpecialReg("gsb0")
# A/B type -> (opcode, K, type modifiers after the D type; the operands' types follow for
# the kinds whose A and B types may differ)
KINDS = {"f16": ("HGMMA", 16, ()), "bf16": ("HGMMA", 16, ("BF16",)),
         "tf32": ("HGMMA", 8, ("TF32",)), "e4m3": ("QGMMA", 32, None),
         "e5m2": ("QGMMA", 32, None), "s8": ("IGMMA", 32, None), "u8": ("IGMMA", 32, None),
         "b1": ("BGMMA", 256, ())}
# A/B type -> the accumulator (D) types the PTX ISA allows with it
ACCUMULATORS = {"f16": ("f32", "f16"), "bf16": ("f32",), "tf32": ("f32",), "e4m3": ("f32", "f16"),
                "e5m2": ("f32", "f16"), "s8": ("s32",), "u8": ("s32",), "b1": ("s32",)}
N_VALUES = {"HGMMA": range(8, 257, 8), "QGMMA": range(8, 257, 8),
            "IGMMA": (8, 16, 24, *range(32, 257, 16)), "BGMMA": (8, 16, 24, *range(32, 257, 16))}


def wgmma_accumulator(ins) -> list | None:
    """C's source values of a `wgmma.mma_async` whose scale-d is not the constant 0 (C is
    read, and D = C is one register group a loop may carry in place: isel/loop_groups.py);
    None otherwise. Sources: A (a descriptor or 4 registers), B, scale-d, the immediates, C."""
    if ins.opcode != "wgmma" or "mma_async" not in ins.modifiers or not ins.dests:
        return None
    n_d = len(ins.dests)
    head = ins.srcs[:-n_d]
    sparse = 2 if "sp" in ins.modifiers else 0          # the metadata and the selector
    if len(ins.srcs) <= n_d or len(head) - sparse not in (3, 5, 6, 7, 8, 9):
        return None
    scale_d = head[(5 if len(head) - sparse in (6, 8, 9) else 2) + sparse]
    if isinstance(scale_d, ir.Const) and scale_d.value == 0:
        return None
    return list(ins.srcs[-n_d:])


class WarpgroupMma:
    def sel_wgmma(self, ins):
        if not self.arch.warpgroup_mma:
            raise self.unsupported(f"`wgmma` on {self.arch.name}")
        if self.guard is not None:
            raise self.unsupported("guarded `wgmma`")
        mods = ins.modifiers
        if "fence" in mods:
            self.wgmma_arrive = self.emit("WARPGROUP", ("ARRIVE",), [], ndefs=0)
        elif "commit_group" in mods:
            if self.wgmma_uncommitted:
                self.wgmma_uncommitted[-1].operands.append(GROUP_SB)
            self.wgmma_uncommitted = []
            if self.wgmma_open:
                self.wgmma_groups.append(self.wgmma_open)
            self.wgmma_open = set()
        elif "wait_group" in mods:
            pending = self.known_constant(ins.srcs[0]) if ins.srcs else None
            if pending is None:
                raise CompileError("Arguments mismatch for instruction 'wgmma.wait_group'",
                                   self.file, self.line)
            reading = list(self.wgmma_reads)
            self.emit("WARPGROUP", ("DEPBAR", "LE"), [GROUP_SB, Imm(pending), *reading], ndefs=0,
                      ).shown = (0, 1)
            if pending == 0:
                self.wgmma_reads = []
            # groups complete in order: all but the last `pending` are done
            self.wgmma_groups = self.wgmma_groups[len(self.wgmma_groups) - pending:] if pending else []
        elif "mma_async" in mods:
            self.warpgroup_mma(ins)
        else:
            raise self.unsupported(f"`wgmma.{'.'.join(mods)}`")

    def wait_for_accumulators(self, ins) -> None:
        """ptxas's injected wait (info C7517, frontend/usage_warnings.py): an instruction
        other than wgmma that reads an accumulator of an MMA not yet waited for gets
        `WARPGROUP.DEPBAR.LE gsb0, 0x0` before it (the open group's last MMA posting gsb0,
        as a commit would), and every MMA counts as done after it."""
        pending = set().union(self.wgmma_open, *self.wgmma_groups)
        if not any(isinstance(v, ir.Value) and v.id in pending for v in ins.srcs):
            return
        guard, self.guard = self.guard, None
        if self.wgmma_uncommitted:
            self.wgmma_uncommitted[-1].operands.append(GROUP_SB)
            self.wgmma_uncommitted = []
        self.emit("WARPGROUP", ("DEPBAR", "LE"), [GROUP_SB, Imm(0), *self.wgmma_reads], ndefs=0,
                  ).shown = (0, 1)
        self.guard = guard
        self.wgmma_reads, self.wgmma_groups, self.wgmma_open = [], [], set()

    def warpgroup_mma(self, ins):
        mods = ins.modifiers
        shape = next((m for m in mods if m.startswith("m64n")), None)
        types = [t for t in (*ins.types, *mods) if t in KINDS]
        dtype = ins.type
        if shape is None or len(types) != 2:
            raise self.unsupported(f"`wgmma.{'.'.join(mods)}`")
        opcode, k, extra = KINDS[types[0]]
        sparse = "sp" in mods
        n_text = shape[4:shape.index("k")]
        n = int(n_text) if n_text.isdigit() else 0
        kind = wgmma_kind("." + t for t in types)
        if sparse:
            kind = f"Sparse wgmma.mma_async with {sparse_wgmma_types(types)}"
            if opcode == "BGMMA":
                self.refuse(f"Unknown modifier '.{shape}'" if shape != f"m64n{n}k{k}"
                            else "Illegal modifier '.sp' for instruction 'wgmma.mma_async'")
            k *= 2
        if n not in N_VALUES[opcode]:
            self.refuse(f"Unknown modifier '.{shape}'")
        if dtype not in ACCUMULATORS[types[0]] or KINDS[types[1]][0] != opcode \
                or (extra is not None and types[0] != types[1]):
            self.refuse("Unexpected instruction types specified for 'wgmma.mma_async'")
        if not sparse and shape == f"m64n{n}k{2 * k}" and opcode != "BGMMA":
            self.refuse(f"Illegal matrix shape '.{shape}' for instruction '{kind}'")
        if shape != f"m64n{n}k{k}":
            self.refuse(f"Illegal instruction types specified for '{kind}' with shape '.{shape}'")
        tokens = (["SP"] if sparse else []) + [f"64x{n}x{k}"] + ([dtype.upper()] if opcode in ("HGMMA", "QGMMA") else [])
        if extra is None:
            tokens += [t.upper() for t in types]
        else:
            tokens += list(extra)
        if opcode == "BGMMA":
            tokens += [m.upper() for m in mods if m in ("and", "popc")]
        if "satfinite" in mods:
            tokens.append("SAT")
        n_d = len(ins.dests)
        if n_d != n // (2 if dtype in ("f32", "s32") else 4):
            self.refuse(f"Argument vector size mismatch for instruction '{kind}'")
        srcs = list(ins.srcs)
        accumulator, srcs = srcs[-n_d:], srcs[:-n_d]
        scaled = opcode == "QGMMA" or extra == ("TF32",)
        immediates = 4 if opcode == "HGMMA" and not scaled else 2 if scaled else 0
        extra_srcs = 2 if sparse else 0                 # the metadata and the selector
        a_regs = len(srcs) == 6 + immediates - (1 if immediates == 4 else 0) + extra_srcs
        if not a_regs and len(srcs) != 3 + immediates + extra_srcs:
            raise self.unsupported(f"`wgmma.{'.'.join(mods)}` with {len(srcs)} operands")
        a, srcs = (srcs[:4], srcs[4:]) if a_regs else (srcs[0], srcs[1:])
        metadata = None
        if sparse:
            metadata, selector = srcs[1], self.known_constant(srcs[2])
            if isinstance(metadata, ir.Const) or selector is None:
                raise CompileError("Arguments mismatch for instruction 'wgmma.mma_async'",
                                   self.file, self.line)
            if selector not in ((0, 1) if opcode == "HGMMA" else (0,)):
                self.refuse(f"Argument 4 of instruction '{kind}': unexpected value '{selector}', "
                            f"expected to be {'0 or 1' if opcode == 'HGMMA' else '0'}")
            srcs = srcs[:1] + srcs[3:]
        b, scale_d = srcs[0], srcs[1]
        imms = [self.known_constant(v) for v in srcs[2:]]
        imms = [-1 if v is not None and v & 0xFFFFFFFF == 0xFFFFFFFF else v for v in imms]
        for i, v in enumerate(imms):
            # ptxas counts arguments from 0 (d); the scales come before the transposes
            position = (5 if a_regs else 4) + i + extra_srcs
            scales = i < 2
            if v not in ((-1, 1) if scales else (0, 1)):
                self.refuse(f"Argument {position} of instruction '{kind}': unexpected value "
                            f"'{srcs[2 + i].value if isinstance(srcs[2 + i], ir.Const) else srcs[2 + i]}', "
                            f"expected to be {'-1 or 1' if scales else '0 or 1'}")
        scale_a, scale_b, trans_a, trans_b = 1, 1, 0, 0
        if immediates == 4:
            scale_a, scale_b = imms[:2]
            trans_a, trans_b = (0, imms[2]) if a_regs else imms[2:4]
        elif immediates == 2:
            scale_a, scale_b = imms[:2]
        suffix = tuple(s for s, on in (("negA", scale_a == -1 and not a_regs), ("negB", scale_b == -1),
                                       ("tnspA", trans_a == 1), ("tnspB", trans_b == 1)) if on)
        # the descriptors, then scale-d (uniform registers and predicate: set just before)
        if not a_regs:
            self.wgmma_descriptor(a, DESC_UR)
        self.wgmma_descriptor(b, DESC_UR + 2)
        scale = self.known_constant(scale_d) if not (isinstance(scale_d, ir.Value)
                                                     and scale_d.type == "pred") else None
        # D and C: one group, rewritten in place (C is not read under scale-d 0)
        group = VOp(self.mf.new_vreg("R", n_d)) if scale == 0 else \
            self.gather(accumulator, reuse=False)
        operands = [group]
        if a_regs:
            fragment = self.gather(a, reuse=False)
            if scale_a == -1:
                fragment = VOp(fragment.reg, fragment.part, neg=True)
            operands.append(fragment)
            self.wgmma_reads.append(fragment)
        self.arrive_after_copies()
        operands.append(Reg("UR", DESC_UR, suffix=suffix, gdesc=True))
        if scale == 0:
            operands += [RZ, NOT_UPT]
        else:
            operands.append(group)
            if scale is None:
                uniform = self.uniform_scale_d(scale_d)
                if uniform is None:
                    self.emit("VOTEU", ("ANY",), [SCALE_UP, self.pred_operand(scale_d)], guarded=False)
                operands.append(NOT_UP if uniform == "inverted" else SCALE_UP)
        if sparse:
            # the metadata register, and HGMMA's sparsity selector (QGMMA/IGMMA: 0, not shown);
            # kept live until the wait, as A's registers (what the tensor core reads when is
            # not known)
            meta = self.as_reg(self.part_of(metadata, 0))
            operands.append(meta)
            self.wgmma_reads.append(meta)
            if opcode == "HGMMA":
                operands.append(Imm(selector))
        widths = {1: 4} if a_regs and fragment.part is not None else {}
        self.wgmma_uncommitted.append(self.emit(opcode, tuple(tokens), operands, widths=widths))
        self.wgmma_open |= {d.id for d in ins.dests}
        # D's values are the group's parts: the next MMA of a chain accumulates into the
        # group in place (a copy would read registers the tensor core is still writing)
        # (A's registers, no B group, C = D's group: a loop may carry it, isel/loop_groups.py)
        self.note_wide(ins, group.reg, (fragment if a_regs else None, None, group))
        for i, value in enumerate(ins.dests):
            self.emit(COPY, (), [self.dst(value), VOp(group.reg, i)], guarded=False)

    def uniform_scale_d(self, pred) -> str | None:
        """scale-d computed by an integer `setp` of kernel parameters and immediates, as
        ptxas 13.5 writes it: the compare on the uniform datapath into UP0 (`ULDC UR6, c[..]`,
        `UISETP.NE.U32.AND UP0, UPT, UR6, URZ, UPT`) rather than ISETP + VOTEU.ANY; "plain",
        or "inverted" where ptxas compares the complement and the MMA reads `!UP0` (PTX's
        eq, lt and le, after the immediate is moved second: ne, ge, gt; lo/ls/hi/hs, ne, gt
        and ge are kept). None (nothing emitted) for any other predicate."""
        if not hasattr(self, "_wgmma_setps"):
            self._wgmma_setps = {ins.dests[0].id: ins for b in self.fn.blocks for ins in b.instrs
                                 if ins.opcode == "setp" and ins.dests}
        setp = self._wgmma_setps.get(pred.id) if isinstance(pred, ir.Value) else None
        if setp is None or setp.guard is not None or len(setp.dests) != 1 or len(setp.srcs) != 2 \
                or setp.type not in ("u32", "s32", "b32"):
            return None
        cmp = next((m for m in setp.modifiers if m in INT_COMPARE), None)
        if cmp is None or any(m in ("and", "or", "xor") for m in setp.modifiers):
            return None
        sources = []
        for ur, v in zip(SCALE_URS, setp.srcs):
            if isinstance(v, ir.Value) and len(self.param_values.get(v.id, ())) == 1:
                sources.append((ur, self.param_values[v.id][0]))
            elif isinstance(v, ir.Const):
                sources.append((None, v.value & 0xFFFFFFFF))
            else:
                return None
        if all(ur is None for ur, _ in sources):
            return None
        if sources[0][0] is None:            # the immediate second, the compare mirrored
            sources.reverse()
            cmp = {"lt": "gt", "gt": "lt", "le": "ge", "ge": "le", "lo": "hi", "hi": "lo",
                   "ls": "hs", "hs": "ls"}.get(cmp, cmp)
        complement = {"eq": "ne", "lt": "ge", "le": "gt"}.get(cmp)
        op, unsigned = INT_COMPARE[complement or cmp]
        unsigned = unsigned if unsigned is not None else setp.type != "s32"
        operands = []
        for ur, v in sources:
            if ur is not None:
                self.emit("ULDC", (), [ur, v], guarded=False)
                operands.append(ur)
            else:
                operands.append(URZ if v == 0 else self.imm32(v))
        self.emit("UISETP", (op,) + (("U32",) if unsigned else ()) + ("AND",),
                  [SCALE_UP, UPT, *operands, UPT], guarded=False)
        return "inverted" if complement else "plain"

    def arrive_after_copies(self) -> None:
        """The fence's WARPGROUP.ARRIVE after the copies that just filled the MMA's register
        groups (in the same block): register writes after the arrival are not ordered
        before the tensor core's reads."""
        arrive, self.wgmma_arrive = self.wgmma_arrive, None
        if arrive is not None and any(mi is arrive for mi in self.out):
            self.out[:] = [mi for mi in self.out if mi is not arrive] + [arrive]

    def refuse(self, message: str):
        """A form ptxas refuses, in its words."""
        raise CompileError(message, self.file, self.line)

    def wgmma_descriptor(self, value, index: int) -> None:
        """A 64-bit matrix descriptor into URindex:URindex+1."""
        ur = Reg("UR", index)
        if isinstance(value, ir.Value) and len(self.param_values.get(value.id, ())) == 2:
            self.emit("ULDC", ("64",), [ur, self.param_values[value.id][0]], guarded=False)
            return
        known = self.known_constant(value)
        for half in range(2):
            target = Reg("UR", index + half)
            if known is not None:
                self.emit("UMOV", (), [target, self.imm32(known >> 32 * half)], guarded=False)
            else:
                self.emit("R2UR", (), [target, self.reg_part(value, half)], guarded=False)
