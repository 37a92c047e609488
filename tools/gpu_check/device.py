"""Where launches run: the CUDA driver (`cuda.bindings.driver`, PyPI `cuda-bindings`) on a
real GPU, or ptx2sass's emulator standing in for one in tests (`EmuDevice`).

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

import numpy as np


class DeviceError(Exception):
    def __init__(self, stage: str, message: str, sticky: bool = False, code: str = ""):
        super().__init__(f"{stage}: {message}")
        self.stage, self.message, self.sticky, self.code = stage, message, sticky, code


class NoDevice(Exception):
    """No usable GPU here (no driver, no device, no cuda-bindings): `run` skips."""


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


class CudaDevice:
    """GPU 0 through the CUDA driver API, in its primary context."""
    kind = "cuda"

    def __init__(self):
        try:
            from cuda.bindings import driver as cu
        except Exception as e:  # noqa: BLE001 - ImportError, or a broken install
            raise NoDevice(f"cuda.bindings is not importable: {type(e).__name__}: {e}") from None
        self.cu = cu
        try:
            self._check(cu.cuInit(0), "cuInit")
            count = self._check(cu.cuDeviceGetCount(), "cuDeviceGetCount")
        except DeviceError as e:
            raise NoDevice(str(e)) from None
        except Exception as e:  # noqa: BLE001 - no libcuda.so: the bindings raise their own error
            raise NoDevice(f"no CUDA driver: {type(e).__name__}: {e}") from None
        if count < 1:
            raise NoDevice("the CUDA driver sees no device")
        self.dev = self._check(cu.cuDeviceGet(0), "cuDeviceGet")
        self.ctx = self._check(cu.cuDevicePrimaryCtxRetain(self.dev), "cuDevicePrimaryCtxRetain")
        self._check(cu.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")
        self._events = [self._check(cu.cuEventCreate(0), "cuEventCreate") for _ in range(2)]
        self._keep = []

    # -- errors

    def _name(self, err) -> str:
        try:
            res = self.cu.cuGetErrorName(err)
            return res[1].decode() if isinstance(res[1], bytes) else str(res[1])
        except Exception:  # noqa: BLE001
            return str(err)

    def _check(self, result, stage: str):
        """The value(s) of a cuda.bindings call that returns (CUresult, *values)."""
        if not isinstance(result, tuple):
            result = (result,)
        err = result[0]
        if int(err) != 0:
            name = self._name(err)
            raise DeviceError(stage, name, sticky=name in STICKY, code=name)
        values = result[1:]
        return values[0] if len(values) == 1 else (values or None)

    # -- facts

    def info(self) -> dict:
        cu, A = self.cu, self.cu.CUdevice_attribute
        out = {"kind": self.kind}
        name = self._check(cu.cuDeviceGetName(128, self.dev), "cuDeviceGetName")
        out["name"] = name.split(b"\0", 1)[0].decode(errors="replace") if isinstance(name, bytes) else str(name)
        attrs = {"cc_major": "COMPUTE_CAPABILITY_MAJOR", "cc_minor": "COMPUTE_CAPABILITY_MINOR",
                 "sms": "MULTIPROCESSOR_COUNT", "clock_khz": "CLOCK_RATE",
                 "memory_clock_khz": "MEMORY_CLOCK_RATE", "bus_width_bits": "GLOBAL_MEMORY_BUS_WIDTH",
                 "l2_bytes": "L2_CACHE_SIZE", "shared_per_sm": "MAX_SHARED_MEMORY_PER_MULTIPROCESSOR",
                 "shared_per_block_optin": "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
                 "registers_per_sm": "MAX_REGISTERS_PER_MULTIPROCESSOR",
                 "threads_per_sm": "MAX_THREADS_PER_MULTIPROCESSOR", "warp_size": "WARP_SIZE"}
        for key, attr in attrs.items():
            enum = getattr(A, f"CU_DEVICE_ATTRIBUTE_{attr}", None)
            if enum is None:
                continue
            try:
                out[key] = int(self._check(cu.cuDeviceGetAttribute(enum, self.dev), attr))
            except DeviceError:
                pass
        out["arch"] = f"sm_{out.get('cc_major', 0)}{out.get('cc_minor', 0)}"
        try:
            out["memory_bytes"] = int(self._check(cu.cuDeviceTotalMem(self.dev), "cuDeviceTotalMem"))
            v = int(self._check(cu.cuDriverGetVersion(), "cuDriverGetVersion"))
            out["driver_cuda_version"] = f"{v // 1000}.{v % 1000 // 10}"
        except DeviceError:
            pass
        try:
            import cuda.bindings
            out["cuda_bindings"] = cuda.bindings.__version__
        except Exception:  # noqa: BLE001
            pass
        return out

    # -- modules

    def load(self, image: bytes, is_ptx: bool = False, label: str = ""):
        data = np.frombuffer(image + (b"\0" if is_ptx else b""), dtype=np.uint8).copy()
        return self._check(self.cu.cuModuleLoadData(data.ctypes.data), "load")

    def unload(self, module) -> None:
        try:
            self._check(self.cu.cuModuleUnload(module), "unload")
        except DeviceError:
            pass

    def function(self, module, name: str):
        """(handle, facts: registers, local/shared bytes, max threads per block)."""
        cu, A = self.cu, self.cu.CUfunction_attribute
        fn = self._check(cu.cuModuleGetFunction(module, name.encode()), "function")
        facts = {}
        for key, attr in (("registers", "NUM_REGS"), ("local_bytes", "LOCAL_SIZE_BYTES"),
                          ("shared_bytes", "SHARED_SIZE_BYTES"), ("max_threads", "MAX_THREADS_PER_BLOCK")):
            try:
                facts[key] = int(self._check(cu.cuFuncGetAttribute(getattr(A, f"CU_FUNC_ATTRIBUTE_{attr}"), fn), attr))
            except (DeviceError, AttributeError):
                pass
        return fn, facts

    # -- running

    def _alloc(self, buf: Buffer) -> tuple[int, object]:
        cu = self.cu
        ptr = self._check(cu.cuMemAlloc(max(buf.size, 1)), "alloc")
        base = int(ptr)
        if buf.size:
            self._check(cu.cuMemsetD8(ptr, buf.fill, buf.size), "memset")
            init = buf.init(base) if callable(buf.init) else buf.init
            if init:
                host = np.frombuffer(bytes(init[:buf.size]), dtype=np.uint8)
                self._check(cu.cuMemcpyHtoD(ptr, host.ctypes.data, len(host)), "copy in")
        return base, ptr

    def run(self, fn, grid, block, shared: int, buffers: list[Buffer], params: list[dict],
            outputs: list[str], repeats: int = 0, time_budget_s: float = 0.05, label: str = "",
            read: str = "first") -> RunResult:
        """Launch once, then time a warm-up and up to `repeats` more launches (each bracketed
        by events; fewer when they would exceed `time_budget_s`); `outputs` are read back
        after the first launch (`read="first"`) or the last ("last": calibration kernels
        report their own warm cycles)."""
        cu = self.cu
        placed = {}
        try:
            for b in buffers:
                placed[b.name] = self._alloc(b)
            if shared > 48 * 1024:
                self._check(cu.cuFuncSetAttribute(
                    fn, cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, shared),
                    "dynamic shared memory")
            holders = []
            for p in params:
                if "buffer" in p:
                    holders.append(np.array([placed[p["buffer"]][0]], dtype=np.uint64).view(np.uint8))
                else:
                    raw = bytes.fromhex(p["bytes"])
                    holders.append(np.frombuffer(raw.ljust(8, b"\0"), dtype=np.uint8).copy())
            pointers = np.array([h.ctypes.data for h in holders], dtype=np.uint64)
            args = pointers.ctypes.data if len(holders) else 0

            def launch():
                self._check(cu.cuLaunchKernel(fn, *grid, *block, shared, 0, args, 0), "launch")

            sizes = {b.name: b.size for b in buffers}

            def read_back():
                got = {}
                for name in outputs:
                    host = np.empty(sizes[name], dtype=np.uint8)
                    if sizes[name]:
                        self._check(cu.cuMemcpyDtoH(host.ctypes.data, placed[name][1], sizes[name]), "copy out")
                    got[name] = host.tobytes()
                return got

            launch()
            self._check(cu.cuCtxSynchronize(), "run")
            got = read_back() if read == "first" else None
            times = []
            if repeats:
                start, end = self._events
                elapsed = getattr(cu, "cuEventElapsedTime", None) or cu.cuEventElapsedTime_v2
                launch()                                  # warm-up (caches, clocks)
                self._check(cu.cuCtxSynchronize(), "run")
                spent = 0.0
                for _ in range(repeats):
                    self._check(cu.cuEventRecord(start, 0), "event")
                    launch()
                    self._check(cu.cuEventRecord(end, 0), "event")
                    self._check(cu.cuEventSynchronize(end), "run")
                    ms = float(self._check(elapsed(start, end), "event"))
                    times.append(ms)
                    spent += ms / 1000
                    if spent > time_budget_s:
                        break
            return RunResult(got if got is not None else read_back(), times)
        finally:
            for _, ptr in placed.values():
                try:
                    cu.cuMemFree(ptr)
                except Exception:  # noqa: BLE001 - freeing after a sticky fault may fail too
                    pass


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
        from ptx2sass.emu import EmuFault, Param
        from ptx2sass.emu.launch import Launch

        from .prepare import load_program
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
                    placed[b.name].data[:len(init)] = np.frombuffer(bytes(init[:b.size]), np.uint8)
            launch.set_params([Param(buffer=p["buffer"]) if "buffer" in p else Param(type=p["type"], value=p["value"])
                               for p in params], placed)
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
