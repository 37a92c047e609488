"""ptxas's sm_75 schedules that the hazard checker flagged before the turing latency table
learnt the fact each one shows (sched/latency/turing.json, `evidence`). ptxas's code is taken
as hazard-free, so a hazard the checker finds in it is the table's error. Programs: fuzz
campaign 15's seeds (`ptx2sass-fuzz show SEED --arch sm_75`; 27500040 with `--features mma`).
"""
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent / "ptxas_sm75_schedules"

# seed -> the fact its ptxas cubin needs (what the checker flagged before)
RULES = {
    "27000495": "IMMA.8816 writes a register an earlier IMMA reads under its read scoreboard "
                "(one in-order tensor queue with HMMA/BMMA)",
    "27000510": "IMMA.8816 writes its own B register that an earlier IMMA reads under its read "
                "scoreboard (one in-order tensor queue)",
    "27001076": "a wait on HMMA.884.STEP0's read scoreboard ends its late reads (R9 overwritten "
                "4 cycles after issue)",
    "27001275": "QSPC.E.L's predicate is ready once its read scoreboard clears (ptxas sets none "
                "for writing; an LD overwriting its address waits on it)",
    "27500040": "BMMA.88128 with no write scoreboard: a wait on a later IMMA's covers it (one "
                "in-order tensor queue)",
    # branch open16's held-out audit sample (seeds 33,000,000..): each flagged on ptxas's cubin
    "33000059": "IMAD.HI with a register factor: its carry-out read by IADD3.X 5 cycles after "
                "(`IMAD.HI.U32 R26, P0, R24, R33, R26`; the table had 9)",
    # campaign 21 (sm_75, seeds 32,000,000.., peeled as the campaign does)
    "32000924": "ERRBAR after MEMBAR.ALL.GPU holds issue at least 11 cycles: `@P5 BRA` reads "
                "an ISETP's P5 1 + 0 stall cycles later (the table had 7)",
    "32002385": "a VOTEU's uniform predicate guards `@UP0 USHF` 5 cycles after the VOTEU issued "
                "(uniform_guard_pair_fixed, as sm_8x; the table had 11 for every writer)",
}


def ptxas_sm75_program(seed: str):
    """(program, case): ptxas's sm_75 cubin of the stored fuzz program, decoded."""
    from ptx2sass.emu import EmuFault
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ptxas, load, load_from_listing
    case = read_case((HERE / f"s{seed}.ptx").read_text())
    case.text = "".join(ln for ln in case.text.splitlines(keepends=True) if not ln.startswith("// fuzz-case: "))
    case.arch = "sm_75"
    cubin, why = compile_ptxas(case)
    assert cubin is not None, why
    try:
        return load(cubin, case.kernel), case
    except EmuFault as e:
        if "cannot decode" not in str(e):
            raise
        return load_from_listing(cubin, case.kernel), case


@pytest.mark.parametrize("seed", sorted(RULES))
def test_ptxas_sm75_schedule_has_no_hazard(seed):
    from ptx2sass.fuzz.runner import execute
    prog, case = ptxas_sm75_program(seed)
    result = execute(prog, case, hazard_check=True)
    assert not result.hazards, f"{RULES[seed]}: {result.hazards[0].message}"


@pytest.mark.parametrize("probe", ["tensor_queues", "tensor_queues_hmma"])
def test_ptxas_sm75_tensor_probe_has_no_hazard(probe):
    """HMMA.884 (m8n8k4 f16), IMMA.8816 (m8n8k16 s8) and BMMA.88128 (m8n8k128 b1) in one
    kernel: ptxas gives an IMMA no write scoreboard and has its result read after a wait on
    the next BMMA's (tensor_queues), IMMA after IMMA, BMMA after BMMA (tensor_queues_hmma)."""
    import numpy as np
    from ptx2sass import oracle
    from ptx2sass.emu.launch import run
    cubin = oracle.ptxas((HERE / f"{probe}.ptx").read_text(), arch="sm_75").output
    data = np.random.default_rng(3).integers(0, 2 ** 32, 20, dtype=np.uint64).astype(np.uint32)
    out = np.zeros(24, dtype=np.uint32)
    res = run(cubin, "k", (1, 1, 1), (32, 1, 1), [out, data])
    assert not res.hazards, res.hazards[:3]


def our_hazards(path: Path, arch: str) -> list:
    """The checker's hazards in our cubin (for `arch`) of the stored fuzz program `path`."""
    from ptx2sass.fuzz.inputs import read_case
    from ptx2sass.fuzz.runner import compile_ours, execute, load
    case = read_case(path.read_text())
    case.text = "".join(ln for ln in case.text.splitlines(keepends=True) if not ln.startswith("// fuzz-case: "))
    case.arch = arch
    return execute(load(compile_ours(case), case.kernel), case, hazard_check=True).hazards


@pytest.mark.parametrize("seed", sorted(RULES))
def test_our_sm75_schedule_has_no_hazard(seed):
    """Our scheduler reads the same table: our sm_75 code of each program is hazard-free too."""
    hazards = our_hazards(HERE / f"s{seed}.ptx", "sm_75")
    assert not hazards, hazards[0].message


def test_our_sm75_overwrite_of_an_hmma_source_waits_on_its_read_scoreboard():
    """As ptxas's sm_75 code (27001076: HMMA.884.STEP0 with a read scoreboard, its accumulator
    register overwritten 4 cycles after issue under a wait on it): our scheduler waits on the
    HMMA's read scoreboard and issues the overwrite sooner than the 5-cycle late-read window
    (`late_fixed_reads`) it waited out before."""
    from ptx2sass.encoder.model import Instruction
    from ptx2sass.sched.control import Slot, assign_controls
    from ptx2sass.sched.latency import model_for
    lat = model_for("sm_75")
    hmma = Slot(Instruction("HMMA", ("1688", "F32")), reads=[("R", 8 + k) for k in range(8)],
                writes=[("R", 20 + k) for k in range(4)])
    lop = Slot(Instruction("LOP3", ("LUT",)), reads=[("R", 2)], writes=[("R", 14)])
    slots = assign_controls([hmma, lop], lat)
    assert [s.ins.opcode for s in slots] == ["HMMA", "LOP3"]
    rd = slots[0].rd_sb
    assert rd < 6 and slots[1].wait >> rd & 1
    assert slots[0].stall < lat.LATE_FIXED_READS["HMMA"] == 5
