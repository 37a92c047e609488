"""NVIDIA's nvJitLink (PyPI `nvidia-nvjitlink`, pinned with the oracle) through ctypes: PTX to
a cubin inside this process, the in-process anchor for `ptx2sass.compile`'s speed
(bench/compile_speed.py). Development-time only, like the oracle.

The library exports each entry point per ABI revision (`__nvJitLinkCreate_13_0`, ...); the
13.0 revision is used, which every 13.x library keeps.
"""
from __future__ import annotations

import ctypes
import functools
import importlib.util
from pathlib import Path

INPUT_PTX = 2                # nvJitLinkInputType: NVJITLINK_INPUT_PTX


class NvJitLinkError(RuntimeError):
    pass


@functools.cache
def library() -> ctypes.CDLL:
    spec = importlib.util.find_spec("nvidia")
    for root in (spec.submodule_search_locations if spec else ()):
        for path in sorted(Path(root).glob("*/lib/libnvJitLink.so*")):
            return ctypes.CDLL(str(path))
    raise NvJitLinkError("libnvJitLink not found: pip install the test extra (nvidia-nvjitlink)")


def _fn(name: str):
    fn = getattr(library(), f"__nvJitLink{name}_13_0")
    fn.restype = ctypes.c_int
    return fn


def compile_ptx(ptx: bytes, arch: str = "sm_89", options: tuple[str, ...] = ()) -> bytes:
    """The cubin nvJitLink makes of one PTX module (`-arch=sm_XX`, ptxas's defaults: -O3)."""
    handle = ctypes.c_void_p()
    opts = [f"-arch={arch}".encode(), *(o.encode() for o in options)]
    argv = (ctypes.c_char_p * len(opts))(*opts)
    _check(_fn("Create")(ctypes.byref(handle), ctypes.c_uint32(len(opts)), argv), handle, "create")
    try:
        _check(_fn("AddData")(handle, ctypes.c_int(INPUT_PTX), ctypes.c_char_p(ptx),
                              ctypes.c_size_t(len(ptx)), ctypes.c_char_p(b"input.ptx")),
               handle, "add PTX")
        _check(_fn("Complete")(handle), handle, "link")
        size = ctypes.c_size_t()
        _check(_fn("GetLinkedCubinSize")(handle, ctypes.byref(size)), handle, "cubin size")
        out = ctypes.create_string_buffer(size.value)
        _check(_fn("GetLinkedCubin")(handle, out), handle, "cubin")
        return out.raw
    finally:
        _fn("Destroy")(ctypes.byref(handle))


def _check(status: int, handle, what: str) -> None:
    if status == 0:
        return
    log = ""
    if handle:
        size = ctypes.c_size_t()
        if _fn("GetErrorLogSize")(handle, ctypes.byref(size)) == 0 and size.value:
            buf = ctypes.create_string_buffer(size.value)
            if _fn("GetErrorLog")(handle, buf) == 0:
                log = buf.value.decode(errors="replace").strip()
    raise NvJitLinkError(f"nvJitLink {what} failed (status {status}){': ' + log if log else ''}")
