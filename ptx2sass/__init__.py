"""ptx2sass: PTX in, a cubin the CUDA driver loads out."""
from ptx2sass.errors import CompileError

__all__ = ["CompileError"]
