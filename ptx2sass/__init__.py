"""ptx2sass: PTX in, a cubin the CUDA driver loads out."""
from ptx2sass.errors import CompileError

__version__ = "0.0.1"     # the one place the release is written (pyproject.toml reads it)
__all__ = ["CompileError", "compile", "__version__"]


def __getattr__(name):
    # `compile` is loaded on first use, so `import ptx2sass` stays cheap for tools that only
    # need the errors or the oracle.
    if name == "compile":
        from ptx2sass.compiler import compile as _compile
        globals()["compile"] = _compile
        return _compile
    raise AttributeError(f"module 'ptx2sass' has no attribute {name!r}")
