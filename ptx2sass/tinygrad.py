"""tinygrad backend: tinygrad's PTX renderer compiled by ptx2sass, run by ptx2sass's SASS
emulator (`DEV=SASSEMU`) or, with a GPU, by the CUDA driver (`DEV=CUDA:SASS`) or tinygrad's
own NVIDIA driver (`DEV=NV:SASS`).

Registration is one import, before tinygrad opens a device:

    import ptx2sass.tinygrad                  # registers SASSEMU, and SASS on CUDA and NV
    from tinygrad import Tensor
    print((Tensor([1, 2, 3]) + 1).tolist())  # with DEV=SASSEMU: [2, 3, 4]

tinygrad finds a device `X` by importing `tinygrad.runtime.ops_x`; this module installs
itself under that name for SASSEMU (nothing is written into tinygrad's package). The
renderer and compiler classes live here, at module level, so tinygrad's spawned compile
workers rebuild them by importing this module (which registers again in the child).
"""
from __future__ import annotations

import importlib
import importlib.abc
import sys
import time
from dataclasses import replace

import numpy as np
from tinygrad.device import Allocator, BufferSpec, Compiled, Compiler, CompileError, Program
from tinygrad.dtype import dtypes
from tinygrad.renderer.ptx import PTXRenderer, asm_for_op
from tinygrad.uop.ops import Ops

DEFAULT_ARCH = "sm_89"


def ptx_for(src: str, arch: str) -> str:
    """Fill the `.version/.target` placeholders of tinygrad's PTX as its PTXCompiler does."""
    version = "8.7" if int(arch[3:]) >= 120 else ("7.8" if int(arch[3:]) >= 89 else "7.5")
    return src.replace("TARGET", arch).replace("VERSION", version)


class SASSCompiler(Compiler):
    """PTX (as PTXRenderer writes it) to a cubin, by ptx2sass. Cubins go in tinygrad's disk
    cache (as its CUDA compiler's do; `CCACHE=0` or `CACHELEVEL=0` turn it off) under a key
    that names the arch and this installation's compiler code (`cache.code_version`), so a
    kernel seen before costs a look-up, not a compile (~0.1-0.5 s, plus ~0.3 s to import the
    compiler in a fresh process), and an edited ptx2sass never reads another's cubins."""

    def __init__(self, arch: str = DEFAULT_ARCH):
        from ptx2sass.cache import code_version
        self.arch = arch
        super().__init__(f"compile_ptx2sass_{arch}_{code_version()}")

    def compile_cached(self, src: str) -> bytes:
        from tinygrad.helpers import CCACHE
        # tinygrad reads CCACHE when a compiler is made (with the device); read it per
        # compile too, so `Context(CCACHE=0)` compiles afresh
        return super().compile_cached(src) if CCACHE else self.compile(src)

    def compile(self, src: str) -> bytes:
        import ptx2sass
        try:
            return ptx2sass.compile(ptx_for(src, self.arch), self.arch, "tinygrad.ptx")
        except ptx2sass.CompileError as e:
            raise CompileError(f"ptx2sass: {e}") from None

    def disassemble(self, lib: bytes):
        print(sass_listing(lib, self.arch))


def _ieee_for_float64(op: Ops, approx_spelling):
    """PTX has no `rcp/sqrt.approx.f64` (only `rcp.approx.ftz.f64`, a 20-bit seed), which
    tinygrad 0.14 writes anyway: for float64 write the IEEE `.rn` form, as a C compiler would
    compute it; other types keep tinygrad's own spelling."""
    name = {Ops.RECIPROCAL: "rcp", Ops.SQRT: "sqrt"}[op]
    return lambda d, a, dt, ty: (f"{name}.rn.f64 {d}, {a};" if dt == dtypes.float64
                                 else approx_spelling(d, a, dt, ty))


class SASSRenderer(PTXRenderer):
    """PTXRenderer whose PTX ptx2sass compiles, tensor cores included (HMMA), with valid PTX
    for float64 reciprocal and square root."""
    code_for_op = {**asm_for_op, **{op: _ieee_for_float64(op, asm_for_op[op])
                                    for op in (Ops.RECIPROCAL, Ops.SQRT)}}

    def __init__(self, target):
        # PTXRenderer's own constructor would build NVIDIA's JIT-linker compiler: set up
        # what it sets up, with ours (the sm_75 fallbacks it adds do not apply: ptx2sass
        # generates code for sm_80 and newer).
        from tinygrad.renderer import Renderer
        arch = target.arch or DEFAULT_ARCH
        Renderer.__init__(self, replace(target, arch=arch))
        self.compiler = SASSCompiler(arch)
        self.tensor_cores = PTXRenderer.tc_sm80


def sass_listing(cubin: bytes, arch: str = DEFAULT_ARCH) -> str:
    """Our SASS of a cubin, read back by our own decoder and printer."""
    from ptx2sass.encoder import codec, sass_text
    from ptx2sass.encoder.cubin import read_cubin
    lines = []
    for kernel in read_cubin(cubin).kernels:
        lines.append(f"        Function : {kernel.name}")
        for pc in range(0, len(kernel.text), 16):
            word = int.from_bytes(kernel.text[pc:pc + 16], "little")
            try:
                shown = sass_text.format_instruction(codec.decode(word, arch, pc))
            except Exception as e:  # noqa: BLE001 - show the word rather than stop the listing
                shown = f"<not decodable: {e}>"
            lines.append(f"        /*{pc:04x}*/  {shown} ;")
    return "\n".join(lines)


# --- the emulator-backed device ----------------------------------------------------------

class SASSEmuAllocator(Allocator["SassemuDevice"]):
    """Buffers are host memory (bytearrays); kernels see copies placed in the emulator's
    global memory for the length of a launch."""

    def _alloc(self, size: int, options: BufferSpec):
        return memoryview(bytearray(size))

    def _copyin(self, dest: memoryview, src: memoryview):
        dest[:] = src

    def _copyout(self, dest: memoryview, src: memoryview):
        dest[:] = src

    def _as_buffer(self, src: memoryview) -> memoryview:
        return src

    def _offset(self, buf: memoryview, size: int, offset: int):
        return buf[offset:offset + size]


# The packages whose code decides what `emu.loader.load_program` makes of a cubin.
LOADER_PACKAGES = ("ptx2sass", "ptx2sass.encoder", "ptx2sass.emu")


def load_program(lib: bytes, name: str):
    """The emulator's program for kernel `name` of cubin `lib`, kept in tinygrad's disk cache
    (`CACHELEVEL=0` turns it off) under the cubin's hash and this installation's loader code:
    reading the ELF and decoding every instruction word costs ~10-50 ms a kernel (plus
    pyelftools' import), reading the kept program back ~1 ms."""
    import hashlib
    import pickle

    from tinygrad.helpers import diskcache_get, diskcache_put

    from ptx2sass.cache import code_version
    from ptx2sass.emu import loader
    table = f"emu_program_{code_version(LOADER_PACKAGES)}"
    key = {"cubin": hashlib.sha256(lib).hexdigest(), "kernel": name}
    try:
        kept = diskcache_get(table, key)
    except Exception:  # noqa: BLE001 - an unreadable entry is a miss (the cache only saves time)
        kept = None
    if isinstance(kept, loader.KernelProgram):
        return kept
    program = loader.load_program(lib, name)
    try:
        diskcache_put(table, key, program)
    except (pickle.PicklingError, TypeError, AttributeError):
        pass                                # not picklable: loaded again next time
    return program


class SASSEmuProgram(Program["SassemuDevice"]):
    def __init__(self, dev, obj):
        self.dev, self.name, self.lib, self.signature = dev, obj.name, obj.lib, obj.signature
        self.program = load_program(obj.lib, obj.name)

    def __call__(self, *bufs, global_size=(1, 1, 1), local_size=(1, 1, 1), vals=(), wait=False, **kw):
        from ptx2sass.emu.launch import Launch, Param
        from tinygrad.device import TinyELF
        start = time.perf_counter()
        launch = Launch(self.program, global_size, local_size, hazard_check=False)
        placed, params, names = {}, [], {}
        for i, buf in enumerate(bufs):
            key = id(buf)       # a buffer passed twice is one allocation
            if key not in names:
                names[key] = f"buf{i}"
                placed[names[key]] = launch.gmem.allocate(names[key], len(buf), np.frombuffer(buf, np.uint8))
            params.append(Param(buffer=names[key]))
        value_types = [dt for _, dt in TinyELF.iter_sig(self.signature[len(bufs):], len(bufs) * 8)]
        for value, dt in zip(vals, value_types):
            kind = "u" if dt.name.startswith(("uint", "bool")) else "f" if "float" in dt.name else "s"
            params.append(Param(type=f"{kind}{8 * dt.itemsize}", value=value))
        launch.set_params(params, placed)
        launch.run()
        for buf in bufs:
            data = placed[names[id(buf)]].data
            buf[:] = data[:len(buf)].tobytes()
        return time.perf_counter() - start if wait else None


class SassemuDevice(Compiled):
    """DEV=SASSEMU: tinygrad programs compiled by ptx2sass and run in its SASS emulator."""

    def __init__(self, device: str):
        super().__init__(device, SASSEmuAllocator(self), [SASSRenderer], SASSEmuProgram,
                         arch=DEFAULT_ARCH)
        # the emulator's semantics modules load with the device (as tinygrad's PYTHON device
        # loads its interpreter), not in the first kernel launch
        from ptx2sass.emu import launch, registry, single_lane, specialise  # noqa: F401
        from ptx2sass.encoder import sass_text  # noqa: F401  (immediates' float spellings)
        registry.load_all()

    def synchronize(self):
        pass


# --- registration ------------------------------------------------------------------------

def register() -> None:
    """Make DEV=SASSEMU resolvable, and offer the SASS renderer on NVIDIA devices."""
    sys.modules.setdefault("tinygrad.runtime.ops_sassemu", sys.modules[__name__])
    from tinygrad.device import Device
    if "SASSEMU" not in Device._devices:
        Device._devices.append("SASSEMU")
    for module, cls in GPU_DEVICES:
        if module in sys.modules:
            _offer_sass(module, cls)
    if not any(isinstance(f, _OfferOnImport) for f in sys.meta_path):
        sys.meta_path.insert(0, _OfferOnImport())


# Devices that load our cubins: DEV=CUDA:SASS (the CUDA driver, cuModuleLoadData takes a cubin
# as well as PTX) and DEV=NV:SASS (tinygrad's own driver, which reads the cubin's ELF itself:
# code, constant banks, .nv.info register count and parameter bank).
GPU_DEVICES = (("tinygrad.runtime.ops_cuda", "CUDADevice"), ("tinygrad.runtime.ops_nv", "NVDevice"))


class _OfferOnImport(importlib.abc.MetaPathFinder):
    """Offers SASS on a GPU device when tinygrad first imports its runtime module, rather
    than importing both at registration: they load NVIDIA's generated bindings (~0.5 s of
    CPU), which every process that imports this module (tinygrad's compile workers too)
    would pay, GPU or not."""

    def find_spec(self, name, path=None, target=None):
        wanted = dict(GPU_DEVICES).get(name)
        if wanted is None:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _ThenOffer(spec.loader, wanted)
                return spec
        return None


class _ThenOffer(importlib.abc.Loader):
    """The module's own loader, then `_offer_sass` on the class it defines."""

    def __init__(self, loader, class_name: str):
        self.loader, self.class_name = loader, class_name

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _offer_sass(module.__name__, self.class_name)

    def __getattr__(self, name):            # get_source, get_filename, ...: the module's own
        return getattr(self.loader, name)


def _offer_sass(module_name: str, class_name: str) -> None:
    """Add SASSRenderer to a GPU device's renderers. tinygrad lists them in the device's
    constructor, so the list is extended after it runs."""
    try:
        device_class = getattr(importlib.import_module(module_name), class_name)
    except Exception:  # noqa: BLE001 - that runtime cannot load on this machine: nothing to offer
        return
    if getattr(device_class, "_ptx2sass", False):
        return
    original = device_class.__init__

    def __init__(self, *args, **kwargs):
        original(self, *args, **kwargs)
        if SASSRenderer not in self.renderers:
            self.renderers = [*self.renderers, SASSRenderer]

    device_class.__init__ = __init__
    device_class._ptx2sass = True


register()
