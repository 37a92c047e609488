"""`ptx2sass.compile(ptx, arch="sm_89", **options) -> bytes`: the public compile API (a module
named `compile` would shadow the function on the package, hence `compiler`)."""
from __future__ import annotations

import gc

from ptx2sass.errors import CompileError


def compile(ptx: str, arch: str = "sm_89", filename: str = "<input>", **options) -> bytes:  # noqa: A001
    """Compile PTX text to a cubin for `arch`. Raises CompileError (file, line, message) for
    invalid PTX and for constructs the code generator does not support yet.

    The cycle collector is paused meanwhile (and restored as the caller had it), as the
    command line runs: a compile's objects live until it ends, and collecting among them
    made compile time grow faster than the kernel (straight-line kernels of 1k/4k/16k
    instructions: 138/663/4251 ms with it, 136/581/2758 ms without,
    bench/compile_scaling.py)."""
    from ptx2sass.codegen import compile_ptx
    if not isinstance(ptx, str):
        raise CompileError("ptx2sass.compile expects the PTX as a str")
    collecting = gc.isenabled()
    gc.disable()
    try:
        return compile_ptx(ptx, arch, filename, **options)
    finally:
        if collecting:
            gc.enable()
