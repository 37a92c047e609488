"""The vectorised machine (emu/machine.py, emu/lanes.py) on hand-written SASS: instructions
whose destination is also a source read every source first, and a launch of many CTAs
gives each thread what a launch of one CTA at a time gives it."""
import numpy as np

from ptx2sass.emu.launch import Launch, Param
from ptx2sass.emu.program import KernelProgram
from ptx2sass.encoder.sass_text import parse_instruction


def _program(lines: list[str]) -> KernelProgram:
    ins = [(16 * i, parse_instruction(text)) for i, text in enumerate(lines)]
    program = KernelProgram("k", "sm_89", ins, param_base=0x160, param_bytes=8)
    program.params = [(0, 0, 8)]
    return program


def _run(program, grid, block, words: int) -> np.ndarray:
    launch = Launch(program, grid, block, hazard_check=False)
    out = launch.gmem.allocate("out", 4 * words)
    launch.set_params([Param(buffer="out")], {"out": out})
    launch.run()
    return out.data.view(np.uint32).copy()


def test_plop3_second_result_reads_the_source_before_the_first_is_written():
    """PLOP3 P0, P1, P0, …: P1 = P0 as it was (0xf0 copies the first source), not the value
    the instruction just wrote into P0 (0x0f: its complement). Before the fix the second
    table read a view of the register file that the first write had changed."""
    program = _program([
        "ISETP.EQ.AND P0, PT, RZ, RZ, PT",
        "PLOP3.LUT P0, P1, P0, PT, PT, 0x0f, 0xf0",
        "SEL R2, 0x1, 0x2, P1",
        "SEL R3, 0x1, 0x2, P0",
        "MOV R4, c[0x0][0x160]",
        "MOV R5, c[0x0][0x164]",
        "STG.E.64 [R4.64], R2",
        "EXIT",
    ])
    assert list(_run(program, (1,), (1,), 2)) == [1, 2]


def test_many_ctas_at_once_equal_one_cta_at_a_time():
    """Each thread writes its global index at its global index; 40 CTAs of 48 threads (a
    partial warp each) run as one machine and, with a batch of one CTA, as 40 machines."""
    from ptx2sass.emu import launch as launch_module
    program = _program([
        "S2R R0, SR_TID.X",
        "S2R R1, SR_CTAID.X",
        "IMAD R0, R1, c[0x0][0x0], R0",
        "MOV R2, c[0x0][0x160]",
        "MOV R3, c[0x0][0x164]",
        "IMAD.WIDE.U32 R2, R0, 0x4, R2",
        "ISETP.GE.U32.AND P0, PT, R0, 0x640, PT",
        "@!P0 STG.E [R2.64], R0",
        "EXIT",
    ])
    together = _run(program, (40,), (48,), 40 * 48)
    saved = launch_module.BATCH_LANES
    launch_module.BATCH_LANES = 1
    try:
        apart = _run(program, (40,), (48,), 40 * 48)
    finally:
        launch_module.BATCH_LANES = saved
    want = np.arange(40 * 48, dtype=np.uint32)
    want[0x640:] = 0
    assert np.array_equal(together, want) and np.array_equal(apart, want)


def test_trace_records_each_warps_instructions_and_shared_addresses():
    """`run(..., trace=True)` (emu.timing.trace) on the vectorised machine: one op list per
    warp of every CTA, each op with the lanes that ran it and, for a shared access, that
    warp's own offsets (thread t stores at 4t; threads below 40 load from 4t + 4)."""
    from ptx2sass.emu.timing.trace import TraceRecorder
    program = _program([
        "S2R R0, SR_TID.X",
        "SHF.L.U32 R1, R0, 0x2, RZ",
        "STS [R1], R0",
        "ISETP.GE.U32.AND P0, PT, R0, 0x28, PT",
        "@!P0 LDS R2, [R1+0x4]",
        "EXIT",
    ])
    launch = Launch(program, (2,), (100,), dynamic_shared_bytes=512, hazard_check=False)
    launch.timing_model = TraceRecorder(launch)
    out = launch.gmem.allocate("out", 4)
    launch.set_params([Param(buffer="out")], {"out": out})
    launch.run()
    trace = launch.recorder
    assert [c.ctaid for c in trace.ctas] == [(0, 0, 0), (1, 0, 0)]
    for cta in trace.ctas:
        assert len(cta.warps) == 4
        for w, ops in enumerate(cta.warps):
            tids = np.arange(32 * w, min(32 * w + 32, 100))
            assert [o.opcode for o in ops] == ["S2R", "SHF", "STS", "ISETP", "LDS", "EXIT"]
            assert all(o.lanes == len(tids) for o in ops)
            sts, lds = ops[2], ops[4]
            assert (sts.space, sts.size) == ("shared", 4)
            assert sts.addresses.tolist() == (4 * tids).tolist()
            loading = tids[tids < 40]
            if len(loading):
                assert lds.space == "shared" and lds.addresses.tolist() == (4 * loading + 4).tolist()
            assert ("R", 1) in sts.reads and ("R", 2) in lds.writes or not len(loading)
