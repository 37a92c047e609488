"""Where each PTX variable lives, as ptxas 13.5 lays them out for sm_8x executables.

* module `.global` variables: their own bytes in `.nv.global` (zero-filled) or
  `.nv.global.init` (largest alignment first, then smallest size); code reads a variable's 64-bit address from the constant-bank-4 table
  (`c[0x4][8*slot]`), whose entries the loader fills through `R_CUDA_64` relocations;
* module `.const` variables: byte offsets in constant bank 3 (`.nv.constant3`), in
  declaration order;
* `.shared` variables, the kernel's own and the module's it names: byte offsets in the
  kernel's shared window (`.nv.shared.<kernel>`); extern (unsized) arrays start after the
  static ones, 16-byte aligned, and make the section exist even when it is empty;
* `.local` variables: slots of the kernel's stack frame (`ptx2sass.frame`).

A `Placement` is what instruction selection needs: the state space and the number (table
slot or byte offset) that addresses the variable.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ptx2sass import ir
from ptx2sass.encoder.cubin import GlobalVar
from ptx2sass.errors import CompileError
from ptx2sass.frame import Frame, align_up

EXTERN_SHARED_ALIGN = 16


@dataclass(frozen=True)
class Placement:
    space: str     # "global" (value: bank-4 slot), "const", "shared", "local" (byte offsets)
    value: int


@dataclass
class ModuleLayout:
    placements: dict[str, Placement] = field(default_factory=dict)
    globals_: list[GlobalVar] = field(default_factory=list)   # for the cubin, in PTX order
    bank4: list[str] = field(default_factory=list)            # address-table slot order


@dataclass
class KernelLayout:
    placements: dict[str, Placement]
    shared_bytes: int | None       # static size of `.nv.shared.<k>`; None: no such section
    shared_align: int
    frame: Frame


def _global_offsets(variables) -> dict[str, int]:
    """ptxas's order inside `.nv.global(.init)`: largest alignment first, then smallest
    size, then declaration order."""
    order = sorted(range(len(variables)), key=lambda i: (-variables[i].align, variables[i].size, i))
    at, out = 0, {}
    for i in order:
        v = variables[i]
        out[v.name] = align_up(at, v.align)
        at = out[v.name] + v.size
    return out


def module_layout(module: ir.Module, filename: str | None = None) -> ModuleLayout:
    out = ModuleLayout()
    globals_ = [v for v in module.variables if v.space == "global"]
    offsets = {**_global_offsets([v for v in globals_ if v.init is not None]),
               **_global_offsets([v for v in globals_ if v.init is None])}
    const_end = 0
    for v in module.variables:
        if v.space not in ("global", "const", "shared"):
            raise CompileError(f"module-level .{v.space} variable `{v.name}` not supported yet", filename)
        if v.relocations:
            raise CompileError(f"variable `{v.name}` initialised with addresses not supported yet",
                               filename)
        if v.space == "shared":
            continue            # laid out per kernel
        if v.extern:
            raise CompileError(f"extern .{v.space} variable `{v.name}` not supported yet", filename)
        if v.space == "global":
            out.placements[v.name] = Placement("global", len(out.bank4))
            out.bank4.append(v.name)
            out.globals_.append(GlobalVar(v.name, v.size, v.align, v.init, "global", offsets[v.name]))
        else:
            at = align_up(const_end, v.align)
            const_end = at + v.size
            out.placements[v.name] = Placement("const", at)
            out.globals_.append(GlobalVar(v.name, v.size, v.align, v.init or bytes(v.size), "const", at))
    return out


def referenced_symbols(fn: ir.Function) -> list[str]:
    """Names of the variables the function's code mentions, in first-use order."""
    names: dict[str, None] = {}
    for b in fn.blocks:
        for ins in b.instrs:
            for s in ins.srcs:
                if isinstance(s, ir.Address):
                    s = s.base
                if isinstance(s, ir.Symbol):
                    names[s.name] = None
    return list(names)


def kernel_layout(fn: ir.Function, module: ir.Module, mod: ModuleLayout,
                  filename: str | None = None) -> KernelLayout:
    placements = dict(mod.placements)
    used = set(referenced_symbols(fn))
    shared = [v for v in fn.locals if v.space == "shared"]
    shared += [v for v in module.variables if v.space == "shared" and v.name in used]
    local = [v for v in fn.locals if v.space == "local"]
    for v in fn.locals:
        if v.space not in ("shared", "local"):
            raise CompileError(f"kernel `{fn.name}`: .{v.space} variable `{v.name}` not supported yet",
                               filename)
    size, align, externs = 0, 4, []
    for v in shared:
        if v.extern or v.size == 0:
            externs.append(v)
            continue
        at = align_up(size, v.align)
        placements[v.name] = Placement("shared", at)
        size = at + v.size
        align = max(align, v.align)
    if externs:
        align = max(align, EXTERN_SHARED_ALIGN)
        for v in externs:
            placements[v.name] = Placement("shared", align_up(size, EXTERN_SHARED_ALIGN))
    frame = Frame()
    for name, at in frame.place_variables(local).items():
        placements[name] = Placement("local", at)
    section = size if (size or externs) else None
    return KernelLayout(placements, section, align, frame)
