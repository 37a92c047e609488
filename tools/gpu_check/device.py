"""Where launches run: the CUDA driver (libcuda.so through ctypes: the GPU machine needs
no Python packages) on a real GPU, or ptx2sass's emulator standing in for one in tests (`EmuDevice`).

Both take the same requests: load a module image (cubin, or PTX for the driver to JIT), get
a kernel's facts, run it once on given buffers and read its outputs back, and time further
launches with CUDA events. Errors are `DeviceError`s; `sticky` ones (a fault inside a
kernel) leave the context unusable, and the worker process that hit one exits so that a
fresh one carries on (a new process gets a new primary context).
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass


class DeviceError(Exception):
    def __init__(self, stage: str, message: str, sticky: bool = False, code: str = ""):
        super().__init__(f"{stage}: {message}")
        self.stage, self.message, self.sticky, self.code = stage, message, sticky, code


class NoDevice(Exception):
    """No usable GPU here (no libcuda.so, no device): `run` skips."""


@dataclass
class Buffer:
    """A device buffer: `init(base) -> bytes` gives its initial contents once its address is
    known (pointer chains need it); `fill` is the byte the rest is set to."""
    name: str
    size: int
    init: object = None       # bytes, a callable(base) -> bytes, or None
    fill: int = 0


@dataclass
class RunResult:
    outputs: dict[str, bytes]
    times_ms: list[float]


# Faults raised inside a kernel: the context cannot be used again after one.
STICKY = {"CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_LAUNCH_TIMEOUT", "CUDA_ERROR_HARDWARE_STACK_ERROR",
          "CUDA_ERROR_ILLEGAL_INSTRUCTION", "CUDA_ERROR_MISALIGNED_ADDRESS",
          "CUDA_ERROR_INVALID_ADDRESS_SPACE", "CUDA_ERROR_INVALID_PC", "CUDA_ERROR_LAUNCH_FAILED",
          "CUDA_ERROR_ASSERT", "CUDA_ERROR_ECC_UNCORRECTABLE", "CUDA_ERROR_CONTEXT_IS_DESTROYED",
          "CUDA_ERROR_UNKNOWN"}


# CUdevice_attribute / CUfunction_attribute numbers (cuda.h; stable across driver releases)
DEVICE_ATTRIBUTES = {"cc_major": 75, "cc_minor": 76, "sms": 16, "clock_khz": 13,
                     "memory_clock_khz": 36, "bus_width_bits": 37, "l2_bytes": 38,
                     "shared_per_sm": 81, "shared_per_block_optin": 97,
                     "registers_per_sm": 82, "threads_per_sm": 39, "warp_size": 10}
FUNCTION_ATTRIBUTES = {"max_threads": 0, "shared_bytes": 1, "local_bytes": 3, "registers": 4}
MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
LIBCUDA = ("libcuda.so.1", "libcuda.so")


def _libcuda():
    """The driver library through ctypes (stdlib only: the GPU machine needs no packages)."""
    import ctypes
    import ctypes.util
    names = list(LIBCUDA)
    found = ctypes.util.find_library("cuda")
    if found:
        names.append(found)
    errors = []
    for name in names:
        try:
            return ctypes.CDLL(name)
        except OSError as e:
            errors.append(str(e))
    raise NoDevice("no CUDA driver: libcuda.so could not be loaded (" + "; ".join(errors) + ")")


class CudaDevice:
    """GPU 0 through the CUDA driver API (libcuda.so via ctypes), in its primary context."""
    kind = "cuda"

    def __init__(self):
        import ctypes
        self.ct = ctypes
        self.lib = _libcuda()
        try:
            self._call("cuInit", "cuInit", ctypes.c_uint(0))
            count = ctypes.c_int(0)
            self._call("cuDeviceGetCount", "cuDeviceGetCount", ctypes.byref(count))
        except DeviceError as e:
            raise NoDevice(str(e)) from None
        except AttributeError as e:   # a library without the driver API's symbols
            raise NoDevice(f"libcuda.so lacks the driver API: {e}") from None
        if count.value < 1:
            raise NoDevice("the CUDA driver sees no device")
        self.dev = ctypes.c_int(0)
        self._call("cuDeviceGet", "cuDeviceGet", ctypes.byref(self.dev), ctypes.c_int(0))
        self.ctx = ctypes.c_void_p()
        self._call("cuDevicePrimaryCtxRetain", "cuDevicePrimaryCtxRetain", ctypes.byref(self.ctx), self.dev)
        self._call("cuCtxSetCurrent", "cuCtxSetCurrent", self.ctx)
        self._events = []
        for _ in range(2):
            ev = ctypes.c_void_p()
            self._call("cuEventCreate", "cuEventCreate", ctypes.byref(ev), ctypes.c_uint(0))
            self._events.append(ev)

    # -- errors

    def _name(self, err: int) -> str:
        ct = self.ct
        text = ct.c_char_p()
        try:
            if self.lib.cuGetErrorName(ct.c_int(err), ct.byref(text)) == 0 and text.value:
                return text.value.decode(errors="replace")
        except Exception:  # noqa: BLE001
            pass
        return f"CUDA error {err}"

    def _call(self, fn: str, stage: str, *args) -> None:
        """Call driver entry point `fn` (the `_v2` one where it exists); a DeviceError
        naming the CUresult when it is not CUDA_SUCCESS."""
        lib = self.lib
        f = getattr(lib, fn + "_v2", None) if fn in V2 else None
        if f is None:
            f = getattr(lib, fn, None) or getattr(lib, fn + "_v2")   # e.g. cuEventElapsedTime in CUDA 13
        err = f(*args)
        if err != 0:
            name = self._name(err)
            raise DeviceError(stage, name, sticky=name in STICKY, code=name)

    # -- facts

    def info(self) -> dict:
        ct = self.ct
        out = {"kind": self.kind, "api": "libcuda.so via ctypes"}
        name = ct.create_string_buffer(256)
        try:
            self._call("cuDeviceGetName", "cuDeviceGetName", name, ct.c_int(255), self.dev)
            out["name"] = name.value.decode(errors="replace")
        except DeviceError:
            out["name"] = "?"
        for key, attr in DEVICE_ATTRIBUTES.items():
            v = ct.c_int(0)
            try:
                self._call("cuDeviceGetAttribute", key, ct.byref(v), ct.c_int(attr), self.dev)
                out[key] = v.value
            except DeviceError:
                pass
        out["arch"] = f"sm_{out.get('cc_major', 0)}{out.get('cc_minor', 0)}"
        try:
            total = ct.c_size_t(0)
            self._call("cuDeviceTotalMem", "cuDeviceTotalMem", ct.byref(total), self.dev)
            out["memory_bytes"] = total.value
            v = ct.c_int(0)
            self._call("cuDriverGetVersion", "cuDriverGetVersion", ct.byref(v))
            out["driver_cuda_version"] = f"{v.value // 1000}.{v.value % 1000 // 10}"
        except DeviceError:
            pass
        return out

    # -- modules

    def load(self, image: bytes, is_ptx: bool = False, label: str = ""):
        ct = self.ct
        data = ct.create_string_buffer(image + (b"\0" if is_ptx else b""))
        module = ct.c_void_p()
        self._call("cuModuleLoadData", "load", ct.byref(module), data)
        return module

    def unload(self, module) -> None:
        try:
            self._call("cuModuleUnload", "unload", module)
        except DeviceError:
            pass

    def function(self, module, name: str):
        """(handle, facts: registers, local/shared bytes, max threads per block)."""
        ct = self.ct
        fn = ct.c_void_p()
        self._call("cuModuleGetFunction", "function", ct.byref(fn), module, name.encode())
        facts = {}
        for key, attr in FUNCTION_ATTRIBUTES.items():
            v = ct.c_int(0)
            try:
                self._call("cuFuncGetAttribute", key, ct.byref(v), ct.c_int(attr), fn)
                facts[key] = v.value
            except DeviceError:
                pass
        return fn, facts

    # -- running

    def _alloc(self, buf: Buffer):
        ct = self.ct
        ptr = ct.c_uint64(0)
        self._call("cuMemAlloc", "alloc", ct.byref(ptr), ct.c_size_t(max(buf.size, 1)))
        base = ptr.value
        if buf.size:
            self._call("cuMemsetD8", "memset", ct.c_uint64(base), ct.c_ubyte(buf.fill), ct.c_size_t(buf.size))
            init = buf.init(base) if callable(buf.init) else buf.init
            if init:
                host = bytes(init[:buf.size])
                self._call("cuMemcpyHtoD", "copy in", ct.c_uint64(base), host, ct.c_size_t(len(host)))
        return base

    def run(self, fn, grid, block, shared: int, buffers: list[Buffer], params: list[dict],
            outputs: list[str], repeats: int = 0, time_budget_s: float = 0.05, label: str = "",
            read: str = "first") -> RunResult:
        """Launch once, then time a warm-up and up to `repeats` more launches (each bracketed
        by events; fewer when they would exceed `time_budget_s`); `outputs` are read back
        after the first launch (`read="first"`) or the last ("last": calibration kernels
        report their own warm cycles)."""
        ct = self.ct
        placed = {}
        try:
            for b in buffers:
                placed[b.name] = self._alloc(b)
            if shared > 48 * 1024:
                self._call("cuFuncSetAttribute", "dynamic shared memory", fn,
                           ct.c_int(MAX_DYNAMIC_SHARED_SIZE_BYTES), ct.c_int(shared))
            holders = []
            for p in params:
                if "buffer" in p:
                    holders.append(ct.create_string_buffer(placed[p["buffer"]].to_bytes(8, "little"), 8))
                else:
                    raw = bytes.fromhex(p["bytes"])
                    holders.append(ct.create_string_buffer(raw.ljust(8, b"\0"), max(len(raw), 8)))
            args = (ct.c_void_p * max(len(holders), 1))(*[ct.cast(h, ct.c_void_p) for h in holders])
            dims = [ct.c_uint(int(d)) for d in list(grid) + list(block)]

            def launch():
                self._call("cuLaunchKernel", "launch", fn, *dims, ct.c_uint(shared), None,
                           args if holders else None, None)

            def sync(stage="run"):
                self._call("cuCtxSynchronize", stage)

            sizes = {b.name: b.size for b in buffers}

            def read_back():
                got = {}
                for name in outputs:
                    host = ct.create_string_buffer(max(sizes[name], 1))
                    if sizes[name]:
                        self._call("cuMemcpyDtoH", "copy out", host, ct.c_uint64(placed[name]), ct.c_size_t(sizes[name]))
                    got[name] = host.raw[:sizes[name]]
                return got

            launch()
            sync()
            got = read_back() if read == "first" else None
            times = []
            if repeats:
                start, end = self._events
                launch()                                  # warm-up (caches, clocks)
                sync()
                spent = 0.0
                ms = ct.c_float(0)
                for _ in range(repeats):
                    self._call("cuEventRecord", "event", start, None)
                    launch()
                    self._call("cuEventRecord", "event", end, None)
                    self._call("cuEventSynchronize", "run", end)
                    self._call("cuEventElapsedTime", "event", ct.byref(ms), start, end)
                    times.append(float(ms.value))
                    spent += ms.value / 1000
                    if spent > time_budget_s:
                        break
            return RunResult(got if got is not None else read_back(), times)
        finally:
            for ptr in placed.values():
                try:
                    self._call("cuMemFree", "free", ct.c_uint64(ptr))
                except Exception:  # noqa: BLE001 - freeing after a sticky fault may fail too
                    pass


# entry points whose current ABI is the `_v2` symbol (64-bit sizes and pointers)
V2 = {"cuDeviceTotalMem", "cuMemAlloc", "cuMemFree", "cuMemsetD8", "cuMemcpyHtoD", "cuMemcpyDtoH",
      "cuDevicePrimaryCtxRelease", "cuEventDestroy", "cuModuleGetGlobal"}


class EmuDevice:
    """ptx2sass's emulator standing in for a GPU, so that `run` can be tested where there is
    none. PTX is compiled by the pinned ptxas (standing in for the driver's JIT); times are
    wall-clock milliseconds of the emulation. For tests of the run's robustness,
    GPU_CHECK_FAKE="corrupt:PAT,crash:PAT,hang:PAT,fault:PAT,noload:PAT" corrupts the first
    output byte / kills the process / hangs / raises a sticky fault / refuses to load the
    module, for launches whose label (`id:variant`) contains PAT."""
    kind = "emulator"

    def __init__(self, arch: str = "sm_89"):
        self.arch = arch
        self.faults = {}
        for item in filter(None, os.environ.get("GPU_CHECK_FAKE", "").split(",")):
            what, _, pattern = item.partition(":")
            self.faults[what] = pattern

    def info(self) -> dict:
        return {"kind": self.kind, "name": "ptx2sass emulator", "arch": self.arch, "sms": 2,
                "clock_khz": 1_000_000, "l2_bytes": 1 << 20}

    def load(self, image: bytes, is_ptx: bool = False, label: str = ""):
        if self._fault("noload", label):
            raise DeviceError("load", "CUDA_ERROR_INVALID_IMAGE", code="CUDA_ERROR_INVALID_IMAGE")
        if is_ptx:             # the driver's JIT: here, the pinned ptxas
            from ptx2sass import oracle
            run = oracle.ptxas(image, self.arch)
            if not run.ok:
                raise DeviceError("load", f"CUDA_ERROR_INVALID_PTX ({run.stderr.strip()[:200]})")
            image = run.output
        from ptx2sass.encoder.cubin import read_cubin
        try:
            read_cubin(image)
        except Exception as e:  # noqa: BLE001
            raise DeviceError("load", f"not a cubin: {e}") from None
        return image

    def unload(self, module) -> None:
        pass

    def function(self, module, name: str):
        from ptx2sass.encoder.cubin import read_cubin
        kernels = {k.name: k for k in read_cubin(module).kernels}
        if name not in kernels:
            raise DeviceError("function", "CUDA_ERROR_NOT_FOUND", code="CUDA_ERROR_NOT_FOUND")
        return (module, name), {"registers": kernels[name].regcount}

    def _fault(self, what: str, label: str) -> bool:
        return what in self.faults and self.faults[what] in label

    def run(self, fn, grid, block, shared: int, buffers: list[Buffer], params: list[dict],
            outputs: list[str], repeats: int = 0, time_budget_s: float = 0.05, label: str = "",
            read: str = "first") -> RunResult:
        from ptx2sass.emu import EmuFault
        from ptx2sass.emu.launch import Launch

        from .prepare import emu_param, load_program
        if self._fault("crash", label):
            os._exit(9)
        if self._fault("hang", label):
            time.sleep(3600)
        if self._fault("fault", label):
            raise DeviceError("run", "CUDA_ERROR_ILLEGAL_ADDRESS", sticky=True, code="CUDA_ERROR_ILLEGAL_ADDRESS")
        cubin, name = fn

        def once():
            launch = Launch(load_program(cubin, name), grid, block, shared, hazard_check=False)
            placed = {}
            for b in buffers:
                placed[b.name] = launch.gmem.allocate(b.name, b.size, fill=b.fill)
                init = b.init(placed[b.name].base) if callable(b.init) else b.init
                if init:
                    import numpy as np
                    placed[b.name].data[:len(init)] = np.frombuffer(bytes(init[:b.size]), np.uint8)
            launch.set_params([emu_param(p) for p in params], placed)
            launch.run()
            return {n: placed[n].data.tobytes() for n in outputs}

        try:
            t0 = time.perf_counter()
            got = once()
            times = []
            for _ in range(min(repeats, 1)):
                t1 = time.perf_counter()
                last = once()
                times.append((time.perf_counter() - t1) * 1000)
                if read == "last":
                    got = last
        except EmuFault as e:
            raise DeviceError("run", f"CUDA_ERROR_ILLEGAL_ADDRESS ({e})", sticky=True,
                              code="CUDA_ERROR_ILLEGAL_ADDRESS") from None
        if repeats and not times:
            times = [(time.perf_counter() - t0) * 1000]
        if self._fault("corrupt", label):
            first = outputs[0] if outputs else None
            if first and got[first]:
                got[first] = bytes([got[first][0] ^ 0xFF]) + got[first][1:]
        return RunResult(got, times)


def open_device(kind: str, arch: str = "sm_89"):
    """The device of `kind` ("cuda" or "emulator"); NoDevice when it cannot be opened."""
    if kind == "emulator":
        return EmuDevice(arch)
    return CudaDevice()
