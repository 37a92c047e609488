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
    # Function-scope .global/.const variables: function name -> PTX name -> placement.
    function_placements: dict[str, dict[str, Placement]] = field(default_factory=dict)


@dataclass
class KernelLayout:
    placements: dict[str, Placement]
    shared_bytes: int | None       # static size of `.nv.shared.<k>`; None: no such section
    shared_align: int
    frame: Frame


def _global_offsets(variables) -> dict[str, int]:
    """ptxas's order inside `.nv.global(.init)`: largest alignment first, then smallest
    size, then declaration order. `variables`: (variable, cubin name) pairs."""
    order = sorted(range(len(variables)), key=lambda i: (-variables[i][0].align, variables[i][0].size, i))
    at, out = 0, {}
    for i in order:
        v, name = variables[i]
        out[name] = align_up(at, v.align)
        at = out[name] + v.size
    return out


def module_layout(module: ir.Module, filename: str | None = None) -> ModuleLayout:
    """Module-scope `.global`/`.const` variables, and function-scope ones (static storage:
    ptxas names them `$__<name>__<n>` in the cubin), in declaration order."""
    out = ModuleLayout()
    data: list[tuple[ir.Variable, str, str | None]] = []     # (variable, cubin name, function)
    for v in module.variables:
        if v.space not in ("global", "const", "shared"):
            raise CompileError(f"module-level .{v.space} variable `{v.name}` not supported yet", filename)
        if v.space != "shared":                               # shared: laid out per kernel
            data.append((v, v.name, None))
    for fn in module.functions:
        for v in fn.locals:
            if v.space in ("global", "const"):
                data.append((v, f"$__{v.name}__{len(data)}", fn.name))
    globals_ = [(v, name) for v, name, _ in data if v.space == "global"]
    offsets = {**_global_offsets([(v, n) for v, n in globals_ if v.init is not None]),
               **_global_offsets([(v, n) for v, n in globals_ if v.init is None])}
    const_end = 0
    for v, name, fn_name in data:
        if v.relocations:
            raise CompileError(f"variable `{v.name}` initialised with addresses not supported yet",
                               filename)
        if v.extern:
            raise CompileError(f"extern .{v.space} variable `{v.name}` not supported yet", filename)
        if v.space == "global":
            where = Placement("global", len(out.bank4))
            out.bank4.append(name)
            out.globals_.append(GlobalVar(name, v.size, v.align, v.init, "global", offsets[name]))
        else:
            at = align_up(const_end, v.align)
            const_end = at + v.size
            where = Placement("const", at)
            out.globals_.append(GlobalVar(name, v.size, v.align, v.init or bytes(v.size), "const", at))
        if fn_name is None:
            out.placements[v.name] = where
        else:
            out.function_placements.setdefault(fn_name, {})[v.name] = where
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
    placements = {**mod.placements, **mod.function_placements.get(fn.name, {})}
    used = set(referenced_symbols(fn))
    shared = [v for v in fn.locals if v.space == "shared"]
    shared += [v for v in module.variables if v.space == "shared" and v.name in used]
    local = [v for v in fn.locals if v.space == "local"]
    for v in fn.locals:
        if v.space not in ("shared", "local", "global", "const"):
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
