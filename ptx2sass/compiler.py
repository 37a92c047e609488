"""`ptx2sass.compile(ptx, arch="sm_89", **options) -> bytes`: the public compile API (a module
named `compile` would shadow the function on the package, hence `compiler`)."""
from __future__ import annotations

from ptx2sass.errors import CompileError


def compile(ptx: str, arch: str = "sm_89", filename: str = "<input>", **options) -> bytes:  # noqa: A001
    """Compile PTX text to a cubin for `arch`. Raises CompileError (file, line, message) for
    invalid PTX and for constructs the code generator does not support yet."""
    from ptx2sass.codegen import compile_ptx
    if not isinstance(ptx, str):
        raise CompileError("ptx2sass.compile expects the PTX as a str")
    return compile_ptx(ptx, arch, filename, **options)
