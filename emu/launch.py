"""A kernel launch: lay out constant bank 0 as the driver does, place buffers and module
globals in emulated memory, run every CTA of the grid, and report what happened."""
from __future__ import annotations

import gc
import struct
from dataclasses import dataclass, field

import numpy as np

from . import convergence
from .errors import EmuFault
from . import checker_trail, externs, loader, scalar, traced_check
from .textures import DESCRIPTOR_SIZE, Bindings, Surface, Texture, descriptor_table
from .loader import _RELOC_WIDTH, EXTERN_PREFIX, load_program
from .machine import LANES, Budget, Machine
from .memory import LOCAL_WINDOW, SHARED_WINDOW, ConstantBanks, GlobalMemory
from .program import KernelProgram, decode
from ptx2sass.encoder.model import ConstRef
from .registry import VECTOR, load_all

DEFAULT_BUDGET = 5_000_000        # warp-instructions per launch
# The per-thread stack limit (cudaLimitStackSize) a launch runs under unless told otherwise:
# the driver's default, 1 KiB (cuCtxGetLimit on an H200, driver 580). The local window holds
# the kernel's declared frame plus this much; SR_LMEMHIOFF is the lowest offset the stack may
# reach (`stack_floor`).
DEFAULT_STACK_BYTES = 1024
# The initial stack pointer the driver writes to c[0x0][0x28]: 0xFFFCC0 on an H200 (driver
# 580, sm_90; the same for every stack limit). The emulator's per-thread local window ends
# there (`local_base` .. STACK_TOP), so a stack that overflows stays far above 0: ptxas's
# unsigned `R1 >= SR_LMEMHIOFF` check then fires as on the GPU instead of R1 wrapping.
STACK_TOP = 0xFFFCC0
# The initial stack pointer (the per-thread local size, c[0x0][0x28]) is a multiple of 16, as
# the driver's: ptxas's callers store 16-aligned stack structs with `STL.128 [R1]` (a 0x30
# frame), and nvlink's kernel + callee frames (0x30 + 0x38) need not be (branch struct28).
BATCH_LANES = 8192                # lanes of the CTAs run together (at least one CTA)
MAX_SHARED = 228 * 1024

SCALAR_FORMATS = {"u8": "<B", "u16": "<H", "u32": "<I", "u64": "<Q", "s8": "<b", "s16": "<h",
                  "s32": "<i", "s64": "<q", "f32": "<f", "f64": "<d", "b32": "<I", "b64": "<Q"}


@dataclass
class Param:
    """A kernel argument: a buffer (by name), a typed scalar, or (type "bytes") the raw bytes
    of a by-value aggregate."""
    buffer: str | None = None
    type: str | None = None
    value: float | int | None = None


@dataclass
class LaunchResult:
    buffers: dict[str, bytes]
    instructions: int                 # warp-instructions executed
    thread_instructions: int = 0      # … counted once per lane that ran them
    cycles: int = 0
    hazards: list = field(default_factory=list)
    # `reconverge="explicit"` only: warp-collective instructions run by part of their
    # members (emu.convergence)
    convergence_hazards: list = field(default_factory=list)
    # `trace=True`: the emu.timing.trace.TraceRecorder that watched the launch
    trace: object = None
    # what the kernel's printf calls wrote, one string per call
    printf: list = field(default_factory=list)

    @property
    def stats(self) -> dict:
        return {"instructions": self.instructions, "cycles": self.cycles, "hazards": len(self.hazards),
                "convergence_hazards": len(self.convergence_hazards)}


class fp_quiet:
    """NumPy's floating-point error handling set to "ignore" for a launch (emu/fp.py): what
    `np.errstate(all="ignore")` does, at a fraction of its ~5-8 us an entry (a one-thread
    launch is ~80 us): the same error-state object set in NumPy's context variable, made
    once for the state it is entered from."""
    __slots__ = ("token",)
    _made: tuple = (None, None)          # (state entered from, its "ignore all" state)

    def __enter__(self):
        if _EXTOBJ is None:
            self.token = np.errstate(all="ignore")
            self.token.__enter__()
            return
        here = _EXTOBJ.get()
        made = fp_quiet._made
        if made[0] is not here:
            made = fp_quiet._made = (here, _make_extobj(all="ignore"))
        self.token = _EXTOBJ.set(made[1])

    def __exit__(self, *exc):
        if _EXTOBJ is None:
            self.token.__exit__(*exc)
        else:
            _EXTOBJ.reset(self.token)


try:        # NumPy 2's error state (np.errstate's own means); else np.errstate itself
    from numpy._core._ufunc_config import _extobj_contextvar as _EXTOBJ
    from numpy._core._ufunc_config import _make_extobj
except ImportError:          # pragma: no cover
    _EXTOBJ = _make_extobj = None


class gc_paused:
    """The cycle collector paused: emulation allocates many short-lived acyclic objects
    (NumPy temporaries, closures), and in a process with a large heap (tinygrad's) each
    collection it triggers scans everything. The few cycles made are collected after.
    (A class: a generator context manager costs more than a short launch's set-up step.)"""
    __slots__ = ("was",)

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


_DRIVER_CBANK: dict[str, dict] = {}


# SR_CgaSize (sm_100+) in a launch without clusters, which picks the entry of the driver's
# per-cluster-size words (Target.cluster_size_cbank) ptxas's code reads. A model, not a
# device reading: with entries 0xa0 bytes apart the one at index 2 would overlap words ptxas
# reads at fixed places (gridid 0x140, the reserved-shared size 0x16c), so the index is 0
# or 1; the emulator takes 0 and writes the words there.
CGA_SIZE = 0


def _driver_cbank(arch: str) -> dict:
    """The arch's driver words in constant bank 0 (name → offset), looked up once per arch."""
    got = _DRIVER_CBANK.get(arch)
    if got is None:
        from ptx2sass.encoder.arch import arch_info
        info = arch_info(arch)
        got = _DRIVER_CBANK[arch] = dict(info.driver_cbank or ())
        got["__param_window_at_params"] = info.param_window_at_params     # (not a bank word)
    return got


def has_clusters(arch: str) -> bool:
    """Whether `arch` launches thread-block clusters (sm_90+: shared::cluster addresses)."""
    from ptx2sass.encoder.arch import target
    return bool(getattr(target(arch), "cluster_shared_addresses", False))


def _dims(v) -> tuple[int, int, int]:
    if isinstance(v, int):
        v = (v,)
    t = (tuple(map(int, v)) + (1, 1, 1))[:3]
    if t[0] < 1 or t[1] < 1 or t[2] < 1:
        raise EmuFault(f"launch dimensions must be positive, got {tuple(v)}")
    return t


def _stack_window(program: KernelProgram, stack_bytes) -> tuple[int, int]:
    """(local bytes per thread, the stack's floor in that window) for a stack limit of `stack_bytes`
    (cudaLimitStackSize). Measured on an H200 (driver 580, sm_90): the driver rounds the
    limit up to 16 bytes; SR_LMEMHIOFF = c[0x0][0x28] - the limit, whatever the kernel (a
    kernel of known stack and one whose stack ptxas leaves unknown alike), the kernel's own
    frame counted inside the limit (a 0x10 frame under a limit of 16 passes ptxas's
    `ISETP.GE.U32 P0, PT, R1, R0` check). The window keeps the frame ptxas declares below
    that (so code that never checks, -O3's, has what it always had), and a kernel whose
    known stack (`stack_need`) is larger than the limit gets its stack (measured: a 2048-byte
    frame under the 1 KiB default ran with SR_LMEMHIOFF 2048 below c[0x0][0x28]; the driver
    also kept the context's limit raised for later launches, which a per-launch emulator
    does not model)."""
    stack = int(stack_bytes)
    if stack < 0:
        raise EmuFault(f"stack_bytes must not be negative, got {stack}", kernel=program.name)
    stack = (stack + 15) // 16 * 16
    local = (program.local_bytes + stack + 15) // 16 * 16
    floor = local - max(stack, (program.stack_need + 15) // 16 * 16)
    return local, max(floor, 0)


def _shape(program: KernelProgram, grid, block, dynamic_shared_bytes, reconverge: str,
           stack_bytes: int = DEFAULT_STACK_BYTES) -> dict:
    """A launch shape's checked facts (grid, block, threads per CTA, shared bytes, local
    bytes per thread and the stack's floor, register limit) as a Launch's attributes, kept
    on the program per shape (a template: the same kernel is usually launched again and
    again with the same few shapes)."""
    cache = program.__dict__.setdefault("_shapes", {})
    try:
        key = (grid if isinstance(grid, int) else tuple(grid), block if isinstance(block, int) else tuple(block),
               dynamic_shared_bytes, reconverge, program.shared_bytes, program.local_bytes, program.regcount,
               program.stack_need, stack_bytes)
        got = cache.get(key)
    except TypeError:                   # unhashable dimensions: checked below, not kept
        key, got = None, None
    if got is not None:
        return got
    if reconverge not in convergence.RECONVERGE_MODES:
        raise EmuFault(f"reconverge must be one of {', '.join(convergence.RECONVERGE_MODES)}, "
                       f"not {reconverge!r}")
    grid, block = _dims(grid), _dims(block)
    threads = block[0] * block[1] * block[2]
    if threads > 1024:
        raise EmuFault(f"block of {block} has more than 1024 threads", kernel=program.name)
    shared_total = program.shared_bytes + int(dynamic_shared_bytes)
    if shared_total > MAX_SHARED:
        raise EmuFault(f"{shared_total} bytes of shared memory exceed the {MAX_SHARED}-byte limit",
                       kernel=program.name)
    local_bytes, stack_floor = _stack_window(program, stack_bytes)
    got = {"reconverge": reconverge, "grid": grid, "block": block, "threads_per_cta": threads,
           "shared_total": shared_total, "local_bytes": local_bytes,
           "local_base": STACK_TOP - local_bytes, "stack_floor": STACK_TOP - local_bytes + stack_floor,
           "regcount_limit": 255 if program.regcount >= 255 else max(program.regcount, 1)}
    if key is not None:
        if len(cache) > 64:
            cache.clear()
        cache[key] = got
    return got


def _reads_bank0_words(program: KernelProgram, words: tuple[int, ...]) -> bool:
    """Whether an instruction of `program` may read constant bank 0 at (or across) one of the
    8-byte `words`: a fixed `c[0x0][o]` overlapping one, a bank-0 read at a run-time offset
    (`LDC c[0x0][R2]`, `c[0x0][UR4+o]`), a bindless bank (`cx[UR4][o]`), or a texture or
    surface instruction (a bound form reads its handle from bank 0 at a slot of its own).
    Worked out once per program."""
    kept = program.__dict__.get("_bank0_reads")
    if kept is not None and kept[0] is program.instructions and kept[1] == words:
        return kept[2]
    handlers, _ = load_all()
    found = False
    for _, ins in program.instructions:
        handler = handlers.get(ins.opcode)
        if handler is not None and handler.__module__.endswith("ops_texture"):
            found = True
            break
        for op in ins.operands:
            if op.__class__ is ConstRef and (op.ubank is not None or op.bank == 0 and (
                    op.ureg is not None or any(w - 16 < op.offset < w + 8 for w in words))):
                found = True
                break
        if found:
            break
    program.__dict__["_bank0_reads"] = (program.instructions, words, found)
    return found


class Launch:
    """Everything a running kernel can see that is not per-CTA or per-warp."""

    def __init__(self, program: KernelProgram, grid, block, dynamic_shared_bytes: int = 0,
                 budget: int = DEFAULT_BUDGET, hazard_check: bool = True, reconverge: str = "optimistic",
                 cluster=None, stack_bytes: int = DEFAULT_STACK_BYTES):
        handlers, prepare = load_all()
        # "optimistic": lanes at the same PC run together (structured code reconverges at
        # once); "explicit": diverged lanes meet again only at BSYNC, WARPSYNC or a CTA
        # barrier, and collectives run apart are flagged (emu.convergence)
        # reconverge, grid, block, threads_per_cta, shared_total, local_bytes, local_base,
        # stack_floor, regcount_limit: as the shape's template has them
        self.__dict__.update(_shape(program, grid, block, dynamic_shared_bytes, reconverge, stack_bytes))
        self.program = program
        self._cluster_shape(cluster)
        self.gmem = GlobalMemory()
        self.budget = Budget(budget)
        self.bar_counts: dict = {}
        self.hazard_check = hazard_check
        self.printf: list[str] = []          # vprintf's output, in call order (emu/externs.py)
        self._globals = {}
        if program.globals:
            self._place_globals()
        # the program's decoding as an earlier launch left it, when nothing in this launch
        # can change it (no data address to resolve); else decode() checks and makes it
        kept = program.__dict__.get("_decoded")
        if kept is not None and not kept.data_refs and kept.instructions is program.instructions \
                and len(kept.instructions) == kept.count and kept.handlers is handlers:
            self.decoded = kept
        else:
            with gc_paused():
                self.decoded = decode(program, handlers, prepare, self._data_immediate, VECTOR)
        self.steps = self.decoded.steps
        # warps that may contend through atomics run one at a time (machine._run_rounds)
        self.sequential = self.decoded.atomics

    # Not a cluster launch: each CTA a cluster of its own (the driver's cluster-launch word 0)
    cluster = (1, 1, 1)
    cluster_size = 1
    cluster_launch = False

    def _cluster_shape(self, cluster) -> None:
        """The launch's thread-block clusters: `cluster` (x, y, z CTAs), else the shape the
        kernel declares (`.reqnctapercluster`), else, for an `.explicitcluster` kernel, 1x1x1
        clusters; a cluster launch sets the driver's cluster-launch word. The grid must be
        whole clusters (as cudaLaunchKernelEx asks), a cluster at most 16 CTAs (H100's
        non-portable limit)."""
        prog = self.program
        if cluster is None:
            cluster = prog.cluster_dims or ((1, 1, 1) if prog.explicit_cluster else None)
        if cluster is None:
            return
        dims = _dims(cluster)
        if not has_clusters(prog.arch):
            raise EmuFault(f"{prog.arch} has no thread-block clusters", kernel=prog.name)
        if prog.cluster_dims and dims != tuple(prog.cluster_dims):
            raise EmuFault(f"cluster {dims} differs from the kernel's .reqnctapercluster "
                           f"{tuple(prog.cluster_dims)}", kernel=prog.name)
        if any(g % c for g, c in zip(self.grid, dims)):
            raise EmuFault(f"grid {self.grid} is not a whole number of {dims} clusters", kernel=prog.name)
        size = dims[0] * dims[1] * dims[2]
        if size > 16:
            raise EmuFault(f"cluster {dims} has more than 16 CTAs", kernel=prog.name)
        self.cluster, self.cluster_size, self.cluster_launch = dims, size, True

    def cta_order(self) -> list[tuple[int, int, int]]:
        """The grid's CTA ids, cluster by cluster (clusters x fastest), each cluster's CTAs
        in rank order (%cluster_ctarank: x fastest), so that a batch of whole clusters is a
        run of consecutive entries and a CTA's rank-0 partner sits `rank` entries before it."""
        gx, gy, gz = self.grid
        cx, cy, cz = self.cluster
        return [(X + x, Y + y, Z + z) for Z in range(0, gz, cz) for Y in range(0, gy, cy) for X in range(0, gx, cx)
                for z in range(cz) for y in range(cy) for x in range(cx)]

    # Made on first use (most launches flag no convergence hazard and bind no texture).
    @property
    def convergence(self) -> convergence.ConvergenceLog:
        log = self.__dict__.get("_convergence")
        if log is None:
            log = self.__dict__["_convergence"] = convergence.ConvergenceLog(self.program.name)
        return log

    @property
    def bindings(self) -> Bindings:
        """The texture/surface objects of the launch (emu.textures); module variables by name."""
        b = self.__dict__.get("_bindings")
        if b is None:
            b = self.__dict__["_bindings"] = Bindings()
        return b

    # What every launch starts with
    thread_instructions = 0             # warp-instructions counted once per lane that ran them
    heap_allocations = 0                # malloc calls (emu/externs.py)
    timing_model = None                 # the hazard/cycle model or trace recorder, if any
    const: ConstantBanks | None = None  # set by set_params

    def _place_globals(self) -> None:
        program = self.program
        for name, (size, init) in program.globals.items():
            # The driver maps module data in whole pages: reads a little past a global
            # array succeed on hardware, so the buffer extends to the page end.
            self._globals[name] = self.gmem.allocate(name, -(-max(size, 1) // 4096) * 4096, init)
        for section, offset, sym_section, addend, rtype in program.global_relocations:
            data = self._globals[section].data
            width, shift = _RELOC_WIDTH[rtype]
            value = (self.symbol_address(sym_section, addend) >> shift) & ((1 << (8 * width)) - 1)
            data[offset:offset + width] = np.frombuffer(value.to_bytes(width, "little"), np.uint8)

    def flag_convergence(self, offset: int, message: str) -> None:
        self.convergence.flag(offset, message)

    def symbol_address(self, section: str, addend: int) -> int:
        """Address of a module symbol: code (a placed `.text.` section) or a global."""
        if section in self.program.code_bases:
            return self.program.code_bases[section] + addend
        if section.startswith(EXTERN_PREFIX):     # malloc, vprintf …: the driver links them
            return externs.address(section[len(EXTERN_PREFIX):]) + addend
        target = self._globals.get(section)
        if target is None:
            raise EmuFault(f"relocation against unknown section {section!r}", kernel=self.program.name)
        return target.base + addend

    def _data_immediate(self, ref) -> int:
        """The 32-bit immediate a `DataAddress` stands for in this launch."""
        value = self.symbol_address(ref.section, ref.addend)
        return (value >> 32 if ref.half == "hi" else value) & 0xFFFFFFFF

    def set_params(self, params: list[Param], buffers: dict[str, object]) -> None:
        prog = self.program
        layout = prog.__dict__.get("_param_layout")
        if layout is None or layout[0] is not getattr(prog, "params", None):
            layout = prog.__dict__["_param_layout"] = (getattr(prog, "params", None),
                                                       sorted(getattr(prog, "params", [])))
        layout = layout[1]
        if len(params) != len(layout) and layout:
            raise EmuFault(f"kernel takes {len(layout)} parameters, {len(params)} given",
                           kernel=prog.name)
        bank0 = bytearray(self._bank0_words())
        for (ordinal, offset, size), p in zip(layout, params):
            at = prog.param_base + offset
            if p.buffer is not None:
                if p.buffer not in buffers:
                    raise EmuFault(f"parameter {ordinal} names unknown buffer {p.buffer!r}", kernel=prog.name)
                value = struct.pack("<Q", buffers[p.buffer].base)
            elif p.type == "bytes":             # a by-value aggregate (`.param .b8 p[N]`)
                value = bytes(p.value)
            else:
                fmt = SCALAR_FORMATS.get(p.type or "")
                if fmt is None:
                    raise EmuFault(f"parameter {ordinal}: unknown scalar type {p.type!r}", kernel=prog.name)
                value = struct.pack(fmt, p.value)
            if len(value) > size:
                raise EmuFault(f"parameter {ordinal} is {size} bytes, {p.type or 'pointer'} value has {len(value)}",
                               kernel=prog.name)
            bank0[at:at + len(value)] = value
        self._const_window(bank0)
        self._param_window(bank0)
        self._handle_words(bank0)
        self._descriptor_tables(bank0)
        banks = {0: bytes(bank0)}
        if not prog.const_relocations:
            # read-only, so shared with the last launch that had the same bank 0 (and so
            # the constant words it has read already)
            kept = prog.__dict__.get("_const_kept")
            if kept is not None and kept[0] == banks[0] and kept[1] == prog.const_banks:
                self.const = kept[2]
                return
            banks.update(prog.const_banks)
            self.const = ConstantBanks(banks)
            prog.__dict__["_const_kept"] = (banks[0], dict(prog.const_banks), self.const)
            return
        banks.update({b: bytearray(d) for b, d in prog.const_banks.items()})
        for bank, offset, section, addend, rtype in prog.const_relocations:
            width, shift = _RELOC_WIDTH[rtype]
            data = banks[bank]
            inplace = int.from_bytes(data[offset:offset + width], "little")
            value = ((self.symbol_address(section, addend) + inplace) >> shift) & ((1 << (8 * width)) - 1)
            data[offset:offset + width] = value.to_bytes(width, "little")
        self.const = ConstantBanks({b: bytes(d) for b, d in banks.items()})

    def _const_window(self, bank0: bytearray) -> None:
        """Generic loads through a `cvta.const` address: the driver's const window (its base
        in c[0x0][const_window]) shows the module's constant bank 3 in the generic space;
        here a copy of the bank in global memory, placed after the launch's buffers."""
        data = self.program.const_banks.get(3)
        if not data:
            return
        at = _driver_cbank(self.program.arch).get("const_window")
        if at is None or at + 8 > len(bank0):
            return
        window = self.gmem.allocate("__const_window", len(data), bytes(data))
        struct.pack_into("<Q", bank0, at, window.base)

    def _param_window(self, bank0: bytearray) -> None:
        """Generic addresses of the kernel's parameters (`cvta.param`, isspacep.param): the
        driver's parameter window, here a copy of the parameters in global memory; its base
        in c[0x0][param_window] (sm_8x: where the bank's first byte would be, so the
        parameters start param_base above it; sm_90: the first parameter's address) and
        its last byte in c[0x0][param_window_end] (sm_8x: an offset from the base; sm_90: an
        address). The window's extent is this model's: the kernel's parameter bytes."""
        offsets = _driver_cbank(self.program.arch)
        at, end = offsets.get("param_window"), offsets.get("param_window_end")
        prog = self.program
        if at is None or end is None or not prog.param_bytes or max(at, end) + 8 > len(bank0):
            return
        if not _reads_bank0_words(prog, (at, end)):
            # no instruction can learn the window's address: its place is passed over (later
            # allocations land where they would), no copy made, its words left as they were
            self.gmem.reserve(prog.param_bytes)
            return
        data = bytes(bank0[prog.param_base:prog.param_base + prog.param_bytes])
        window = self.gmem.allocate("__param_window", len(data), data)
        if offsets["__param_window_at_params"]:
            struct.pack_into("<Q", bank0, at, window.base)
            struct.pack_into("<Q", bank0, end, window.base + len(data) - 1)
        else:
            struct.pack_into("<Q", bank0, at, window.base - prog.param_base)
            struct.pack_into("<I", bank0, end, prog.param_base + len(data) - 1)

    def bind(self, name: str, obj) -> None:
        """Bind a Texture/Surface to a module `.texref`/`.surfref` variable by name."""
        kinds = {kind for _, _, n, kind in self.program.handle_relocations if n == name}
        if not kinds:
            raise EmuFault(f"no module texture/surface variable {name!r} in the kernel's relocations",
                           kernel=self.program.name)
        want = Surface if "surfref" in kinds else Texture
        if not isinstance(obj, want):
            raise EmuFault(f"{name!r} is a {kinds.pop()}: bind a {want.__name__}", kernel=self.program.name)
        self.bindings.names[name] = self.bindings.add(obj)

    def _handle_words(self, bank0: bytearray) -> None:
        """Module handle slots: the index of the object bound to the variable (0 if none);
        samplers (independent mode) are not modelled."""
        for bank, offset, name, kind in self.program.handle_relocations:
            if kind == "samplerref":
                raise EmuFault(f"sampler {name!r}: independent texture mode is not modelled",
                               kernel=self.program.name)
            if bank == 0 and offset + 4 <= len(bank0):
                struct.pack_into("<I", bank0, offset, self.bindings.names.get(name, 0))

    def _descriptor_tables(self, bank0: bytearray) -> None:
        """The driver's texture and surface descriptor tables (txq/suq header fields, see
        emu.textures.descriptor_table), in global memory, their addresses in bank 0."""
        bindings = self.__dict__.get("_bindings")
        if bindings is None or not bindings.objects:
            return
        offsets = _driver_cbank(self.program.arch)
        for key, kind in (("texture_descriptors", Texture), ("surface_descriptors", Surface)):
            at = offsets.get(key)
            if at is None or at + 8 > len(bank0):
                continue
            table = self.gmem.allocate(f"__{key}", DESCRIPTOR_SIZE * (len(self.bindings.objects) + 1),
                                       descriptor_table(self.bindings.objects, kind))
            struct.pack_into("<Q", bank0, at, table.base)

    def _bank0_words(self) -> bytes:
        """Bank 0 before the parameters: the cubin's template with the launch's and the
        driver's words. The same for every launch of the program with the same shape, so
        kept on the program (a launch of a few instructions would spend more time here
        than running)."""
        prog = self.program
        key = (type(self), prog.arch, prog.param_base, prog.param_bytes, prog.shared_bytes, self.grid,
               self.block, self.shared_total, self.local_bytes, self.cluster_launch and self.cluster)
        cache = prog.__dict__.setdefault("_bank0_cache", {})
        words = cache.get(key)
        if words is None or cache.get("template") is not prog.const0_template:
            # the bank is read in 32-bit words: a word that holds the last (8- or 16-bit)
            # parameter is there whole, as on the device, whose bank is far larger
            size0 = max(len(prog.const0_template), -(-(prog.param_base + prog.param_bytes) // 4) * 4)
            bank0 = bytearray(size0)
            bank0[:len(prog.const0_template)] = prog.const0_template
            self._launch_words(bank0)
            self._driver_words(bank0)
            if cache.get("template") is not prog.const0_template or len(cache) > 64:
                cache.clear()
                cache["template"] = prog.const0_template
            words = cache[key] = bytes(bank0)
        return words

    # What this emulated device reports through the driver's constant-bank words.
    NSMID = 1               # one SM: CTAs run one after another
    GRIDID = 1
    AGGR_SMEM_LIMIT = 228 * 1024    # the shared memory an SM offers (H100: 228 KiB)

    def _launch_words(self, bank0: bytearray) -> None:
        """The block and grid sizes, the shared and local windows and the stack pointer, at
        the arch's offsets (sm_7x..sm_90: 0x0 .. 0x2c; sm_120: block 0x360, grid 0x370)."""
        from ptx2sass.encoder.arch import arch_info
        info = arch_info(self.program.arch)
        ntid, nctaid = info.block_dims_cbank
        struct.pack_into("<3I", bank0, ntid, *self.block)
        struct.pack_into("<3I", bank0, nctaid, *self.grid)
        struct.pack_into("<Q", bank0, 0x18, SHARED_WINDOW)   # sm_8x's cvta.shared reads it
        struct.pack_into("<Q", bank0, info.local_window_offset, LOCAL_WINDOW)
        struct.pack_into("<I", bank0, info.stack_pointer_offset, self.local_base + self.local_bytes)

    def _driver_words(self, bank0: bytearray) -> None:
        """Launch facts the driver writes into constant bank 0 (the special registers
        %dynamic_smem_size, %nsmid, %gridid, ... read them), at the arch's offsets."""
        offsets = dict(_driver_cbank(self.program.arch))
        values = {"dynamic_smem": ("<I", self.shared_total - self.program.shared_bytes),
                  "nsmid": ("<I", self.NSMID), "gridid": ("<Q", self.GRIDID),
                  "reserved_smem": ("<I", 0), "reserved_smem_end": ("<I", self.shared_total),
                  "reserved_smem_1": ("<I", self.shared_total), "graph_exec": ("<Q", 0),
                  "aggr_smem_limit": ("<I", self.AGGR_SMEM_LIMIT),
                  # the cluster shape (not a cluster launch: each CTA a 1x1x1 cluster of its
                  # own, PTX ISA: %cluster_nctaid 1, %nclusterid = %nctaid, %cluster_nctarank
                  # 1), its float reciprocals (ptxas divides %ctaid.y/.z by them), the grid
                  # in clusters, the CTAs of one, and whether this is a cluster launch
                  # (%is_explicit_cluster; ptxas's barrier.cluster tests it)
                  "cluster_nctaid": ("<III", tuple(self.cluster)),
                  "cluster_rcp": ("<fff", tuple(1.0 / c for c in self.cluster)),
                  "nclusterid": ("<III", tuple(g // c for g, c in zip(self.grid, self.cluster))),
                  "cluster_nctarank": ("<I", self.cluster_size),
                  "cluster_launch": ("<I", int(self.cluster_launch))}
        from ptx2sass.encoder.arch import target
        info = target(self.program.arch)
        for key, at in info.cluster_size_cbank:      # the entry SR_CgaSize selects
            offsets.setdefault(key, at + info.cluster_size_stride * CGA_SIZE)
        for key, (fmt, value) in values.items():
            at = offsets.get(key)
            if at is not None and at + struct.calcsize(fmt) <= len(bank0):
                struct.pack_into(fmt, bank0, at, *(value if isinstance(value, tuple) else (value,)))

    def run(self) -> None:
        """Run the grid's CTAs (x fastest) in batches of about BATCH_LANES lanes, each batch
        as one machine; a launch of one thread with no observer on the scalar interpreter
        (emu/scalar.py), which hands it to a machine where it cannot go on."""
        if scalar.suits(self):
            with gc_paused(), fp_quiet():
                scalar.run(self)
            return
        if self.timing_model is not None and scalar.suits_traced(self):
            if traced_check.SETTING:        # the equivalence sweep: both ways, compared
                with gc_paused(), fp_quiet():
                    traced_check.run_both(self, Launch._run_machines)
                return
            with gc_paused(), fp_quiet():
                scalar.run_traced(self)
            return
        self._run_machines()

    def _run_machines(self) -> None:
        """The grid on machines, in batches (each with the checker attached)."""
        gx, gy, gz = self.grid
        if self.cluster_size == 1:
            ctaids = [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]
        else:
            ctaids = self.cta_order()
        per_cta = -(-self.block[0] * self.block[1] * self.block[2] // LANES) * LANES
        # whole clusters: a cluster's CTAs are resident together, on one machine
        per = self.cluster_size
        batch = per if self.sequential else max(1, BATCH_LANES // (per_cta * per)) * per
        with gc_paused(), fp_quiet():
            tm = self.timing_model
            kept = checker_trail.defers(tm)
            for start in range(0, len(ctaids), batch):
                machine = Machine(self, ctaids[start:start + batch])
                if tm is not None:
                    tm.attach(machine)
                if kept:            # (the checker's calls made at the machine's end, or a kept outcome)
                    checker_trail.run_machine(self, machine, tm)
                else:
                    machine.run(self.budget)
                    if tm is not None:
                        tm.finish(machine)
                machine.release()


# `run`'s loaded programs by cubin bytes, kernel and decoder: a caller that passes the same
# cubin launch after launch pays for parsing and decoding once. The last program loaded is
# kept (`_LAST`), and, in `_PROGRAMS` (most recent last, bounded), one whose key was seen
# before (`_SEEN` holds the hashes of the last keys seen). Keeping every program would cost a
# caller that never repeats a cubin ~25-35% of each launch's CPU time (measured: the collector
# scanning the kept programs' objects). Only `run` uses these (it hands no program out, so
# none can be changed by a caller); a program keeps what its launches made (decoded steps,
# specialised forms, launch-shape templates), as one a caller keeps and passes as
# `program=` does.
_PROGRAMS: dict = {}
_SEEN: dict = {}
_LAST: tuple = (None, None)        # (key, program) of the last load
PROGRAM_CACHE_SIZE = 8
SEEN_SIZE = 16


def forget_programs() -> None:
    """Drop `run`'s kept programs (a test that changes the emulator's code between launches
    of one cubin needs the next launch to load and decode afresh)."""
    global _LAST
    _PROGRAMS.clear()
    _SEEN.clear()
    _LAST = (None, None)


def _loaded(cubin, kernel: str | None, decoder) -> KernelProgram:
    """`load_program(cubin, kernel, decoder)`: the last one loaded kept, and in `_PROGRAMS`
    (bounded) one whose key has been seen before."""
    global _LAST
    decoder = decoder or loader.codec_decoder      # what load_program decodes with now
    try:
        key = (bytes(cubin), kernel, decoder)
        program = _PROGRAMS.pop(key, None)
        if program is None and _LAST[0] == key:
            program = _LAST[1]                  # launched again: kept from now on
            _SEEN.pop(hash(key), None)
        h = hash(key)
    except TypeError:                   # an unhashable decoder: loaded each time
        return load_program(cubin, kernel, decoder)
    if program is None:
        with gc_paused():
            program = load_program(cubin, kernel, decoder)
        _LAST = (key, program)
        if _SEEN.pop(h, None) is None:          # first sight: remembered, not kept
            if len(_SEEN) >= SEEN_SIZE:
                del _SEEN[next(iter(_SEEN))]
            _SEEN[h] = True
            return program
    if len(_PROGRAMS) >= PROGRAM_CACHE_SIZE:         # (the key was popped above)
        del _PROGRAMS[next(iter(_PROGRAMS))]
    _PROGRAMS[key] = program
    return program


def run(cubin, kernel: str | None, grid, block, params: list, *, dynamic_shared_bytes: int = 0,
        budget: int = DEFAULT_BUDGET, hazard_check: bool = True, decoder=None,
        program: KernelProgram | None = None, reconverge: str = "optimistic",
        timing=None, trace: bool = False, textures: dict | None = None, cluster=None,
        stack_bytes: int = DEFAULT_STACK_BYTES) -> LaunchResult:
    """Run `kernel` of `cubin` (bytes) on NumPy data.

    `params` holds, in order: NumPy arrays (passed as device pointers; their contents are
    copied in, and copied back after the run, so outputs appear in place), `Param`s, or NumPy
    scalars (`np.uint32(5)`, typed by their dtype). Raises `EmuFault` on any fault.
    `reconverge="explicit"` runs diverged lanes apart until a BSYNC/WARPSYNC/BAR joins them
    and reports collectives run apart in `convergence_hazards` (emu.convergence). `timing`:
    a TimingModel subclass to check with (the latency audit's), else the plain one.
    `trace=True` records the instruction trace the SM timing model replays
    (`result.trace`, see emu.timing). A `emu.textures.Texture`/`Surface` in `params` is a
    bindless handle (a `.u64` parameter); `textures` binds them to module `.texref`/`.surfref`
    variables by name. Surfaces are written in place. `cluster` (x, y, z CTAs): a cluster
    launch (sm_90+), whose CTAs run together and reach each other's shared memory; by
    default the kernel's own `.reqnctapercluster` shape (1x1x1 for an `.explicitcluster`
    kernel without one), else no clusters (each CTA a cluster of one, cluster-launch word 0).
    A cubin passed again is not parsed and decoded again (`_loaded`; `forget_programs`)."""
    if program is None:
        program = _loaded(cubin, kernel, decoder)
    launch = Launch(program, grid, block, dynamic_shared_bytes, budget, hazard_check, reconverge, cluster,
                    stack_bytes)
    _attach_timing(launch, hazard_check, trace, timing)
    for name, obj in (textures or {}).items():
        launch.bind(name, obj)
    buffers = {}
    typed: list[Param] = []
    arrays: list[tuple[str, np.ndarray]] = []
    for i, p in enumerate(params):
        if isinstance(p, Param):
            typed.append(p)
        elif isinstance(p, (Texture, Surface)):
            typed.append(Param(type="u64", value=launch.bindings.handle(p)))
        elif isinstance(p, np.ndarray):
            name = f"arg{i}"
            buffers[name] = launch.gmem.allocate(name, p.nbytes, np.ascontiguousarray(p))
            arrays.append((name, p))
            typed.append(Param(buffer=name))
        elif isinstance(p, np.generic):
            kind = {"u": "u", "i": "s", "f": "f"}[p.dtype.kind] + str(8 * p.dtype.itemsize)
            typed.append(Param(type=kind, value=p.item()))
        else:
            raise EmuFault(f"parameter {i}: pass a NumPy array, a NumPy scalar or a Param, not {type(p).__name__}")
    launch.set_params(typed, buffers)
    launch.run()
    for name, arr in arrays:
        data = buffers[name].data
        arr.reshape(-1).view(np.uint8)[:] = data[:arr.nbytes]
    return _result(launch, buffers)


def _attach_timing(launch: Launch, hazard_check: bool, trace: bool, timing=None) -> None:
    """The control-code checker (`timing`, else the plain one), the trace recorder of the SM
    model, or both."""
    checker = recorder = None
    if hazard_check:
        from .hazards import TimingModel
        checker = (timing or TimingModel)(launch)
    if trace:
        from .timing.trace import Tee, TraceRecorder
        recorder = TraceRecorder(launch)
    launch.timing_model = Tee(checker, recorder) if checker and recorder else (checker or recorder)


def _result(launch: Launch, buffers) -> LaunchResult:
    res = LaunchResult({n: b.data.tobytes() for n, b in buffers.items()}, launch.budget.used,
                       getattr(launch, "thread_instructions", 0))
    res.trace = getattr(launch, "recorder", None)
    log = launch.__dict__.get("_convergence")
    res.convergence_hazards = list(log.hazards) if log is not None else []
    res.printf = list(launch.printf)
    if launch.timing_model is not None:
        res.cycles = launch.timing_model.cycles
        res.hazards = launch.timing_model.hazards
    return res


def run_buffers(program: KernelProgram, grid, block, params: list[Param], buffers: dict[str, tuple[int, bytes]],
                *, dynamic_shared_bytes: int = 0, budget: int = DEFAULT_BUDGET,
                hazard_check: bool = True, reconverge: str = "optimistic", trace: bool = False,
                objects: list = (), textures: dict | None = None, shared_fill: int = 0,
                timing=None, cluster=None, stack_bytes: int = DEFAULT_STACK_BYTES) -> LaunchResult:
    """The launch-file form: named buffers (size, initial bytes), parameters referring to them.
    `objects`: Textures/Surfaces bound first, as handles 1, 2, … (parameters name them by
    their handle value); `textures`: module `.texref`/`.surfref` bindings by name;
    `shared_fill`: the byte shared memory holds before the kernel writes it; `timing`: the
    checker's class, as `run`'s; `cluster`, `stack_bytes`: as `run`'s."""
    launch = Launch(program, grid, block, dynamic_shared_bytes, budget, hazard_check, reconverge, cluster,
                    stack_bytes)
    launch.shared_fill = shared_fill
    _attach_timing(launch, hazard_check, trace, timing)
    for obj in objects:
        launch.bindings.add(obj)
    for name, obj in (textures or {}).items():
        launch.bind(name, obj)
    placed = {name: launch.gmem.allocate(name, size, init) for name, (size, init) in buffers.items()}
    launch.set_params(params, placed)
    launch.run()
    return _result(launch, placed)
