"""The cheap paths of first executions (emu/program.py's per-kernel opcode facts, lanes'
`widen`) give what the general code gives."""
import numpy as np
import pytest

from ptx2sass.emu import program as prog
from ptx2sass.emu import registry
from ptx2sass.emu.lanes import widen
from ptx2sass.emu.launch import Launch
from ptx2sass.emu.loader import load_program
from tools import emu_testing as testing

FIELDS = ("offset", "ins", "aux", "plain", "vector", "guard", "collective", "meets", "releases",
          "fast", "reads_clock", "generic", "handler")


def _programs(count=12):
    out = []
    for entry in testing.zluda_manifest():
        cubin = testing.zluda_cubin(entry)
        if cubin is not None:
            out.append(load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin)))
        if len(out) == count:
            break
    return out


@pytest.mark.parametrize("program", _programs(), ids=lambda p: p.name)
def test_steps_with_opcode_facts_equal_steps_without(program):
    """Each step made with the kernel's opcode facts kept is the step made from scratch."""
    registry.load_all()
    decoded = Launch(program, (1, 1, 1), (32, 1, 1)).decoded
    facts: dict = {}
    for offset, ins in program.instructions:
        args = (program, offset, ins, decoded.handlers, decoded.prepare, None, decoded.vector)
        fresh, kept = prog.compile_step(*args), prog.compile_step(*args, facts)
        for name in FIELDS:
            assert getattr(kept, name) == getattr(fresh, name), (hex(offset), ins.opcode, name)
        # the tiered entry point or the handler, for run and run1 alike
        assert (kept.run, kept.run1) == (fresh.run, fresh.run1)
        # and what the opcode says, worked out here from the definitions
        op = ins.opcode
        handler = decoded.handlers.get(op, prog._unsupported)
        vector = handler in decoded.vector or handler is prog._unsupported
        plain = handler.__module__ not in prog.CONTROL_MODULES
        assert (kept.handler, kept.plain, kept.vector) == (handler, plain, vector), hex(offset)
        assert kept.releases == (op in ("BAR", "EXIT", "KILL"))
        assert kept.reads_clock == (op in ("S2R", "S2UR", "CS2R", "CS2UR"))
        assert kept.fast == (vector and plain and kept.collective is None)
        tiered = vector and handler is not prog._unsupported and op in prog._specialised_opcodes()
        assert (kept.run is prog._first) == tiered and kept.run1 is kept.run
    assert facts       # the facts were kept, so the second look-ups took the cached path


@pytest.mark.parametrize("values", [np.arange(5, dtype=np.uint32), np.array([7], dtype=np.uint32),
                                    np.array([True]), np.zeros(5, dtype=np.uint64)])
def test_widen_is_broadcast_to(values):
    got = widen(values, 5)
    assert got.shape == (5,) and got.dtype == values.dtype
    assert np.array_equal(got, np.broadcast_to(values, (5,)))


def test_widen_refuses_what_broadcast_to_refuses():
    with pytest.raises(ValueError):
        widen(np.arange(3, dtype=np.uint32), 5)
