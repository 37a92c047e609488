"""The fuzz generator's wmma scratch in shared memory (`g_wsc`) is written before any read.

A wmma.load whose leading dimension is wider than the tile reads scratch words no wmma.store
wrote; the H200 returned stale shared memory there (GPU runs 10 and 11: six launches read
whatever an earlier kernel left). Each program must give the same outputs whatever shared
memory held at launch: run twice in the emulator, shared memory filled with 0 and with 0x5A."""
import pytest

from ptx2sass.emu.launch import run_buffers
from ptx2sass.fuzz.campaign import Options, make_program
from ptx2sass.fuzz.inputs import case_from_program, launch_data
from ptx2sass.fuzz.runner import BUDGET, compile_ours, load


@pytest.mark.parametrize("seed", [300006, 300013])
def test_outputs_do_not_depend_on_initial_shared_memory(seed):
    case = case_from_program(make_program(seed, Options(arch="sm_89", features=["mma", "int32"])))
    assert "g_wsc" in case.text
    prog = load(compile_ours(case), case.kernel)
    outs = []
    for fill in (0, 0x5A):
        data = launch_data(case)
        res = run_buffers(prog, case.grid, case.block, data.params, data.buffers, budget=BUDGET,
                          hazard_check=False, objects=data.objects, shared_fill=fill)
        outs.append((bytes(res.buffers["out"]), bytes(res.buffers["atom"])))
    assert outs[0] == outs[1]
