"""The hazard checker: silent on ptxas's own cubins, and it catches hazards planted into
them (a stall count lowered below a producer's latency, a scoreboard wait dropped)."""
from dataclasses import replace

import pytest

from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.loader import load_program
from ptx2sass.emu.hazards import TimingModel
from tools.emu_testing import cubin_listing_decoder, run_zluda, zluda_cubin, zluda_manifest
from ptx2sass.sched import latency

ENTRIES = {e["name"]: e for e in zluda_manifest()}
SAMPLE = ["add", "call", "fma", "popc_b64", "rcp_f64", "shfl_sync_mode_b32", "shared_unify_extern",
          "bar_red_and_pred", "mma_m16n8k16_f32_f16_f16_f32", "div_noftz", "atom_add", "vote_all_sub"]


@pytest.mark.parametrize("name", SAMPLE)
def test_no_hazards_in_ptxas_cubins(name):
    outcome = run_zluda(ENTRIES[name], hazard_check=True)
    assert outcome.passed, outcome.reason
    assert outcome.result.hazards == [], [str(h) for h in outcome.result.hazards]
    assert outcome.result.cycles > 0


def _run_mutated(name, mutate):
    """Run a zluda kernel with `mutate(instructions)` applied; return its hazards."""
    entry = ENTRIES[name]
    cubin = zluda_cubin(entry)
    program = load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))
    program.instructions = mutate(list(program.instructions))
    launch = Launch(program, entry["grid"], entry["block"], entry["dynamic_shared_bytes"])
    launch.timing_model = TimingModel(launch)
    buffers = {}
    if entry["input"] is not None:
        buffers["input"] = launch.gmem.allocate("input", entry["input_bytes"], bytes.fromhex(entry["input"]["hex"]))
    buffers["output"] = launch.gmem.allocate("output", entry["output_alloc_bytes"])
    launch.set_params([Param(buffer=p) for p in entry["params"]], buffers)
    launch.run()
    return launch.timing_model.hazards


def _with_control(ins_list, offset, **changes):
    return [(off, replace(ins, control=replace(ins.control, **changes)) if off == offset else ins)
            for off, ins in ins_list]


def _consumers_of_waits(name):
    entry = ENTRIES[name]
    cubin = zluda_cubin(entry)
    program = load_program(cubin, entry["kernel"], cubin_listing_decoder(cubin))
    return [(off, ins) for off, ins in program.instructions if ins.control.wait]


@pytest.mark.parametrize("name", ["add", "popc_b64", "shfl_sync_mode_b32", "rcp_f64"])
def test_dropped_wait_is_caught(name):
    """Every wait mask in these kernels guards a read of a scoreboarded result (or a
    register a store still reads): clearing it must produce a hazard at that instruction."""
    caught = 0
    waits = _consumers_of_waits(name)
    assert waits
    for off, ins in waits:
        hazards = _run_mutated(name, lambda l: _with_control(l, off, wait=0))
        if any(h.offset >= off for h in hazards):
            caught += 1
    assert caught >= 1
    # The first consumer of a load's scoreboard is always caught.
    off = waits[0][0]
    hazards = _run_mutated(name, lambda l: _with_control(l, off, wait=0))
    assert any("without waiting on scoreboard" in h.message or "may still" in h.message for h in hazards), \
        [str(h) for h in hazards]


def test_lowered_stall_is_caught():
    """`add`: IADD3 R6, P0, ... (stall 5) feeds IMAD.X's carry P0: with stall 1 the carry is
    read before the fixed latency has passed."""
    entry = ENTRIES["add"]
    cubin = zluda_cubin(entry)
    program = load_program(cubin, "add", cubin_listing_decoder(cubin))
    iadd = next(off for off, ins in program.instructions if ins.opcode == "IADD3")
    assert not _run_mutated("add", lambda l: l)
    hazards = _run_mutated("add", lambda l: _with_control(l, iadd, stall=1))
    assert any(h.offset == iadd + 16 and "P0" in h.message for h in hazards), [str(h) for h in hazards]


def test_lowered_stalls_in_fma_are_caught():
    """Lower each stall of `fma` to 1 in turn: whenever that puts a consumer closer to its
    fixed-latency producer than the table allows, a hazard is reported."""
    entry = ENTRIES["fma"]
    cubin = zluda_cubin(entry)
    program = load_program(cubin, "fma", cubin_listing_decoder(cubin))
    caught = 0
    for off, ins in program.instructions:
        if ins.control.stall > latency.DEFAULT_FIXED and ins.opcode not in ("EXIT", "BRA", "NOP"):
            if _run_mutated("fma", lambda l: _with_control(l, off, stall=1)):
                caught += 1
    assert caught >= 1
