"""emu/specialise.py: every specialised instruction form found in the corpora computes what
its semantics handler computes. Each form runs both ways on the same random machine state
(several CTAs, a partial warp; groups of every lane, one warp, one lane, a random subset;
guards true everywhere or on random lanes), and the two must leave identical registers,
uniform registers, predicates and memory, raise the same fault, and record the same register
reads and writes for the hazard checker."""
import numpy as np
import pytest

from tools import emu_testing as testing
from ptx2sass.emu.errors import EmuFault
from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.loader import load_program
from ptx2sass.emu.machine import LANES, Group, Machine
from ptx2sass.emu.memory import GLOBAL_BASE
from ptx2sass.emu.program import specialise_step
from ptx2sass.encoder.model import Mem

MEM_BYTES = 1 << 14
SHARED_BYTES = 1024


@pytest.fixture(autouse=True)
def _as_in_a_launch():
    """Steps called here directly run as a launch runs them: under one np.errstate (emu/fp.py)."""
    with np.errstate(all="ignore"):
        yield


def _programs():
    """Programs with specialised forms: the ZLUDA corpus and a slice of the tinygrad one."""
    out = []
    for entry in testing.zluda_manifest():
        cubin = testing.zluda_cubin(entry)
        if cubin is not None:
            out.append(load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin)))
    kernels = sorted(testing.tinygrad_manifest(), key=lambda k: k["sha256"])[:60]
    for entry in kernels:
        cubin = testing.tinygrad_cubin(entry)
        if cubin is not None:
            out.append(load_program(cubin, entry["entry"], testing.cubin_listing_decoder(cubin)))
    return out


def _forms():
    """(program, offset) of one instance of each specialised form (opcode, modifiers and
    operand kinds)."""
    seen = {}
    for program in _programs():
        launch = Launch(program, (1,), (1,), hazard_check=False)
        for off, step in launch.decoded.all().items():
            specialise_step(step)
            if step.generic is None:
                continue
            kinds = tuple((type(o).__name__, getattr(o, "file", None), getattr(o, "neg", None),
                           getattr(o, "inv", None), getattr(o, "index", None) in (255, 63, 7),
                           getattr(o, "ureg", None) is not None) for o in step.ins.operands)
            key = (step.ins.opcode, step.ins.modifiers, kinds, step.ins.guard is None)
            seen.setdefault(key, (program, off))
    return list(seen.values())


FORMS = _forms() if testing.ZLUDA_DIR.joinpath("manifest.json").is_file() else []


def _machine(program, rng, tracing):
    launch = Launch(program, (3,), (40,), dynamic_shared_bytes=SHARED_BYTES, hazard_check=False)
    mem = launch.gmem.allocate("mem", MEM_BYTES, rng.integers(0, 256, MEM_BYTES, dtype=np.uint8).tobytes())
    layout = sorted(getattr(program, "params", []))
    params = [Param(buffer="mem") if size == 8 else Param(type="u32", value=int(rng.integers(0, 64)))
              for _, _, size in layout]
    launch.set_params(params, {"mem": mem})
    m = Machine(launch, [(0, 0, 0), (1, 0, 0), (2, 0, 0)])
    m.R[:] = rng.integers(0, 1 << 32, m.R.shape, dtype=np.uint64).astype(np.uint32)
    m.R[255] = 0
    m.P[:] = rng.integers(0, 2, m.P.shape).astype(bool)
    m.P[7] = True
    m.UR[:] = rng.integers(0, 1 << 32, m.UR.shape, dtype=np.uint64).astype(np.uint32)
    m.UR[:, 63] = 0
    m.UP[:] = rng.integers(0, 2, m.UP.shape).astype(bool)
    m.UP[:, 7] = True
    m.shared_data[:] = rng.integers(0, 256, m.shared_data.shape, dtype=np.uint8)
    m.tracing = tracing
    return launch, m, mem


def _aim_addresses(step, m, rng):
    """Memory forms: point their address registers into the buffer, aligned, with some
    lanes on the same address."""
    shared = step.ins.opcode in ("LDS", "STS")
    for op in step.ins.operands:
        if shared and isinstance(op, Mem):
            if op.ubase is not None and not op.ubase.is_zero:
                m.UR[:, op.ubase.index] = 0
            if op.base is not None and not op.base.is_zero:
                offs = rng.integers(0, m.shared_bytes // 16 - 1, m.R.shape[1]) * 16
                offs[::5] = offs[0]
                m.R[op.base.index] = ((offs - op.offset) & 0xFFFFFFFF).astype(np.uint32)
            continue
        if isinstance(op, Mem) and op.base is not None and not op.base.is_zero:
            i = op.base.index
            offs = rng.integers(0, MEM_BYTES // 32, m.R.shape[1]) * 16
            offs[::5] = offs[0]
            addr = GLOBAL_BASE + offs - op.offset
            m.R[i] = (addr & 0xFFFFFFFF).astype(np.uint32)
            if i + 1 < 255:
                m.R[i + 1] = (addr >> 32).astype(np.uint32)


def _groups(m, rng):
    live = np.flatnonzero(m.live)
    sub = np.sort(rng.choice(live, size=len(live) // 3, replace=False))
    return {"every lane": live, "one warp": np.arange(LANES, 2 * LANES), "one lane": live[7:8],
            "some lanes": sub, "first warp": np.arange(0, LANES), "another lane": live[40:41]}


def _state(launch, m, mem):
    return (m.R.copy(), m.P.copy(), m.UR.copy(), m.UP.copy(), mem.data.copy(), m.shared_data.copy())


def _run(step, fn, launch, m, idx, guard_mask):
    warps = np.unique(idx >> 5)
    g = Group(m, idx, warps, step.offset)
    mask = g.active if guard_mask is None else guard_mask[idx]
    m.reads, m.writes = [], []
    try:
        fn(g, step, g.active, mask)
        error = None
    except EmuFault as e:
        error = str(e)
    return error, list(m.reads), list(m.writes)


@pytest.mark.parametrize("form", FORMS, ids=lambda f: f"{f[0].name}@{f[1]:x}")
def test_specialised_form_matches_handler(form):
    program, off = form
    for seed in range(3):
        for tracing in (False, True):
            rng = np.random.default_rng([seed, off, tracing])
            launch, m, mem = _machine(program, rng, tracing)
            step = specialise_step(launch.decoded.step(off))
            _aim_addresses(step, m, rng)
            start = _state(launch, m, mem)
            for name, idx in _groups(m, rng).items():
                for guard in (None, rng.integers(0, 2, m.R.shape[1]).astype(bool)):
                    results = []
                    fns = (step.generic, step.run1 if len(idx) == 1 and step.run1 is not step.run else step.run)
                    for fn in fns:
                        m.R[:], m.P[:], m.UR[:], m.UP[:], mem.data[:], m.shared_data[:] = start
                        out = _run(step, fn, launch, m, idx, guard)
                        results.append((out, _state(launch, m, mem)))
                    (want, want_state), (got, got_state) = results
                    where = f"{step.ins.mnemonic} {name} guard={guard is not None} tracing={tracing}"
                    assert got[0] == want[0], f"{where}: fault {got[0]!r}, handler {want[0]!r}"
                    if tracing:
                        assert got[1:] == want[1:], f"{where}: trace {got[1:]} != {want[1:]}"
                    for label, a, b in zip(("R", "P", "UR", "UP", "memory", "shared"), got_state, want_state):
                        if not np.array_equal(a, b):
                            bad = np.argwhere(a != b)[0]
                            pytest.fail(f"{where}: {label}{tuple(bad)} = {a[tuple(bad)]}, handler {b[tuple(bad)]}")


def test_forms_cover_the_hot_opcodes():
    """The sweep above sees the forms it is meant to check (a test that cannot fail otherwise)."""
    ops = {Launch(p, (1,), (1,), hazard_check=False).decoded.step(off).ins.opcode for p, off in FORMS}
    assert {"IADD3", "IMAD", "MOV", "LDG", "STG", "ISETP", "LOP3", "SHF", "FFMA", "ULDC", "LDS", "STS"} <= ops
    assert len(FORMS) > 30
