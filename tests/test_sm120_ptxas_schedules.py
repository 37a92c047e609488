"""ptxas 13.5.37's sm_120 schedules that the hazard checker flagged before the sm_120 latency
table learnt the rule each one shows (sched/latency/blackwell.json, `evidence`: `campaign20_fuzz`):
whole programs of the lead's fuzz campaign 20 (sm_120, seeds 31,000,000-, held out: no tuning on
them). ptxas's cubin of each must run with zero hazards."""
from pathlib import Path

import pytest

from ptxas_schedules import hazards_in_ptxas_cubin

HERE = Path(__file__).resolve().parent / "ptxas_sm120_schedules"

# seed -> the rule its ptxas cubin needs (what the checker flagged before)
RULES = {
    "31000227": "VOTEU's UP -> USEL 1 (`VOTEU.ANY UP1, P1` then `USEL UR6, URZ, 0x3f800000, !UP1`)",
    "31000406": "USEL -> UIMAD 4 (`USEL.64 UR4, UR4, UR8, !UP0` then `UIMAD UR11, UR5, UR12, URZ`)",
    "31001006": "IMAD -> IMAD.HI's addend high half 3 (`IMAD R5, R16, R17, RZ` then `IMAD.HI R0, R23, "
                "0x69f68e88, R4`)",
    "31001423": "USHF -> UIMAD.WIDE's addend high half 5 (`USHF.R.S32.HI UR5, URZ, 0x1f, UR4` then "
                "`UIMAD.WIDE UR4, UR7, UR7, UR4`)",
    "31001516": "SEL -> IMAD.HI's addend high half 3 (`SEL R25, R25, 0x7fffffff, !P0` then "
                "`IMAD.HI R24, R0, -0x2, R24`)",
    # branch fuzz30's held-out sm_120 run (seeds 41000000-)
    "41000095": "LOP3 -> IMAD.HI's addend high half 3 (`LOP3.LUT R43, R30, 0x7bb399b4, RZ, 0x3c, !PT` then "
                "`IMAD.HI R30, R30, R28, R42`)",
    "41000342": "FSEL -> IMAD.WIDE's addend high half 4 (`FSEL R23, R9, R7, !P0` then "
                "`IMAD.WIDE.U32 R22, R13, R24, R22`)",
    "41000583": "HMUL2 -> HADD2 4 (`HMUL2.FTZ R12, R12.H0_H0, R12.H0_H0` then `@!P4 HADD2 R5, -R12.H0_H0, -RZ.H0_H0`)",
    # branch depart32's held-out sm_120 run (seeds 43800000-299)
    "43800195": "IMAD.HI's carry-out -> LEA.HI.X 5 (`IMAD.HI.U32 R6, P0, RZ, R5, R6` then "
                "`LEA.HI.X R5, R5, RZ, RZ, 0x1f, P0` 5 cycles after issue)",
}


@pytest.mark.parametrize("seed", sorted(RULES))
def test_ptxas_sm120_schedule_has_no_hazard(seed):
    hazards = hazards_in_ptxas_cubin(HERE / f"s{seed}.ptx", "sm_120")
    assert not hazards, f"{RULES[seed]}: {hazards[0].message}"


def test_show_writes_the_arch_it_was_asked_for(capsys):
    """`ptx2sass-fuzz show SEED --arch sm_120` makes the case a campaign on sm_120 runs (these
    files are its output); its header said sm_89, so ptxas's cubin was not sm_120's."""
    from ptx2sass.fuzz.cli import main
    from ptx2sass.fuzz.inputs import read_case
    assert main(["show", "31000227", "--arch", "sm_120"]) == 0
    shown = capsys.readouterr().out
    assert read_case(shown).arch == "sm_120"
    # (the stored s31000227.ptx is what the generator wrote before branch fuzzgen32 gave sm_90+
    # programs their own target and feature groups; the seed's program has changed since)
    assert "\n.target sm_120\n" in shown
