"""A launch leaves nothing for the cycle collector (emu/launch.py, scalar.py, machine.py,
hazards.py): the scalar path's thread (its own `m`), a machine's Warp/Cta views, the hazard
checker's back-reference and cached split (launch -> model -> machine -> launch) were cycles,
so every launch's objects (buffers and all) waited for a collection, which then cost more
than a short launch. And the driver's param window is made only where the kernel can learn
its address (bank 0's window words, or bank 0 read at a run-time offset).

Outputs are checked against ZLUDA's expected bytes (tools.emu_testing.run_zluda), read in place."""
import gc
from types import SimpleNamespace

import pytest

from ptx2sass.emu import launch as launch_mod
from ptx2sass.emu import loader
from ptx2sass.emu.memory import GlobalMemory
from ptx2sass.encoder.model import ConstRef, Imm, Instruction, Reg
from tools import emu_testing as testing

# one-thread on the scalar path alone; with steps bridged to a one-lane machine (DFMA,
# MUFU.RCP64H); handed to the machine (ATOM); two warps with warp views (VOTE, BSSY/BSYNC);
# two warps through a CTA barrier with a reduction (the CTA views)
KERNELS = ["add", "rcp_f64", "atom_add", "vote_all", "bar_red_and_pred"]


@pytest.fixture(scope="module")
def entries():
    by_name = {e["name"]: e for e in testing.zluda_manifest()}
    out = {}
    for name in KERNELS:
        entry = by_name[name]
        cubin = testing.zluda_cubin(entry)
        assert cubin is not None, name
        out[name] = (entry, loader.load_program(cubin, entry["kernel"], testing.cubin_listing_decoder(cubin)))
    return out


def _emulator_garbage() -> list[str]:
    """Type names of the emulator's objects that only the cycle collector would free."""
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        gc.collect()
        found = sorted({type(o).__name__ for o in gc.garbage
                        if type(o).__module__.startswith(("ptx2sass.emu", "emu."))})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    return found


@pytest.mark.parametrize("hazards", [False, True], ids=["plain", "hazards"])
@pytest.mark.parametrize("name", KERNELS)
def test_launch_leaves_no_cycles(entries, name, hazards):
    entry, program = entries[name]
    testing.run_zluda(entry, hazard_check=hazards, program=program)      # decoded, specialised
    was = gc.isenabled()
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):          # first, second and specialised executions
            outcome = testing.run_zluda(entry, hazard_check=hazards, program=program)
            assert outcome.passed, outcome.reason
            if hazards:
                assert outcome.result.hazards == []
            del outcome
        assert _emulator_garbage() == []
    finally:
        if was:
            gc.enable()


def test_checker_reaches_its_launch_while_it_lives(entries):
    from ptx2sass.emu.hazards import TimingModel
    entry, program = entries["add"]
    launch = launch_mod.Launch(program, entry["grid"], entry["block"], hazard_check=True)
    model = TimingModel(launch)
    assert model.launch is launch


# ------------------------------------------------------------------ the param window

SM89 = launch_mod._driver_cbank("sm_89")
WINDOW = (SM89["param_window"], SM89["param_window_end"])


def _program(*instructions) -> SimpleNamespace:
    return SimpleNamespace(instructions=[(16 * k, ins) for k, ins in enumerate(instructions)])


def _mov(src) -> Instruction:
    return Instruction("MOV", (), (Reg("R", 1), src))


@pytest.mark.parametrize("operand, reads", [
    (ConstRef(0, 0x210), False),                                  # a parameter
    (ConstRef(0, 0x28), False),                                   # the block size
    (ConstRef(3, SM89["param_window"]), False),                   # another bank
    (ConstRef(0, SM89["param_window"]), True),                    # the window's base
    (ConstRef(0, SM89["param_window"] + 4), True),                # its high word
    (ConstRef(0, SM89["param_window"] - 8), True),                # a 16-byte read across it
    (ConstRef(0, SM89["param_window_end"]), True),                # its end
    (ConstRef(0, 0x10, ureg=Reg("UR", 4)), True),                 # bank 0 at a run-time offset
    (ConstRef(0, 0x0, ureg=Reg("R", 2)), True),                   # LDC c[0x0][R2]
    (ConstRef(0, 0x210, ubank=Reg("UR", 6)), True),               # a bindless bank
    (ConstRef(3, 0x0, ureg=Reg("R", 2)), False),                  # bank 3 at a run-time offset
    (Imm(SM89["param_window"]), False),
])
def test_which_kernels_can_read_the_window(operand, reads):
    assert launch_mod._reads_bank0_words(_program(_mov(operand)), WINDOW) is reads


def test_texture_instructions_keep_the_window():
    tex = Instruction("TEX", (), (Reg("R", 0), Reg("R", 2), Imm(0x58)))
    assert launch_mod._reads_bank0_words(_program(tex), WINDOW) is True


def test_a_passed_over_window_moves_later_buffers_as_one_made():
    """`reserve` leaves later allocations where they would be had the window been made."""
    made, passed = GlobalMemory(), GlobalMemory()
    for gm in (made, passed):
        gm.allocate("input", 100, bytes(100))
    made.allocate("__param_window", 24, bytes(24))
    passed.reserve(24)
    for size in (1, 4096, 70000):
        assert made.allocate("next", size).base == passed.allocate("next", size).base


def test_window_or_not_the_launch_computes_the_same(entries, monkeypatch):
    """A kernel that cannot read the window runs the same with it made (as before) and
    without: ZLUDA's expected output both ways, and its buffers at the same addresses."""
    entry, program = entries["add"]
    bases = {}
    for made in (True, False):
        monkeypatch.setattr(launch_mod, "_reads_bank0_words", lambda p, w, made=made: made)
        launch = launch_mod.Launch(program, entry["grid"], entry["block"], hazard_check=False)
        inp = launch.gmem.allocate("input", entry["input_bytes"], bytes.fromhex(entry["input"]["hex"]))
        out = launch.gmem.allocate("output", entry["output_alloc_bytes"])
        launch.set_params([launch_mod.Param(buffer=p) for p in entry["params"]], {"input": inp, "output": out})
        launch.run()
        assert out.data.tobytes()[:entry["output_bytes"]] == bytes.fromhex(entry["output"]["hex"])
        assert ("__param_window" in [b.name for b in launch.gmem.buffers]) is made
        bases[made] = (inp.base, out.base, launch.gmem.allocate("later", 64).base)
    assert bases[True] == bases[False]
